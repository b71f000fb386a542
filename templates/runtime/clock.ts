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
  /** Runs `callback` once after `delayMs` milliseconds (negative delays count as 0). */
  setTimer(callback: () => void, delayMs: number): TimerHandle;
  /** Cancels a pending timer; does nothing if it already ran or was cancelled. */
  clearTimer(handle: TimerHandle): void;
}

// setTimeout fires at once for delays above 2^31 - 1 ms, so longer waits are clamped.
const MAX_TIMER_MS = 2_147_483_647;

/**
 * The default clock: `performance.now()` (monotonic) and the host's `setTimeout`. Timers are
 * only created for waits a caller is awaiting (attempt timeouts, backoff sleeps, queue waits), so
 * keeping the process alive while they run is intended; nothing long-lived is ever scheduled.
 */
export const systemClock: Clock = {
  now: () => performance.now(),
  setTimer: (callback, delayMs) => setTimeout(callback, Math.min(Math.max(0, delayMs), MAX_TIMER_MS)),
  clearTimer: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * Resolves after `delayMs` milliseconds of `clock` time. Rejects with an `aborted`
 * {@link ResilienceError} as soon as `signal` aborts (at once if it already has).
 */
export function sleep(clock: Clock, delayMs: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted === true) return Promise.reject(abortedError(signal.reason));
  if (delayMs <= 0 && signal === undefined) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      clock.clearTimer(handle);
      reject(abortedError(signal?.reason));
    };
    const handle = clock.setTimer(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, delayMs);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
