import { REJECTED, type CircuitBreaker, type Permit } from "./breaker.js";
import type { RetryBudget } from "./budget.js";
import type { Clock } from "./clock.js";
import { encodeTimeout, type Deadline, type DeadlineFormat } from "./deadline.js";
import { abortedError, describesRequest, isResilienceError, ResilienceError } from "./errors.js";
import type { AttemptOutcome, Emitter } from "./events.js";
import type { Random } from "./random.js";
import { matchesRetryOn, type RetryCondition } from "./retry.js";
import { Attempt, type AttemptOwner, type AttemptSettlement, type Transport } from "./timeout.js";

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
}

/** Per-call inputs fixed before the first attempt. */
export interface CallPlan<T> {
  /** Identifies the logical call in events. */
  readonly id: number;
  readonly operation: string;
  readonly transport: Transport<T>;
  readonly deadline: Deadline;
  readonly marginMs: number;
  /** Attempt timeout in milliseconds; `Infinity` for none. */
  readonly attemptMs: number;
  readonly retryOn: readonly RetryCondition[];
  /** Whether the operation may be sent more than once (retried or hedged). */
  readonly repeatable: boolean;
  readonly idempotencyKey: string | undefined;
  readonly idempotencyHeader: string | null;
  readonly signal: AbortSignal | undefined;
}

/** State of one logical call while it runs through the retry loop or hedging. */
export class Call<T> implements AttemptOwner {
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

  constructor(dep: DependencyParts, plan: CallPlan<T>) {
    this.dep = dep;
    this.plan = plan;
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
  get deadline(): Deadline {
    return this.plan.deadline;
  }
  get retryOn(): readonly RetryCondition[] {
    return this.plan.retryOn;
  }

  /**
   * Milliseconds an attempt starting now could take before the deadline minus margin.
   *
   * @param now The clock's current time, when the caller has just read it (clock reads are
   *   among the dearest steps of a call).
   */
  timeLeft(now: number = this.dep.clock.now()): number {
    return this.plan.deadline.at - this.plan.marginMs - now;
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

  /** A `deadline` error for when no time is left to start an attempt. */
  deadlineError(): ResilienceError {
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
      message: `${this.dep.name}.${this.plan.operation}: deadline reached before attempt ${this.attempts + 1}`,
      dependency: this.dep.name,
      operation: this.plan.operation,
      cause: this.lastError,
      withoutStack: true,
    });
  }
}

/**
 * Checks the deadline and asks the breaker for a permit. Returns the permit, or the `deadline`
 * or `circuit-open` error to reject with: returned rather than thrown because this is the
 * load-shedding path, and throwing costs more than the rest of the rejection.
 */
export function admitAttempt(call: Call<unknown>, now?: number): Permit | ResilienceError {
  if (call.timeLeft(now) <= 0) return call.deadlineError();
  const breaker = call.dep.breaker;
  if (breaker === null) return 0;
  const permit = breaker.tryAcquire();
  if (permit !== REJECTED) return permit;
  const { events, name } = call.dep;
  const state = breaker.state.state;
  if (events.active) {
    events.emit({ type: "breaker-rejected", dependency: name, operation: call.plan.operation, state });
  }
  const detail = state === "open" ? `trials in ${Math.ceil(breaker.retryInMs())} ms` : state;
  return new ResilienceError({
    kind: "circuit-open",
    message: `${name}.${call.plan.operation}: circuit open (${detail})`,
    dependency: name,
    operation: call.plan.operation,
    cause: call.lastError,
    withoutStack: true,
  });
}

/**
 * Runs one attempt with an admitted permit: attempt timeout, transport, then records the outcome
 * with the breaker (exactly once) and the retry budget, and classifies any failure. The outcome
 * is recorded as the attempt's race settles ({@link AttemptRecord}), not in an async frame
 * awaiting it: one promise and one microtask fewer on every attempt.
 */
export function executeAttempt<T>(call: Call<T>, permit: Permit, hedge: boolean, now?: number): Promise<T> {
  const started = now ?? call.dep.clock.now();
  const left = call.plan.deadline.at - call.plan.marginMs - started;
  const byDeadline = left < call.plan.attemptMs;
  const attempt = new Attempt(call, ++call.attempts, hedge, byDeadline ? left : call.plan.attemptMs, byDeadline ? "deadline" : "timeout");
  call.live.push(attempt);
  const events = call.dep.events;
  if (events.active) {
    events.emit({
      type: "attempt-start",
      dependency: call.dep.name,
      operation: call.plan.operation,
      call: call.plan.id,
      attempt: attempt.attempt,
      hedge,
      timeoutMs: attempt.timeoutMs,
    });
  }
  return attempt.run(call.plan.transport, new AttemptRecord<T>(call, permit, started));
}

/** Records how one attempt of a call ended, with the breaker, the budget and the observers. */
class AttemptRecord<T> implements AttemptSettlement<T> {
  readonly #call: Call<T>;
  readonly #permit: Permit;
  readonly #started: number;

  constructor(call: Call<T>, permit: Permit, started: number) {
    this.#call = call;
    this.#permit = permit;
    this.#started = started;
  }

  succeeded(attempt: Attempt, value: T): T {
    const call = this.#call;
    const { clock, events, breaker, budget } = call.dep;
    const ended = clock.now();
    const durationMs = Math.max(0, ended - this.#started);
    breaker?.onSuccess(this.#permit, durationMs, ended);
    budget?.onSuccess();
    if (events.active) emitEnd(call, attempt, "success", durationMs, undefined);
    removeLive(call, attempt);
    return value;
  }

  failed(attempt: Attempt, raw: unknown): ResilienceError {
    const call = this.#call;
    const { clock, events, breaker, budget } = call.dep;
    const error = classify(call, attempt, raw);
    const ended = clock.now();
    const durationMs = Math.max(0, ended - this.#started);
    let outcome: AttemptOutcome;
    if (error.kind === "aborted") {
      breaker?.release(this.#permit);
      outcome = "cancelled";
    } else if (describesRequest(error)) {
      breaker?.release(this.#permit);
      outcome = "failure";
    } else {
      breaker?.onFailure(this.#permit, durationMs, ended);
      budget?.onFailure();
      outcome = error.kind === "timeout" || error.kind === "deadline" ? "timeout" : "failure";
    }
    call.lastError = error;
    if (events.active) emitEnd(call, attempt, outcome, durationMs, error);
    removeLive(call, attempt);
    return error;
  }
}

function removeLive(call: Call<unknown>, attempt: Attempt): void {
  // Without hedging the attempt is the only (so the last) one live; pop is much cheaper than splice.
  const live = call.live;
  if (live[live.length - 1] === attempt) live.pop();
  else {
    const i = live.indexOf(attempt);
    if (i >= 0) live.splice(i, 1);
  }
}

function emitEnd(
  call: Call<unknown>,
  attempt: Attempt,
  outcome: AttemptOutcome,
  durationMs: number,
  error: ResilienceError | undefined,
): void {
  call.dep.events.emit({
    type: "attempt-end",
    dependency: call.dep.name,
    operation: call.plan.operation,
    call: call.plan.id,
    attempt: attempt.attempt,
    hedge: attempt.hedge,
    outcome,
    durationMs,
    error,
  });
}

/**
 * Turns whatever the transport threw into a {@link ResilienceError}: the runtime's own timeout
 * or cancellation first, then errors that already are resilience errors (transient re-derived
 * from this operation's retry conditions), then a caller abort, and anything else as `network`.
 */
function classify(call: Call<unknown>, attempt: Attempt, raw: unknown): ResilienceError {
  const { name } = call.dep;
  const operation = call.plan.operation;
  let error: ResilienceError;
  if (attempt.cancelledWith !== undefined) {
    return attempt.cancelledWith;
  } else if (isResilienceError(raw)) {
    error = raw;
  } else if (call.plan.signal?.aborted === true) {
    error = abortedError(call.plan.signal.reason);
  } else {
    const text = raw instanceof Error ? raw.message : String(raw);
    error = new ResilienceError({ kind: "network", message: `${name}.${operation}: ${text}`, cause: raw });
  }
  if (error.dependency === "") error.dependency = name;
  if (error.operation === "") error.operation = operation;
  if (error.kind === "http" || error.kind === "network" || error.kind === "timeout") {
    error.transient = matchesRetryOn(error, call.plan.retryOn);
  }
  return error;
}

/** Fills in what a failure of `call` does not say yet: dependency, operation and attempts made. */
export function annotate(error: unknown, call: Call<unknown>): unknown {
  if (isResilienceError(error)) {
    if (error.dependency === "") error.dependency = call.dependency;
    if (error.operation === "") error.operation = call.operation;
    error.attempts = call.attempts;
  }
  return error;
}
