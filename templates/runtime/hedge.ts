import { executeAttempt } from "./attempt.js";
import { REJECTED, type Permit } from "./breaker.js";
import type { Call } from "./call.js";
import type { TimerHandle } from "./clock.js";
import { isResilienceError, ResilienceError } from "./errors.js";

/** Hedging settings of an idempotent operation (used instead of retry). */
export interface HedgeSettings {
  /** Milliseconds after the latest copy before the next copy is launched (e.g. the p95 latency). */
  readonly delayMs: number;
  /** Copies in total, counting the first (e.g. 2). */
  readonly maxAttempts: number;
  /** Fraction of calls allowed to send a hedge, in [0, 1] (e.g. 0.05 for 5 %). */
  readonly budget: number;
}

/**
 * Keeps hedges to a fraction of calls: every call earns `ratio` tokens, every hedge spends one.
 * The bucket holds at most max(1, ratio × 100) tokens and starts full, so short bursts are
 * allowed but the long-run hedge rate cannot exceed `ratio`.
 */
export class HedgeBudget {
  /** Tokens earned per call: the long-run fraction of calls that may hedge. */
  readonly ratio: number;
  /** Most tokens the bucket holds (the largest burst of hedges). */
  readonly capacity: number;
  #tokens: number;

  /** @param ratio Fraction of calls allowed to hedge, clamped to [0, 1]. */
  constructor(ratio: number) {
    this.ratio = Math.min(1, Math.max(0, ratio));
    this.capacity = Math.max(1, this.ratio * 100);
    this.#tokens = this.ratio > 0 ? this.capacity : 0;
  }

  /** Current tokens. */
  get tokens(): number {
    return this.#tokens;
  }

  /** Credits one logical call. */
  onCall(): void {
    const next = this.#tokens + this.ratio;
    this.#tokens = next < this.capacity ? next : this.capacity;
  }

  /** Spends a token for one hedge if available. */
  tryTake(): boolean {
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}

/**
 * Sends the first copy, then another each `delayMs` (or at once after a transient failure, as
 * gRPC hedging does) while copies remain, the deadline allows, the retry budget consents, the
 * hedge budget has a token and the breaker admits it (asked first, so a hedge it refuses spends
 * no token). The first success wins and the other copies are aborted (their breaker permits
 * released without a verdict). A non-transient failure, or a programming error, ends the call
 * at once. When every copy fails, the first-launched copy's error is thrown with the
 * others in `others`.
 *
 * @param firstPermit The breaker permit already granted for the first copy.
 */
export function runHedged<T>(call: Call<T>, settings: HedgeSettings, hedgeBudget: HedgeBudget, firstPermit: Permit): Promise<T> {
  const { clock, events, budget, breaker, name } = call.dep;
  const operation = call.plan.operation;
  const maxCopies = call.plan.repeatable ? Math.max(1, Math.floor(settings.maxAttempts)) : 1;
  hedgeBudget.onCall();
  return new Promise<T>((resolve, reject) => {
    const failures: ResilienceError[] = [];
    let launched = 0;
    let running = 0;
    let done = false;
    let timer: TimerHandle | undefined;

    const stopTimer = (): void => {
      if (timer !== undefined) clock.clearTimer(timer);
      timer = undefined;
    };

    const fail = (error: unknown): void => {
      done = true;
      stopTimer();
      call.cancelLive(lost(call));
      reject(error);
    };

    const launch = (permit: number): void => {
      const index = launched++;
      running++;
      if (index > 0 && events.active) {
        events.emit({ type: "hedge-launched", dependency: name, operation, call: call.plan.id, attempt: call.attempts + 1 });
      }
      executeAttempt(call, permit, index > 0).then(
        (value) => {
          running--;
          if (done) return;
          done = true;
          stopTimer();
          call.cancelLive(lost(call));
          resolve(value);
        },
        (error: unknown) => {
          running--;
          if (done) return;
          // a programming error (thrown as it is) or a failure that is not transient ends the call
          if (!isResilienceError(error) || !error.transient) return fail(error);
          failures[index] = error;
          if (tryHedge() || running > 0) return;
          const first = failures[0] ?? error;
          first.others = failures.filter((f) => f !== first);
          fail(first);
        },
      );
      stopTimer();
      if (launched < maxCopies) timer = clock.setTimer(onTimer, settings.delayMs);
    };

    const tryHedge = (): boolean => {
      if (done || launched >= maxCopies || call.tooLittle(call.timeLeft())) return false;
      if (budget !== null && !budget.allowsRetry()) {
        if (events.active) events.emit({ type: "budget-exhausted", dependency: name, operation, tokens: budget.tokens });
        return false;
      }
      // the breaker is asked before the hedge token is spent, so a refused hedge costs nothing
      if (hedgeBudget.tokens < 1) return false;
      const permit = breaker === null ? 0 : breaker.tryAcquire();
      if (permit === REJECTED) return false;
      hedgeBudget.tryTake();
      launch(permit);
      return true;
    };

    const onTimer = (): void => {
      timer = undefined;
      tryHedge();
    };

    launch(firstPermit);
  });
}

function lost(call: Call<unknown>): ResilienceError {
  return new ResilienceError({
    kind: "aborted",
    message: `${call.dep.name}.${call.plan.operation}: another hedged copy settled first`,
    dependency: call.dep.name,
    operation: call.plan.operation,
    withoutStack: true,
  });
}
