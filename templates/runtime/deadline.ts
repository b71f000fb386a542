// Deadlines: the Deadline class, ambient deadline and signal scopes, and remaining time in headers.
import { followAbort } from "./abort.js";
import { sharedStore } from "./ambient.js";
import { systemClock, type Clock } from "./clock.js";

/** Anything that can say how much time is left, in milliseconds. */
export interface DeadlineLike {
  /** Milliseconds left (never negative). */
  remaining(): number;
}

/**
 * An absolute point in time on a {@link Clock}. Deadlines are compared and propagated as
 * remaining time, never as wall-clock instants, so clock skew between hosts cannot shift them.
 */
export class Deadline implements DeadlineLike {
  /** Absolute time on {@link Deadline.clock}, in milliseconds; `Infinity` for no deadline. */
  readonly at: number;
  /** The clock `at` refers to. */
  readonly clock: Clock;

  /**
   * @param at Absolute time on `clock` (milliseconds); `Infinity` for no deadline.
   * @param clock Clock the time refers to. Defaults to {@link systemClock}.
   */
  constructor(at: number, clock: Clock = systemClock) {
    this.at = at;
    this.clock = clock;
  }

  /** A deadline `budgetMs` milliseconds from now on `clock`. */
  static after(budgetMs: number, clock: Clock = systemClock): Deadline {
    return new Deadline(clock.now() + Math.max(0, budgetMs), clock);
  }

  /** Milliseconds left before the deadline minus `marginMs` (default 0); never negative. */
  remaining(marginMs = 0): number {
    const left = this.at - marginMs - this.clock.now();
    return left > 0 ? left : 0;
  }

  /** Whether no time is left once `marginMs` (default 0) is set aside. */
  expired(marginMs = 0): boolean {
    return this.remaining(marginMs) <= 0;
  }
}

/** What a scope set by {@link withDeadline} or by inbound middleware carries. */
export interface AmbientScope {
  readonly deadline: Deadline;
  /** Aborted when the work of the scope is no longer wanted (the inbound request went away). */
  readonly signal: AbortSignal | undefined;
  /**
   * Dependencies that answered with a fallback during the scope's work: set by inbound
   * middleware that reports degraded responses (docs/services.md), filled by the stack when a
   * fallback is served.
   */
  readonly degraded?: Set<string> | undefined;
}

const ambient = sharedStore<AmbientScope>();

/**
 * Runs `fn` with an ambient deadline that every call made inside it (through this runtime)
 * respects. Nested scopes can only shorten the deadline, never extend it.
 *
 * @param budget Milliseconds from now, or an existing deadline.
 * @param clock Clock for a millisecond budget. Defaults to {@link systemClock}.
 */
export function withDeadline<T>(
  budget: number | DeadlineLike,
  fn: () => T,
  clock: Clock = systemClock,
): T {
  const ms = typeof budget === "number" ? budget : budget.remaining();
  let deadline = Deadline.after(ms, clock);
  const outer = ambient.getStore();
  if (outer !== undefined && outer.deadline.remaining() < deadline.remaining())
    deadline = outer.deadline;
  return ambient.run({ deadline, signal: outer?.signal, degraded: outer?.degraded }, fn);
}

/**
 * Runs `fn` with an ambient deadline and an ambient abort signal: every call made inside it
 * (through this runtime) respects the deadline and is aborted with the signal, together with
 * any signal its caller passes. Inbound middleware uses it to cancel the outbound calls of a
 * request whose client went away. Like {@link withDeadline}, an enclosing scope's earlier
 * deadline wins; an enclosing signal is combined with `signal`.
 *
 * @param deadline The scope's deadline.
 * @param signal Aborts the scope's calls; `undefined` keeps the enclosing scope's signal.
 */
export function withDeadlineAndSignal<T>(
  deadline: Deadline,
  signal: AbortSignal | undefined,
  fn: () => T,
): T {
  const outer = ambient.getStore();
  let scoped = deadline;
  let combined = signal;
  if (outer !== undefined) {
    if (outer.deadline.remaining() < deadline.remaining()) scoped = outer.deadline;
    combined = combineSignals(signal, outer.signal);
  }
  return ambient.run({ deadline: scoped, signal: combined, degraded: outer?.degraded }, fn);
}

/**
 * Runs `fn` in a new root scope with `deadline` and `signal`, ignoring any enclosing scope. For
 * inbound middleware: a request is the root of its work, even when it is started from code that
 * runs for another request (a slot freed by one request admits the next one in line).
 */
export function withRequestScope<T>(
  deadline: Deadline,
  signal: AbortSignal | undefined,
  fn: () => T,
  degraded?: Set<string>,
): T {
  return ambient.run({ deadline, signal, degraded }, fn);
}

/** The ambient deadline set by {@link withDeadline}, or `undefined` outside any scope. */
export function currentDeadline(): Deadline | undefined {
  return ambient.getStore()?.deadline;
}

/**
 * The ambient scope (deadline and signal) the current call runs in, read once per call by the
 * stack.
 */
export function currentScope(): AmbientScope | undefined {
  return ambient.getStore();
}

/**
 * The ambient abort signal set by {@link withDeadlineAndSignal}, or `undefined` when there is
 * none.
 */
export function currentSignal(): AbortSignal | undefined {
  return ambient.getStore()?.signal;
}

/**
 * The caller's signal combined with the ambient one. Without an ambient signal (the common
 * case) this returns `given` itself: no controller, no listener. Two different signals are
 * combined with `AbortSignal.any`, which leaves an entry on each for as long as it lives: the
 * stack's calls use {@link joinCallSignal} instead, which lets go when the call settles.
 */
export function inheritSignal(
  given: AbortSignal | undefined,
  scope: AmbientScope | undefined = ambient.getStore(),
): AbortSignal | undefined {
  if (scope === undefined || scope.signal === undefined) return given;
  return combineSignals(given, scope.signal);
}

function combineSignals(
  a: AbortSignal | undefined,
  b: AbortSignal | undefined,
): AbortSignal | undefined {
  if (a === undefined || a === b) return b;
  if (b === undefined) return a;
  return AbortSignal.any([a, b]);
}

/** A signal that follows two others until {@link JoinedSignal.release} is called. */
export interface JoinedSignal {
  /** Aborts, with that source's reason, as soon as either source does. */
  readonly signal: AbortSignal;
  /** Stops following the sources: removes the listeners added to them. Idempotent. */
  release(): void;
}

/**
 * The signal of one call: the caller's signal joined with the ambient scope's, or `undefined`
 * when there is nothing to join (no ambient signal, no caller signal, or the same signal twice;
 * the call then uses {@link inheritSignal}'s answer, which creates nothing).
 *
 * Unlike `AbortSignal.any`, it keeps nothing on the sources once released: one listener on each
 * while the call runs, removed when it settles. `AbortSignal.any` leaves an entry on a source for
 * every signal made from it until the source itself is collected, so a long-lived caller signal
 * (a shutdown signal passed to every call) would grow with every call (docs/runtime.md,
 * "Deadlines").
 */
export function joinCallSignal(
  given: AbortSignal | undefined,
  scope: AmbientScope | undefined,
): JoinedSignal | undefined {
  const ambientSignal = scope?.signal;
  if (given === undefined || ambientSignal === undefined || given === ambientSignal)
    return undefined;
  return joinSignals(given, ambientSignal);
}

const noRelease = (): void => undefined;

function joinSignals(a: AbortSignal, b: AbortSignal): JoinedSignal {
  const controller = new AbortController();
  const first = a.aborted ? a : b.aborted ? b : undefined;
  if (first !== undefined) {
    controller.abort(first.reason);
    return { signal: controller.signal, release: noRelease };
  }
  // the call settles soon after an abort, and its release lets go of both; each signal has one
  // listener for every call that follows it (abort.ts)
  const unfollowA = followAbort(a, () => {
    controller.abort(a.reason);
  });
  const unfollowB = followAbort(b, () => {
    controller.abort(b.reason);
  });
  const release = (): void => {
    unfollowA();
    unfollowB();
  };
  return { signal: controller.signal, release };
}

/**
 * How remaining time travels in a request header: `ms` is a decimal count of milliseconds
 * (e.g. `x-request-timeout-ms: 250`); `grpc-timeout` is the gRPC encoding (`250m`, `2S`).
 */
export type DeadlineFormat = "ms" | "grpc-timeout";

// gRPC allows at most 8 digits, with units from hours down to nanoseconds.
const GRPC_UNITS: ReadonlyArray<readonly [string, number]> = [
  ["n", 1e-6],
  ["u", 1e-3],
  ["m", 1],
  ["S", 1_000],
  ["M", 60_000],
  ["H", 3_600_000],
];
const GRPC_MAX = 99_999_999;

/**
 * Encodes a remaining time for a header. Values are rounded down, so the receiver is never
 * promised more time than the sender will wait. Milliseconds are preferred in `grpc-timeout`;
 * finer units are used under 1 ms and coarser ones past 8 digits.
 *
 * @param ms Remaining milliseconds (negative counts as 0).
 */
export function encodeTimeout(ms: number, format: DeadlineFormat): string {
  const value = Math.max(0, ms);
  if (format === "ms") return String(Math.floor(value));
  if (value >= 1) {
    for (const [unit, size] of GRPC_UNITS.slice(2)) {
      const count = Math.floor(value / size);
      if (count <= GRPC_MAX) return String(count) + unit;
    }
    return String(GRPC_MAX) + "H";
  }
  const micros = Math.floor(value * 1_000);
  return micros >= 1 ? String(micros) + "u" : String(Math.floor(value * 1_000_000)) + "n";
}

/**
 * Decodes a propagated remaining time, in milliseconds, or `undefined` if the value is malformed
 * (in `grpc-timeout`: 1 to 8 digits followed by one of `H M S m u n`).
 */
export function decodeTimeout(value: string, format: DeadlineFormat): number | undefined {
  const text = value.trim();
  if (format === "ms") return /^\d{1,15}(\.\d+)?$/.test(text) ? Number(text) : undefined;
  const match = /^(\d{1,8})([HMSmun])$/.exec(text);
  if (match === null) return undefined;
  const unit = GRPC_UNITS.find(([u]) => u === match[2]);
  return unit === undefined ? undefined : Number(match[1]) * unit[1];
}

/**
 * Builds a deadline from an inbound request header (for server middleware that then calls
 * {@link withDeadline}). Returns `undefined` when the header is absent or malformed.
 */
export function deadlineFromHeader(
  value: string | null | undefined,
  format: DeadlineFormat,
  clock: Clock = systemClock,
): Deadline | undefined {
  if (value === null || value === undefined) return undefined;
  const ms = decodeTimeout(value, format);
  return ms === undefined ? undefined : Deadline.after(ms, clock);
}
