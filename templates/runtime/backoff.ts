// Backoff between retries: exponential delays with jitter.
import type { Random } from "./random.js";

/**
 * How a delay is randomised (see the AWS Architecture Blog article "Exponential Backoff and
 * Jitter"), with exp = min(cap, base × multiplier^(n−1)) for the n-th retry:
 * - `none`: exp (every client retries in lockstep; avoid).
 * - `full`: uniform in [0, exp).
 * - `equal`: exp/2 + uniform in [0, exp/2).
 * - `decorrelated`: min(cap, uniform in [base, 3 × previous delay)).
 */
export type Jitter = "none" | "full" | "equal" | "decorrelated";

/** Backoff between retries. */
export interface BackoffSettings {
  /** Delay before the first retry, before jitter, in milliseconds. */
  readonly baseMs: number;
  /** Upper bound of any delay, in milliseconds. Applied before jitter is drawn. */
  readonly capMs: number;
  /** Growth factor per retry (≥ 1). */
  readonly multiplier: number;
  /** Randomisation; see {@link Jitter}. */
  readonly jitter: Jitter;
}

/**
 * The un-jittered delay of the `retry`-th retry (1-based): min(cap, base × multiplier^(retry−1)).
 * Stays finite and ≤ cap however large `retry` grows.
 */
export function exponentialDelay(settings: BackoffSettings, retry: number): number {
  const cap = Math.max(0, settings.capMs);
  const base = Math.min(Math.max(0, settings.baseMs), cap);
  if (base === 0) return 0;
  const grown = base * Math.pow(Math.max(1, settings.multiplier), Math.max(0, retry - 1));
  return grown < cap ? grown : cap;
}

/**
 * The delay before the `retry`-th retry (1-based), in milliseconds, always within [0, cap].
 *
 * @param previousMs The delay used before the previous retry; only `decorrelated` reads it
 *   (pass `baseMs` for the first retry).
 */
export function backoffDelay(
  settings: BackoffSettings,
  retry: number,
  previousMs: number,
  random: Random,
): number {
  const cap = Math.max(0, settings.capMs);
  switch (settings.jitter) {
    case "none":
      return exponentialDelay(settings, retry);
    case "full":
      return random() * exponentialDelay(settings, retry);
    case "equal": {
      const exp = exponentialDelay(settings, retry);
      // Rounding can push the sum a hair past exp (noticeably so for tiny values); clamp it.
      return Math.min(exp, exp / 2 + random() * (exp / 2));
    }
    case "decorrelated": {
      const base = Math.min(Math.max(0, settings.baseMs), cap);
      const upper = Math.min(cap, Math.max(base, 3 * previousMs));
      const drawn = base + random() * (upper - base);
      return drawn < cap ? drawn : cap;
    }
  }
}
