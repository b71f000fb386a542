// The events the runtime reports, and the emitter that delivers them to observers.
import type { Verdict } from "./classify.js";
import type { ResilienceError, ResilienceErrorKind, TimeoutTier } from "./errors.js";
import type { PauseSource } from "./rate-limit.js";
import type { WindowCounts } from "./window.js";

/** How one attempt ended. `cancelled` covers caller aborts and hedged copies that lost the race. */
export type AttemptOutcome = "success" | "failure" | "timeout" | "cancelled";

/** What a fault of the `chaos` option does to an attempt (docs/runtime.md, "Chaos"). */
export type ChaosFaultKind = "latency" | "status" | "network" | "hang";

/** Names of the circuit breaker states. */
export type BreakerStateName = "closed" | "open" | "half-open" | "isolated";

/**
 * How a logical call ended for its caller: the dependency's answer, a fallback's answer, or an
 * error.
 */
export type CallOutcome = "success" | "fallback" | "failure";

/** Where a deadline cut a call short. */
export type DeadlineStage = "before-call" | "queue" | "attempt" | "retry";

/** Fields present on every event. */
interface EventBase {
  /** Dependency name. */
  readonly dependency: string;
  /** Operation name; `""` for events about the dependency as a whole (breaker transitions). */
  readonly operation: string;
}

/** Everything the runtime reports. Discriminate on `type`. */
export type ResilienceEvent =
  | (EventBase & {
      /**
       * A call joined the coalesced chain in flight for an identical request instead of starting
       * its own (docs/runtime.md, "Coalescing"): it makes no `call-start` or `call-end` of its own.
       */
      readonly type: "call-coalesced";
      /** The call that started the chain (its `call-start` and `call-end` are the chain's). */
      readonly call: number;
      /** Callers waiting for the chain, this one included. */
      readonly waiting: number;
    })
  | (EventBase & {
      /** A logical call entered the stack (only emitted while someone listens). */
      readonly type: "call-start";
      /** Identifies the call in its other events; counts up from 1 per dependency. */
      readonly call: number;
      /** Milliseconds left before the call's deadline (`Infinity` if it has none). */
      readonly deadlineMs: number;
    })
  | (EventBase & {
      /** A logical call settled, fallback included; follows every `call-start`. */
      readonly type: "call-end";
      readonly call: number;
      readonly outcome: CallOutcome;
      /** Milliseconds from `call-start` to settlement on the injected clock. */
      readonly durationMs: number;
      /** The failure thrown, or the one a fallback covered; `undefined` on success. */
      readonly error: ResilienceError | undefined;
    })
  | (EventBase & {
      /** An attempt is about to reach the transport. */
      readonly type: "attempt-start";
      /** The logical call it belongs to (see `call-start`). */
      readonly call: number;
      /** 1-based attempt number within the logical call (hedged copies included). */
      readonly attempt: number;
      /** Whether this attempt is a hedged copy. */
      readonly hedge: boolean;
      /** Time the attempt may take, in milliseconds (`Infinity` if unbounded). */
      readonly timeoutMs: number;
      /** The endpoint it goes to, for a dependency with several (docs/runtime.md, "Endpoints"). */
      readonly endpoint?: string | undefined;
    })
  | (EventBase & {
      /** An attempt settled. */
      readonly type: "attempt-end";
      readonly call: number;
      readonly attempt: number;
      readonly hedge: boolean;
      readonly outcome: AttemptOutcome;
      /** Milliseconds from start to settlement on the injected clock. */
      readonly durationMs: number;
      /** The failure, when the outcome is not `success`. */
      readonly error: ResilienceError | undefined;
      /** The time limit that ended the attempt (`error.tier`), if one did. */
      readonly tier?: TimeoutTier | undefined;
      /**
       * What the outcome counted as (docs/runtime.md, "Classifying outcomes"): `success` and
       * `failure`/`transient` were counted by the breaker, `ignore` by nothing.
       */
      readonly verdict?: Verdict | undefined;
      /** Who reached the verdict: the runtime's rules and the policy, or a `classify` hook. */
      readonly verdictBy?: "built-in" | "hook" | undefined;
      /** The endpoint it went to, for a dependency with several (docs/runtime.md, "Endpoints"). */
      readonly endpoint?: string | undefined;
      /** The faults the client's `chaos` option injected into it (docs/runtime.md, "Chaos"). */
      readonly injected?: readonly ChaosFaultKind[] | undefined;
    })
  | (EventBase & {
      /**
       * The client's `chaos` option injected a fault into an attempt (docs/runtime.md, "Chaos").
       */
      readonly type: "chaos-injected";
      readonly call: number;
      readonly attempt: number;
      readonly fault: ChaosFaultKind;
    })
  | (EventBase & {
      /**
       * A `classify` hook threw: the attempt kept its built-in verdict, and the call went on.
       */
      readonly type: "classify-failed";
      readonly call: number;
      readonly attempt: number;
      /** What the hook threw. */
      readonly error: unknown;
      /** The built-in verdict the attempt kept. */
      readonly verdict: Verdict;
    })
  | (EventBase & {
      /** A retry will start after `delayMs`. */
      readonly type: "retry-scheduled";
      readonly call: number;
      /** Number of the attempt that failed. */
      readonly attempt: number;
      /** Milliseconds until the retry. */
      readonly delayMs: number;
      /** Whether the delay came from the server's `Retry-After`. */
      readonly retryAfter: boolean;
      /** Kind of the failure being retried. */
      readonly reason: ResilienceErrorKind;
    })
  | (EventBase & {
      /** The retry budget refused a retry or a hedge. */
      readonly type: "budget-exhausted";
      /** Tokens left at the time of refusal. */
      readonly tokens: number;
    })
  | (EventBase & {
      /** The breaker changed state. */
      readonly type: "breaker-transition";
      readonly from: BreakerStateName;
      readonly to: BreakerStateName;
      /** Window counts just before the change (for an opening: what tripped it). */
      readonly window: WindowCounts;
      /**
       * `true` when the control API caused it (`client.breaker.isolate()`, disposing the last
       * isolation, `reset()`); absent for the breaker's own transitions.
       */
      readonly manual?: true | undefined;
      /** For a transition to `open`: how long this open period lasts, in milliseconds. */
      readonly openForMs?: number | undefined;
      /** The endpoint whose own breaker changed, for a dependency with several endpoints. */
      readonly endpoint?: string | undefined;
    })
  | (EventBase & {
      /** The breaker rejected an attempt without calling the dependency. */
      readonly type: "breaker-rejected";
      readonly state: BreakerStateName;
      /**
       * Share of calls admitted, when a `closed` breaker ramping up after recovery rejected this
       * one.
       */
      readonly admitted?: number | undefined;
      /**
       * For a dependency with several endpoints: how many there are, every one of whose breakers
       * refused (`state` is then what they say together, see docs/runtime.md, "Endpoints").
       */
      readonly endpoints?: number | undefined;
    })
  | (EventBase & {
      /** The bulkhead turned a call away (full, queue full, evicted, or queue wait over). */
      readonly type: "bulkhead-rejected";
      readonly inFlight: number;
      readonly queued: number;
      readonly reason: "full" | "queue-full" | "evicted" | "queue-timeout";
    })
  | (EventBase & {
      /**
       * The adaptive limit moved (docs/runtime.md, "Adaptive concurrency"); `operation` is the
       * one whose completed call closed the window.
       */
      readonly type: "bulkhead-limit-changed";
      /** The limit before, in calls. */
      readonly previous: number;
      /** The limit now, in calls. */
      readonly limit: number;
      /** Mean time a permit was held over the window, in milliseconds. */
      readonly latencyMs: number;
      /** The long-term latency it was compared with, in milliseconds. */
      readonly baselineMs: number;
    })
  | (EventBase & {
      /** The bulkhead put a call in its queue. */
      readonly type: "bulkhead-queued";
      readonly inFlight: number;
      readonly queued: number;
    })
  | (EventBase & {
      /** An attempt waits for a permit of the rate limit. */
      readonly type: "rate-limit-waited";
      /** Milliseconds it waits (after any backoff). */
      readonly waitMs: number;
    })
  | (EventBase & {
      /** The rate limit turned a call (or a retry) away: no permit within its wait. */
      readonly type: "rate-limit-rejected";
      /** Milliseconds until a permit would have been free. */
      readonly waitMs: number;
      /** `rate` (the client's own limit) or `paused` (the server asked for a pause). */
      readonly reason: "rate" | "paused";
    })
  | (EventBase & {
      /**
       * A limit the replicas share gave an attempt its permit from this replica's share of the
       * rate (rate ÷ replicas), because the store could not answer (docs/store.md).
       */
      readonly type: "rate-limit-local-share";
      /** Permits per second of the local share. */
      readonly perSecond: number;
      /** Why the store could not answer. */
      readonly reason: string;
    })
  | (EventBase & {
      /**
       * A shared stale cache stopped writing responses to Redis, to leave what else the server
       * keeps alone (docs/store.md, "Shared stale cache"): its `maxmemory-policy` may evict keys
       * (`eviction-policy`, named in `policy`), or it has used 3/4 of its `maxmemory`
       * (`memory`). Reported once, until the store takes a write again; reads go on.
       */
      readonly type: "stale-store-refused";
      readonly reason: "eviction-policy" | "memory";
      /** The server's `maxmemory-policy`, for `eviction-policy`. */
      readonly policy?: string | undefined;
      /** The server's used memory and `maxmemory` in bytes, for `memory`. */
      readonly usedBytes?: number | undefined;
      readonly maxBytes?: number | undefined;
    })
  | (EventBase & {
      /** A response paused the rate limit (`operation` is the one whose response did). */
      readonly type: "rate-limit-paused";
      /** Milliseconds of the pause, after the cap. */
      readonly pauseMs: number;
      readonly source: PauseSource;
    })
  | (EventBase & {
      /** The deadline stopped the call (or a retry) from going further. */
      readonly type: "deadline-exceeded";
      readonly stage: DeadlineStage;
    })
  | (EventBase & {
      /** A hedged copy was launched. */
      readonly type: "hedge-launched";
      readonly call: number;
      /** Its attempt number. */
      readonly attempt: number;
    })
  | (EventBase & {
      /** A fallback answered instead of the dependency. */
      readonly type: "fallback-served";
      readonly fallback: "value" | "stale" | "provided";
      readonly reason: ResilienceErrorKind;
      /** Age of a stale entry in milliseconds; `undefined` for other fallbacks. */
      readonly ageMs: number | undefined;
    })
  | (EventBase & {
      /**
       * A reconfiguration applied (docs/runtime.md, "Reconfiguration"): calls that start from now
       * on use the new settings, calls in flight keep theirs. `operation` is `""`.
       */
      readonly type: "reconfigured";
      /** `reconfigure` for `client.reconfigure()`, `overrides` for a document at creation. */
      readonly source: ReconfigurationSource;
      /** The settings whose value changed, by path (`operations.geocode.timeout.attemptMs`). */
      readonly changed: readonly string[];
    })
  | (EventBase & {
      /** A reconfiguration refused: nothing of it applied. `operation` is `""`. */
      readonly type: "reconfigure-refused";
      readonly source: ReconfigurationSource;
      /** Every problem found, as `client.reconfigure()` returns them. */
      readonly problems: readonly string[];
    });

/** Where a reconfiguration came from. */
export type ReconfigurationSource = "reconfigure" | "overrides";

/**
 * Receives every {@link ResilienceEvent}. Errors it throws are swallowed: they never break a call.
 */
export type Observer = (event: ResilienceEvent) => void;

const NO_OBSERVERS: readonly Observer[] = [];

/**
 * Fan-out to observers. Call sites test {@link Emitter.active} before building an event, so a
 * dependency without observers pays one property read per would-be event.
 */
export class Emitter {
  #observers: readonly Observer[] = NO_OBSERVERS;
  /** Whether anyone is listening. */
  active = false;

  constructor(observer?: Observer) {
    if (observer !== undefined) this.subscribe(observer);
  }

  /** Adds an observer; returns a function that removes it again. */
  subscribe(observer: Observer): () => void {
    this.#observers = [...this.#observers, observer];
    this.active = true;
    return () => {
      this.#observers = this.#observers.filter((o) => o !== observer);
      this.active = this.#observers.length > 0;
    };
  }

  /** Delivers `event` to every observer, isolating the call from their failures. */
  emit(event: ResilienceEvent): void {
    for (const observer of this.#observers) {
      try {
        observer(event);
      } catch {
        // An observer's bug must not turn into the caller's failure.
      }
    }
  }
}
