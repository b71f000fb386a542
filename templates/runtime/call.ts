import { admitAttempt, annotate, openAttempt, recordFailure, recordSuccess } from "./attempt.js";
import type { CircuitBreaker, Permit } from "./breaker.js";
import type { RetryBudget } from "./budget.js";
import type { Bulkhead } from "./bulkhead.js";
import type { ErrorClassifier, ErrorCondition } from "./classify.js";
import type { Clock, TimerHandle } from "./clock.js";
import { Deadline, encodeTimeout, type DeadlineFormat } from "./deadline.js";
import { abortedError, isResilienceError, ResilienceError } from "./errors.js";
import type { Emitter } from "./events.js";
import { runHedged, type HedgeBudget, type HedgeSettings } from "./hedge.js";
import type { Random } from "./random.js";
import { retryDelay, type RetryCondition, type RetrySettings } from "./retry.js";
import type { Attempt, AttemptOwner, AttemptSettlement, Transport } from "./timeout.js";

/** The shared parts of a dependency that every call uses. */
export interface DependencyParts {
  readonly name: string;
  readonly clock: Clock;
  readonly random: Random;
  readonly events: Emitter;
  readonly breaker: CircuitBreaker | null;
  readonly budget: RetryBudget | null;
  /** Header that carries the remaining time, or `null` to not propagate it. */
  readonly propagation: { readonly header: string; readonly format: DeadlineFormat } | null;
  /** The `classify` hook for errors a transport throws, if one was given. */
  readonly classify: ErrorClassifier | undefined;
}

/**
 * How a call that has a fallback ends: the data as a fresh outcome, and a failure as a degraded
 * one when the fallback can serve it.
 */
export interface CallEnding {
  /** What the call resolves with when an attempt returned `data`. */
  succeeded(data: unknown): unknown;
  /** A promise of what to resolve with instead of failing, or `undefined` to fail with `error`. */
  failed(error: unknown): Promise<unknown> | undefined;
}

/** Per-call inputs fixed before the first attempt. */
export interface CallPlan<T> {
  /** Identifies the logical call in events. */
  readonly id: number;
  readonly operation: string;
  readonly transport: Transport<T>;
  /** The deadline: absolute clock time; `Infinity` for none. */
  readonly at: number;
  readonly marginMs: number;
  /** Attempt timeout in milliseconds; `Infinity` for none. */
  readonly attemptMs: number;
  /**
   * The least time left (past the margin) worth starting an attempt with, in milliseconds; 0 for
   * any. Below it the call fails at once with `deadline` (docs/runtime.md, "Deadlines").
   */
  readonly minAttemptMs: number;
  /** Time to the response headers, in milliseconds (`timeout.headers`); `Infinity` for no limit of its own. */
  readonly headersMs: number;
  /** Retry; `null` for a single attempt. */
  readonly retry: RetrySettings | null;
  readonly retryOn: readonly RetryCondition[];
  /** Thrown errors the retry settings name by code or name: transient. */
  readonly retryErrors: readonly ErrorCondition[];
  /** Whether the operation may be sent more than once (retried or hedged). */
  readonly repeatable: boolean;
  readonly idempotencyKey: string | undefined;
  readonly idempotencyHeader: string | null;
  readonly signal: AbortSignal | undefined;
  /** The fallback's say in how the call ends; `null` without a fallback. */
  readonly ending: CallEnding | null;
}

/** Hedging of one operation: its settings and the budget its calls share. */
export interface Hedging {
  readonly settings: HedgeSettings;
  readonly budget: HedgeBudget;
}

/**
 * One logical call, from its first admitted attempt until it settles: the retry loop (or
 * hedging), the caller's abort signal, the bulkhead slot it holds and the fallback.
 *
 * Attempts in sequence report to the call directly ({@link AttemptSettlement}) and the call
 * settles its one promise, so a call whose first attempt succeeds costs one promise and one
 * microtask on top of the transport's: no async frame per layer.
 */
export class Call<T> implements AttemptOwner, AttemptSettlement<T> {
  /** The dependency the call goes to. */
  readonly dep: DependencyParts;
  /** Inputs fixed before the first attempt. */
  readonly plan: CallPlan<T>;
  /** Attempts that reached the transport so far. */
  attempts = 0;
  /** Attempts in flight, so a caller abort can end them. */
  readonly live: Attempt[] = [];
  /** The most recent attempt failure. */
  lastError: ResilienceError | undefined;
  #deadline: Deadline | undefined;
  #resolve: (value: unknown) => void = ignore;
  #reject: (error: unknown) => void = ignore;
  #slot: Bulkhead | null = null;
  #done = false;
  #previousMs: number;
  // The attempt after which the server last set the wait (0: never): the backoff counts its
  // retries from there, so that it starts again from its base.
  #pushedBackAt = 0;
  #sleep: TimerHandle | undefined;
  #onAbort: (() => void) | undefined;

  constructor(dep: DependencyParts, plan: CallPlan<T>) {
    this.dep = dep;
    this.plan = plan;
    this.#previousMs = plan.retry?.backoff.baseMs ?? 0;
  }

  get clock(): Clock {
    return this.dep.clock;
  }
  get dependency(): string {
    return this.dep.name;
  }
  get operation(): string {
    return this.plan.operation;
  }
  get idempotencyKey(): string | undefined {
    return this.plan.idempotencyKey;
  }
  /** The call's deadline, made when a transport first asks for it. */
  get deadline(): Deadline {
    return (this.#deadline ??= new Deadline(this.plan.at, this.dep.clock));
  }
  get retryOn(): readonly RetryCondition[] {
    return this.plan.retryOn;
  }

  /**
   * Milliseconds an attempt starting now could take before the deadline minus margin.
   *
   * @param now The clock's current time, when the caller has just read it.
   */
  timeLeft(now: number = this.dep.clock.now()): number {
    return this.plan.at - this.plan.marginMs - now;
  }

  /** Whether `left` (see {@link timeLeft}) is too little to start an attempt with: none, or under the minimum. */
  tooLittle(left: number): boolean {
    return left <= 0 || left < this.plan.minAttemptMs;
  }

  headersFor(timeoutMs: number): Record<string, string> {
    const headers: Record<string, string> = {};
    const propagation = this.dep.propagation;
    if (propagation !== null && Number.isFinite(timeoutMs)) {
      headers[propagation.header] = encodeTimeout(timeoutMs, propagation.format);
    }
    if (this.plan.idempotencyHeader !== null && this.plan.idempotencyKey !== undefined) {
      headers[this.plan.idempotencyHeader] = this.plan.idempotencyKey;
    }
    return headers;
  }

  /** Ends every attempt in flight with `error` (caller abort, or siblings of a hedge winner). */
  cancelLive(error: ResilienceError, except?: Attempt): void {
    for (const attempt of [...this.live]) if (attempt !== except) attempt.cancel(error);
  }

  /**
   * A `deadline` error for when no time (or less than the minimum attempt budget) is left to
   * start an attempt.
   *
   * @param left The time left past the margin, when the caller knows it: a positive value names the minimum it is under.
   */
  deadlineError(left = 0): ResilienceError {
    if (this.dep.events.active) {
      this.dep.events.emit({
        type: "deadline-exceeded",
        dependency: this.dep.name,
        operation: this.plan.operation,
        stage: this.attempts === 0 ? "before-call" : "attempt",
      });
    }
    return new ResilienceError({
      kind: "deadline",
      message:
        left > 0
          ? `${this.dep.name}.${this.plan.operation}: ${Math.floor(left)} ms left before attempt ${this.attempts + 1}, under its minimum of ${this.plan.minAttemptMs} ms`
          : `${this.dep.name}.${this.plan.operation}: deadline reached before attempt ${this.attempts + 1}`,
      tier: "deadline",
      dependency: this.dep.name,
      operation: this.plan.operation,
      cause: this.lastError,
      withoutStack: true,
    });
  }

  /**
   * Runs the call from its first attempt, admitted under `first`. Resolves with the data (or the
   * fallback's outcome); rejects with an annotated {@link ResilienceError}.
   *
   * @param now The clock's time when `first` was granted.
   * @param slot The bulkhead whose slot the call holds, given back as the call settles.
   * @param hedging Hedging, for a repeatable operation that hedges; `null` to retry in sequence.
   */
  run(first: Permit, now: number, slot: Bulkhead | null, hedging: Hedging | null): Promise<unknown> {
    return new Promise<unknown>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
      this.#slot = slot;
      const signal = this.plan.signal;
      if (signal !== undefined) {
        this.#onAbort = () => this.#abort(abortedError(signal.reason));
        signal.addEventListener("abort", this.#onAbort, { once: true });
      }
      if (hedging === null) this.#attempt(first, now);
      else {
        runHedged(this, hedging.settings, hedging.budget, first).then(
          (value) => this.#succeed(value),
          (error: unknown) => this.#fail(error),
        );
      }
    });
  }

  /** Runs the call once `wait` (a bulkhead queue) admits it; the call then holds `slot`. */
  runAfter(wait: Promise<void>, slot: Bulkhead, hedging: Hedging | null): Promise<unknown> {
    return wait.then(
      () => {
        // the caller may have aborted between the queue handing over the slot and now
        const signal = this.plan.signal;
        if (signal?.aborted === true) {
          slot.leave();
          return this.refused(abortedError(signal.reason));
        }
        const now = this.dep.clock.now();
        const permit = admitAttempt(this, now);
        if (typeof permit === "number") return this.run(permit, now, slot, hedging);
        slot.leave();
        return this.refused(permit);
      },
      (error: unknown) => this.refused(error),
    );
  }

  /**
   * Ends a call refused before its first attempt (load shedding: open breaker, full bulkhead,
   * expired deadline, caller abort). Degraded by the fallback when it can serve; otherwise
   * rejected one microtask from now (see {@link rejectSoon}).
   */
  refused(error: unknown): Promise<unknown> {
    this.#done = true;
    annotate(error, this);
    return this.plan.ending?.failed(error) ?? rejectSoon(error);
  }

  /** @internal An attempt in sequence returned `value`. */
  succeeded(attempt: Attempt, value: T): void {
    recordSuccess(this, attempt);
    this.#succeed(value);
  }

  /** @internal An attempt in sequence failed: retry it after a backoff, or end the call. */
  failed(attempt: Attempt, raw: unknown): void {
    const error = recordFailure(this, attempt, raw);
    if (this.#done) return;
    // a programming error is thrown as it is: no retry, no fallback
    if (!isResilienceError(error)) return this.#fail(error);
    const delayMs = this.#retryDelay(error, attempt.attempt);
    if (typeof delayMs !== "number") return this.#fail(delayMs);
    if (delayMs > 0) this.#sleep = this.dep.clock.setTimer(() => this.#wake(), delayMs);
    else queueMicrotask(() => this.#wake());
  }

  #attempt(permit: Permit, now?: number): void {
    openAttempt(this, permit, false, now).start(this.plan.transport, this);
  }

  /**
   * A retry needs: a transient failure, a repeatable operation, attempts left, the budget's
   * consent, a server's wait (`Retry-After`) no longer than `retryAfter.capMs`, and a wait that
   * still ends before the deadline minus margin. Returns the wait, or the error to end the call
   * with (an exhausted budget ends it with `budget-exhausted`, the failure as its cause).
   */
  #retryDelay(error: ResilienceError, n: number): number | ResilienceError {
    const retry = this.plan.retry;
    if (retry === null || !this.plan.repeatable || !error.transient || n >= Math.max(1, Math.floor(retry.maxAttempts))) return error;
    const { random, events, budget, name } = this.dep;
    const operation = this.plan.operation;
    if (budget !== null && !budget.allowsRetry()) {
      if (events.active) events.emit({ type: "budget-exhausted", dependency: name, operation, tokens: budget.tokens });
      return new ResilienceError({
        kind: "budget-exhausted",
        message: `${name}.${operation}: retry budget exhausted after attempt ${n} (${error.message})`,
        dependency: name,
        operation,
        cause: error,
        withoutStack: true,
      });
    }
    const { delayMs, fromRetryAfter, beyondCap } = retryDelay(retry, n - this.#pushedBackAt, this.#previousMs, random, error);
    // The server asked for more than retryAfter.max: give up now rather than retry early; the
    // failure keeps the server's wait in `retryAfterMs` (docs/runtime.md).
    if (beyondCap) return error;
    if (fromRetryAfter) {
      // after a server-set wait the backoff starts again from its base (gRPC A6 pushback)
      this.#pushedBackAt = n;
      this.#previousMs = retry.backoff.baseMs;
    } else {
      this.#previousMs = delayMs;
    }
    // the retry must still start with at least the minimum attempt budget left
    if (this.tooLittle(this.timeLeft() - delayMs)) {
      if (events.active) events.emit({ type: "deadline-exceeded", dependency: name, operation, stage: "retry" });
      return error;
    }
    if (events.active) {
      events.emit({
        type: "retry-scheduled",
        dependency: name,
        operation,
        call: this.plan.id,
        attempt: n,
        delayMs,
        retryAfter: fromRetryAfter,
        reason: error.kind,
      });
    }
    return delayMs;
  }

  // The backoff is over: the next attempt needs a permit like the first (a breaker rejection is
  // final: it is never retried and nothing sleeps).
  #wake(): void {
    this.#sleep = undefined;
    if (this.#done) return;
    const now = this.dep.clock.now();
    const permit = admitAttempt(this, now);
    if (typeof permit === "number") this.#attempt(permit, now);
    else this.#fail(permit);
  }

  #abort(error: ResilienceError): void {
    if (this.#done) return;
    // attempts in flight fail with it (and, not being transient, end the call); a backoff ends here
    this.cancelLive(error);
    this.#fail(error);
  }

  #succeed(value: T): void {
    if (this.#done) return;
    this.#settle();
    const ending = this.plan.ending;
    this.#resolve(ending === null ? value : ending.succeeded(value));
  }

  #fail(error: unknown): void {
    if (this.#done) return;
    this.#settle();
    annotate(error, this);
    const degraded = this.plan.ending?.failed(error);
    if (degraded === undefined) this.#reject(error);
    else degraded.then(this.#resolve, this.#reject);
  }

  #settle(): void {
    this.#done = true;
    if (this.#sleep !== undefined) this.dep.clock.clearTimer(this.#sleep);
    if (this.#onAbort !== undefined) this.plan.signal?.removeEventListener("abort", this.#onAbort);
    this.#slot?.leave();
  }
}

/**
 * A promise that rejects with `error` one microtask from now. Load shedding must stay cheap, and
 * a promise already rejected when returned is tracked by Node as a possibly unhandled rejection
 * until the caller's handler arrives, which costs more than the rest of the rejection; by the
 * next microtask the caller has attached its handler. Unhandled, it is still reported as such.
 */
export function rejectSoon(error: unknown): Promise<never> {
  return new Promise<never>((_resolve, reject) => queueMicrotask(() => reject(error)));
}

function ignore(): void {}
