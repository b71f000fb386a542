// ResilienceError, its kinds, and the isX() guards.
/**
 * What went wrong in a call made through the runtime stack.
 *
 * - `deadline`: the call's deadline left no time for (another) attempt.
 * - `timeout`: one attempt outlived its attempt timeout.
 * - `circuit-open`: the circuit breaker rejected the attempt without calling the dependency.
 * - `bulkhead-full`: no concurrency permit was available (or the queue wait ran out).
 * - `budget-exhausted`: the retry budget refused a retry after a failed attempt.
 * - `rate-limited`: the client's own rate limit had no permit within the call's wait (never
 *   sent, never retried, never counted against the breaker).
 * - `http`: the dependency answered with a non-2xx status.
 * - `network`: the request failed before a response arrived (or a function transport threw).
 * - `aborted`: the caller's AbortSignal cancelled the call.
 * - `parse`: the response body could not be decoded.
 * - `result`: a function operation's value that a `classify` hook called a failure.
 */
export type ResilienceErrorKind =
  | "deadline"
  | "timeout"
  | "circuit-open"
  | "bulkhead-full"
  | "budget-exhausted"
  | "rate-limited"
  | "http"
  | "network"
  | "aborted"
  | "parse"
  | "result";

/**
 * Which time limit ended a call or an attempt (docs/runtime.md, "Tiered timeouts"):
 * - `connect`: opening the connection (undici's connect timeout, through a `dispatcher`);
 * - `headers`: the response headers did not arrive within `timeout.headers`;
 * - `attempt`: the attempt timeout;
 * - `queue`: the bulkhead queue wait (`bulkhead.queueTimeout`);
 * - `deadline`: the call's deadline, or too little of it left to start an attempt.
 */
export type TimeoutTier = "connect" | "headers" | "attempt" | "queue" | "deadline";

/**
 * Brand carried by every {@link ResilienceError}. Registered with `Symbol.for`, so errors made
 * by another copy of this runtime in the same process are recognised too.
 */
export const resilienceErrorBrand: unique symbol = Symbol.for("resgen.runtime.ResilienceError");

/** Fields accepted by the {@link ResilienceError} constructor. */
export interface ResilienceErrorInit {
  /** What went wrong. */
  readonly kind: ResilienceErrorKind;
  /** Human-readable description; the dependency and operation are prefixed when known. */
  readonly message: string;
  /** Whether the runtime treats the failure as worth another attempt. Defaults to `false`. */
  readonly transient?: boolean | undefined;
  /** Dependency name. Defaults to `""` (filled in by the stack). */
  readonly dependency?: string | undefined;
  /** Operation name. Defaults to `""` (filled in by the stack). */
  readonly operation?: string | undefined;
  /** The underlying error, if any. */
  readonly cause?: unknown;
  /** HTTP status, for `http` errors. */
  readonly status?: number | undefined;
  /** Response headers with lower-case names, for `http` errors. */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** Response body text, for `http` errors. */
  readonly body?: string | undefined;
  /**
   * Server-requested wait from `Retry-After`, in milliseconds; for `rate-limited`, the wait
   * until the limiter would have had a permit.
   */
  readonly retryAfterMs?: number | undefined;
  /** The time limit that fired, for a failure a time limit caused. */
  readonly tier?: TimeoutTier | undefined;
  /**
   * Skip capturing a stack trace. Used on the load-shedding path (open breaker, full bulkhead),
   * where rejections must stay cheap; the message still says what happened.
   */
  readonly withoutStack?: boolean | undefined;
}

/**
 * The one error type thrown by the runtime. Discriminate on {@link ResilienceError.kind}; use
 * {@link isResilienceError} rather than `instanceof`, which fails across copies of the runtime.
 */
export class ResilienceError extends Error {
  declare readonly [resilienceErrorBrand]: true;
  /** What went wrong. */
  declare readonly kind: ResilienceErrorKind;
  /** Whether the runtime considers the failure worth another attempt (per the retry conditions). */
  declare transient: boolean;
  /** Name of the dependency that was called. */
  declare dependency: string;
  /** Name of the operation that was called. */
  declare operation: string;
  /** Attempts that reached the transport during the logical call (0 when rejected up front). */
  declare attempts: number;
  /** HTTP status of an `http` error; `undefined` otherwise. */
  declare readonly status: number | undefined;
  /** Response headers (lower-case names) of an `http` error; `undefined` otherwise. */
  declare readonly headers: Readonly<Record<string, string>> | undefined;
  /** Response body text of an `http` error; `undefined` otherwise. */
  declare readonly body: string | undefined;
  /** Wait requested by the server's `Retry-After` header, in milliseconds; `undefined` if none. */
  declare readonly retryAfterMs: number | undefined;
  /**
   * The time limit that fired (`connect`, `headers`, `attempt`, `queue`, `deadline`); `undefined`
   * when none did.
   */
  declare readonly tier: TimeoutTier | undefined;
  /** Failures of the other hedged copies, when every copy failed (this one launched first). */
  declare others: readonly ResilienceError[];

  constructor(init: ResilienceErrorInit) {
    // Load-shedding errors (`withoutStack`) skip the Error constructor: even with no frames to
    // capture it costs over a microsecond on Node 20, most of a rejection. They are still
    // ResilienceErrors (and Errors) by prototype with the same fields, and their `stack` is the
    // one line "ResilienceError: <message>".
    if (init.withoutStack === true) return stackless(init);
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    fill(this, init);
  }
}

type Fields = {
  -readonly [
    K in
      | "kind"
      | "transient"
      | "dependency"
      | "operation"
      | "attempts"
      | "status"
      | "headers"
      | "body"
      | "retryAfterMs"
      | "tier"
      | "others"
  ]: ResilienceError[K];
};

function fill(error: Fields, init: ResilienceErrorInit): void {
  error.kind = init.kind;
  error.transient = init.transient ?? false;
  error.dependency = init.dependency ?? "";
  error.operation = init.operation ?? "";
  error.attempts = 0;
  error.status = init.status;
  error.headers = init.headers;
  error.body = init.body;
  error.retryAfterMs = init.retryAfterMs;
  error.tier = init.tier;
  error.others = [];
}

function stackless(init: ResilienceErrorInit): ResilienceError {
  const error = Object.create(ResilienceError.prototype) as ResilienceError & { cause?: unknown };
  // Plain own properties: the Error constructor makes `message` and `cause` non-enumerable, but
  // Object.defineProperty would cost more than the rest of the error; enumerable, they also
  // show up in logs that print the error's fields.
  error.message = init.message;
  if (init.cause !== undefined) error.cause = init.cause;
  fill(error, init);
  return error;
}

Object.defineProperty(ResilienceError.prototype, resilienceErrorBrand, { value: true });
Object.defineProperty(ResilienceError.prototype, "name", {
  value: "ResilienceError",
  writable: true,
});
// Errors made by the Error constructor have their own `stack`; this serves the stackless ones.
Object.defineProperty(ResilienceError.prototype, "stack", {
  get(this: Error): string {
    return `${this.name}: ${this.message}`;
  },
  set(this: Error, value: unknown): void {
    Object.defineProperty(this, "stack", { value, writable: true, configurable: true });
  },
  configurable: true,
});

/** A {@link ResilienceError} narrowed to one kind. */
export type ResilienceErrorOf<K extends ResilienceErrorKind> = ResilienceError & {
  readonly kind: K;
};

/** An `http` error: status, headers and body are always present. */
export type HttpError = ResilienceErrorOf<"http"> & {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
};

/**
 * True for errors thrown by any copy of the runtime; pass `kind` to test for one kind.
 * Works across duplicated runtimes because it checks the brand, not the prototype chain.
 */
export function isResilienceError(value: unknown): value is ResilienceError;
export function isResilienceError<K extends ResilienceErrorKind>(
  value: unknown,
  kind: K,
): value is ResilienceErrorOf<K>;
export function isResilienceError(value: unknown, kind?: ResilienceErrorKind): boolean {
  if (typeof value !== "object" || value === null) return false;
  if ((value as { [resilienceErrorBrand]?: unknown })[resilienceErrorBrand] !== true) return false;
  return kind === undefined || (value as ResilienceError).kind === kind;
}

/** True for a `deadline` error. */
export const isDeadlineError = (e: unknown): e is ResilienceErrorOf<"deadline"> =>
  isResilienceError(e, "deadline");
/** True for a `timeout` error. */
export const isTimeoutError = (e: unknown): e is ResilienceErrorOf<"timeout"> =>
  isResilienceError(e, "timeout");
/** True for a `circuit-open` error. */
export const isCircuitOpenError = (e: unknown): e is ResilienceErrorOf<"circuit-open"> =>
  isResilienceError(e, "circuit-open");
/** True for a `bulkhead-full` error. */
export const isBulkheadFullError = (e: unknown): e is ResilienceErrorOf<"bulkhead-full"> =>
  isResilienceError(e, "bulkhead-full");
/** True for a `budget-exhausted` error. */
export const isBudgetExhaustedError = (e: unknown): e is ResilienceErrorOf<"budget-exhausted"> =>
  isResilienceError(e, "budget-exhausted");
/** True for a `rate-limited` error: the client's own rate limit turned the call away. */
export const isRateLimitedError = (e: unknown): e is ResilienceErrorOf<"rate-limited"> =>
  isResilienceError(e, "rate-limited");
/** True for an `http` error, narrowing status, headers and body to defined values. */
export const isHttpError = (e: unknown): e is HttpError => isResilienceError(e, "http");
/** True for a `network` error. */
export const isNetworkError = (e: unknown): e is ResilienceErrorOf<"network"> =>
  isResilienceError(e, "network");
/** True for an `aborted` error. */
export const isAbortedError = (e: unknown): e is ResilienceErrorOf<"aborted"> =>
  isResilienceError(e, "aborted");
/** True for a `parse` error. */
export const isParseError = (e: unknown): e is ResilienceErrorOf<"parse"> =>
  isResilienceError(e, "parse");

// Statuses that are about the server's state rather than the request, even though they are 4xx.
const SERVER_STATE_4XX: ReadonlySet<number> = new Set([408, 425, 429]);

/**
 * 4xx statuses that always describe the request, whatever `retry.on` says (docs/policy.md,
 * "Retry"; `resgen check` refuses them in `retry.on`, RG225): sending the request again gets
 * the same answer.
 */
const REQUEST_4XX: ReadonlySet<number> = new Set([400, 401, 403, 404, 405, 409, 410, 422]);

/** True for a status that describes the request whatever the retry settings say (never retried). */
export function isRequestStatus(status: number | undefined): boolean {
  return status !== undefined && REQUEST_4XX.has(status);
}

/**
 * True when the failure describes the request itself: the caller's bug, not the dependency's
 * health. The status decides: 400, 401, 403, 404, 405, 409, 410 and 422 always do (even when
 * listed in `retry.on`); another 4xx but 408, 425 and 429 does unless it is listed as retryable.
 * Such errors release the breaker permit without a verdict, cost no budget token and are never
 * served a fallback.
 */
export function describesRequest(error: ResilienceError): boolean {
  if (
    error.kind !== "http" ||
    error.status === undefined ||
    error.status < 400 ||
    error.status >= 500
  )
    return false;
  if (REQUEST_4XX.has(error.status)) return true;
  return !error.transient && !SERVER_STATE_4XX.has(error.status);
}

/**
 * True when the error reflects what the dependency did (or the protections around it): these
 * count against the breaker and are what a fallback may cover. Caller cancellation and errors
 * that describe the request are excluded.
 */
export function isDependencyFailure(error: unknown): error is ResilienceError {
  return isResilienceError(error) && error.kind !== "aborted" && !describesRequest(error);
}

/** Builds a `network` error, for function transports that want to classify their own failures. */
export function networkError(message: string, cause?: unknown): ResilienceError {
  return new ResilienceError({ kind: "network", message, cause, transient: true });
}

/** Builds an `aborted` error carrying the signal's reason as its cause. */
export function abortedError(
  reason: unknown,
  message = "the call was aborted by the caller",
): ResilienceError {
  return new ResilienceError({ kind: "aborted", message, cause: reason });
}
