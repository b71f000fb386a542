/**
 * The checkout's dependencies called the way a careful engineer writes it without resgen, with
 * cockatiel (a devDependency; there is no p-retry here, so cockatiel retries too):
 *
 * - every attempt has its own timeout (aborting its fetch), and every call a total timeout;
 * - retries with exponential backoff and full jitter, only on the failures the policy retries,
 *   honouring `Retry-After` up to the policy's cap, and never retrying an open breaker or a
 *   full bulkhead;
 * - one circuit breaker and one bulkhead per dependency, shared by its operations, with the
 *   retry outside the breaker so that every attempt is counted;
 * - a fallback for the optional recommendations.
 *
 * Every number is the policy's (examples/checkout/resilience/*.yaml, as `resgen explain` prints
 * them). What this stack does not do is what a stack of per-call policies has no place for; the
 * demo measures each (docs/demo.md).
 */
import {
  bulkhead,
  circuitBreaker,
  DelegateBackoff,
  fallback,
  handleAll,
  handleWhen,
  retry,
  SamplingBreaker,
  timeout,
  TimeoutStrategy,
  wrap,
  type BulkheadPolicy,
  type CircuitBreakerPolicy,
  type IRetryBackoffContext,
} from "cockatiel";
import type { CheckoutClients, Item, Recommendations, Variant } from "./scenario.js";

/** What one operation's policy says about timeouts and retries. */
export interface OperationSpec {
  readonly attemptMs: number;
  readonly totalMs: number;
  /** Attempts in all, counting the first. */
  readonly maxAttempts: number;
  /** Failures that are retried: `timeout`, `network` and HTTP statuses. */
  readonly retryOn: readonly (number | "timeout" | "network")[];
  /** Longest `Retry-After` waited out (`null`: any); a longer one ends the call. */
  readonly retryAfterMaxMs: number | null;
}

/** What one dependency's policy says about its breaker and bulkhead. */
export interface DependencySpec {
  readonly name: string;
  readonly maxConcurrent: number;
  readonly maxQueue: number;
}

// the project's defaults (resgen.config.yaml): backoff and breaker of every dependency
const BACKOFF = { baseMs: 50, capMs: 1_000, multiplier: 2 };
const BREAKER = { failureRate: 0.5, windowMs: 10_000, minCalls: 20, openForMs: 30_000, trials: 3 };
const TRANSIENT = ["timeout", "network", 408, 425, 429, 500, 502, 503, 504] as const;

export const SPECS = {
  inventory: { name: "inventory", maxConcurrent: 20, maxQueue: 0 },
  payments: { name: "payments", maxConcurrent: 25, maxQueue: 10 },
  recommendations: { name: "recommendations", maxConcurrent: 30, maxQueue: 0 },
} as const satisfies Record<string, DependencySpec>;

export const OPERATIONS = {
  // inventory: attempt 180 ms (1.5 × p999), total 1 s, 3 attempts
  inventory: {
    attemptMs: 180,
    totalMs: 1_000,
    maxAttempts: 3,
    retryOn: TRANSIENT,
    retryAfterMaxMs: null,
  },
  // payments: attempt 500 ms, total 2 s, 3 attempts, Retry-After up to 1 s
  payments: {
    attemptMs: 500,
    totalMs: 2_000,
    maxAttempts: 3,
    retryOn: ["timeout", "network", 429, 502, 503, 504],
    retryAfterMaxMs: 1_000,
  },
  // recommendations: one attempt of 250 ms (the policy hedges this read instead of retrying it)
  recommendations: {
    attemptMs: 250,
    totalMs: 600,
    maxAttempts: 1,
    retryOn: [],
    retryAfterMaxMs: null,
  },
} as const satisfies Record<string, OperationSpec>;

/** A response with a status other than 2xx; `retryAfterMs` is the server's `Retry-After`. */
export class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    readonly retryAfterMs: number | undefined,
    message: string,
  ) {
    super(message);
    this.name = "HttpStatusError";
  }
}

function retryAfterOf(header: string | null): number | undefined {
  if (header === null) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1_000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** The attempt's own timeout fired: its fetch was aborted with a `TimeoutError`. */
export function isAttemptTimeout(error: unknown): boolean {
  return error instanceof DOMException && error.name === "TimeoutError";
}

/** No response: fetch reports a refused or reset connection as `TypeError: fetch failed`. */
export function isNetworkError(error: unknown): boolean {
  return error instanceof TypeError && error.message === "fetch failed";
}

/** What the breaker counts: the dependency's fault, not the request's, nor our own cancellation. */
export function isDependencyFailure(error: unknown): boolean {
  if (isAttemptTimeout(error) || isNetworkError(error)) return true;
  return (
    error instanceof HttpStatusError &&
    (error.status >= 500 || [408, 425, 429].includes(error.status))
  );
}

/**
 * Whether a failure is retried: one the operation lists, with a `Retry-After` within its cap. An
 * open breaker, a full bulkhead, the call's total timeout and bugs are never retried.
 */
export function isRetryable(operation: OperationSpec, error: unknown): boolean {
  const on: readonly (number | string)[] = operation.retryOn;
  if (isAttemptTimeout(error)) return on.includes("timeout");
  if (isNetworkError(error)) return on.includes("network");
  if (!(error instanceof HttpStatusError) || !on.includes(error.status)) return false;
  const cap = operation.retryAfterMaxMs;
  return error.retryAfterMs === undefined || cap === null || error.retryAfterMs <= cap;
}

/** The n-th retry's wait: the server's `Retry-After`, else full jitter under the exponential cap. */
export function backoffDelay(context: IRetryBackoffContext<unknown>, random: () => number): number {
  const failure = context.result;
  if ("error" in failure && failure.error instanceof HttpStatusError) {
    const asked = failure.error.retryAfterMs;
    if (asked !== undefined) return asked;
  }
  const ceiling = Math.min(
    BACKOFF.capMs,
    BACKOFF.baseMs * BACKOFF.multiplier ** (context.attempt - 1),
  );
  return random() * ceiling;
}

interface Dependency {
  readonly breaker: CircuitBreakerPolicy;
  readonly bulkhead: BulkheadPolicy;
}

function dependency(spec: DependencySpec, onOpen: (name: string) => void): Dependency {
  const breaker = circuitBreaker(handleWhen(isDependencyFailure), {
    halfOpenAfter: BREAKER.openForMs,
    // a window of 10 s; minimumRps × 10 s = the policy's minCalls
    breaker: new SamplingBreaker({
      threshold: BREAKER.failureRate,
      duration: BREAKER.windowMs,
      minimumRps: BREAKER.minCalls / (BREAKER.windowMs / 1_000),
    }),
    halfOpenSampling: { calls: BREAKER.trials, threshold: 0 },
  });
  breaker.onBreak(() => onOpen(spec.name));
  return { breaker, bulkhead: bulkhead(spec.maxConcurrent, spec.maxQueue) };
}

/**
 * One call through the stack, outer to inner: total timeout, bulkhead (one slot for the whole
 * call), retry, breaker (every attempt asks it), then the attempt with its own timeout.
 */
function policyFor(dep: Dependency, operation: OperationSpec, random: () => number) {
  const retries = retry(
    handleWhen((error) => isRetryable(operation, error)),
    {
      maxAttempts: operation.maxAttempts - 1, // cockatiel counts retries, not attempts
      backoff: new DelegateBackoff((context: IRetryBackoffContext<unknown>) =>
        backoffDelay(context, random),
      ),
    },
  );
  return wrap(
    timeout(operation.totalMs, TimeoutStrategy.Aggressive),
    dep.bulkhead,
    retries,
    dep.breaker,
  );
}

/**
 * One attempt, aborted when its own time is up or the call's signal aborts (total timeout). A
 * controller and a timer rather than `AbortSignal.any([signal, AbortSignal.timeout(ms)])`: a
 * timeout signal held only by the combined one can be garbage-collected before it fires (seen
 * on Node 20), and the attempt then runs until the total timeout.
 */
async function send<T>(
  baseUrl: string,
  method: string,
  path: string,
  body: unknown,
  signal: AbortSignal,
  attemptMs: number,
): Promise<T> {
  const attempt = new AbortController();
  const timer = setTimeout(() => {
    attempt.abort(new DOMException(`attempt timed out after ${attemptMs} ms`, "TimeoutError"));
  }, attemptMs);
  const cancel = () => attempt.abort(signal.reason);
  if (signal.aborted) cancel();
  else signal.addEventListener("abort", cancel, { once: true });
  const init: RequestInit = { method, signal: attempt.signal };
  if (body !== undefined) {
    init.headers = { "content-type": "application/json" };
    init.body = JSON.stringify(body);
  }
  try {
    const response = await fetch(baseUrl + path, init);
    if (!response.ok) {
      await response.body?.cancel();
      throw new HttpStatusError(
        response.status,
        retryAfterOf(response.headers.get("retry-after")),
        `${method} ${path} answered ${response.status}`,
      );
    }
    return (await response.json()) as T;
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", cancel);
  }
}

/** What the fallback answers with: no recommendations, and no word on why. */
const UNAVAILABLE = null;

export function createHandWrittenClients(
  baseUrl: string,
  onBreakerOpen: (dependency: string) => void,
  random: () => number,
): CheckoutClients {
  const inventory = dependency(SPECS.inventory, onBreakerOpen);
  const payments = dependency(SPECS.payments, onBreakerOpen);
  const recommendations = dependency(SPECS.recommendations, onBreakerOpen);
  const stockPolicy = policyFor(inventory, OPERATIONS.inventory, random);
  const reservePolicy = policyFor(inventory, OPERATIONS.inventory, random);
  const chargePolicy = policyFor(payments, OPERATIONS.payments, random);
  // the page works without recommendations: any failure shows none (the fallback sits inside
  // the total timeout, which one attempt of 250 ms never reaches)
  const recommendationsPolicy = wrap(
    timeout(OPERATIONS.recommendations.totalMs, TimeoutStrategy.Aggressive),
    fallback(handleAll, () => UNAVAILABLE),
    recommendations.bulkhead,
    recommendations.breaker,
  );
  return {
    getStock: (sku) =>
      stockPolicy.execute(({ signal }) =>
        send<{ available: number }>(
          baseUrl,
          "GET",
          `/items/${encodeURIComponent(sku)}/stock`,
          undefined,
          signal,
          OPERATIONS.inventory.attemptMs,
        ),
      ),
    reserve: (sku, reservationId, quantity) =>
      reservePolicy.execute(({ signal }) =>
        send(
          baseUrl,
          "PUT",
          `/items/${encodeURIComponent(sku)}/reservations/${encodeURIComponent(reservationId)}`,
          { quantity },
          signal,
          OPERATIONS.inventory.attemptMs,
        ),
      ),
    // retried like the policy retries it; nothing in this stack knows that the POST charges a
    // card, so every attempt is a new request to payments
    createCharge: (orderId, amountCents) =>
      chargePolicy.execute(({ signal }) =>
        send<{ status: string }>(
          baseUrl,
          "POST",
          "/charges",
          { orderId, amountCents, currency: "EUR" },
          signal,
          OPERATIONS.payments.attemptMs,
        ),
      ),
    async recommendations(userId): Promise<Recommendations> {
      const items = await recommendationsPolicy.execute(({ signal }) =>
        send<Item[]>(
          baseUrl,
          "GET",
          `/users/${encodeURIComponent(userId)}/recommendations?limit=5`,
          undefined,
          signal,
          OPERATIONS.recommendations.attemptMs,
        ),
      );
      // the fallback's value says that it is one, not which failure it covered
      return items === UNAVAILABLE
        ? { items: [], fallback: { cause: null } }
        : { items, fallback: null };
    },
  };
}

export const handWrittenVariant: Variant = {
  name: "hand-written",
  create: (baseUrl, hooks) => createHandWrittenClients(baseUrl, hooks.onBreakerOpen, hooks.random),
  // a plain node:http server: no admission control, and the request's deadline stays unread
  serve: (handler) => (req, res) => void handler(req, res),
};
