// The calls each platform's smoke test makes through a client generated from the test's policy,
// and the report it prints as JSON (docs/platforms.md). It runs under Bun, Deno and workerd, so it
// uses only what every one of them has: no Node API, no process, no file system.
import type { Clock, Outcome, ResilienceError } from "../../templates/runtime/public.js";

/** `GET /items/{id}` and `GET /slow/{id}` answer this; the server echoes the deadline header. */
export interface ProbeItem {
  readonly id: string;
  readonly deadlineHeader?: string;
}

/** `GET /prices/{id}` answers this; the policy's `otherwise` value is `{ id: "none", cents: 0 }`. */
export interface ProbePrice {
  readonly id: string;
  readonly cents: number;
}

/** What the probe uses of the generated client (from the policy in harness.ts). */
export interface ProbeClient {
  getItem(input: { readonly id: string }, options?: Deadlined): Promise<ProbeItem>;
  getSlowItem(input: { readonly id: string }, options?: Deadlined): Promise<ProbeItem>;
  getBrokenItem(input: { readonly id: string }): Promise<Outcome<ProbeItem>>;
  getPrice(
    input: { readonly id: string },
    options?: { readonly cacheKey?: string },
  ): Promise<Outcome<ProbePrice>>;
}

/** The call option a deadline is passed with explicitly (`platform: web`). */
export interface Deadlined {
  readonly deadline?: number;
}

/** The generated output's exports the probe needs, handed over by each platform's entry module. */
export interface ProbeRuntime {
  readonly platform: string;
  readonly baseUrl: string;
  /** Passed to the client; `undefined` leaves the runtime's default clock. */
  readonly clock?: Clock | undefined;
  createCatalogClient(config: {
    readonly baseUrl: string;
    readonly clock?: Clock | undefined;
  }): ProbeClient;
  withDeadline<T>(budget: number, fn: () => T): T;
  /**
   * Set for a `platform: web` build, which has no ambient deadlines: the probe passes the same
   * deadlines to each call instead, the report must come out the same, and `withDeadline` must
   * refuse to run.
   */
  readonly explicitDeadlines?: boolean | undefined;
  isResilienceError(value: unknown): value is ResilienceError;
}

/** One call as the report gives it: what it returned or threw, and how long it took. */
export interface CallReport {
  readonly elapsedMs: number;
  readonly value?: unknown;
  readonly degraded?: boolean;
  readonly reason?: string;
  readonly ageMs?: number;
  readonly error?: {
    readonly kind: string;
    readonly tier: string | null;
    readonly attempts: number;
    readonly message: string;
  };
  /** Set when the call threw something other than a ResilienceError. */
  readonly thrown?: string;
}

export interface ProbeReport {
  readonly platform: string;
  /** (a) `getItem`: the server answers at once. */
  readonly success: CallReport;
  /** (b) `getSlowItem`: the server answers after the attempt timeout; no fallback. */
  readonly timeout: CallReport;
  /** `getPrice` the first time: fresh, and stored for the stale fallback. */
  readonly primed: CallReport;
  /** (c) `getPrice` again: the server is now slow, the stored answer is served. */
  readonly stale: CallReport;
  /** `getPrice` again with another `cacheKey`: nothing stored for it, the policy's value is served. */
  readonly otherwise: CallReport;
  /** `getBrokenItem`: the server drops the connection; the policy's value is served. */
  readonly network: CallReport;
  /** `getItem` inside `withDeadline(120)`, after a timer: the header carries the ambient deadline. */
  readonly ambientHeader: CallReport;
  /** `getSlowItem` inside `withDeadline(100)`: the ambient deadline, not the attempt timeout, ends it. */
  readonly ambientDeadline: CallReport;
  /** With `explicitDeadlines`: `withDeadline` around a call, which must throw before calling. */
  readonly scope?: CallReport;
  /** `getItem` once more: the client still answers after the failures. */
  readonly after: CallReport;
}

/**
 * A clock on the host's own timers, one per runtime timer: what a worker passes as `clock` on
 * workerd, where a timer does not outlive the request that set it (docs/platforms.md).
 */
export const hostClock: Clock = {
  now: () => performance.now(),
  setTimer: (callback, delayMs) => setTimeout(callback, Math.max(0, delayMs)),
  clearTimer: (handle) => {
    clearTimeout(handle as Parameters<typeof clearTimeout>[0]);
  },
};

/** Ambient deadlines of the last two calls, shorter than the policy's 200 ms attempt timeout. */
export const AMBIENT_HEADER_MS = 120;
export const AMBIENT_DEADLINE_MS = 100;

/** Runs one call and reports what it returned or threw. */
export async function timed(
  runtime: Pick<ProbeRuntime, "isResilienceError">,
  call: () => Promise<unknown>,
): Promise<CallReport> {
  const start = performance.now();
  try {
    const value = await call();
    const elapsedMs = Math.round(performance.now() - start);
    if (typeof value === "object" && value !== null && "degraded" in value) {
      const outcome = value as Outcome<unknown>;
      return outcome.degraded
        ? {
            elapsedMs,
            value: outcome.data,
            degraded: true,
            reason: outcome.reason,
            ...(outcome.ageMs === undefined ? {} : { ageMs: outcome.ageMs }),
          }
        : { elapsedMs, value: outcome.data, degraded: false };
    }
    return { elapsedMs, value };
  } catch (error) {
    const elapsedMs = Math.round(performance.now() - start);
    if (!runtime.isResilienceError(error)) return { elapsedMs, thrown: String(error) };
    return {
      elapsedMs,
      error: {
        kind: error.kind,
        tier: error.tier ?? null,
        attempts: error.attempts,
        message: error.message,
      },
    };
  }
}

/** One call of the client, by name, for a smoke test that needs a single call per request. */
export function probeCall(
  runtime: ProbeRuntime,
  operation: "getItem" | "getSlowItem",
  id: string,
): Promise<CallReport> {
  const client = runtime.createCatalogClient({ baseUrl: runtime.baseUrl, clock: runtime.clock });
  return timed(runtime, () => client[operation]({ id }));
}

/** Makes the calls in order, one at a time, and reports each. */
export async function runProbe(runtime: ProbeRuntime): Promise<ProbeReport> {
  const client = runtime.createCatalogClient({ baseUrl: runtime.baseUrl, clock: runtime.clock });
  const success = await timed(runtime, () => client.getItem({ id: "a1" }));
  const timeout = await timed(runtime, () => client.getSlowItem({ id: "b1" }));
  const primed = await timed(runtime, () => client.getPrice({ id: "p1" }));
  const stale = await timed(runtime, () => client.getPrice({ id: "p1" }));
  const otherwise = await timed(runtime, () =>
    client.getPrice({ id: "p1" }, { cacheKey: "another-tenant" }),
  );
  const network = await timed(runtime, () => client.getBrokenItem({ id: "n1" }));
  // The timer between entering the scope and calling is what AsyncLocalStorage must carry the
  // scope across (docs/platforms.md): a context lost there reaches the call as no deadline at all.
  const explicit = runtime.explicitDeadlines === true;
  const ambientHeader = await timed(runtime, () =>
    explicit
      ? client.getItem({ id: "d1" }, { deadline: AMBIENT_HEADER_MS })
      : runtime.withDeadline(AMBIENT_HEADER_MS, async () => {
          await new Promise<void>((resolve) => setTimeout(resolve, 1));
          return client.getItem({ id: "d1" });
        }),
  );
  const ambientDeadline = await timed(runtime, () =>
    explicit
      ? client.getSlowItem({ id: "d2" }, { deadline: AMBIENT_DEADLINE_MS })
      : runtime.withDeadline(AMBIENT_DEADLINE_MS, () => client.getSlowItem({ id: "d2" })),
  );
  // without ambient scopes, asking for one is refused rather than ignored
  const scope = explicit
    ? await timed(runtime, () => runtime.withDeadline(50, () => client.getItem({ id: "s1" })))
    : undefined;
  const after = await timed(runtime, () => client.getItem({ id: "z1" }));
  return {
    platform: runtime.platform,
    success,
    timeout,
    primed,
    stale,
    otherwise,
    network,
    ambientHeader,
    ambientDeadline,
    ...(scope === undefined ? {} : { scope }),
    after,
  };
}
