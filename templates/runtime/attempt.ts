import { REJECTED, type Permit } from "./breaker.js";
import type { Call } from "./call.js";
import { isNetworkFailure, isProgrammingError, matchesErrorCondition } from "./classify.js";
import { abortedError, describesRequest, isRequestStatus, isResilienceError, ResilienceError } from "./errors.js";
import type { AttemptOutcome } from "./events.js";
import { matchesRetryOn } from "./retry.js";
import { Attempt } from "./timeout.js";

/**
 * Checks the deadline and asks the breaker for a permit. Returns the permit, or the `deadline`
 * or `circuit-open` error to reject with: returned rather than thrown because this is the
 * load-shedding path, and throwing costs more than the rest of the rejection.
 *
 * @param now The clock's current time, when the caller has just read it.
 */
export function admitAttempt(call: Call<unknown>, now: number = call.dep.clock.now()): Permit | ResilienceError {
  // too little time left fails as `deadline` before the breaker is asked: no attempt, no verdict
  const left = call.timeLeft(now);
  if (call.tooLittle(left)) return call.deadlineError(left);
  const breaker = call.dep.breaker;
  if (breaker === null) return 0;
  const permit = breaker.tryAcquire(now);
  if (permit !== REJECTED) return permit;
  const { events, name } = call.dep;
  const state = breaker.state.state;
  // a closed breaker rejects only while ramping up after recovery (docs/runtime.md, "Circuit breaker")
  const admitted = state === "closed" ? breaker.rampFraction(now) ?? undefined : undefined;
  if (events.active) {
    events.emit({ type: "breaker-rejected", dependency: name, operation: call.plan.operation, state, ...(admitted === undefined ? {} : { admitted }) });
  }
  const detail =
    state === "open" ? `trials in ${Math.ceil(breaker.retryInMs(now))} ms` : admitted !== undefined ? `ramping up after recovery, ${Math.floor(admitted * 100)} % admitted` : state;
  return new ResilienceError({
    kind: "circuit-open",
    message: `${name}.${call.plan.operation}: circuit open (${detail})`,
    dependency: name,
    operation: call.plan.operation,
    // the failure that opened the breaker, stored once when it opened (docs/runtime.md); a
    // breaker isolated by hand has none, and a retry then keeps its own last failure
    cause: breaker.openedBy ?? call.lastError,
    withoutStack: true,
  });
}

/**
 * Opens the next attempt of `call` under an admitted permit: its timeout is the attempt timeout
 * or what is left before the deadline minus margin, whichever is shorter. Start it with
 * {@link Attempt.start}; report its end with {@link recordSuccess} or {@link recordFailure}.
 *
 * @param now The clock's current time, when the caller has just read it.
 */
export function openAttempt(call: Call<unknown>, permit: Permit, hedge: boolean, now: number = call.dep.clock.now()): Attempt {
  const left = call.timeLeft(now);
  const attemptMs = call.plan.attemptMs;
  const byDeadline = left < attemptMs;
  const timeoutMs = byDeadline ? left : attemptMs;
  const headersMs = call.plan.headersMs < timeoutMs ? call.plan.headersMs : Number.POSITIVE_INFINITY;
  const attempt = new Attempt(call, ++call.attempts, hedge, timeoutMs, byDeadline ? "deadline" : "timeout", permit, now, headersMs);
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
  return attempt;
}

/**
 * Runs one attempt of a hedged call and settles with its outcome, recorded. (Attempts in
 * sequence report to their {@link Call} directly, without a promise of their own.)
 */
export function executeAttempt<T>(call: Call<T>, permit: Permit, hedge: boolean): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    openAttempt(call, permit, hedge).start(call.plan.transport, {
      succeeded: (attempt, value) => {
        recordSuccess(call, attempt);
        resolve(value);
      },
      failed: (attempt, error) => reject(recordFailure(call, attempt, error, true)),
    });
  });
}

/**
 * Records a successful attempt with the breaker (exactly once), the retry budget and the
 * observers. The clock is read only when something needs the attempt's duration: a slow-call
 * check or an observer.
 */
export function recordSuccess(call: Call<unknown>, attempt: Attempt): void {
  const { clock, events, breaker, budget } = call.dep;
  const timed = events.active || (breaker !== null && breaker.settings.slowCall !== null);
  const ended = timed ? clock.now() : attempt.started;
  const durationMs = Math.max(0, ended - attempt.started);
  breaker?.onSuccess(attempt.permit, durationMs, ended);
  budget?.onSuccess();
  if (events.active) emitEnd(call, attempt, "success", durationMs, undefined);
  removeLive(call, attempt);
}

/**
 * Classifies a failed attempt and records it with the breaker (exactly once), the retry budget
 * and the observers. Returns the classified error, or a programming error as it was thrown.
 *
 * Verdicts (docs/runtime.md, "What counts against the breaker and the budget"):
 * - caller cancellation, errors that describe the request, programming errors, and an attempt
 *   cut short by the call's deadline (before its own attempt timeout) give the breaker permit
 *   back without a verdict and cost no budget token;
 * - every other failure counts against the breaker, and costs a token only when the retry
 *   policy would retry it (transient, on a repeatable operation that retries or hedges).
 *
 * @param hedged Whether the attempt belongs to a hedged call (whose transient failures launch the next copy).
 */
export function recordFailure(call: Call<unknown>, attempt: Attempt, raw: unknown, hedged = false): unknown {
  const { clock, events, breaker, budget } = call.dep;
  const error = classify(call, attempt, raw);
  const ended = clock.now();
  const durationMs = Math.max(0, ended - attempt.started);
  if (!isResilienceError(error)) {
    // a bug in the transport or the caller's code: not the dependency's health
    breaker?.release(attempt.permit);
    if (events.active) emitEnd(call, attempt, "failure", durationMs, undefined);
    removeLive(call, attempt);
    return error;
  }
  let outcome: AttemptOutcome;
  if (error.kind === "aborted") {
    breaker?.release(attempt.permit);
    outcome = "cancelled";
  } else if (error.kind === "deadline") {
    // the caller's deadline ended it, not the dependency: slowness upstream must not open breakers downstream
    breaker?.release(attempt.permit);
    outcome = "timeout";
  } else if (describesRequest(error)) {
    breaker?.release(attempt.permit);
    outcome = "failure";
  } else {
    breaker?.onFailure(attempt.permit, durationMs, ended, error);
    if (budget !== null && error.transient && wouldRetry(call, hedged)) budget.onFailure();
    outcome = error.kind === "timeout" ? "timeout" : "failure";
  }
  call.lastError = error;
  if (events.active) emitEnd(call, attempt, outcome, durationMs, error);
  removeLive(call, attempt);
  return error;
}

/** Whether the call's plan repeats a transient failure at all: gRPC A6 charges only those. */
function wouldRetry(call: Call<unknown>, hedged: boolean): boolean {
  const plan = call.plan;
  if (!plan.repeatable) return false;
  return hedged || (plan.retry !== null && plan.retry.maxAttempts >= 2);
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
    tier: error?.tier,
  });
}

/**
 * Turns whatever the transport threw into a {@link ResilienceError}: the runtime's own timeout
 * or cancellation first, then errors that already are resilience errors (transient re-derived
 * from this operation's retry conditions, or a `network` error whose cause the retry settings
 * name), then a caller abort. Anything else is transient only when recognised
 * (docs/runtime.md, "What counts as transient"): the `classify` hook's verdict first, then an
 * error the retry settings name by code or name, then a Node or undici network failure; a
 * programming error is returned as it is; any other error is a `network` failure, not retried.
 */
function classify(call: Call<unknown>, attempt: Attempt, raw: unknown): unknown {
  const { name } = call.dep;
  const operation = call.plan.operation;
  let error: ResilienceError;
  if (attempt.cancelledWith !== undefined) {
    return attempt.cancelledWith;
  } else if (isResilienceError(raw)) {
    error = raw;
    if (error.kind === "http" || error.kind === "network" || error.kind === "timeout") {
      // a status that describes the request is never retried, whatever retry.on says (errors.ts, describesRequest)
      error.transient =
        !(error.kind === "http" && isRequestStatus(error.status)) &&
        (matchesRetryOn(error, call.plan.retryOn) || (error.kind === "network" && matchesErrorCondition(error.cause, call.plan.retryErrors)));
    }
  } else if (call.plan.signal?.aborted === true) {
    error = abortedError(call.plan.signal.reason);
  } else {
    const verdict = call.dep.classify?.(raw, { dependency: name, operation });
    let transient: boolean;
    if (verdict === "bug") return raw;
    else if (verdict !== undefined) transient = verdict === "transient";
    else if (matchesErrorCondition(raw, call.plan.retryErrors)) transient = true;
    else if (isNetworkFailure(raw)) transient = call.plan.retryOn.includes("network");
    else if (isProgrammingError(raw)) return raw;
    else transient = false;
    const text = raw instanceof Error ? raw.message : String(raw);
    error = new ResilienceError({ kind: "network", message: `${name}.${operation}: ${text}`, cause: raw, transient });
  }
  if (error.dependency === "") error.dependency = name;
  if (error.operation === "") error.operation = operation;
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
