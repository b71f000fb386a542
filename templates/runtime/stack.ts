// A dependency: createDependency, its settings, and the breaker, bulkhead, retry budget and stale
// caches its calls share.
import {
  CircuitBreaker,
  type BreakerControl,
  type BreakerTransitionListener,
  type BreakerHealth,
  type BreakerSettings,
} from "./breaker.js";
import { RetryBudget, type BudgetHealth, type BudgetSettings } from "./budget.js";
import { Bulkhead, type BulkheadHealth, type BulkheadSettings } from "./bulkhead.js";
import { Call, callFeatures, type DependencyParts, type FallbackInputs } from "./call.js";
import { Chaos, chaosProblems, NO_CHAOS, type ChaosControl, type ChaosOptions } from "./chaos.js";
import type { AttemptResult, Classifier } from "./classify.js";
import { coalescedDeadline, CoalescedChain } from "./coalesce.js";
import { systemClock, type Clock } from "./clock.js";
import {
  currentScope,
  inheritSignal,
  type AmbientScope,
  joinCallSignal,
  type DeadlineFormat,
  type DeadlineLike,
  type JoinedSignal,
} from "./deadline.js";
import { abortedError, isResilienceError, ResilienceError } from "./errors.js";
import {
  DEFAULT_ENDPOINTS,
  EndpointPool,
  endpointList,
  type EndpointHealth,
  type EndpointSettings,
} from "./endpoints.js";
import { Emitter, type CallOutcome, type Observer, type ReconfigurationSource } from "./events.js";
import {
  hasFallback,
  StaleCache,
  staleKey,
  type CallResult,
  type FallbackSettings,
  type Outcome,
} from "./fallback.js";
import { HedgeBudget, type HedgeSettings } from "./hedge-budget.js";
import { newIdempotencyKey } from "./idempotency.js";
import type { OperationSettings } from "./operation.js";
import { defaultRandom, type Random } from "./random.js";
import {
  overridesAtCreation,
  ReconfigurationError,
  validateReconfiguration,
  type EffectiveSettings,
  type ReconfigureResult,
} from "./reconfigure.js";
import { restoreSnapshot, takeSnapshot, type DependencySnapshot } from "./snapshot.js";
import {
  RateLimiter,
  type PauseListener,
  type RateLimitHealth,
  type RateLimitSettings,
} from "./rate-limit.js";
import { StorePermits } from "./shared-rate-limit.js";
import { StoreStale } from "./shared-stale.js";
import type { SharedStore } from "./store.js";
import type { Transport } from "./transport.js";

/** Deadline handling of a dependency. */
export interface DeadlineSettings {
  /** Whether to send the remaining time to the dependency in {@link DeadlineSettings.header}. */
  readonly propagate: boolean;
  /**
   * Milliseconds set aside from the deadline for the caller's own work after the call (e.g. 10).
   * Attempts get at most deadline − margin; with no time left past it, no attempt starts.
   */
  readonly marginMs: number;
  /** Header carrying the remaining time (e.g. `x-request-timeout-ms` or `grpc-timeout`). */
  readonly header: string;
  /** Encoding of the header value; see {@link DeadlineFormat}. */
  readonly format: DeadlineFormat;
}

/**
 * Settings shared by every operation of one dependency. Plain data, so generated code can emit
 * literals.
 */
export interface DependencySettings {
  /** Dependency name, used in errors, events and health reports. */
  readonly name: string;
  /** Deadline margin and propagation; `null` means no margin and no header. */
  readonly deadline: DeadlineSettings | null;
  /** Circuit breaker; `null` for none. */
  readonly breaker: BreakerSettings | null;
  /** Concurrency limit; `null` for none. */
  readonly bulkhead: BulkheadSettings | null;
  /** Retry budget shared by all operations; `null` for none. */
  readonly budget: BudgetSettings | null;
  /**
   * Rate limit shared by the operations that have none of their own; `null` or absent for none.
   * Every attempt (retries and hedges included) takes a permit.
   */
  readonly rateLimit?: RateLimitSettings | null | undefined;
  /**
   * How calls choose among several endpoints (docs/runtime.md, "Endpoints"); absent or `null`
   * takes {@link DEFAULT_ENDPOINTS} when the client is given several.
   */
  readonly endpoints?: EndpointSettings | null | undefined;
}

/** Injected services. Every field is optional and has a real default. */
export interface RuntimeEnvironment {
  /** Time and timers. Defaults to {@link systemClock}. */
  readonly clock?: Clock | undefined;
  /** Randomness for jitter. Defaults to `Math.random`. */
  readonly random?: Random | undefined;
  /** Receives every event of this dependency. */
  readonly observer?: Observer | undefined;
  /**
   * Decides what each attempt's outcome (a response, a function's value, or an error) means:
   * `success`, `transient` (retried, counted by the breaker), `failure` (counted, not retried) or
   * `ignore` (counted by nothing); `undefined` keeps the built-in verdict. A call's own
   * `classify` is asked first. See docs/runtime.md, "Classifying outcomes".
   */
  readonly classify?: Classifier | undefined;
  /**
   * Hash of the resolved settings (generated clients pass their own): written into snapshots, and
   * a `state` taken under another hash is refused. Defaults to `""`.
   */
  readonly policyHash?: string | undefined;
  /**
   * A snapshot to start from (docs/runtime.md, "Snapshot and restore"); a malformed one, or one
   * from another dependency, policy or layout, throws a `SnapshotError` and nothing is applied.
   */
  readonly state?: DependencySnapshot | undefined;
  /**
   * The dependency's endpoints (docs/runtime.md, "Endpoints"): with two or more, each gets its
   * own breaker, calls choose among those that admit them, and a retry or hedge goes to one the
   * call has not tried. A string or a list of one keeps the single breaker and changes nothing.
   * HTTP clients pass their `baseUrl` list here; a function transport reads `ctx.endpoint`.
   */
  readonly endpoints?: string | readonly string[] | undefined;
  /**
   * The store the replicas share (docs/store.md): needed by a rate limit whose settings say
   * `store: "redis"` (a `createMemoryStore()` runs one in this process, for tests).
   */
  readonly store?: SharedStore | undefined;
  /**
   * Faults to inject into attempts (docs/runtime.md, "Chaos"); absent for none. An invalid one
   * throws a `RangeError` listing every problem. `RESGEN_CHAOS=off` in the environment keeps it
   * off.
   */
  readonly chaos?: ChaosOptions | undefined;
}

/**
 * Per-call options. `T` is the response type. A `fallback` function is accepted only by
 * {@link ProvidedCallOptions}, on operations whose policy lets the caller provide one.
 */
export interface CallOptions<T = unknown> {
  /**
   * A deadline, or a budget in milliseconds from now; the earliest of this, the ambient one and
   * `totalMs` wins.
   */
  readonly deadline?: DeadlineLike | number | undefined;
  /**
   * Aborts the call: attempts, backoff sleeps and queue waits stop at once with an `aborted` error.
   */
  readonly signal?: AbortSignal | undefined;
  /** Your own idempotency key (e.g. from an inbound request), used instead of a generated one. */
  readonly idempotencyKey?: string | undefined;
  /**
   * Classifies this call's attempts, asked before the client's `classify`; `undefined` from it
   * falls back to the client's hook, then to the built-in verdict (docs/runtime.md,
   * "Classifying outcomes").
   */
  readonly classify?: Classifier<AttemptResult<T>> | undefined;
  /**
   * Partitions the stale cache further: an entry is served only to a call with the same
   * `cacheKey` and the same request identity (method, URL and vary headers, for HTTP). It never
   * widens what an entry is served to.
   */
  readonly cacheKey?: string | undefined;
  /** No fallback function here: this operation's policy does not let the caller provide one. */
  readonly fallback?: NoFallback<T>;
}

/** `undefined` for every `T`: the `fallback` of {@link CallOptions}, which takes no function. */
type NoFallback<T> = [T] extends [never] ? undefined : undefined;

/**
 * Options of a call whose operation has a `provided` fallback (or a stale one with
 * `otherwise: { kind: provided }`).
 */
export interface ProvidedCallOptions<T = unknown> extends Omit<CallOptions<T>, "fallback"> {
  /** The caller's fallback; receives the failure. Generated clients make it required. */
  readonly fallback?: ((error: ResilienceError) => T | Promise<T>) | undefined;
}

/** The request headers of one HTTP call. */
export interface CallHeaders {
  /**
   * Headers of this call (e.g. the end user's authorization), sent over the client's `headers`
   * (names compared case-insensitively: `authorization` here replaces the client's
   * `Authorization`). Every one of them is part of the stale cache's identity of the request.
   * The runtime's own headers (the propagated deadline, the idempotency key) replace a header of
   * the same name given here: pass your own key as `idempotencyKey` instead.
   */
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

/** Options of a call over HTTP: {@link CallOptions} and the call's own request headers. */
export interface HttpCallOptions<T = unknown> extends CallOptions<T>, CallHeaders {}

/** Fallback settings that let the caller provide the fallback. */
type ProvidedLike =
  | { readonly kind: "provided" }
  | { readonly kind: "stale"; readonly otherwise: { readonly kind: "provided" } };

/**
 * The options a call of an operation with fallback settings `F` accepts: the `fallback` option
 * only where a provided fallback can run (a literal type that says otherwise rejects it).
 */
export type CallOptionsFor<T, F> = [Extract<F, ProvidedLike>] extends [never]
  ? CallOptions<T>
  : ProvidedCallOptions<T>;

/** Snapshot of a dependency's protections. */
export interface DependencyHealth {
  readonly name: string;
  readonly breaker: BreakerHealth | null;
  readonly bulkhead: BulkheadHealth | null;
  readonly budget: BudgetHealth | null;
  /** The dependency's rate limit; absent when it has none. */
  readonly rateLimit?: RateLimitHealth | undefined;
  /**
   * Each endpoint, its own breaker and counts, for a dependency given several (`breaker` is then
   * `null`: there is no breaker of the whole); absent with one.
   */
  readonly endpoints?: readonly EndpointHealth[] | undefined;
}

/**
 * One remote dependency: its breaker, bulkhead, retry budget and stale caches, shared by its
 * operations.
 */
export interface Dependency {
  readonly name: string;
  readonly breaker: CircuitBreaker | null;
  readonly bulkhead: Bulkhead | null;
  readonly budget: RetryBudget | null;
  /** The rate limit its operations share; `null` for none (operations may have their own). */
  readonly rateLimiter: RateLimiter | null;
  /**
   * Runs one logical call: deadline → fallback → bulkhead → retry loop or hedging (breaker
   * permit per attempt) → attempt timeout → transport → record and classify.
   * Resolves to the data (or an {@link Outcome} when the operation has a fallback); rejects
   * with a {@link ResilienceError}. `identity` is the request's stale-cache identity (see
   * `requestIdentity`); an entry is served only to a call with the same identity and `cacheKey`.
   * A function stands for an identity the attempts report (`AttemptContext.identify`, as
   * `sendHttp` does for generated HTTP clients): it is called only for a call that sent no attempt.
   */
  call<T, F extends FallbackSettings | null>(
    operation: OperationSettings<F>,
    transport: Transport<T>,
    options?: CallOptionsFor<T, F>,
    identity?: string | (() => string | Promise<string>),
  ): Promise<CallResult<T, F>>;
  /** Breaker state, bulkhead occupancy and budget tokens. */
  health(): DependencyHealth;
  /** Manual control of the breaker (`client.breaker`); `null` without a breaker. */
  readonly breakerControl: BreakerControl | null;
  /** The breaker's and the retry budget's state, as JSON to restore with the `state` option. */
  snapshot(): DependencySnapshot;
  /** Adds an observer; returns a function that removes it. */
  subscribe(observer: Observer): () => void;
  /** The chaos option's state and kill switch (`client.chaos`); inert without the option. */
  readonly chaos: ChaosControl;
  /**
   * Registers the operations' settings (once, at creation) and returns the record calls read
   * them from: `operations.geocode` is one field read, and {@link Dependency.reconfigure} swaps
   * whole settings objects in it, so a call keeps the object it started with. `overrides` (an
   * object or JSON text), then the `RESGEN_OVERRIDES_<NAME>` environment variable, are applied
   * first; one the validator refuses throws a {@link ReconfigurationError} listing every problem.
   */
  operations<O extends Readonly<Record<string, OperationSettings>>>(
    initial: O,
    overrides?: unknown,
  ): LiveOperations<O>;
  /**
   * Applies a change to the reconfigurable settings (docs/runtime.md, "Reconfiguration") to the
   * calls that start after it, or refuses it whole with every problem. Never throws.
   */
  reconfigure(change: unknown, source?: ReconfigurationSource): ReconfigureResult;
  /** The settings in force: the dependency's, and each registered operation's. */
  settings(): EffectiveSettings<DependencySettings>;
}

/** The record of an operation's settings in force, by name; each keeps its fallback's type. */
export type LiveOperations<O extends Readonly<Record<string, OperationSettings>>> = {
  -readonly [K in keyof O]: OperationSettings<O[K]["fallback"]>;
};

/** State an operation keeps across its calls, made when first needed. */
interface OperationState {
  /** The stale cache, for a `stale` fallback. */
  cache: StaleCache | null;
  /** Hedges spent and earned, for an operation that hedges. */
  hedgeBudget: HedgeBudget | null;
  /** Chains in flight by request identity and cacheKey, for an operation that coalesces. */
  chains: Map<string, CoalescedChain> | null;
  /** The operation's own rate limit, for an operation that has one. */
  limiter: RateLimiter | null;
}

const NO_OPTIONS: CallOptions = {};

class DependencyStack implements Dependency {
  readonly name: string;
  readonly breaker: CircuitBreaker | null;
  readonly bulkhead: Bulkhead | null;
  readonly budget: RetryBudget | null;
  readonly breakerControl: BreakerControl | null;
  readonly chaos: ChaosControl;
  // null without the chaos option: then a call's transport is used as it is
  readonly #chaos: Chaos | null;
  readonly #policyHash: string;
  readonly rateLimiter: RateLimiter | null;
  readonly #pool: EndpointPool | null;
  // whether every call needs its CallFeatures: several endpoints, or an adaptive bulkhead
  readonly #routes: boolean;
  readonly #parts: DependencyParts;
  readonly #events: Emitter;
  readonly #clock: Clock;
  readonly #store: SharedStore | undefined;
  // made on first use: most dependencies have no stale fallback and no hedging
  #operations: Map<string, OperationState> | undefined;
  #calls = 0;
  #settings: DependencySettings;
  // the record generated clients read each call's settings from, once registered
  #live: Record<string, OperationSettings> | null = null;

  constructor(settings: DependencySettings, env: RuntimeEnvironment) {
    const clock = env.clock ?? systemClock;
    const events = new Emitter(env.observer);
    const name = settings.name;
    this.name = name;
    this.#settings = settings;
    this.#events = events;
    const random = env.random ?? defaultRandom;
    const urls = endpointList(env.endpoints);
    this.#pool =
      urls === undefined
        ? null
        : new EndpointPool(
            urls,
            settings.endpoints ?? DEFAULT_ENDPOINTS,
            settings.breaker,
            clock,
            random,
            (endpoint) => this.#transitions(endpoint, () => this.#openFor(endpoint)),
          );
    this.breaker =
      settings.breaker === null || this.#pool !== null
        ? null
        : new CircuitBreaker(
            settings.breaker,
            clock,
            this.#transitions(undefined, () => this.breaker?.retryInMs() ?? 0),
          );
    this.bulkhead =
      settings.bulkhead === null ? null : new Bulkhead(name, settings.bulkhead, clock, events);
    this.budget = settings.budget === null ? null : new RetryBudget(settings.budget);
    this.#routes =
      this.#pool !== null || (this.bulkhead !== null && this.bulkhead.adaptive !== null);
    this.breakerControl =
      this.#pool !== null && settings.breaker !== null
        ? this.#pool.control()
        : (this.breaker?.control() ?? null);
    this.#policyHash = env.policyHash ?? "";
    // all or nothing: restoreSnapshot checks every part before it applies any. With several
    // endpoints a snapshot's breaker is not applied (whose would it be?): the endpoints' breakers
    // start closed, and the rest of the snapshot is restored (docs/runtime.md, "Endpoints")
    const state =
      this.#pool === null || !isObject(env.state) ? env.state : { ...env.state, breaker: null };
    if (state !== undefined)
      restoreSnapshot(state, name, this.#policyHash, this.breaker, this.budget);
    this.#clock = clock;
    this.#chaos = env.chaos === undefined ? null : new Chaos(env.chaos, clock, name);
    this.chaos = this.#chaos ?? NO_CHAOS;
    this.#store = env.store;
    const rateLimit = settings.rateLimit ?? null;
    this.rateLimiter = rateLimit === null ? null : this.#newLimiter("", rateLimit);
    const deadline = settings.deadline;
    this.#parts = {
      name,
      clock,
      random,
      events,
      breaker: this.breaker,
      endpoints: this.#pool,
      budget: this.budget,
      propagation:
        deadline !== null && deadline.propagate
          ? { header: deadline.header, format: deadline.format }
          : null,
      classify: env.classify,
      marginMs: Math.max(0, deadline?.marginMs ?? 0),
    };
  }

  // Checks up to the first breaker permit run synchronously, so load shedding (open breaker,
  // full bulkhead, expired deadline) returns a rejected promise without entering async frames.
  // They all use `now`, read once here: nothing between them waits.
  call<T, F extends FallbackSettings | null>(
    operation: OperationSettings<F>,
    transport: Transport<T>,
    callOptions: CallOptionsFor<T, F> = NO_OPTIONS,
    identity?: string | (() => string | Promise<string>),
  ): Promise<CallResult<T, F>> {
    // one read of the ambient scope serves both its deadline and its signal
    const scope = currentScope();
    // coalescing needs the request's identity: without one, every call runs on its own
    if (operation.coalesce === true && identity !== undefined)
      return this.#coalesced(operation, transport, callOptions, identity, scope);
    // the deadline is worked out here rather than in #enter, which is large enough already for
    // what it inlines (docs/performance.md)
    const now = this.#parts.clock.now();
    const at = deadlineAt(operation, callOptions, scope, now);
    return this.#enter(operation, transport, callOptions, identity, scope, now, at);
  }

  // A call that starts now: the deadline from the clock's time, then #enter.
  #call<T, F extends FallbackSettings | null>(
    operation: OperationSettings<F>,
    transport: Transport<T>,
    callOptions: CallOptionsFor<T, F>,
    identity: string | (() => string | Promise<string>) | undefined,
    scope: AmbientScope | undefined,
  ): Promise<CallResult<T, F>> {
    const now = this.#parts.clock.now();
    const at = deadlineAt(operation, callOptions, scope, now);
    return this.#enter(operation, transport, callOptions, identity, scope, now, at);
  }

  #enter<T, F extends FallbackSettings | null>(
    operation: OperationSettings<F>,
    transport: Transport<T>,
    callOptions: CallOptionsFor<T, F>,
    identity: string | (() => string | Promise<string>) | undefined,
    scope: AmbientScope | undefined,
    now: number,
    at: number,
  ): Promise<CallResult<T, F>> {
    const options = callOptions as ProvidedCallOptions<T>;
    const parts = this.#parts;

    const id = ++this.#calls;
    const observed = this.#events.active;
    if (observed) {
      this.#events.emit({
        type: "call-start",
        dependency: this.name,
        operation: operation.name,
        call: id,
        deadlineMs: at - now,
      });
    }
    const fallback: FallbackSettings | null = operation.fallback;
    const withFallback = hasFallback(fallback);
    // the ambient signal (inbound request gone) joins the caller's; without one this is
    // options.signal.
    // A join listens to both until the call settles, then lets go of them (see joinCallSignal):
    // only a call given both pays for it
    const callerSignal = options.signal;
    const joined =
      callerSignal !== undefined && scope !== undefined
        ? joinCallSignal(callerSignal, scope)
        : undefined;
    const signal =
      joined === undefined
        ? scope === undefined
          ? callerSignal
          : inheritSignal(callerSignal, scope)
        : joined.signal;
    const repeatable = operation.repeatable || operation.idempotencyKey !== null;
    const hedge = operation.hedge;
    // an operation's own rate limit replaces the dependency's; `false` opts out of it
    const own = operation.rateLimit;
    const limiter =
      own === undefined || own === null
        ? this.rateLimiter
        : own === false
          ? null
          : this.#limiter(operation.name, own);
    const classifier = options.classify as Classifier | undefined;
    // outcomes are judged with a hook (the call's or the client's) or body conditions in
    // `retry.on`; a call with none of the features CallFeatures serves gets none
    const results = operation.retry?.results;
    const judges =
      classifier !== undefined ||
      parts.classify !== undefined ||
      (results !== undefined && results.length > 0);
    const chaos = this.#chaos;
    const call = new Call(
      parts,
      operation,
      id,
      chaos === null ? transport : chaos.wrap(operation.name, transport),
      at,
      repeatable,
      options.idempotencyKey ??
        (operation.idempotencyKey === null ? undefined : newIdempotencyKey()),
      signal,
      withFallback ? fallback : null,
      withFallback
        ? this.#fallbackInputs(
            operation.name,
            fallback,
            options as ProvidedCallOptions,
            identity,
            scope?.degraded,
          )
        : undefined,
      hedge !== null && repeatable ? this.#hedgeBudget(operation.name, hedge) : null,
      judges || limiter !== null || this.#routes
        ? callFeatures(classifier, judges, limiter)
        : undefined,
    );
    const started = call.start(now, this.bulkhead);
    const result = joined === undefined ? started : releasedOnSettle(started, joined);
    return (
      observed ? this.#ended(result, operation.name, id, now, withFallback) : result
    ) as Promise<CallResult<T, F>>;
  }

  // A call of an operation with `coalesce: true` (docs/runtime.md, "Coalescing"): it joins the
  // chain in flight for the same identity and cacheKey, or starts one. A caller that brings its
  // own fallback function or idempotency key runs alone: neither can be shared.
  #coalesced<T, F extends FallbackSettings | null>(
    operation: OperationSettings<F>,
    transport: Transport<T>,
    callOptions: CallOptionsFor<T, F>,
    identity: string | (() => string | Promise<string>),
    scope: AmbientScope | undefined,
  ): Promise<CallResult<T, F>> {
    const options = callOptions as ProvidedCallOptions<T>;
    if (options.fallback !== undefined || options.idempotencyKey !== undefined)
      return this.#call(operation, transport, callOptions, identity, scope);
    if (typeof identity === "string")
      return this.#share(operation, transport, options, identity, scope);
    // an HTTP request's identity is known once its headers are (a header function may be async)
    return Promise.resolve()
      .then(identity)
      .then(
        (known) => this.#share(operation, transport, options, known, scope),
        // headers that cannot be resolved: the call runs alone, and its attempt reports why
        () => this.#call(operation, transport, callOptions, identity, scope),
      );
  }

  #share<T, F extends FallbackSettings | null>(
    operation: OperationSettings<F>,
    transport: Transport<T>,
    options: ProvidedCallOptions<T>,
    identity: string,
    scope: AmbientScope | undefined,
  ): Promise<CallResult<T, F>> {
    const parts = this.#parts;
    const now = parts.clock.now();
    // the caller's own deadline, as a call of its own would have it; the margin is set aside
    // for its own work
    const at = deadlineAt(operation, options, scope, now) - parts.marginMs;
    const own = options.signal;
    const ambient = scope?.signal;
    if (own?.aborted === true) return Promise.reject(abortedError(own.reason));
    if (ambient?.aborted === true) return Promise.reject(abortedError(ambient.reason));
    if (at <= now) return Promise.reject(coalescedDeadline(this.name, operation.name, at - now));
    const key = staleKey(identity, options.cacheKey);
    // per operation: two operations never share a chain, whatever their requests
    const chains = (this.#state(operation.name).chains ??= new Map<string, CoalescedChain>());
    let chain = chains.get(key);
    if (chain === undefined) {
      // the chain is nobody's own call: no ambient scope (one caller's inbound request going
      // away must not cancel it for the others), no caller's signal or deadline
      const total = operation.timeout.totalMs;
      const endsAt = total === null ? Number.POSITIVE_INFINITY : now + total - parts.marginMs;
      // only a chain whose first caller can leave early can ever be abandoned by all: the
      // others need no controller (an AbortController and its listener cost more than the rest)
      const controller =
        at < endsAt || own !== undefined || ambient !== undefined
          ? new AbortController()
          : undefined;
      const result = this.#call(
        operation,
        transport,
        { signal: controller?.signal, cacheKey: options.cacheKey },
        identity,
        undefined,
      );
      const started: CoalescedChain = new CoalescedChain(
        controller,
        result,
        this.#calls,
        endsAt,
        () => {
          if (chains.get(key) === started) chains.delete(key);
        },
      );
      chain = started;
      chains.set(key, chain);
    } else if (this.#events.active) {
      this.#events.emit({
        type: "call-coalesced",
        dependency: this.name,
        operation: operation.name,
        call: chain.call,
        waiting: chain.waiting + 1,
      });
    }
    // a caller that cannot leave early (the common case) takes the chain's promise as it is
    const shared =
      at >= chain.endsAt && own === undefined && ambient === undefined
        ? chain.share<CallResult<T, F>>()
        : chain.join<CallResult<T, F>>(
            parts.clock,
            now,
            at,
            { dependency: this.name, operation: operation.name },
            [own, ambient],
          );
    const degraded = scope?.degraded;
    if (degraded === undefined || !hasFallback(operation.fallback)) return shared;
    // the inbound request this caller serves learns that its answer was a fallback's
    return shared.then((value) => {
      if ((value as Outcome<unknown>).degraded) degraded.add(this.name);
      return value;
    });
  }

  // Only calls someone listens to pay for the extra promise that reports how they ended.
  #ended<R>(
    result: Promise<R>,
    operation: string,
    id: number,
    started: number,
    withFallback: boolean,
  ): Promise<R> {
    const end = (outcome: CallOutcome, error: ResilienceError | undefined): void => {
      const durationMs = Math.max(0, this.#parts.clock.now() - started);
      this.#events.emit({
        type: "call-end",
        dependency: this.name,
        operation,
        call: id,
        outcome,
        durationMs,
        error,
      });
    };
    return result.then(
      (value) => {
        const degraded = withFallback ? (value as Outcome<unknown>) : undefined;
        if (degraded?.degraded === true) end("fallback", degraded.error);
        else end("success", undefined);
        return value;
      },
      (error: unknown) => {
        end("failure", isResilienceError(error) ? error : undefined);
        throw error;
      },
    );
  }

  health(): DependencyHealth {
    return {
      name: this.name,
      breaker: this.breaker?.health() ?? null,
      bulkhead: this.bulkhead?.health() ?? null,
      budget: this.budget?.health() ?? null,
      ...(this.rateLimiter === null
        ? {}
        : { rateLimit: this.rateLimiter.health(this.#parts.clock.now()) }),
      ...(this.#pool === null ? {} : { endpoints: this.#pool.health() }),
    };
  }

  // The breaker-transition events of the dependency's breaker, or of one endpoint's.
  #transitions(endpoint: string | undefined, openFor: () => number): BreakerTransitionListener {
    const events = this.#events;
    const dependency = this.name;
    return (from, to, window, trigger) => {
      if (events.active)
        events.emit({
          type: "breaker-transition",
          dependency,
          operation: "",
          from,
          to,
          window,
          ...(endpoint === undefined ? {} : { endpoint }),
          ...(trigger === "manual" ? { manual: true } : {}),
          ...(to === "open" ? { openForMs: openFor() } : {}),
        });
    };
  }

  // How long the endpoint's breaker that just opened stays open.
  #openFor(endpoint: string): number {
    const found = this.#pool?.endpoints.find((e) => e.url === endpoint);
    return found?.breaker?.retryInMs() ?? 0;
  }

  subscribe(observer: Observer): () => void {
    return this.#events.subscribe(observer);
  }

  snapshot(): DependencySnapshot {
    return takeSnapshot(this.name, this.#policyHash, this.breaker, this.budget);
  }

  operations<O extends Readonly<Record<string, OperationSettings>>>(
    initial: O,
    overrides?: unknown,
  ): LiveOperations<O> {
    if (this.#live !== null) throw new TypeError(`${this.name}: operations are registered once`);
    const live: Record<string, OperationSettings> = { ...initial };
    this.#live = live;
    for (const { source, document } of overridesAtCreation(this.name, overrides)) {
      const result = this.reconfigure(document, "overrides");
      if (!result.applied) throw new ReconfigurationError(source, result.problems);
    }
    return live as LiveOperations<O>;
  }

  settings(): EffectiveSettings<DependencySettings> {
    return { dependency: this.#settings, operations: { ...this.#live } };
  }

  // Validation first, on copies; then only assignments, which cannot fail halfway: a call that
  // starts after this returns sees every change, one that started before sees none of its own
  // operation's (Call keeps the settings object it was given).
  reconfigure(change: unknown, source: ReconfigurationSource = "reconfigure"): ReconfigureResult {
    const current = { dependency: this.#settings, operations: this.#live ?? {} };
    let verdict;
    let chaos: ChaosOptions | undefined;
    try {
      // code may change the faults of a client created with them; the rest goes through the
      // validator every overrides document goes through, which refuses `chaos`
      const own = source === "reconfigure" && isObject(change) && Object.hasOwn(change, "chaos");
      const rest = own ? withoutChaos(change) : change;
      chaos = own ? (change as { chaos?: ChaosOptions }).chaos : undefined;
      verdict = validateReconfiguration(current, rest);
      const faults = own ? this.#chaosProblems(chaos) : [];
      if (faults.length > 0)
        verdict = {
          ok: false as const,
          problems: [...faults, ...(verdict.ok ? [] : verdict.problems)],
        };
      else if (verdict.ok && chaos !== undefined)
        verdict = { ...verdict, changed: [...verdict.changed, "chaos"] };
    } catch (error) {
      // a getter or proxy in the change that throws: refused like any bad value
      verdict = {
        ok: false as const,
        problems: [`the change could not be read: ${String(error)}`],
      };
    }
    if (!verdict.ok) {
      this.#emitReconfiguration(source, {
        type: "reconfigure-refused",
        problems: verdict.problems,
      });
      return { applied: false, problems: verdict.problems };
    }
    const next = verdict.settings;
    this.#apply(next.dependency);
    if (chaos !== undefined) this.#chaos?.replace(chaos);
    const live = this.#live;
    // the same names: the validator copies the record and replaces only operations it has
    if (live !== null) Object.assign(live, next.operations);
    this.#emitReconfiguration(source, { type: "reconfigured", changed: verdict.changed });
    return { applied: true, changed: verdict.changed };
  }

  // The problems of a `chaos` change: none for a client created with the option and valid faults.
  #chaosProblems(chaos: ChaosOptions | undefined): string[] {
    if (chaos === undefined) return [];
    if (this.#chaos === null)
      return [
        "chaos: this client was created without the chaos option, " +
          "and only the code that creates a client turns chaos on",
      ];
    if (!isObject(chaos)) return ["chaos: must be an object with seed and faults"];
    return chaosProblems(chaos).map((problem) => `chaos.${problem}`);
  }

  #apply(next: DependencySettings): void {
    const before = this.#settings;
    this.#settings = next;
    if (next.breaker !== before.breaker && next.breaker !== null) {
      this.breaker?.reconfigure(next.breaker);
      this.#pool?.reconfigure(next.breaker);
    }
    if (next.bulkhead !== before.bulkhead && next.bulkhead !== null)
      this.bulkhead?.reconfigure(next.bulkhead);
    const limit = next.rateLimit ?? null;
    if (limit !== (before.rateLimit ?? null) && limit !== null)
      this.rateLimiter?.reconfigure(limit);
  }

  #emitReconfiguration(
    source: ReconfigurationSource,
    event:
      | { readonly type: "reconfigured"; readonly changed: readonly string[] }
      | { readonly type: "reconfigure-refused"; readonly problems: readonly string[] },
  ): void {
    if (this.#events.active)
      this.#events.emit({ ...event, dependency: this.name, operation: "", source });
  }

  // What the call's fallback needs beyond its settings; nothing for a value fallback outside a
  // request scope.
  #fallbackInputs(
    operation: string,
    fallback: Exclude<FallbackSettings, { kind: "none" }>,
    options: ProvidedCallOptions,
    identity: string | (() => string | Promise<string>) | undefined,
    degraded: Set<string> | undefined,
  ): FallbackInputs | undefined {
    const cache =
      fallback.kind === "stale"
        ? (this.#state(operation).cache ??= this.#staleCache(operation, fallback))
        : null;
    const provided = options.fallback;
    if (cache === null && provided === undefined && degraded === undefined) return undefined;
    // the key is computed only for a stale fallback: other fallbacks never look it up
    if (cache !== null && typeof identity === "function")
      return {
        cache,
        cacheKey: "",
        late: { cacheKey: options.cacheKey, resolve: identity },
        provided,
        degraded,
      };
    return {
      cache,
      cacheKey:
        cache === null || typeof identity === "function"
          ? ""
          : staleKey(identity, options.cacheKey),
      late: undefined,
      provided,
      degraded,
    };
  }

  #hedgeBudget(operation: string, hedge: HedgeSettings): HedgeBudget {
    return (this.#state(operation).hedgeBudget ??= new HedgeBudget(hedge.budget));
  }

  #limiter(operation: string, settings: RateLimitSettings): RateLimiter {
    return (this.#state(operation).limiter ??= this.#newLimiter(operation, settings));
  }

  // The stale cache of a `stale` fallback: this process's, or one the replicas share in the store.
  #staleCache(
    operation: string,
    fallback: Extract<FallbackSettings, { kind: "stale" }>,
  ): StaleCache {
    if (fallback.store !== "redis") return new StaleCache(fallback.maxEntries, fallback.maxAgeMs);
    const store = this.#store;
    if (store === undefined)
      throw new TypeError(
        `${this.name}.${operation}: stale responses are kept in Redis ` +
          "(fallback.store: redis), so the client needs the replicas' store: " +
          "pass store: createRedisStore(redisClient)",
      );
    // the store keys its entries by a digest of the identity, never the identity itself
    return new StaleCache(
      fallback.maxEntries,
      fallback.maxAgeMs,
      new StoreStale(store, {
        dependency: this.name,
        operation,
        maxAgeMs: fallback.maxAgeMs,
        maxEntries: fallback.maxEntries,
        onRefused: (refusal) => {
          const events = this.#events;
          if (events.active)
            events.emit({
              type: "stale-store-refused",
              dependency: this.name,
              operation,
              ...refusal,
            });
        },
      }),
    );
  }

  // A rate limit of this process, or one kept in the store every replica shares ("" for the
  // dependency's own): docs/store.md, "Global rate limit".
  #newLimiter(operation: string, settings: RateLimitSettings): RateLimiter {
    const onPause = this.#pauseListener(operation);
    if (settings.store !== "redis") return new RateLimiter(settings, onPause);
    const store = this.#store;
    const where = operation === "" ? this.name : `${this.name}.${operation}`;
    if (store === undefined)
      throw new TypeError(
        `${where}: the rate limit is kept in Redis (rateLimit.store: redis), so the client ` +
          "needs the replicas' store: pass store: createRedisStore(redisClient)",
      );
    const parts =
      operation === "" ? [this.name, "rate-limit"] : [this.name, "rate-limit", operation];
    const permits = new StorePermits(
      store,
      store.key(...parts),
      this.#clock,
      settings,
      (op, perSecond, reason) => {
        const events = this.#events;
        if (events.active)
          events.emit({
            type: "rate-limit-local-share",
            dependency: this.name,
            operation: op,
            perSecond,
            reason,
          });
      },
    );
    return new RateLimiter(settings, onPause, permits);
  }

  // Reports the pauses a server's response imposes on a rate limit ("" for the dependency's).
  #pauseListener(operation: string): PauseListener {
    return (pauseMs, source) => {
      const events = this.#events;
      if (events.active)
        events.emit({
          type: "rate-limit-paused",
          dependency: this.name,
          operation,
          pauseMs,
          source,
        });
    };
  }

  #state(operation: string): OperationState {
    const operations = (this.#operations ??= new Map<string, OperationState>());
    let state = operations.get(operation);
    if (state === undefined) {
      state = { cache: null, hedgeBudget: null, chains: null, limiter: null };
      operations.set(operation, state);
    }
    return state;
  }
}

// A snapshot as given may be anything (JSON from elsewhere): restoreSnapshot says what is wrong.
function isObject(value: unknown): value is object {
  return typeof value === "object" && value !== null;
}

/** `result`, once it has settled and `joined` has stopped listening to its sources. */
function releasedOnSettle<R>(result: Promise<R>, joined: JoinedSignal): Promise<R> {
  return result.then(
    (value) => {
      joined.release();
      return value;
    },
    (error: unknown) => {
      joined.release();
      throw error;
    },
  );
}

/**
 * The breaker control of a dependency that has a breaker (generated clients call it only then);
 * throws for one without.
 */
export function controlOf(dependency: Dependency): BreakerControl {
  const control = dependency.breakerControl;
  if (control === null) throw new TypeError(`${dependency.name} has no breaker`);
  return control;
}

/**
 * Creates the runtime state of one dependency (breaker, bulkhead, retry budget, stale caches).
 * Create it once per client instance: the protections only work if every call shares them.
 */
export function createDependency(
  settings: DependencySettings,
  env: RuntimeEnvironment = {},
): Dependency {
  return new DependencyStack(settings, env);
}

/**
 * When a call must end, on the dependency's clock: the earliest of the operation's total, the
 * ambient deadline and the caller's own `deadline` (docs/runtime.md, "Deadlines").
 */
function deadlineAt(
  operation: { readonly timeout: { readonly totalMs: number | null } },
  options: { readonly deadline?: DeadlineLike | number | undefined },
  scope: AmbientScope | undefined,
  now: number,
): number {
  let at =
    operation.timeout.totalMs === null ? Number.POSITIVE_INFINITY : now + operation.timeout.totalMs;
  if (scope !== undefined) at = Math.min(at, now + scope.deadline.remaining());
  const given = options.deadline;
  if (given !== undefined)
    at = Math.min(at, now + (typeof given === "number" ? Math.max(0, given) : given.remaining()));
  return at;
}

/** `change` without its `chaos` member, which the stack checks and applies itself. */
function withoutChaos(change: object): object {
  const rest: Record<string, unknown> = { ...change };
  delete rest["chaos"];
  return rest;
}
