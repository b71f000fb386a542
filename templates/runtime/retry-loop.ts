import { admitAttempt, annotate, executeAttempt, type Call } from "./attempt.js";
import type { Permit } from "./breaker.js";
import type { Bulkhead } from "./bulkhead.js";
import { sleep } from "./clock.js";
import { isResilienceError, ResilienceError } from "./errors.js";
import { retryDelay, type RetrySettings } from "./retry.js";

/**
 * Runs attempts until one succeeds or a retry is not allowed. A retry needs: a transient
 * failure, a repeatable operation, attempts left, the budget's consent, and a wait that still
 * ends before the deadline minus margin. Otherwise the last failure is thrown as is (an
 * exhausted budget throws `budget-exhausted` with the last failure as its cause). A breaker
 * rejection is final: it is never retried and nothing sleeps.
 *
 * @param firstPermit The breaker permit already granted for the first attempt.
 * @param now The clock's time when that permit was granted (the first attempt starts then).
 * @param slot The bulkhead whose slot the call holds, given back when the call settles; `null`
 *   when the caller gives it back itself (or holds none). Failures leave annotated either way.
 */
export async function runWithRetries<T>(
  call: Call<T>,
  retry: RetrySettings | null,
  firstPermit: Permit,
  now?: number,
  slot: Bulkhead | null = null,
): Promise<T> {
  const { clock, random, events, budget, name } = call.dep;
  const operation = call.plan.operation;
  const maxAttempts = retry !== null && call.plan.repeatable ? Math.max(1, Math.floor(retry.maxAttempts)) : 1;
  let previousMs = retry?.backoff.baseMs ?? 0;
  try {
    for (let n = 1; ; n++) {
      const permit = n === 1 ? firstPermit : admitAttempt(call);
      if (typeof permit !== "number") throw permit;
      try {
        return await executeAttempt(call, permit, false, n === 1 ? now : undefined);
      } catch (error) {
        if (retry === null || n >= maxAttempts || !isResilienceError(error) || !error.transient) throw error;
        if (budget !== null && !budget.allowsRetry()) {
          if (events.active) events.emit({ type: "budget-exhausted", dependency: name, operation, tokens: budget.tokens });
          throw new ResilienceError({
            kind: "budget-exhausted",
            message: `${name}.${operation}: retry budget exhausted after attempt ${n} (${error.message})`,
            dependency: name,
            operation,
            cause: error,
            withoutStack: true,
          });
        }
        const { delayMs, fromRetryAfter } = retryDelay(retry, n, previousMs, random, error);
        if (!fromRetryAfter) previousMs = delayMs;
        if (delayMs >= call.timeLeft()) {
          if (events.active) events.emit({ type: "deadline-exceeded", dependency: name, operation, stage: "retry" });
          throw error;
        }
        if (events.active) {
          events.emit({
            type: "retry-scheduled",
            dependency: name,
            operation,
            call: call.plan.id,
            attempt: n,
            delayMs,
            retryAfter: fromRetryAfter,
            reason: error.kind,
          });
        }
        await sleep(clock, delayMs, call.plan.signal);
      }
    }
  } catch (error) {
    throw annotate(error, call);
  } finally {
    slot?.leave();
  }
}
