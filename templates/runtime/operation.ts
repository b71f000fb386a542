// The settings of one operation, as generated clients emit them: timeouts, retry, hedging,
// idempotency key and fallback.
import type { ErrorCondition, ResultCondition } from "./classify.js";
import type { FallbackSettings } from "./fallback.js";
import type { HedgeSettings } from "./hedge-budget.js";
import type { IdempotencySettings } from "./idempotency.js";
import type { RateLimitSettings } from "./rate-limit.js";
import type { RetrySettings } from "./retry.js";

/** Time limits of an operation. */
export interface TimeoutSettings {
  /** Milliseconds one attempt may take; `null` for no per-attempt limit. */
  readonly attemptMs: number | null;
  /** Milliseconds the whole logical call may take (all attempts and waits); `null` for no limit. */
  readonly totalMs: number | null;
  /**
   * The least time left worth starting an attempt with (`deadline.minAttempt`, or the latency's
   * p50): with less, the call fails at once with `deadline`, no attempt made. Omitted or `null`:
   * any.
   */
  readonly minAttemptMs?: number | null | undefined;
  /**
   * Milliseconds until the response headers (`timeout.headers`), for transports that race them;
   * omitted or `null`: no limit of its own.
   */
  readonly headersMs?: number | null | undefined;
}

/**
 * Settings of one operation. `F` is the fallback's type; annotate literals with
 * `OperationSettings<null>` (or use `satisfies`) so results without a fallback are typed plain.
 */
export interface OperationSettings<F extends FallbackSettings | null = FallbackSettings | null> {
  /** Operation name, used in errors, events and the stale cache. */
  readonly name: string;
  /**
   * Whether sending the request twice is harmless (idempotent methods, or an idempotency key).
   * When false the operation is attempted exactly once: never retried, never hedged.
   */
  readonly repeatable: boolean;
  /** Idempotency key, made once per logical call and sent on every attempt; `null` for none. */
  readonly idempotencyKey: IdempotencySettings | null;
  /** Attempt and total timeouts. */
  readonly timeout: TimeoutSettings;
  /** Retry; `null` for a single attempt. */
  readonly retry: OperationRetrySettings | null;
  /** Hedging (instead of retry); `null` for none. */
  readonly hedge: HedgeSettings | null;
  /** Fallback; `null` (or `{ kind: "none" }`) for none. */
  readonly fallback: F;
  /**
   * Whether identical calls in flight at once share one attempt chain (retries, hedges, breaker
   * and bulkhead admission happen once for all of them), for retry-safe reads only. "Identical"
   * is the stale fallback's identity of the request, then `cacheKey`; a call given no identity
   * runs alone. Omitted or `false`: every call runs its own chain (docs/runtime.md,
   * "Coalescing").
   */
  readonly coalesce?: boolean | undefined;
  /**
   * This operation's own rate limit, used instead of the dependency's; `false` for none even
   * when the dependency has one; `null` or absent to share the dependency's.
   */
  readonly rateLimit?: RateLimitSettings | false | null | undefined;
}

/** Retry settings of an operation: {@link RetrySettings} and the thrown errors it names. */
export interface OperationRetrySettings extends RetrySettings {
  /**
   * Errors a transport throws that are transient, by `code` (`{ code: "ECONNRESET" }`) or `name`
   * (`{ name: "ThrottlingException" }`), matched on the error and its causes. Defaults to none.
   */
  readonly errors?: readonly ErrorCondition[] | undefined;
  /**
   * Responses that are transient by their status and decoded JSON body (the policy's `retry.on`
   * entries with a `body`), such as a 200 whose `$.status` is `pending`. Defaults to none.
   */
  readonly results?: readonly ResultCondition[] | undefined;
}
