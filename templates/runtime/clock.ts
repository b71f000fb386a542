// Time and timers: the Clock interface, the default clock with shared timers, and sleep.
import { followAbort } from "./abort.js";
import { abortedError } from "./errors.js";

/** Opaque handle returned by {@link Clock.setTimer}; only meaningful to the same clock. */
export type TimerHandle = unknown;

/**
 * Source of time and timers for every layer of the runtime. Inject a virtual clock
 * ({@link createVirtualClock}) to run timing logic deterministically in tests and simulations.
 */
export interface Clock {
  /**
   * Milliseconds on a monotonic scale with an arbitrary origin. Only differences are meaningful;
   * never compare with `Date.now()`.
   */
  now(): number;
  /**
   * Runs `callback` once after `delayMs` milliseconds (negative delays count as 0).
   *
   * @param now The clock's current time, when the caller has just read it; a clock may use it
   *   instead of reading the time again (clock reads are among the dearest steps of a call).
   */
  setTimer(callback: () => void, delayMs: number, now?: number): TimerHandle;
  /** Cancels a pending timer; does nothing if it already ran or was cancelled. */
  clearTimer(handle: TimerHandle): void;
  /**
   * Milliseconds since the Unix epoch, for reports only (`health().breaker.openedAt`); never used
   * to time anything. Optional: without it, reports read `Date.now()`.
   */
  wallTime?(): number;
}

// setTimeout fires at once for delays above 2^31 - 1 ms, so longer waits are clamped.
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Whether timers of one delay may share one host timer. Not on Cloudflare's workerd: there a
 * request's timers end with the request, so a shared timer set by one request would never fire
 * for the next (docs/platforms.md).
 */
const SHARED_TIMERS =
  (globalThis as { navigator?: { userAgent?: unknown } }).navigator?.userAgent !==
  "Cloudflare-Workers";

/** Pending timers of one delay, oldest first, hence in order of due time. */
interface TimerList {
  readonly delayMs: number;
  head: TimerEntry | undefined;
  tail: TimerEntry | undefined;
  /** The Node timer armed for the head (or for a timer since cleared). */
  node: ReturnType<typeof setTimeout> | undefined;
  /** Set while due timers run, so a timer set meanwhile does not arm a second Node timer. */
  firing: boolean;
}

const lists = new Map<number, TimerList>();

/**
 * Lets a host timer keep the process alive (`keep`) or not. Node's timers have `ref()` and
 * `unref()`; a browser's timer is a number that has neither and needs neither, there being no
 * process to keep alive (docs/platforms.md, "platform: web").
 */
function hold(timer: ReturnType<typeof setTimeout>, keep: boolean): void {
  const handle = timer as { ref?: () => unknown; unref?: () => unknown };
  if (keep) handle.ref?.();
  else handle.unref?.();
}

/** The method a {@link TimerEntry} runs when it falls due. */
export const DUE: unique symbol = Symbol("resgen.timer.due");

// Set by TimerEntry's static block: the entry's links stay private to it.
let link: (entry: TimerEntry, delayMs: number, now: number) => void;
let unlink: (entry: TimerEntry) => void;
let fireDue: (list: TimerList) => void;

/**
 * A timer of the default clock, sharing its Node timer with the others of the same delay (see
 * {@link systemClock}). An object timed on every call (an attempt) extends it and is its own
 * timer, so arming its timeout allocates nothing (see {@link armEntry}).
 */
export abstract class TimerEntry {
  #due = 0;
  #list: TimerList | undefined = undefined;
  #prev: TimerEntry | undefined = undefined;
  #next: TimerEntry | undefined = undefined;

  /** Runs when the entry falls due. */
  abstract [DUE](): void;

  static {
    link = (entry, delayMs, now) => {
      let list = lists.get(delayMs);
      if (list === undefined) {
        list = { delayMs, head: undefined, tail: undefined, node: undefined, firing: false };
        lists.set(delayMs, list);
      }
      entry.#due = now + delayMs;
      entry.#list = list;
      entry.#prev = list.tail;
      entry.#next = undefined;
      if (list.tail === undefined) list.head = entry;
      else list.tail.#next = entry;
      list.tail = entry;
      if (list.node === undefined) {
        if (!list.firing) list.node = setTimeout(fireDue, delayMs, list);
      } else if (list.head === entry) {
        hold(list.node, true);
      }
    };
    unlink = (entry) => {
      const list = entry.#list;
      if (list === undefined) return;
      entry.#list = undefined;
      const prev = entry.#prev;
      const next = entry.#next;
      if (prev === undefined) list.head = next;
      else prev.#next = next;
      if (next === undefined) list.tail = prev;
      else next.#prev = prev;
      // Idle: the Node timer stays armed (re-arming it on the next call would cost more than this)
      // but no longer keeps the process alive; when it fires with nothing due, the list goes away.
      if (list.head === undefined && list.node !== undefined) hold(list.node, false);
    };
    fireDue = (list) => {
      list.node = undefined;
      list.firing = true;
      const now = performance.now();
      for (let entry = list.head; entry !== undefined && entry.#due <= now; entry = list.head) {
        unlink(entry);
        try {
          entry[DUE]();
        } catch (error) {
          // As with a plain setTimeout the failure surfaces, and the other due timers still run.
          queueMicrotask(() => {
            throw error;
          });
        }
      }
      list.firing = false;
      const head = list.head;
      if (head !== undefined) list.node = setTimeout(fireDue, Math.max(1, head.#due - now), list);
      else if (lists.get(list.delayMs) === list) lists.delete(list.delayMs);
    };
  }
}

/** A timer set through {@link Clock.setTimer}: an entry that runs a callback. */
class CallbackTimer extends TimerEntry {
  readonly #callback: () => void;

  constructor(callback: () => void) {
    super();
    this.#callback = callback;
  }

  [DUE](): void {
    this.#callback();
  }
}

// Node's timers count whole milliseconds; rounding up keeps a timer from firing early.
function wholeMs(delayMs: number): number {
  return Math.min(Math.ceil(Math.max(0, delayMs)), MAX_TIMER_MS);
}

/**
 * The default clock: `performance.now()` (monotonic) and the host's `setTimeout`. Timers are
 * only created for waits a caller is awaiting (attempt timeouts, backoff sleeps, queue waits), so
 * keeping the process alive while they run is intended; nothing long-lived is ever scheduled.
 *
 * Attempt timeouts are set on every call and almost always cleared well before they fire, and
 * a Node timer per attempt (a Timeout object, arming and disarming in the event loop) costs more
 * than the rest of the call. Timers of the same whole-millisecond delay therefore share one Node
 * timer: they fall due in the order they were set, so they form a list in due order; setting
 * one appends to it, clearing one unlinks it, and the Node timer is re-armed only when it fires.
 * Delays are rounded up to whole milliseconds (the precision of Node's own timers), so the time
 * left before a deadline shares too.
 */
export const systemClock: Clock = {
  now: () => performance.now(),
  setTimer: (callback, delayMs, now) => {
    const ms = wholeMs(delayMs);
    if (ms <= 0 || !SHARED_TIMERS) return setTimeout(callback, ms);
    const timer = new CallbackTimer(callback);
    link(timer, ms, now ?? performance.now());
    return timer;
  },
  clearTimer: (handle) => {
    if (handle instanceof TimerEntry) unlink(handle);
    else clearTimeout(handle as ReturnType<typeof setTimeout>);
  },
  wallTime: () => Date.now(),
};

/**
 * Arms `entry` to fall due `delayMs` after `now` on `clock`, and returns the handle that
 * `clock.clearTimer` cancels. On the default clock the entry is its own timer; any other clock
 * (a virtual one in tests) gets a timer of its own that runs the entry.
 */
export function armEntry(
  clock: Clock,
  entry: TimerEntry,
  delayMs: number,
  now: number,
): TimerHandle {
  if (clock === systemClock && SHARED_TIMERS) {
    const ms = wholeMs(delayMs);
    if (ms > 0) {
      link(entry, ms, now);
      return entry;
    }
  }
  return clock.setTimer(
    () => {
      entry[DUE]();
    },
    delayMs,
    now,
  );
}

/**
 * Resolves after `delayMs` milliseconds of `clock` time. Rejects with an `aborted`
 * {@link ResilienceError} as soon as `signal` aborts (at once if it already has).
 */
export function sleep(clock: Clock, delayMs: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted === true) return Promise.reject(abortedError(signal.reason));
  if (delayMs <= 0 && signal === undefined) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    let handle: TimerHandle = undefined;
    // one listener on the signal for every sleep and call that follows it (abort.ts)
    const unfollow =
      signal === undefined
        ? undefined
        : followAbort(signal, () => {
            clock.clearTimer(handle);
            reject(abortedError(signal.reason));
          });
    handle = clock.setTimer(() => {
      unfollow?.();
      resolve();
    }, delayMs);
  });
}
