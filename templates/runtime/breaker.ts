// The circuit breaker: closed, open, half-open and isolated states over an outcome window, with
// optional slow start.
import type { Clock } from "./clock.js";
import type { BreakerStateName } from "./events.js";
import {
  createWindow,
  type OutcomeWindow,
  type WindowCounts,
  type WindowSettings,
  type WindowSnapshot,
} from "./window.js";

/** Circuit breaker settings. */
export interface BreakerSettings {
  /** Failure rate in [0, 1] at or above which the breaker opens (e.g. 0.5). */
  readonly failureRate: number;
  /**
   * Slow calls: attempts lasting at least `durationMs` milliseconds are slow, and a slow-call
   * rate at or above `rate` (in [0, 1]) opens the breaker. `null` disables the check.
   */
  readonly slowCall: { readonly durationMs: number; readonly rate: number } | null;
  /** The window the rates are computed over. */
  readonly window: WindowSettings;
  /** Calls the window must hold before a rate can open the breaker (e.g. 20). */
  readonly minCalls: number;
  /** Milliseconds the breaker stays open before admitting trial calls (e.g. 30,000). */
  readonly openForMs: number;
  /** Half-open trials: at most `maxCalls` concurrent, closing after `successes` succeed. */
  readonly halfOpen: { readonly maxCalls: number; readonly successes: number };
  /**
   * Slow start after recovery: for this many milliseconds after a half-open breaker closes, the
   * share of calls admitted rises linearly from {@link RAMP_FLOOR} to all of them; the rest are
   * rejected as `circuit-open` (docs/runtime.md, "Circuit breaker"). Absent or 0: full traffic at
   * once.
   */
  readonly rampUpMs?: number | undefined;
  /**
   * Open-duration backoff (`breaker.openFor: { base, cap, multiplier }`, docs/runtime.md,
   * "Open-duration backoff"): every reopening after a failed half-open trial stays open
   * `openForMs × multiplier^n` milliseconds (n reopenings in a row), at most `capMs`; closing
   * resets n to 0. Absent: every open period lasts `openForMs`.
   */
  readonly openBackoff?: { readonly capMs: number; readonly multiplier: number } | undefined;
}

/** Proof of one {@link CircuitBreaker.isolate} call; `dispose()` ends it (twice is harmless). */
export interface BreakerIsolation {
  /** Ends this isolation; the breaker closes once every isolation has ended. */
  dispose(): void;
}

/**
 * Manual control of a dependency's breaker, as generated clients expose it (`client.breaker`).
 */
export interface BreakerControl {
  /** The current state (an open breaker past its open period reads `open` until the next call). */
  readonly state: BreakerStateName;
  /**
   * Holds the breaker open: calls fail fast with `circuit-open` (message `isolated`) until every
   * isolation has been disposed or {@link BreakerControl.reset} is called. Reference-counted: two
   * isolations need two disposals.
   */
  isolate(): BreakerIsolation;
  /** Back to closed with an empty window, whatever the state; ends every isolation. */
  reset(): void;
}

/** What caused a transition: the breaker's own rules, or a call of the control API. */
export type TransitionTrigger = "automatic" | "manual";

/** The smallest share of calls a ramping breaker admits (10 %, as Envoy's slow start). */
export const RAMP_FLOOR = 0.1;

/** The breaker's state machine. Each state carries only what it needs. */
export type BreakerState =
  | {
      readonly state: "closed";
      /** Set while ramping up after recovery: when the breaker closed. */
      readonly rampingSince?: number;
    }
  | {
      readonly state: "open";
      readonly openedAt: number;
      /** How long this open period lasts (`openForMs`, or longer under open-duration backoff). */
      readonly forMs: number;
    }
  | { readonly state: "half-open"; readonly inFlight: number; readonly successes: number }
  | { readonly state: "isolated" };

type MutableHalfOpen = { readonly state: "half-open"; inFlight: number; successes: number };
// Closed, ramping up after recovery: `credit` accumulates the admitted share per call (an error
// diffusion: a share f admits exactly one call in 1/f, deterministically, with no random draw).
type Ramping = { readonly state: "closed"; readonly rampingSince: number; credit: number };

// Only the half-open state changes in place, so every closed breaker can share one.
const CLOSED: BreakerState = Object.freeze({ state: "closed" });
const ISOLATED: BreakerState = Object.freeze({ state: "isolated" });

/**
 * A breaker's persisted state (part of a dependency snapshot, docs/runtime.md, "Snapshot and
 * restore"). Times are durations, never clock readings: a monotonic clock starts anew in every
 * process, and wall clocks of two machines disagree.
 */
export interface BreakerSnapshot {
  /** `closed` or `open` (a half-open breaker is recorded as open with nothing left). */
  readonly state: "closed" | "open";
  /** Whole milliseconds left on the open period, rounded up; `null` when closed. */
  readonly remainingMs: number | null;
  /** Reopenings after failed trials since the breaker last closed (open-duration backoff). */
  readonly reopenings: number;
  /** The outcome window. */
  readonly window: WindowSnapshot;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function emptyWindow(breaker: CircuitBreaker): WindowSnapshot {
  const w = breaker.settings.window;
  return w.kind === "time" ? { kind: "time", slices: [] } : { kind: "count", outcomes: [] };
}

/**
 * Proof of admission handed out by {@link CircuitBreaker.tryAcquire}: the breaker's generation
 * when it was issued, or -1 for a rejection. Outcomes carrying a stale generation belong to an
 * earlier episode and are ignored.
 */
export type Permit = number;

/** The permit value meaning "rejected". */
export const REJECTED: Permit = -1;

/**
 * Called after every state change with the window counts as they were just before it (so an
 * opening reports the calls and failures that caused it).
 */
export type BreakerTransitionListener = (
  from: BreakerStateName,
  to: BreakerStateName,
  window: WindowCounts,
  trigger: TransitionTrigger,
) => void;

/** Snapshot returned by {@link CircuitBreaker.health}. */
export interface BreakerHealth extends WindowCounts {
  /**
   * Current state (an open breaker past its open period still reads `open` until the next call).
   */
  readonly state: BreakerStateName;
  /** Failures ÷ calls in the window (0 when empty), rounded to the thousandth. */
  readonly failureRate: number;
  /** Slow calls ÷ calls in the window (0 when empty), rounded to the thousandth. */
  readonly slowCallRate: number;
  /**
   * When the breaker last opened, as an ISO 8601 wall-clock time (`2025-03-01T12:00:00.000Z`),
   * or `null` unless open. Read from the clock's `wallTime` (else `Date.now()`), minus how long
   * ago it opened on the monotonic clock.
   */
  readonly openedAt: string | null;
  /** Milliseconds since it opened, rounded, or `null` unless open. */
  readonly ageMs: number | null;
  /** Milliseconds until trials are admitted, rounded up, or `null` unless open. */
  readonly retryInMs: number | null;
  /** Trials in flight (half-open only, else 0). */
  readonly trialsInFlight: number;
  /** Increments on every transition. */
  readonly generation: number;
  /**
   * Share of calls admitted while ramping up after recovery (in [0.1, 1), to the thousandth,
   * rounded down); absent otherwise.
   */
  readonly rampUp?: { readonly admitted: number } | undefined;
  /** Isolations not yet disposed (0 unless isolated). */
  readonly isolations: number;
  /** Reopenings after failed trials since the breaker last closed (open-duration backoff's n). */
  readonly reopenings: number;
}

/**
 * A count-based circuit breaker with lazy state changes and no timers.
 *
 * - Closed: outcomes go into the window; the breaker opens when the window holds at least
 *   `minCalls` and the failure or slow-call rate is at or above its threshold (`>=`). Runs of
 *   consecutive failures alone never open it.
 * - Open: every admission is rejected until `openForMs` has elapsed (`>=`); the next admission
 *   after that becomes a half-open trial.
 * - Half-open: at most `halfOpen.maxCalls` concurrent trials, excess rejected at once; it closes
 *   as soon as `halfOpen.successes` trials succeed, and one failed (or slow) trial reopens it.
 * - Isolated: manually held open until {@link CircuitBreaker.reset}.
 *
 * Thresholds are checked after every recorded outcome, a success included. A transition to the
 * current state is no transition: no event, no new episode.
 *
 * The clock is read as monotonic: if it steps backwards, the last reading is used instead.
 */
export class CircuitBreaker {
  #settings: BreakerSettings;
  readonly #clock: Clock;
  readonly #window: OutcomeWindow;
  readonly #onTransition: BreakerTransitionListener | undefined;
  #state: BreakerState | MutableHalfOpen | Ramping = CLOSED;
  #generation = 0;
  #lastNow = Number.NEGATIVE_INFINITY;
  // Whether the window may hold a failure or a slow call. While it holds neither, both rates are
  // 0, below any threshold (the policy language requires them above 0), so a fast success needs
  // no evaluation: the happy path keeps its cost.
  #tainted = false;
  // The most recent failure recorded while closed or half-open, and the one that opened the
  // breaker: kept once, at the transition, so that rejections can carry it as `cause` at no cost.
  #lastFailure: unknown = undefined;
  #openedBy: unknown = undefined;
  // open-duration backoff: reopenings after failed trials since the breaker last closed
  #reopenings = 0;
  // isolations not yet disposed; a reset bumps the epoch, so older handles do nothing
  #isolations = 0;
  #isolationEpoch = 0;

  /**
   * @param onTransition Called after every state change (used for events).
   */
  constructor(settings: BreakerSettings, clock: Clock, onTransition?: BreakerTransitionListener) {
    this.#settings = settings;
    this.#clock = clock;
    this.#window = createWindow(settings.window);
    this.#onTransition = onTransition;
  }

  /** The settings in force: those it was created with, or the last {@link reconfigure}'s. */
  get settings(): BreakerSettings {
    return this.#settings;
  }

  /**
   * Replaces the thresholds, open duration and half-open trials (the window keeps its shape and
   * its counts). The next evaluation and the next opening use them; an open period already
   * running keeps the length it was given. The caller validates them (reconfigure.ts).
   */
  reconfigure(settings: BreakerSettings): void {
    this.#settings = { ...settings, window: this.#settings.window };
  }

  /** The current state (open → half-open is only noticed by the next admission). */
  get state(): BreakerState {
    return this.#state;
  }

  /**
   * The failure that opened the breaker (the last one recorded before it opened), while it is
   * open or half-open; `undefined` when closed, isolated, or opened by slow calls alone.
   * Rejections carry it as their `cause`.
   */
  get openedBy(): unknown {
    return this.#openedBy;
  }

  /**
   * Asks to send one attempt. Returns a permit, or {@link REJECTED}.
   *
   * @param now The clock's current time, if the caller has just read it.
   */
  tryAcquire(now?: number): Permit {
    const s = this.#state;
    switch (s.state) {
      case "closed":
        // the happy path: one identity check; only a ramping breaker does more
        return s === CLOSED ? this.#generation : this.#ramp(s as Ramping, now);
      case "open":
        if (this.#now(now) - s.openedAt >= s.forMs) {
          this.#transition({ state: "half-open", inFlight: 1, successes: 0 });
          return this.#generation;
        }
        return REJECTED;
      case "half-open":
        if (s.inFlight < Math.max(1, this.settings.halfOpen.maxCalls)) {
          (s as MutableHalfOpen).inFlight++;
          return this.#generation;
        }
        return REJECTED;
      case "isolated":
        return REJECTED;
    }
  }

  /**
   * Reports a successful attempt that took `durationMs` milliseconds.
   *
   * @param now The clock's time at the end of the attempt, if the caller has just read it. When
   *   nothing needs the end time (no slow-call check, no observer) the runtime passes the time the
   *   attempt started instead and saves a clock read: the success then counts in the window slice
   *   its attempt started in, or in the latest slice the breaker has seen, whichever is later.
   */
  onSuccess(permit: Permit, durationMs: number, now?: number): void {
    if (permit !== this.#generation) return;
    const slow = this.#isSlow(durationMs);
    const s = this.#state;
    if (s.state === "closed") {
      const at = this.#now(now);
      this.#window.record(at, false, slow);
      // Thresholds are checked after every outcome, a success too (docs/runtime.md): a success
      // can bring the window to `minCalls`, or push out an older success.
      if (slow) this.#tainted = true;
      if (this.#tainted) this.#evaluate(at);
    } else if (s.state === "half-open") {
      const trial = s as MutableHalfOpen;
      trial.inFlight--;
      if (slow) {
        this.#open();
        return;
      }
      trial.successes++;
      if (trial.successes >= this.settings.halfOpen.successes) this.#recover();
    }
  }

  /**
   * Reports a failed (or timed-out) attempt that took `durationMs` milliseconds.
   *
   * @param now The clock's time at the end of the attempt, if the caller has just read it.
   * @param error The failure, kept as the `cause` of rejections if it opens the breaker.
   */
  onFailure(permit: Permit, durationMs: number, now?: number, error?: unknown): void {
    if (permit !== this.#generation) return;
    const s = this.#state;
    if (s.state === "closed") {
      const at = this.#now(now);
      this.#window.record(at, true, this.#isSlow(durationMs));
      this.#tainted = true;
      this.#lastFailure = error;
      this.#evaluate(at);
    } else if (s.state === "half-open") {
      this.#lastFailure = error;
      this.#open();
    }
  }

  /** Gives a permit back without a verdict (caller cancelled, lost hedge, request error). */
  release(permit: Permit): void {
    if (permit !== this.#generation) return;
    const s = this.#state;
    if (s.state === "half-open") (s as MutableHalfOpen).inFlight--;
  }

  /**
   * Milliseconds until an open breaker admits a trial (0 unless open).
   *
   * @param now The clock's current time, if the caller has just read it.
   */
  retryInMs(now?: number): number {
    const s = this.#state;
    if (s.state !== "open") return 0;
    return Math.max(0, s.forMs - (this.#now(now) - s.openedAt));
  }

  /**
   * Holds the breaker open until every isolation has been disposed, or until
   * {@link CircuitBreaker.reset}. Reference-counted (as cockatiel's `isolate()`): a second
   * isolation emits no transition but needs its own disposal. Disposing the last one closes the
   * breaker with an empty window; disposing one twice, or after a reset, does nothing.
   */
  isolate(): BreakerIsolation {
    this.#isolations++;
    this.#transition(ISOLATED, "manual");
    const epoch = this.#isolationEpoch;
    let disposed = false;
    return {
      dispose: () => {
        if (disposed) return;
        disposed = true;
        if (epoch !== this.#isolationEpoch || this.#isolations === 0) return;
        if (--this.#isolations === 0) this.#transition(CLOSED, "manual");
      },
    };
  }

  /**
   * Closes the breaker with an empty window whatever its state; ends every isolation and the
   * open-duration backoff. One meaning wherever it is called (this method, and the control API's
   * `reset()`), the one Resilience4j and Polly give it: Resilience4j's
   * `CircuitBreakerStateMachine.reset()` swaps in a new `ClosedState` (new metrics) and publishes
   * a transition only when the state was not CLOSED; Polly's manual close
   * (`CircuitStateController.CloseCircuitAsync`) calls `OnCircuitClosed()`, which resets the
   * health metrics, and reports `OnCircuitClosed` only when the circuit was not closed. So a
   * closed breaker is emptied with no transition and no new episode: a call in flight still
   * counts, in the emptied window (docs/runtime.md, "Circuit breaker").
   */
  reset(): void {
    this.#isolations = 0;
    this.#isolationEpoch++;
    this.#reopenings = 0;
    // a ramping breaker is closed already: reset ends the ramp and empties the window
    if (this.#state.state === "closed") {
      this.#state = CLOSED;
      this.#window.clear();
      this.#tainted = false;
      this.#lastFailure = undefined;
    } else this.#transition(CLOSED, "manual");
  }

  /** The control API of generated clients (`client.breaker`). */
  control(): BreakerControl {
    return new Control(this);
  }

  /**
   * Milliseconds the next open period will last: `openForMs`, or under open-duration backoff
   * `openForMs × multiplier^n` capped at `capMs`, n being the reopenings so far.
   */
  nextOpenForMs(reopenings = this.#reopenings): number {
    const base = this.settings.openForMs;
    const backoff = this.settings.openBackoff;
    if (backoff === undefined || reopenings <= 0) return base;
    return Math.min(backoff.capMs, base * backoff.multiplier ** reopenings);
  }

  /**
   * The state to persist (docs/runtime.md, "Snapshot and restore"): an open period as the time
   * left on it, the window as counts by age, the backoff's reopenings. An isolated breaker is
   * recorded as what disposing its isolations would leave, closed and empty: isolation belongs to
   * the code holding the handles. Half-open trials in flight are not kept: a half-open breaker is
   * recorded as open with nothing left, so the next call after a restore is a trial.
   */
  snapshot(): BreakerSnapshot {
    const s = this.#state;
    const now = this.#now();
    if (s.state === "isolated" || this.#isolations > 0)
      return { state: "closed", remainingMs: null, reopenings: 0, window: emptyWindow(this) };
    const window = this.#window.snapshot(now);
    if (s.state === "open")
      return {
        state: "open",
        // whole milliseconds, rounded up as `retryInMs` is: never shorter than what is left
        remainingMs: Math.ceil(this.retryInMs(now)),
        reopenings: this.#reopenings,
        window,
      };
    if (s.state === "half-open")
      return { state: "open", remainingMs: 0, reopenings: this.#reopenings, window };
    return { state: "closed", remainingMs: null, reopenings: 0, window };
  }

  /**
   * Checks `value` as a snapshot of a breaker with these settings: `undefined` when it can be
   * restored, else what is wrong with it. {@link CircuitBreaker.restore} applies only what passed.
   */
  checkSnapshot(value: unknown): string | undefined {
    if (!isRecord(value)) return "breaker is not an object";
    const { state, remainingMs, reopenings } = value;
    if (state !== "closed" && state !== "open") return `breaker.state ${String(state)} is unknown`;
    if (state === "open") {
      if (typeof remainingMs !== "number" || !(remainingMs >= 0) || !Number.isFinite(remainingMs))
        return "breaker.remainingMs must be a finite number of milliseconds, at least 0";
      if (remainingMs > this.nextOpenForMs(Number(reopenings)))
        return "breaker.remainingMs is longer than the open period these settings allow";
    } else if (remainingMs !== null) return "breaker.remainingMs must be null unless open";
    if (typeof reopenings !== "number" || !Number.isInteger(reopenings) || reopenings < 0)
      return "breaker.reopenings must be a whole number, at least 0";
    if (state === "closed" && reopenings !== 0) return "breaker.reopenings must be 0 when closed";
    return this.#window.check(value["window"]);
  }

  /**
   * Restores a snapshot {@link CircuitBreaker.checkSnapshot} accepted; throws if it did not.
   * The open period left is counted from now on this breaker's clock.
   */
  restore(snapshot: BreakerSnapshot): void {
    const problem = this.checkSnapshot(snapshot);
    if (problem !== undefined) throw new TypeError(problem);
    const now = this.#now();
    this.#reopenings = snapshot.reopenings;
    if (snapshot.state === "open") {
      const forMs = this.nextOpenForMs();
      this.#state = { state: "open", openedAt: now - (forMs - (snapshot.remainingMs ?? 0)), forMs };
    } else this.#state = CLOSED;
    this.#window.restore(now, snapshot.window);
    this.#tainted = true;
  }

  /**
   * Share of calls a ramping breaker admits now, in [{@link RAMP_FLOOR}, 1); `null` when it is not
   * ramping (or the ramp is over).
   *
   * @param now The clock's current time, if the caller has just read it.
   */
  rampFraction(now?: number): number | null {
    const s = this.#state;
    if (s === CLOSED || s.state !== "closed") return null;
    const f = this.#fraction((s as Ramping).rampingSince, this.#now(now));
    return f >= 1 ? null : f;
  }

  /**
   * A snapshot of state and window counts, for reports: rates to the thousandth, times in whole
   * milliseconds and the opening as a wall-clock time (the decisions use the exact values).
   */
  health(): BreakerHealth {
    const s = this.#state;
    const now = this.#now();
    const counts = this.#window.counts(now);
    const open = s.state === "open";
    const ageMs = open ? now - s.openedAt : 0;
    const ramp = this.rampFraction();
    return {
      state: s.state,
      calls: counts.calls,
      failures: counts.failures,
      slowCalls: counts.slowCalls,
      failureRate: counts.calls === 0 ? 0 : thousandths(counts.failures / counts.calls),
      slowCallRate: counts.calls === 0 ? 0 : thousandths(counts.slowCalls / counts.calls),
      openedAt: open ? wallTimeAgo(this.#clock, ageMs) : null,
      ageMs: open ? Math.round(ageMs) : null,
      retryInMs: open ? Math.ceil(this.retryInMs(now)) : null,
      trialsInFlight: s.state === "half-open" ? s.inFlight : 0,
      generation: this.#generation,
      // rounded down, so a breaker still ramping never reads 1
      ...(ramp !== null ? { rampUp: { admitted: Math.floor(ramp * 1_000) / 1_000 } } : {}),
      isolations: this.#isolations,
      reopenings: this.#reopenings,
    };
  }

  #fraction(since: number, now: number): number {
    const rampMs = this.settings.rampUpMs ?? 0;
    return rampMs <= 0 ? 1 : Math.max(RAMP_FLOOR, (now - since) / rampMs);
  }

  // admission while ramping: the share admitted rises with time; once it reaches 1 the breaker
  // goes back to the shared closed state (no transition: it was closed all along)
  #ramp(s: Ramping, now: number | undefined): Permit {
    const f = this.#fraction(s.rampingSince, this.#now(now));
    if (f >= 1) {
      this.#state = CLOSED;
      return this.#generation;
    }
    s.credit += f;
    if (s.credit < 1) return REJECTED;
    s.credit -= 1;
    return this.#generation;
  }

  #isSlow(durationMs: number): boolean {
    const slowCall = this.settings.slowCall;
    return slowCall !== null && durationMs >= slowCall.durationMs;
  }

  #evaluate(now: number): void {
    const { calls, failures, slowCalls } = this.#window.counts(now);
    if (failures === 0) {
      // the failures have left the window: none of them may be named as the reason to open
      this.#lastFailure = undefined;
      if (slowCalls === 0) this.#tainted = false;
    }
    if (calls === 0 || calls < this.settings.minCalls) return;
    const slowCall = this.settings.slowCall;
    if (
      failures / calls >= this.settings.failureRate ||
      (slowCall !== null && slowCalls / calls >= slowCall.rate)
    ) {
      this.#open();
    }
  }

  // a failed (or slow) half-open trial reopens for longer under open-duration backoff
  #open(): void {
    if (this.#state.state === "half-open") this.#reopenings++;
    this.#transition({ state: "open", openedAt: this.#now(), forMs: this.nextOpenForMs() });
  }

  #close(): void {
    this.#transition(CLOSED);
  }

  // a half-open breaker whose trials succeeded: closed, ramping up when the settings ask for it.
  // The credit starts full, so the first call after closing is admitted.
  #recover(): void {
    if ((this.settings.rampUpMs ?? 0) <= 0) {
      this.#close();
      return;
    }
    this.#transition({ state: "closed", rampingSince: this.#now(), credit: 1 });
  }

  /**
   * Moves to `next` and starts a new episode. A transition to the state the breaker is already
   * in (reset while closed, isolate while isolated) does nothing at all: no event, no new
   * episode, so the outcomes of calls in flight still count (docs/runtime.md).
   */
  #transition(
    next: BreakerState | MutableHalfOpen | Ramping,
    trigger: TransitionTrigger = "automatic",
  ): void {
    const from = this.#state.state;
    if (from === next.state) return;
    if (next.state === "closed") this.#reopenings = 0;
    const window = this.#onTransition === undefined ? undefined : this.#window.counts(this.#now());
    this.#state = next;
    this.#generation++;
    // open and half-open keep the failure that opened the breaker; closed and isolated have none
    this.#openedBy =
      next.state === "open" || next.state === "half-open"
        ? (this.#lastFailure ?? this.#openedBy)
        : undefined;
    this.#lastFailure = undefined;
    this.#tainted = false;
    this.#window.clear();
    if (window !== undefined) this.#onTransition?.(from, next.state, window, trigger);
  }

  #now(reading?: number): number {
    const now = reading ?? this.#clock.now();
    if (now > this.#lastNow) this.#lastNow = now;
    return this.#lastNow;
  }
}

/** The control API over one breaker: isolate, reset, and its state. */
class Control implements BreakerControl {
  readonly #breaker: CircuitBreaker;

  constructor(breaker: CircuitBreaker) {
    this.#breaker = breaker;
  }

  get state(): BreakerStateName {
    return this.#breaker.state.state;
  }

  isolate(): BreakerIsolation {
    return this.#breaker.isolate();
  }

  reset(): void {
    this.#breaker.reset();
  }
}

function thousandths(rate: number): number {
  return Math.round(rate * 1_000) / 1_000;
}

/**
 * The wall-clock time `ageMs` ago, as ISO 8601: the clock's `wallTime` if it has one, else
 * `Date.now()`.
 */
function wallTimeAgo(clock: Clock, ageMs: number): string {
  const wall = clock.wallTime?.() ?? Date.now();
  return new Date(Math.round(wall - ageMs)).toISOString();
}
