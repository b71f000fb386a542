// The call engine: one logical call from admission until it settles, with its attempts, retries,
// hedged copies and fallback.
import { followAbort } from "./abort.js";
import { REJECTED, type CircuitBreaker, type Permit } from "./breaker.js";
import type { RetryBudget } from "./budget.js";
import type { Bulkhead } from "./bulkhead.js";
import {
  isNetworkFailure,
  isProgrammingError,
  matchesErrorCondition,
  matchesResult,
  type AttemptResult,
  type Classifier,
  type ErrorCondition,
  type Verdict,
} from "./classify.js";
import { armEntry, DUE, sleep, TimerEntry, type Clock, type TimerHandle } from "./clock.js";
import { Deadline, encodeTimeout, type DeadlineFormat } from "./deadline.js";
import {
  abortedError,
  describesRequest,
  isDependencyFailure,
  isRequestStatus,
  isResilienceError,
  ResilienceError,
} from "./errors.js";
import type { AttemptOutcome, ChaosFaultKind, Emitter } from "./events.js";
import {
  serveFallback,
  staleKey,
  type FallbackSettings,
  type Outcome,
  type StaleCache,
} from "./fallback.js";
import type { HedgeBudget } from "./hedge-budget.js";
import type { OperationSettings } from "./operation.js";
import type { Random } from "./random.js";
import type { HeaderLookup, RateLimiter, SharedGrant } from "./rate-limit.js";
import {
  DEFAULT_RETRY_ON,
  matchesRetryOn,
  parseRetryAfter,
  retryDelay,
  type RetryCondition,
} from "./retry.js";
import type { AttemptContext, Transport } from "./transport.js";
import type { Endpoint, EndpointPool } from "./endpoints.js";

/** The shared parts of a dependency that every call uses. */
export interface DependencyParts {
  readonly name: string;
  readonly clock: Clock;
  readonly random: Random;
  readonly events: Emitter;
  /** The dependency's breaker; `null` for none, or when its endpoints have a breaker each. */
  readonly breaker: CircuitBreaker | null;
  /**
   * The endpoints, for a dependency given two or more (docs/runtime.md, "Endpoints"); `null`
   * otherwise, and then calls do no endpoint work at all.
   */
  readonly endpoints: EndpointPool | null;
  readonly budget: RetryBudget | null;
  /** Header that carries the remaining time, or `null` to not propagate it. */
  readonly propagation: { readonly header: string; readonly format: DeadlineFormat } | null;
  /** The client's `classify` hook, if one was given (docs/runtime.md, "Classifying outcomes"). */
  readonly classify: Classifier | undefined;
  /**
   * Milliseconds set aside from every deadline for the caller's own work (`deadline.marginMs`, at
   * least 0).
   */
  readonly marginMs: number;
}

/** A fallback that answers for something: `none` is said with `null`. */
export type ActiveFallback = Exclude<FallbackSettings, { kind: "none" }>;

/**
 * What a call's fallback needs beyond its settings. Only calls that have one of these carry the
 * object; a `value` fallback outside an inbound request's scope needs none.
 */
export interface FallbackInputs {
  /** The operation's stale cache, for a `stale` fallback. */
  readonly cache: StaleCache | null;
  /**
   * The request's key in the stale cache when its identity was known at the call (`""` otherwise).
   */
  readonly cacheKey: string;
  /**
   * For a request whose identity its attempts report (`AttemptContext.identify`): the caller's
   * `cacheKey`, and how to find the identity of a call that sent no attempt.
   */
  readonly late:
    | {
        readonly cacheKey: string | undefined;
        readonly resolve: () => string | Promise<string>;
      }
    | undefined;
  /** The caller's own fallback, for a `provided` one. */
  readonly provided: ((error: ResilienceError) => unknown) | undefined;
  /** The inbound request's collector of degraded dependencies, when its middleware reports them. */
  readonly degraded: Set<string> | undefined;
}

const NO_ERRORS: readonly ErrorCondition[] = [];

// The resolving functions of the promise `capture` last ran for (Promise runs its executor at
// once).
const captured: { resolve: (value: unknown) => void; reject: (error: unknown) => void } = {
  resolve: ignore,
  reject: ignore,
};
function capture(resolve: (value: unknown) => void, reject: (error: unknown) => void): void {
  captured.resolve = resolve;
  captured.reject = reject;
}

// How an attempt reports its end to its call: set by `Call`'s static block, so the call's state
// stays private to it while `Attempt`, in this module, can still report.
let attemptEnded: (call: Call<unknown>, attempt: Attempt, ok: boolean, result: unknown) => void;
// How an attempt reports the identity of the request it sends (set like `attemptEnded`).
let attemptIdentified: (call: Call<unknown>, identity: string) => void;
// Reports a fault the chaos option injected into an attempt (AttemptContext.injected).
let attemptInjected: (call: Call<unknown>, attempt: Attempt, fault: ChaosFaultKind) => void;

/**
 * One logical call, from admission until it settles: the retry loop (or hedging), the caller's
 * abort signal, the bulkhead slot it holds and the fallback. Its state is its own; attempts
 * report to it as their race settles, and it settles its one promise, so a call whose first
 * attempt succeeds costs one promise and one microtask on top of the transport's.
 */
export class Call<T> {
  readonly #dep: DependencyParts;
  readonly #op: OperationSettings;
  readonly #id: number;
  readonly #transport: Transport<T>;
  readonly #at: number;
  readonly #repeatable: boolean;
  readonly #idempotencyKey: string | undefined;
  readonly #signal: AbortSignal | undefined;
  readonly #fallback: ActiveFallback | null;
  readonly #fallbackInputs: FallbackInputs | undefined;
  readonly #hedgeBudget: HedgeBudget | null;
  // what only a classify hook, a rate limit, several endpoints or an adaptive bulkhead need
  // (see CallFeatures); undefined without them, so that a call with none carries one field
  #features: CallFeatures | undefined;
  // attempts that reached the transport so far
  #attempts = 0;
  // the attempt in flight of a call in sequence; a hedged call keeps its copies in #live
  #current: Attempt | undefined = undefined;
  #live: Attempt[] | undefined = undefined;
  #lastError: ResilienceError | undefined = undefined;
  // the stale-cache identity the latest attempt reported (AttemptContext.identify)
  #identity: string | undefined = undefined;
  #deadline: Deadline | undefined = undefined;
  #resolve: (value: unknown) => void = ignore;
  #reject: (error: unknown) => void = ignore;
  #slot: Bulkhead | null = null;
  #done = false;
  #previousMs = 0;
  // The attempt after which the server last set the wait (0: never): the backoff counts its
  // retries from there, so that it starts again from its base.
  #pushedBackAt = 0;
  // a backoff sleep, or the wait before the next hedged copy
  #timer: TimerHandle = undefined;
  // stops following the caller's signal: one listener on it for every call (abort.ts)
  #unfollow: (() => void) | undefined = undefined;
  // hedged copies still running, and the transient failures of those that ended, by launch order
  #running = 0;
  #failures: ResilienceError[] | undefined = undefined;

  static {
    attemptEnded = (call, attempt, ok, result) => {
      if (ok) call.#attemptSucceeded(attempt, result);
      else call.#attemptFailed(attempt, result);
    };
    attemptIdentified = (call, identity) => {
      call.#identity = identity;
    };
    attemptInjected = (call, attempt, fault) => {
      const events = call.#dep.events;
      if (!events.active) return;
      events.emit({
        type: "chaos-injected",
        dependency: call.#dep.name,
        operation: call.#op.name,
        call: call.#id,
        attempt: attempt.attempt,
        fault,
      });
    };
  }

  /**
   * @param id Identifies the logical call in events.
   * @param at The deadline: absolute clock time; `Infinity` for none.
   * @param repeatable Whether the operation may be sent more than once (retried or hedged).
   * @param signal The caller's signal, joined with the ambient one.
   * @param fallback The fallback; `null` without one.
   * @param hedgeBudget The hedge budget of an operation that hedges; `null` to retry in sequence.
   * @param features What a classify hook, a rate limit, several endpoints or an adaptive
   *   bulkhead need (see {@link callFeatures}); `undefined` without any of them.
   */
  constructor(
    dep: DependencyParts,
    op: OperationSettings,
    id: number,
    transport: Transport<T>,
    at: number,
    repeatable: boolean,
    idempotencyKey: string | undefined,
    signal: AbortSignal | undefined,
    fallback: ActiveFallback | null,
    fallbackInputs: FallbackInputs | undefined,
    hedgeBudget: HedgeBudget | null,
    features: CallFeatures | undefined,
  ) {
    this.#dep = dep;
    this.#op = op;
    this.#id = id;
    this.#transport = transport;
    this.#at = at;
    this.#repeatable = repeatable;
    this.#idempotencyKey = idempotencyKey;
    this.#signal = signal;
    this.#fallback = fallback;
    this.#fallbackInputs = fallbackInputs;
    this.#hedgeBudget = hedgeBudget;
    this.#features = features;
  }

  /**
   * Whether outcomes go through {@link Call.#judge}: a hook (the call's or the client's) or
   * body conditions in `retry.on`. Without them the engine keeps its plain path.
   */
  get judges(): boolean {
    return this.#features?.judges === true;
  }
  // the rate limit this call's attempts take permits from (the operation's or the dependency's)
  get #limiter(): RateLimiter | null {
    return this.#features?.limiter ?? null;
  }

  /** The clock of the call's dependency. */
  get clock(): Clock {
    return this.#dep.clock;
  }
  /** The dependency's name. */
  get dependency(): string {
    return this.#dep.name;
  }
  /** The operation's name. */
  get operation(): string {
    return this.#op.name;
  }
  /** The idempotency key, the same on every attempt, if the operation has one. */
  get idempotencyKey(): string | undefined {
    return this.#idempotencyKey;
  }
  /** The call's deadline, made when a transport first asks for it. */
  get deadline(): Deadline {
    return (this.#deadline ??= new Deadline(this.#at, this.#dep.clock));
  }
  /** The operation's own attempt timeout in milliseconds, `null` for none. */
  get attemptMs(): number | null {
    return this.#op.timeout.attemptMs;
  }
  /** Failures the operation retries. */
  get retryOn(): readonly RetryCondition[] {
    return this.#op.retry?.on ?? DEFAULT_RETRY_ON;
  }

  /**
   * Headers of an attempt that may take `timeoutMs`: the propagated remaining time and the
   * idempotency key.
   */
  headersFor(timeoutMs: number): Record<string, string> {
    const headers: Record<string, string> = {};
    const propagation = this.#dep.propagation;
    if (propagation !== null && Number.isFinite(timeoutMs)) {
      headers[propagation.header] = encodeTimeout(timeoutMs, propagation.format);
    }
    const header = this.#op.idempotencyKey?.header ?? null;
    if (header !== null && this.#idempotencyKey !== undefined)
      headers[header] = this.#idempotencyKey;
    return headers;
  }

  /**
   * Admits the call and runs it. The checks up to the first breaker permit run synchronously,
   * so load shedding (open breaker, full bulkhead, expired deadline, caller abort) returns a
   * promise without entering async frames; they all use `now`, read once by the caller.
   * Resolves with the data (or the fallback's outcome); rejects with an annotated
   * {@link ResilienceError}, or a programming error as it was thrown.
   *
   * @param now The clock's time, read once when the call entered the stack.
   * @param bulkhead The dependency's bulkhead, whose slot the call holds until it settles.
   */
  start(now: number, bulkhead: Bulkhead | null): Promise<unknown> {
    const signal = this.#signal;
    if (signal?.aborted === true) return this.#refused(abortedError(signal.reason));
    const left = this.#at - this.#dep.marginMs - now;
    const minAttemptMs = this.#op.timeout.minAttemptMs ?? 0;
    if (left <= 0 || left < minAttemptMs) return this.#refused(this.#deadlineError(left));
    if (bulkhead !== null) {
      // the queue wait ends while the minimum attempt budget is still left
      const entry = bulkhead.enter(this.#op.name, left - minAttemptMs, signal);
      if (entry instanceof Promise) return this.#afterQueue(entry, bulkhead);
      if (entry !== undefined) return this.#refused(entry);
    }
    if (this.#limiter !== null) return this.#limited(this.#limiter, now, bulkhead);
    const permit = this.#admit(now);
    if (typeof permit === "number") return this.#run(permit, now, bulkhead);
    bulkhead?.leave();
    return this.#refused(permit);
  }

  // The first attempt under a rate limit: a permit now, one after a bounded wait, or
  // `rate-limited`. The permit is taken before the breaker is asked, so no breaker permit (a
  // half-open trial's) is held through the wait; a permit the breaker then refuses is given back.
  #limited(limiter: RateLimiter, now: number, slot: Bulkhead | null): Promise<unknown> {
    if (limiter.shared !== null) return this.#sharedFirst(limiter, now, slot);
    const wait = this.#reserve(limiter, now, 0);
    if (typeof wait !== "number") {
      slot?.leave();
      return this.#refused(wait);
    }
    if (wait > 0) return this.#afterRateWait(limiter, wait, slot);
    const permit = this.#admit(now);
    if (typeof permit === "number") return this.#run(permit, now, slot);
    limiter.refund();
    slot?.leave();
    return this.#refused(permit);
  }

  #afterRateWait(limiter: RateLimiter, wait: number, slot: Bulkhead | null): Promise<unknown> {
    const clock = this.#dep.clock;
    return sleep(clock, wait, this.#signal).then(
      () => {
        const now = clock.now();
        const permit = this.#admit(now);
        if (typeof permit === "number") return this.#run(permit, now, slot);
        limiter.refund();
        slot?.leave();
        return this.#refused(permit);
      },
      // sleep rejects only with the caller's abort
      (error: unknown) => {
        limiter.refund();
        slot?.leave();
        return this.#refused(error as ResilienceError);
      },
    );
  }

  // The first attempt under a limit the replicas share: the permit costs a round trip to the
  // store, then the call goes on as under a local limit (docs/store.md, "Global rate limit").
  #sharedFirst(limiter: RateLimiter, now: number, slot: Bulkhead | null): Promise<unknown> {
    const bound = this.#rateBound(limiter, now);
    if (bound < 0) {
      // the queue's wait left less than the minimum attempt budget: a deadline, nothing taken
      slot?.leave();
      return this.#refused(this.#deadlineError(this.#timeLeft(now)));
    }
    return limiter.acquire(bound, this.#op.name).then((grant) => {
      if (!grant.granted) {
        slot?.leave();
        return this.#refused(this.#rateLimited(limiter, grant.waitMs, grant.paused));
      }
      const signal = this.#signal;
      if (signal?.aborted === true) {
        limiter.giveBack(grant);
        slot?.leave();
        return this.#refused(abortedError(signal.reason));
      }
      const go = (): Promise<unknown> => {
        const at = this.#dep.clock.now();
        const permit = this.#admit(at);
        if (typeof permit === "number") return this.#run(permit, at, slot);
        limiter.giveBack(grant);
        slot?.leave();
        return this.#refused(permit);
      };
      if (grant.waitMs <= 0) return go();
      this.#waited(grant.waitMs);
      return sleep(this.#dep.clock, grant.waitMs, signal).then(go, (error: unknown) => {
        limiter.giveBack(grant);
        slot?.leave();
        return this.#refused(error as ResilienceError);
      });
    });
  }

  // The longest an attempt at `now` may wait for a permit: maxWait, and what leaves the minimum
  // attempt budget before the deadline.
  #rateBound(limiter: RateLimiter, now: number): number {
    const left = this.#timeLeft(now) - (this.#op.timeout.minAttemptMs ?? 0);
    const max = limiter.settings.maxWaitMs;
    return left < max ? left : max;
  }

  #waited(waitMs: number): void {
    const events = this.#dep.events;
    if (events.active)
      events.emit({
        type: "rate-limit-waited",
        dependency: this.#dep.name,
        operation: this.#op.name,
        waitMs,
      });
  }

  /**
   * Takes a rate-limit permit for an attempt `delayMs` from `now` (after a backoff). Returns the
   * wait beyond `delayMs`, or the `rate-limited` error when that wait is longer than `maxWait`
   * or would leave less than the minimum attempt budget before the deadline: then nothing is
   * taken.
   */
  #reserve(limiter: RateLimiter, now: number, delayMs: number): number | ResilienceError {
    const at = now + delayMs;
    const wait = limiter.delayAt(at);
    if (wait > 0) {
      if (wait > limiter.settings.maxWaitMs || this.#tooLittle(this.#timeLeft(at) - wait))
        return this.#rateLimited(limiter, wait, limiter.pausedAt(at));
      this.#waited(wait);
    }
    limiter.take(at + wait);
    return wait;
  }

  #rateLimited(limiter: RateLimiter, wait: number, paused: boolean): ResilienceError {
    const { events, name } = this.#dep;
    const operation = this.#op.name;
    if (events.active)
      events.emit({
        type: "rate-limit-rejected",
        dependency: name,
        operation,
        waitMs: wait,
        reason: paused ? "paused" : "rate",
      });
    const { rate, periodMs, maxWaitMs } = limiter.settings;
    const ms = String(Math.ceil(wait));
    const why = paused
      ? `paused by the server for ${ms} ms more`
      : `next permit of ${String(rate)} per ${String(periodMs)} ms in ${ms} ms`;
    const bound =
      wait > maxWaitMs ? `longer than maxWait ${String(maxWaitMs)} ms` : "past the call's deadline";
    return new ResilienceError({
      kind: "rate-limited",
      message:
        `${name}.${operation}: rate limited before attempt ${String(this.#attempts + 1)} ` +
        `(${why}, ${bound})`,
      dependency: name,
      operation,
      retryAfterMs: Math.ceil(wait),
      cause: this.#lastError,
      withoutStack: true,
    });
  }

  /** A response of one of this call's attempts, for the rate limit's pause signals. */
  rateLimitSignals(status: number, headers: HeaderLookup): void {
    const limiter = this.#limiter;
    if (limiter === null) return;
    const retryAfter =
      status === 429 || status === 503
        ? parseRetryAfter(headers.get("retry-after"), headers.get("date"))
        : undefined;
    limiter.observe(this.#dep.clock.now(), status, headers, retryAfter);
  }

  #run(first: Permit, now: number, slot: Bulkhead | null): Promise<unknown> {
    // one executor for every call, so the promise costs no closure of its own
    const promise = new Promise<unknown>(capture);
    this.#resolve = captured.resolve;
    this.#reject = captured.reject;
    this.#slot = slot;
    const features = this.#features;
    if (features !== undefined) features.heldFrom = now;
    const signal = this.#signal;
    if (signal !== undefined) {
      this.#unfollow = followAbort(signal, () => {
        this.#abort(abortedError(signal.reason));
      });
    }
    const hedgeBudget = this.#hedgeBudget;
    if (hedgeBudget === null) {
      this.#previousMs = this.#op.retry?.backoff.baseMs ?? 0;
      this.#open(first, false, now);
    } else {
      this.#live = [];
      this.#failures = [];
      hedgeBudget.onCall();
      this.#launch(first, now);
    }
    return promise;
  }

  // The bulkhead's queue admitted the call: it now holds `slot`.
  #afterQueue(wait: Promise<void>, slot: Bulkhead): Promise<unknown> {
    return wait.then(
      () => {
        // the caller may have aborted between the queue handing over the slot and now
        const signal = this.#signal;
        if (signal?.aborted === true) {
          slot.leave();
          return this.#refused(abortedError(signal.reason));
        }
        const now = this.#dep.clock.now();
        if (this.#limiter !== null) return this.#limited(this.#limiter, now, slot);
        const permit = this.#admit(now);
        if (typeof permit === "number") return this.#run(permit, now, slot);
        slot.leave();
        return this.#refused(permit);
      },
      // the bulkhead rejects its queued calls only with a ResilienceError (bulkhead.ts)
      (error: unknown) => this.#refused(error as ResilienceError),
    );
  }

  // Milliseconds an attempt starting at `now` could take before the deadline minus margin.
  #timeLeft(now: number): number {
    return this.#at - this.#dep.marginMs - now;
  }

  // Whether `left` is too little to start an attempt with: none, or under the minimum.
  #tooLittle(left: number): boolean {
    return left <= 0 || left < (this.#op.timeout.minAttemptMs ?? 0);
  }

  /**
   * Checks the deadline and asks the breaker for a permit. Returns the permit, or the `deadline`
   * or `circuit-open` error to reject with: returned rather than thrown because this is the
   * load-shedding path, and throwing costs more than the rest of the rejection.
   */
  #admit(now: number): Permit | ResilienceError {
    // too little time left fails as `deadline` before the breaker is asked: no attempt, no verdict
    const left = this.#timeLeft(now);
    if (this.#tooLittle(left)) return this.#deadlineError(left);
    const pool = this.#dep.endpoints;
    if (pool !== null) return this.#admitEndpoint(pool, now);
    const breaker = this.#dep.breaker;
    if (breaker === null) return 0;
    const permit = breaker.tryAcquire(now);
    return permit === REJECTED ? this.#circuitOpen(breaker, now) : permit;
  }

  // The breaker refused the attempt: reported, and the `circuit-open` error to end with. Out of
  // #admit, which every attempt runs, so that it stays small enough to inline.
  #circuitOpen(breaker: CircuitBreaker, now: number): ResilienceError {
    const { events, name } = this.#dep;
    const operation = this.#op.name;
    const state = breaker.state.state;
    // a closed breaker rejects only while ramping up after recovery (docs/runtime.md, "Circuit
    // breaker")
    const admitted = state === "closed" ? (breaker.rampFraction(now) ?? undefined) : undefined;
    if (events.active) {
      events.emit({
        type: "breaker-rejected",
        dependency: name,
        operation,
        state,
        ...(admitted === undefined ? {} : { admitted }),
      });
    }
    const detail =
      state === "open"
        ? `trials in ${String(Math.ceil(breaker.retryInMs(now)))} ms`
        : admitted !== undefined
          ? `ramping up after recovery, ${String(Math.floor(admitted * 100))} % admitted`
          : state; // "isolated": held open by the control API (client.breaker.isolate())
    return new ResilienceError({
      kind: "circuit-open",
      message: `${name}.${operation}: circuit open (${detail})`,
      dependency: name,
      operation,
      // the failure that opened the breaker, stored once when it opened (docs/runtime.md); a
      // breaker isolated by hand has none, and a retry then keeps its own last failure
      cause: breaker.openedBy ?? this.#lastError,
      withoutStack: true,
    });
  }

  /**
   * Chooses the endpoint of the next attempt (kept for {@link Call.#open}) and returns its
   * permit, or the `circuit-open` error when every endpoint's breaker refuses: the call fails
   * fast, as a dependency with one open breaker does (docs/runtime.md, "Endpoints").
   */
  #admitEndpoint(pool: EndpointPool, now: number): Permit | ResilienceError {
    const routing = this.#routed();
    const endpoint = pool.pick(now, routing.tried);
    if (endpoint !== undefined) {
      routing.next = endpoint;
      return pool.permit;
    }
    const { events, name } = this.#dep;
    const operation = this.#op.name;
    const state = pool.state;
    if (events.active)
      events.emit({
        type: "breaker-rejected",
        dependency: name,
        operation,
        state,
        endpoints: pool.endpoints.length,
      });
    const { endpoint: soonest, inMs } = pool.soonest(now);
    const detail = Number.isFinite(inMs)
      ? `first trial in ${String(Math.ceil(inMs))} ms, at ${soonest.url}`
      : "isolated";
    return new ResilienceError({
      kind: "circuit-open",
      message:
        `${name}.${operation}: circuit open on all ${String(pool.endpoints.length)} ` +
        `endpoints (${detail})`,
      dependency: name,
      operation,
      cause: soonest.breaker?.openedBy ?? this.#lastError,
      withoutStack: true,
    });
  }

  /**
   * A `deadline` error for when no time (or less than the minimum attempt budget) is left to
   * start an attempt. A positive `left` names the minimum it is under.
   */
  #deadlineError(left: number): ResilienceError {
    const { events, name } = this.#dep;
    const operation = this.#op.name;
    if (events.active) {
      events.emit({
        type: "deadline-exceeded",
        dependency: name,
        operation,
        stage: this.#attempts === 0 ? "before-call" : "attempt",
      });
    }
    return new ResilienceError({
      kind: "deadline",
      message:
        left > 0
          ? `${name}.${operation}: ${String(Math.floor(left))} ms left before attempt ` +
            `${String(this.#attempts + 1)}, under its minimum of ` +
            `${String(this.#op.timeout.minAttemptMs ?? 0)} ms`
          : `${name}.${operation}: deadline reached before attempt ${String(this.#attempts + 1)}`,
      tier: "deadline",
      dependency: name,
      operation,
      cause: this.#lastError,
      withoutStack: true,
    });
  }

  /**
   * Opens and starts the next attempt under an admitted permit: its timeout is the attempt
   * timeout or what is left before the deadline minus margin, whichever is shorter.
   */
  #open(permit: Permit, hedge: boolean, now: number): void {
    const timeout = this.#op.timeout;
    const left = this.#timeLeft(now);
    const attemptMs = timeout.attemptMs ?? Number.POSITIVE_INFINITY;
    const byDeadline = left < attemptMs;
    const timeoutMs = byDeadline ? left : attemptMs;
    const headersMs = timeout.headersMs ?? Number.POSITIVE_INFINITY;
    const features = this.#features;
    const endpoint = features === undefined ? undefined : sendTo(features);
    const attempt = new Attempt(
      this,
      ++this.#attempts,
      hedge,
      timeoutMs,
      byDeadline,
      permit,
      now,
      headersMs < timeoutMs ? headersMs : Number.POSITIVE_INFINITY,
      endpoint === undefined ? this.#dep.breaker : endpoint.breaker,
      endpoint,
    );
    if (this.#live === undefined) this.#current = attempt;
    else this.#live.push(attempt);
    if (this.#dep.events.active) this.#emitStart(attempt, endpoint);
    attempt.start(this.#transport);
  }

  // Out of #open, so that the attempt's hot path stays small when nobody listens.
  #emitStart(attempt: Attempt, endpoint: Endpoint | undefined): void {
    this.#dep.events.emit({
      type: "attempt-start",
      dependency: this.#dep.name,
      operation: this.#op.name,
      call: this.#id,
      attempt: attempt.attempt,
      hedge: attempt.hedge,
      timeoutMs: attempt.timeoutMs,
      ...(endpoint === undefined ? {} : { endpoint: endpoint.url }),
    });
  }

  // The call's endpoint state (the dependency makes it for a call with several endpoints).
  #routed(): CallFeatures {
    return (this.#features ??= callFeatures(undefined, false, null));
  }

  #attemptSucceeded(attempt: Attempt, value: unknown): void {
    if (this.judges) {
      this.#judge(attempt, true, value);
      return;
    }
    this.#recordSuccess(attempt, "built-in");
    if (this.#live !== undefined) this.#running--;
    this.#succeed(value as T, attempt.identity);
  }

  #attemptFailed(attempt: Attempt, raw: unknown): void {
    if (this.judges) {
      this.#judge(attempt, false, raw);
      return;
    }
    const hedged = this.#live !== undefined;
    const error = this.#recordFailure(attempt, raw, hedged);
    if (hedged) this.#running--;
    this.#failed(attempt, error, hedged);
  }

  // After a failed attempt was recorded: end the call, hand it to the hedging, or retry.
  #failed(attempt: Attempt, error: unknown, hedged: boolean): void {
    if (this.#done) return;
    // a programming error is thrown as it is: no retry, no hedge, no fallback
    if (!isResilienceError(error)) {
      this.#fail(error);
      return;
    }
    if (hedged) {
      this.#copyFailed(attempt, error);
      return;
    }
    const delayMs = this.#retryDelay(error, attempt.attempt);
    if (typeof delayMs !== "number") {
      this.#fail(delayMs);
      return;
    }
    if (delayMs > 0) {
      this.#timer = this.#dep.clock.setTimer(() => {
        this.#wake();
      }, delayMs);
    } else {
      queueMicrotask(() => {
        this.#wake();
      });
    }
  }

  /**
   * An attempt's outcome when the call classifies outcomes (docs/runtime.md, "Classifying
   * outcomes"): the built-in verdict first (the runtime's rules and `retry.on`, its body
   * conditions included), then the call's hook, then the client's; the first hook that returns a
   * verdict decides. A hook that throws leaves the built-in verdict, reported as
   * `classify-failed`. The runtime's own cancellations (caller abort, a hedged copy that lost)
   * are not asked about. A verdict the built-in rules reached behaves exactly as without hooks.
   */
  #judge(attempt: Attempt, ok: boolean, raw: unknown): void {
    const hedged = this.#live !== undefined;
    const error = ok ? undefined : this.#classify(attempt, raw);
    const result = this.#resultOf(attempt, ok, raw, error);
    const results = this.#op.retry?.results;
    // a body condition of retry.on makes a response transient whatever its status
    const byBody =
      results !== undefined &&
      result.type === "response" &&
      matchesResult(results, result.status, result.body);
    const builtIn: Verdict = byBody ? "transient" : ok ? "success" : builtInVerdict(error);
    const asked =
      isResilienceError(error) && error.kind === "aborted"
        ? undefined
        : this.#ask(result, builtIn, attempt);
    const verdict = asked ?? builtIn;
    if (ok && verdict === "success") {
      this.#recordSuccess(attempt, asked === undefined ? "built-in" : "hook");
      if (hedged) this.#running--;
      this.#succeed(raw as T, attempt.identity);
      return;
    }
    if (verdict === "transient" || verdict === "failure") {
      const failure = !isResilienceError(error) ? this.#failureOf(result, raw, attempt) : error;
      failure.transient = verdict === "transient";
      if (asked === undefined && !byBody) {
        // the built-in verdict of an error: recorded as without hooks
        this.#recordFailure(attempt, failure, hedged, failure);
      } else this.#count(attempt, failure, hedged, asked === undefined ? "built-in" : "hook");
      if (hedged) this.#running--;
      this.#failed(attempt, failure, hedged);
      return;
    }
    if (asked === undefined) {
      // ignore, or success of a failure, by the built-in rules: as without hooks
      const recorded = this.#recordFailure(attempt, raw, hedged, error);
      if (hedged) this.#running--;
      this.#failed(attempt, recorded, hedged);
      return;
    }
    // the hook said `success` or `ignore` of a failure, or `ignore` of an answer: no retry, no
    // fallback, the outcome reaches the caller as it is
    if (verdict === "success") this.#recordSuccess(attempt, "hook");
    else this.#release(attempt, error, "hook");
    if (hedged) this.#running--;
    if (ok) this.#succeed(raw as T, attempt.identity);
    // an error the transport threw reaches the caller as it was thrown
    else this.#end(isResilienceError(raw) || attempt.cancelledWith !== undefined ? error : raw);
  }

  // Asks the call's hook, then the client's; `undefined` when neither gives a verdict.
  #ask(result: AttemptResult, builtIn: Verdict, attempt: Attempt): Verdict | undefined {
    const context = {
      dependency: this.#dep.name,
      operation: this.#op.name,
      attempt: attempt.attempt,
      builtIn,
    };
    for (const hook of [this.#features?.classifier, this.#dep.classify]) {
      if (hook === undefined) continue;
      let verdict: Verdict | undefined;
      try {
        verdict = hook(result, context);
      } catch (thrown) {
        const events = this.#dep.events;
        if (events.active)
          events.emit({
            type: "classify-failed",
            dependency: this.#dep.name,
            operation: this.#op.name,
            call: this.#id,
            attempt: attempt.attempt,
            error: thrown,
            verdict: builtIn,
          });
        return undefined;
      }
      if (isVerdict(verdict)) return verdict;
    }
    return undefined;
  }

  // The outcome as a hook sees it.
  #resultOf(attempt: Attempt, ok: boolean, raw: unknown, error: unknown): AttemptResult {
    const operation = this.#op.name;
    if (ok) {
      const received = attempt.response;
      if (received === undefined) return { type: "value", ok: true, operation, value: raw };
      return {
        type: "response",
        ok: true,
        operation,
        status: received.status,
        headers: received.headers,
        body: raw,
        error: undefined,
      };
    }
    if (isResilienceError(error) && error.kind === "http" && error.status !== undefined) {
      return {
        type: "response",
        ok: false,
        operation,
        status: error.status,
        headers: error.headers ?? {},
        body: parseBody(error.body),
        error,
      };
    }
    // what the transport threw, unless the runtime ended the attempt itself
    return {
      type: "error",
      ok: false,
      operation,
      error: attempt.cancelledWith ?? raw,
    };
  }

  // The error a failure verdict of an answer (or of a programming error) becomes.
  #failureOf(result: AttemptResult, raw: unknown, attempt: Attempt): ResilienceError {
    const dependency = this.#dep.name;
    const operation = this.#op.name;
    if (result.type === "response") {
      const text = result.ok ? undefined : result.error.body;
      return new ResilienceError({
        kind: "http",
        message:
          `${dependency}.${operation}: answered ${String(result.status)}, classified as a ` +
          "failure",
        dependency,
        operation,
        status: result.status,
        headers: result.headers,
        body: text ?? attempt.response?.text,
      });
    }
    if (result.type === "value") {
      return new ResilienceError({
        kind: "result",
        message: `${dependency}.${operation}: its result was classified as a failure`,
        dependency,
        operation,
        cause: raw,
      });
    }
    const text = raw instanceof Error ? raw.message : String(raw);
    return new ResilienceError({
      kind: "network",
      message: `${dependency}.${operation}: ${text}`,
      dependency,
      operation,
      cause: raw,
    });
  }

  // Ends the call with what the attempt ended with: no retry, no fallback.
  #end(error: unknown): void {
    if (this.#done) return;
    this.#settle(error);
    this.#annotate(error);
    this.#reject(error);
  }

  /**
   * A retry needs: a transient failure, a repeatable operation, attempts left, the budget's
   * consent, a server's wait (`Retry-After`) no longer than `retryAfter.maxMs`, and a wait that
   * still ends before the deadline minus margin. Returns the wait, or the error to end the call
   * with (an exhausted budget ends it with `budget-exhausted`, the failure as its cause).
   */
  #retryDelay(error: ResilienceError, n: number): number | ResilienceError {
    const retry = this.#op.retry;
    if (
      retry === null ||
      !this.#repeatable ||
      !error.transient ||
      n >= Math.max(1, Math.floor(retry.maxAttempts))
    )
      return error;
    const { random, events, budget, name, clock } = this.#dep;
    const operation = this.#op.name;
    if (budget !== null && !budget.allowsRetry()) {
      if (events.active)
        events.emit({
          type: "budget-exhausted",
          dependency: name,
          operation,
          tokens: budget.tokens,
        });
      return new ResilienceError({
        kind: "budget-exhausted",
        message:
          `${name}.${operation}: retry budget exhausted after attempt ${String(n)} ` +
          `(${error.message})`,
        dependency: name,
        operation,
        cause: error,
        withoutStack: true,
      });
    }
    const delay = retryDelay(retry, n - this.#pushedBackAt, this.#previousMs, random, error);
    const { fromRetryAfter, beyondCap } = delay;
    let delayMs = delay.delayMs;
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
    const now = clock.now();
    if (this.#tooLittle(this.#timeLeft(now) - delayMs)) {
      if (events.active)
        events.emit({ type: "deadline-exceeded", dependency: name, operation, stage: "retry" });
      return error;
    }
    // every retry takes a rate-limit permit for when it will start: the backoff and the wait
    // for a permit overlap, and a retry that would wait too long ends the call as `rate-limited`
    // (a limit the replicas share is asked when the backoff is over: see #wake)
    const limiter = this.#limiter;
    if (limiter !== null && limiter.shared === null) {
      const wait = this.#reserve(limiter, now, delayMs);
      if (typeof wait !== "number") return wait;
      delayMs += wait;
    }
    if (events.active) {
      events.emit({
        type: "retry-scheduled",
        dependency: name,
        operation,
        call: this.#id,
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
    this.#timer = undefined;
    if (this.#done) return;
    const limiter = this.#limiter;
    if (limiter !== null && limiter.shared !== null) {
      this.#wakeShared(limiter);
      return;
    }
    const now = this.#dep.clock.now();
    const permit = this.#admit(now);
    if (typeof permit === "number") this.#open(permit, false, now);
    else {
      // the permit this retry took from the rate limit goes back: it never went
      this.#limiter?.refund();
      this.#fail(permit);
    }
  }

  // A retry under a limit the replicas share takes its permit once its backoff is over.
  #wakeShared(limiter: RateLimiter): void {
    const clock = this.#dep.clock;
    const bound = this.#rateBound(limiter, clock.now());
    if (bound < 0) {
      // no time left for an attempt: #admit says so
      this.#admitShared(limiter, undefined);
      return;
    }
    void limiter.acquire(bound, this.#op.name).then((grant) => {
      if (this.#done) {
        limiter.giveBack(grant);
        return;
      }
      if (!grant.granted) {
        this.#fail(this.#rateLimited(limiter, grant.waitMs, grant.paused));
        return;
      }
      if (grant.waitMs <= 0) {
        this.#admitShared(limiter, grant);
        return;
      }
      this.#waited(grant.waitMs);
      this.#timer = clock.setTimer(() => {
        this.#timer = undefined;
        if (this.#done) limiter.giveBack(grant);
        else this.#admitShared(limiter, grant);
      }, grant.waitMs);
    });
  }

  #admitShared(limiter: RateLimiter, grant: SharedGrant | undefined): void {
    const now = this.#dep.clock.now();
    const permit = this.#admit(now);
    if (typeof permit === "number") {
      this.#open(permit, false, now);
      return;
    }
    if (grant !== undefined) limiter.giveBack(grant);
    this.#fail(permit);
  }

  // Hedging (docs/runtime.md, "Hedging"): the first copy, then another each `delayMs` (or at
  // once after a transient failure, as gRPC hedging does) while copies remain, the deadline
  // allows, the retry budget consents, the hedge budget has a token and the breaker admits it
  // (asked first, so a hedge it refuses spends no token). The first success wins and the other
  // copies are aborted (their breaker permits released without a verdict). A failure that is
  // not transient ends the call at once; when every copy fails, the first-launched copy's error
  // is thrown with the others in `others`.

  #launch(permit: Permit, now?: number): void {
    const hedge = this.#attempts > 0;
    const { clock, events } = this.#dep;
    this.#running++;
    if (hedge && events.active) {
      events.emit({
        type: "hedge-launched",
        dependency: this.#dep.name,
        operation: this.#op.name,
        call: this.#id,
        attempt: this.#attempts + 1,
      });
    }
    // the wait for the next copy is set before this one starts: a copy that settles at once
    // may launch the next itself, or end the call, which clears the wait
    this.#stopTimer();
    const settings = this.#op.hedge;
    if (settings !== null && this.#attempts + 1 < Math.max(1, Math.floor(settings.maxAttempts))) {
      this.#timer = clock.setTimer(() => {
        this.#timer = undefined;
        this.#tryHedge();
      }, settings.delayMs);
    }
    this.#open(permit, hedge, now ?? clock.now());
  }

  #tryHedge(): boolean {
    const settings = this.#op.hedge;
    if (settings === null || this.#done) return false;
    if (this.#attempts >= Math.max(1, Math.floor(settings.maxAttempts))) return false;
    const { clock, events, budget, breaker, endpoints, name } = this.#dep;
    if (this.#tooLittle(this.#timeLeft(clock.now()))) return false;
    if (budget !== null && !budget.allowsRetry()) {
      if (events.active)
        events.emit({
          type: "budget-exhausted",
          dependency: name,
          operation: this.#op.name,
          tokens: budget.tokens,
        });
      return false;
    }
    // the breaker is asked before the hedge token is spent, so a refused hedge costs nothing
    const hedgeBudget = this.#hedgeBudget;
    if (hedgeBudget === null || hedgeBudget.tokens < 1) return false;
    // a hedge never waits for the rate limit: no free permit, no hedge; nor for the round trip
    // of a limit the replicas share (resgen check refuses hedging under one, RG233)
    const limiter = this.#limiter;
    const now = clock.now();
    if (limiter !== null && (limiter.shared !== null || limiter.delayAt(now) > 0)) return false;
    let permit: Permit;
    if (endpoints === null) permit = breaker === null ? 0 : breaker.tryAcquire();
    else {
      // a hedge goes to an endpoint the call has not tried while one admits it
      const routing = this.#routed();
      const endpoint = endpoints.pick(now, routing.tried);
      if (endpoint === undefined) return false;
      routing.next = endpoint;
      permit = endpoints.permit;
    }
    if (permit === REJECTED) return false;
    limiter?.take(now);
    hedgeBudget.tryTake();
    this.#launch(permit);
    return true;
  }

  #copyFailed(attempt: Attempt, error: ResilienceError): void {
    if (!error.transient) {
      this.#fail(error);
      return;
    }
    // set when the call started hedging, which is when copies run
    const failures = this.#failures ?? [];
    failures[attempt.attempt - 1] = error;
    if (this.#tryHedge() || this.#running > 0) return;
    const first = failures[0] ?? error;
    first.others = failures.filter((f) => f !== first);
    this.#fail(first);
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) this.#dep.clock.clearTimer(this.#timer);
    this.#timer = undefined;
  }

  // Ends every attempt in flight with `error` (caller abort, or the siblings of a settled hedge).
  #cancelLive(error: ResilienceError): void {
    const current = this.#current;
    if (current !== undefined) current.cancel(error);
    const live = this.#live;
    if (live !== undefined) for (const attempt of [...live]) attempt.cancel(error);
  }

  #removeLive(attempt: Attempt): void {
    if (attempt.target !== undefined) attempt.target.inFlight--;
    const live = this.#live;
    if (live === undefined) {
      if (this.#current === attempt) this.#current = undefined;
      return;
    }
    const i = live.indexOf(attempt);
    if (i >= 0) live.splice(i, 1);
  }

  /**
   * Records a successful attempt with the breaker (exactly once), the retry budget and the
   * observers. The clock is read only when something needs the attempt's duration: a slow-call
   * check or an observer.
   */
  #recordSuccess(attempt: Attempt, by: VerdictBy): void {
    const { clock, events, budget } = this.#dep;
    const breaker = attempt.breaker;
    const timed = events.active || (breaker !== null && breaker.settings.slowCall !== null);
    const ended = timed ? clock.now() : attempt.started;
    const durationMs = ended > attempt.started ? ended - attempt.started : 0;
    if (breaker !== null) breaker.onSuccess(attempt.permit, durationMs, ended);
    if (budget !== null) budget.onSuccess();
    if (events.active) this.#emitEnd(attempt, "success", durationMs, undefined, "success", by);
    this.#removeLive(attempt);
  }

  // An attempt counted by neither the breaker nor the budget (an `ignore` verdict).
  #release(attempt: Attempt, error: unknown, by: VerdictBy): void {
    const { clock, events } = this.#dep;
    attempt.breaker?.release(attempt.permit);
    if (isResilienceError(error)) this.#lastError = error;
    if (events.active) {
      const durationMs = Math.max(0, clock.now() - attempt.started);
      const outcome = error === undefined ? "success" : "failure";
      this.#emitEnd(
        attempt,
        outcome,
        durationMs,
        isResilienceError(error) ? error : undefined,
        "ignore",
        by,
      );
    }
    this.#removeLive(attempt);
  }

  // A failure counted by the breaker (and the budget when retried), whatever it describes.
  #count(attempt: Attempt, error: ResilienceError, hedged: boolean, by: VerdictBy): void {
    const { clock, events, budget } = this.#dep;
    const ended = clock.now();
    const durationMs = Math.max(0, ended - attempt.started);
    attempt.breaker?.onFailure(attempt.permit, durationMs, ended, error);
    if (attempt.target !== undefined) attempt.target.failures++;
    if (budget !== null && error.transient && this.#wouldRepeat(hedged)) budget.onFailure();
    this.#lastError = error;
    if (events.active) {
      const outcome = error.kind === "timeout" ? "timeout" : "failure";
      this.#emitEnd(
        attempt,
        outcome,
        durationMs,
        error,
        error.transient ? "transient" : "failure",
        by,
      );
    }
    this.#removeLive(attempt);
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
   */
  #recordFailure(attempt: Attempt, raw: unknown, hedged: boolean, classified?: unknown): unknown {
    const { clock, events, budget } = this.#dep;
    const breaker = attempt.breaker;
    const error = classified ?? this.#classify(attempt, raw);
    const ended = clock.now();
    const durationMs = Math.max(0, ended - attempt.started);
    if (!isResilienceError(error)) {
      // a bug in the transport or the caller's code: not the dependency's health
      breaker?.release(attempt.permit);
      if (events.active)
        this.#emitEnd(attempt, "failure", durationMs, undefined, "ignore", "built-in");
      this.#removeLive(attempt);
      return error;
    }
    let outcome: AttemptOutcome;
    let verdict: Verdict = "ignore";
    if (error.kind === "aborted") {
      breaker?.release(attempt.permit);
      outcome = "cancelled";
    } else if (error.kind === "deadline") {
      // the caller's deadline ended it, not the dependency: slowness upstream must not open
      // breakers downstream
      breaker?.release(attempt.permit);
      outcome = "timeout";
    } else if (describesRequest(error)) {
      breaker?.release(attempt.permit);
      outcome = "failure";
    } else {
      breaker?.onFailure(attempt.permit, durationMs, ended, error);
      if (attempt.target !== undefined) attempt.target.failures++;
      // a transport other than sendHttp (which reports every response itself) may throw a 429
      // with the server's wait: it pauses the rate limit too
      const limiter = this.#limiter;
      if (
        limiter !== null &&
        !attempt.signalled &&
        error.status === 429 &&
        error.retryAfterMs !== undefined
      )
        limiter.pause(ended, error.retryAfterMs, "retry-after");
      if (budget !== null && error.transient && this.#wouldRepeat(hedged)) budget.onFailure();
      outcome = error.kind === "timeout" ? "timeout" : "failure";
      verdict = error.transient ? "transient" : "failure";
    }
    this.#lastError = error;
    if (events.active) this.#emitEnd(attempt, outcome, durationMs, error, verdict, "built-in");
    this.#removeLive(attempt);
    return error;
  }

  // Whether the call repeats a transient failure at all: gRPC A6 charges only those.
  #wouldRepeat(hedged: boolean): boolean {
    if (!this.#repeatable) return false;
    const retry = this.#op.retry;
    return hedged || (retry !== null && retry.maxAttempts >= 2);
  }

  #emitEnd(
    attempt: Attempt,
    outcome: AttemptOutcome,
    durationMs: number,
    error: ResilienceError | undefined,
    verdict: Verdict,
    verdictBy: VerdictBy,
  ): void {
    this.#dep.events.emit({
      type: "attempt-end",
      dependency: this.#dep.name,
      operation: this.#op.name,
      call: this.#id,
      attempt: attempt.attempt,
      hedge: attempt.hedge,
      outcome,
      durationMs,
      error,
      tier: error?.tier,
      verdict,
      verdictBy,
      ...(attempt.target === undefined ? {} : { endpoint: attempt.target.url }),
      ...(attempt.faults === undefined ? {} : { injected: attempt.faults }),
    });
  }

  /**
   * Turns whatever the transport threw into a {@link ResilienceError}: the runtime's own timeout
   * or cancellation first, then errors that already are resilience errors (transient re-derived
   * from this operation's retry conditions, or a `network` error whose cause the retry settings
   * name), then a caller abort. Anything else is transient only when recognised
   * (docs/runtime.md, "What counts as transient"): an error the retry settings name by code or
   * name, then a Node or undici network failure; a
   * programming error is returned as it is; any other error is a `network` failure, not retried.
   */
  #classify(attempt: Attempt, raw: unknown): unknown {
    const { name } = this.#dep;
    const operation = this.#op.name;
    const retryOn = this.retryOn;
    const retryErrors = this.#op.retry?.errors ?? NO_ERRORS;
    let error: ResilienceError;
    if (attempt.cancelledWith !== undefined) {
      return attempt.cancelledWith;
    } else if (isResilienceError(raw)) {
      error = raw;
      if (error.kind === "http" || error.kind === "network" || error.kind === "timeout") {
        // a status that describes the request is never retried, whatever retry.on says (errors.ts,
        // describesRequest)
        error.transient =
          !(error.kind === "http" && isRequestStatus(error.status)) &&
          (matchesRetryOn(error, retryOn) ||
            (error.kind === "network" && matchesErrorCondition(error.cause, retryErrors)));
      }
    } else if (this.#signal?.aborted === true) {
      error = abortedError(this.#signal.reason);
    } else {
      let transient: boolean;
      if (matchesErrorCondition(raw, retryErrors)) transient = true;
      else if (isNetworkFailure(raw)) transient = retryOn.includes("network");
      else if (isProgrammingError(raw)) return raw;
      else transient = false;
      const text = raw instanceof Error ? raw.message : String(raw);
      error = new ResilienceError({
        kind: "network",
        message: `${name}.${operation}: ${text}`,
        cause: raw,
        transient,
      });
    }
    if (error.dependency === "") error.dependency = name;
    if (error.operation === "") error.operation = operation;
    return error;
  }

  #abort(error: ResilienceError): void {
    if (this.#done) return;
    // attempts in flight fail with it (and, not being transient, end the call); a backoff ends here
    this.#cancelLive(error);
    this.#fail(error);
  }

  /**
   * Ends a call refused before its first attempt (load shedding: open breaker, full bulkhead,
   * expired deadline, caller abort). Degraded by the fallback when it can serve; otherwise
   * rejected one microtask from now (see {@link rejectSoon}).
   */
  #refused(error: ResilienceError): Promise<unknown> {
    this.#done = true;
    this.#annotate(error);
    return this.#degrade(error) ?? rejectSoon(error);
  }

  #succeed(value: T, identity: string | undefined): void {
    if (this.#done) return;
    this.#settle(false);
    this.#resolve(this.#fallback === null ? value : this.#fresh(value, identity));
  }

  #fail(error: unknown): void {
    if (this.#done) return;
    this.#settle(error);
    this.#annotate(error);
    const degraded = this.#degrade(error);
    if (degraded === undefined) this.#reject(error);
    else degraded.then(this.#resolve, this.#reject);
  }

  // `failure` is what the call failed with, or false for a success
  #settle(failure: unknown): void {
    this.#done = true;
    this.#stopTimer();
    // the copies a hedged call no longer waits for
    if (this.#live !== undefined && this.#live.length > 0) this.#cancelLive(this.#lost());
    if (this.#unfollow !== undefined) this.#unfollow();
    const slot = this.#slot;
    if (slot === null) return;
    if (slot.adaptive !== null) this.#observe(slot, failure);
    slot.leave();
  }

  // An adaptive limit learns how long the call held its slot; a caller's abort says nothing of
  // the dependency's latency.
  #observe(slot: Bulkhead, failure: unknown): void {
    if (isResilienceError(failure, "aborted")) return;
    const now = this.#dep.clock.now();
    slot.observe(this.#op.name, now - (this.#features?.heldFrom ?? now), now);
  }

  #lost(): ResilienceError {
    return new ResilienceError({
      kind: "aborted",
      message: `${this.#dep.name}.${this.#op.name}: another hedged copy settled first`,
      dependency: this.#dep.name,
      operation: this.#op.name,
      withoutStack: true,
    });
  }

  // Fills in what a failure of the call does not say yet: dependency, operation and attempts made.
  #annotate(error: unknown): void {
    if (isResilienceError(error)) {
      if (error.dependency === "") error.dependency = this.#dep.name;
      if (error.operation === "") error.operation = this.#op.name;
      error.attempts = this.#attempts;
    }
  }

  // The data as a fresh outcome, kept in the stale cache for a `stale` fallback: under the
  // identity the successful attempt reported, if it reported one.
  #fresh(data: unknown, identity: string | undefined): Outcome<unknown> {
    const inputs = this.#fallbackInputs;
    if (inputs !== undefined && inputs.cache !== null) {
      const late = inputs.late;
      if (late === undefined) inputs.cache.set(inputs.cacheKey, data, this.#dep.clock.now());
      else if (identity !== undefined)
        inputs.cache.set(staleKey(identity, late.cacheKey), data, this.#dep.clock.now());
    }
    return { data, degraded: false };
  }

  /**
   * The key a failed call looks up: known at the call, or the identity its latest attempt
   * reported, or, when no attempt reported one, the identity resolved now. `undefined` when it
   * cannot be resolved: then nothing is served from the cache.
   */
  #lookupKey(inputs: FallbackInputs): string | Promise<string | undefined> {
    const late = inputs.late;
    if (late === undefined) return inputs.cacheKey;
    if (this.#identity !== undefined) return staleKey(this.#identity, late.cacheKey);
    return Promise.resolve()
      .then(late.resolve)
      .then(
        (identity) => staleKey(identity, late.cacheKey),
        () => undefined,
      );
  }

  /**
   * A promise of the degraded outcome the fallback serves instead of failing with `error`, or
   * `undefined` to fail: the fallback answers only for failures of the dependency.
   */
  #degrade(error: unknown): Promise<Outcome<unknown>> | undefined {
    const fallback = this.#fallback;
    if (fallback === null || !isDependencyFailure(error)) return undefined;
    const clock = this.#dep.clock;
    const inputs = this.#fallbackInputs;
    const cache = inputs?.cache ?? null;
    if (inputs !== undefined && cache !== null) {
      const key = this.#lookupKey(inputs);
      // a cache the replicas share answers a round trip later
      const serve = (k: string | undefined): Promise<Outcome<unknown>> => {
        const hit = k === undefined ? undefined : cache.lookup(k, clock.now());
        return hit instanceof Promise
          ? hit.then((found) => this.#serve(fallback, error, found))
          : this.#serve(fallback, error, hit);
      };
      return typeof key === "string" ? serve(key) : key.then(serve);
    }
    return this.#serve(fallback, error, undefined);
  }

  #serve(
    fallback: ActiveFallback,
    error: ResilienceError,
    cached: { readonly data: unknown; readonly ageMs: number } | undefined,
  ): Promise<Outcome<unknown>> {
    const { events, name } = this.#dep;
    const inputs = this.#fallbackInputs;
    return serveFallback(fallback, error, cached, inputs?.provided).then((served) => {
      if (served === undefined) throw error;
      // the response built from this answer is degraded: the request's middleware can say so
      // (docs/services.md)
      inputs?.degraded?.add(name);
      if (events.active) {
        events.emit({
          type: "fallback-served",
          dependency: name,
          operation: this.#op.name,
          // a stale fallback's miss reports what served it instead
          fallback:
            fallback.kind === "stale" && served.ageMs === undefined && fallback.otherwise
              ? fallback.otherwise.kind
              : fallback.kind,
          reason: error.kind,
          ageMs: served.ageMs,
        });
      }
      return served;
    });
  }
}

/**
 * One attempt: the context handed to the transport, and the race between the transport and the
 * attempt timeout (or a cancellation). The race settles first and the signal is aborted after,
 * so a transport that never settles cannot hold the caller. It reports how the race ended to
 * its call, exactly once. It is the timer entry of its own timeout, so timing it allocates
 * nothing on the default clock.
 */
class Attempt extends TimerEntry implements AttemptContext {
  readonly #call: Call<unknown>;
  /** 1-based attempt number. */
  readonly attempt: number;
  /** Whether this is a hedged copy. */
  readonly hedge: boolean;
  /** Milliseconds this attempt may take. */
  readonly timeoutMs: number;
  /** Milliseconds the response headers may take; `Infinity` for no limit of their own. */
  readonly headersTimeoutMs: number;
  /** The circuit-breaker permit it was admitted with (see `Permit`). */
  readonly permit: number;
  /** The breaker the permit is from: the dependency's, or its endpoint's. */
  readonly breaker: CircuitBreaker | null;
  /** The endpoint it was sent to, for a dependency with several (docs/runtime.md, "Endpoints"). */
  readonly target: Endpoint | undefined;
  /** Clock time it started. */
  readonly started: number;
  // whether the time left before the deadline, not the attempt timeout, bounds it
  readonly #byDeadline: boolean;
  #controller: AbortController | undefined = undefined;
  #cancelled: ResilienceError | undefined = undefined;
  #timer: TimerHandle = undefined;
  #headersTimer: TimerHandle = undefined;
  #settled = false;
  #identity: string | undefined = undefined;
  #response: Received | undefined = undefined;
  /** The faults the chaos option injected into it, if any. */
  faults: ChaosFaultKind[] | undefined = undefined;
  /** Whether the transport handed this attempt's response to the rate limit itself. */
  signalled = false;

  constructor(
    call: Call<unknown>,
    attempt: number,
    hedge: boolean,
    timeoutMs: number,
    byDeadline: boolean,
    permit: number,
    started: number,
    headersTimeoutMs: number,
    breaker: CircuitBreaker | null,
    target: Endpoint | undefined,
  ) {
    super();
    this.breaker = breaker;
    this.target = target;
    this.#call = call;
    this.attempt = attempt;
    this.hedge = hedge;
    this.timeoutMs = timeoutMs;
    this.#byDeadline = byDeadline;
    this.permit = permit;
    this.started = started;
    this.headersTimeoutMs = headersTimeoutMs;
  }

  // Made on first read, so transports that ignore it cost nothing extra.
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#cancelled !== undefined) this.#controller.abort(this.#cancelled);
    }
    return this.#controller.signal;
  }

  get idempotencyKey(): string | undefined {
    return this.#call.idempotencyKey;
  }

  /** The endpoint's address (a base URL for HTTP), for a dependency with several endpoints. */
  get endpoint(): string | undefined {
    return this.target?.url;
  }

  get deadline(): Deadline {
    return this.#call.deadline;
  }

  get dependency(): string {
    return this.#call.dependency;
  }

  get operation(): string {
    return this.#call.operation;
  }

  get retryOn(): readonly RetryCondition[] {
    return this.#call.retryOn;
  }

  headers(): Record<string, string> {
    return this.#call.headersFor(this.timeoutMs);
  }

  /** The stale-cache identity this attempt reported (AttemptContext.identify), if any. */
  get identity(): string | undefined {
    return this.#identity;
  }

  get judges(): boolean {
    return this.#call.judges;
  }

  /** The 2xx response the transport reported (AttemptContext.received), if it reported one. */
  get response(): Received | undefined {
    return this.#response;
  }

  received(status: number, headers: Readonly<Record<string, string>>, text: string): void {
    this.#response = { status, headers, text };
  }

  identify(identity: string): void {
    this.#identity = identity;
    if (!this.#settled) attemptIdentified(this.#call, identity);
  }

  injected(fault: ChaosFaultKind): void {
    (this.faults ??= []).push(fault);
    attemptInjected(this.#call, this, fault);
  }

  rateLimitSignals(status: number, headers: HeaderLookup): void {
    this.signalled = true;
    this.#call.rateLimitSignals(status, headers);
  }

  awaitHeaders<R>(pending: Promise<R>): Promise<R> {
    if (
      this.#settled ||
      !Number.isFinite(this.headersTimeoutMs) ||
      this.#headersTimer !== undefined
    )
      return pending;
    const clock = this.#call.clock;
    const timer = clock.setTimer(
      () => {
        this.cancel(this.#headersError());
      },
      this.headersTimeoutMs,
      this.started,
    );
    this.#headersTimer = timer;
    const clear = (): void => {
      clock.clearTimer(timer);
    };
    pending.then(clear, clear);
    return pending;
  }

  /** The error the runtime ended this attempt with (timeout, cancellation), if it did. */
  get cancelledWith(): ResilienceError | undefined {
    return this.#cancelled;
  }

  /** Ends the attempt with `error`: settles the race, then aborts the transport's signal. */
  cancel(error: ResilienceError): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#cancelled = error;
    this.#clearTimers();
    attemptEnded(this.#call, this, false, error);
    this.#controller?.abort(error);
  }

  /**
   * Calls the transport and races it against the timeout. A synchronous answer (or throw) is
   * reported before `start` returns.
   */
  start(transport: Transport<unknown>): void {
    let pending: unknown;
    try {
      pending = transport(this);
    } catch (error) {
      if (this.#finish()) attemptEnded(this.#call, this, false, error);
      return;
    }
    // A synchronous answer cannot outlive its timeout, so it needs neither timer nor race.
    if (!isThenable(pending)) {
      if (this.#finish()) attemptEnded(this.#call, this, true, pending);
      return;
    }
    const settled = pending instanceof Promise ? pending : Promise.resolve(pending);
    if (this.#settled) {
      // cancelled while the transport was starting: its late failure is nobody's to report
      settled.catch(ignore);
      return;
    }
    if (Number.isFinite(this.timeoutMs)) {
      this.#timer = armEntry(this.#call.clock, this, this.timeoutMs, this.started);
    }
    settled.then(
      (value: unknown) => {
        if (this.#finish()) attemptEnded(this.#call, this, true, value);
      },
      (error: unknown) => {
        if (this.#finish()) attemptEnded(this.#call, this, false, error);
      },
    );
  }

  // the attempt timeout (or the time left before the deadline) is over
  [DUE](): void {
    this.cancel(this.#timeoutError());
  }

  #finish(): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    this.#clearTimers();
    return true;
  }

  #clearTimers(): void {
    if (this.#timer !== undefined) this.#call.clock.clearTimer(this.#timer);
    if (this.#headersTimer !== undefined) this.#call.clock.clearTimer(this.#headersTimer);
  }

  #headersError(): ResilienceError {
    const call = this.#call;
    return new ResilienceError({
      kind: "timeout",
      tier: "headers",
      message:
        `${call.dependency}.${call.operation}: attempt ${String(this.attempt)} got no response ` +
        `headers within ${String(Math.round(this.headersTimeoutMs))} ms`,
      transient: call.retryOn.includes("timeout"),
      dependency: call.dependency,
      operation: call.operation,
      withoutStack: true,
    });
  }

  #timeoutError(): ResilienceError {
    const call = this.#call;
    const ms = Math.round(this.timeoutMs);
    const byDeadline = this.#byDeadline;
    // cut by the deadline, the attempt was given only what was left of it (less than its own
    // timeout, or no timeout of its own): say so, rather than a "left" that reads as time to spare
    const own = call.attemptMs;
    return new ResilienceError({
      kind: byDeadline ? "deadline" : "timeout",
      tier: byDeadline ? "deadline" : "attempt",
      message: byDeadline
        ? `${call.dependency}.${call.operation}: attempt ${String(this.attempt)} ran into the ` +
          `call's deadline: it started with ${String(ms)} ms left before it, ` +
          (own === null
            ? "and has no attempt timeout of its own"
            : `less than its own ${String(Math.round(own))} ms attempt timeout`)
        : `${call.dependency}.${call.operation}: attempt ${String(this.attempt)} timed out ` +
          `after ${String(ms)} ms`,
      transient: !byDeadline && call.retryOn.includes("timeout"),
      dependency: call.dependency,
      operation: call.operation,
      withoutStack: true,
    });
  }
}

/**
 * What a call needs only for features most calls lack: a `classify` hook or body conditions, a
 * rate limit, several endpoints, an adaptive bulkhead. The dependency makes it for a call that has
 * one of them; a call with none has `undefined` in its place, and the fields it would otherwise
 * carry for them cost it nothing (docs/performance.md).
 */
export interface CallFeatures {
  /** The call's own `classify` hook, asked before the client's. */
  readonly classifier: Classifier | undefined;
  /** Whether outcomes go through a hook or `retry.on`'s body conditions. */
  readonly judges: boolean;
  /** The rate limit every attempt takes a permit from; `null` for none. */
  readonly limiter: RateLimiter | null;
  /** When the call took its bulkhead slot: an adaptive bulkhead learns how long it held it. */
  heldFrom: number;
  /** With several endpoints: the one chosen for the next attempt. */
  next: Endpoint | undefined;
  /** The endpoints tried, one bit each (`Endpoint.bit`). */
  tried: number;
}

/** A call's {@link CallFeatures}. */
export function callFeatures(
  classifier: Classifier | undefined,
  judges: boolean,
  limiter: RateLimiter | null,
): CallFeatures {
  return { classifier, judges, limiter, heldFrom: 0, next: undefined, tried: 0 };
}

// The endpoint chosen for the attempt being opened, if one was: counted as tried and in flight.
function sendTo(routing: CallFeatures): Endpoint | undefined {
  const endpoint = routing.next;
  if (endpoint === undefined) return undefined;
  routing.next = undefined;
  routing.tried |= endpoint.bit;
  endpoint.inFlight++;
  endpoint.attempts++;
  return endpoint;
}

/** Who reached an attempt's verdict: the runtime's rules and the policy, or a `classify` hook. */
export type VerdictBy = "built-in" | "hook";

/** A 2xx response as the transport reported it. */
interface Received {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly text: string;
}

const VERDICTS: ReadonlySet<unknown> = new Set(["success", "transient", "failure", "ignore"]);

function isVerdict(value: unknown): value is Verdict {
  return VERDICTS.has(value);
}

// The verdict the runtime's rules give a failed attempt (as #recordFailure records it).
function builtInVerdict(error: unknown): Verdict {
  if (!isResilienceError(error)) return "ignore";
  if (error.kind === "aborted" || error.kind === "deadline" || describesRequest(error))
    return "ignore";
  return error.transient ? "transient" : "failure";
}

// An error body as a hook sees it: parsed JSON when it parses, else the text.
function parseBody(text: string | undefined): unknown {
  if (text === undefined || text === "") return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

/**
 * A promise that rejects with `error` one microtask from now. Load shedding must stay cheap, and
 * a promise already rejected when returned is tracked by Node as a possibly unhandled rejection
 * until the caller's handler arrives, which costs more than the rest of the rejection; by the
 * next microtask the caller has attached its handler. Unhandled, it is still reported as such.
 */
function rejectSoon(error: Error): Promise<never> {
  return new Promise<never>((_resolve, reject) => {
    queueMicrotask(() => {
      reject(error);
    });
  });
}

function ignore(): void {}
