// The worst case of an operation's attempt plan, in milliseconds: every attempt at its timeout
// and every backoff at its ceiling. The compiler's plans (src/model/plan.ts) and the run-time
// validator of reconfigurations (reconfigure.ts) both compute it here, so they cannot disagree.
import type { BackoffSettings } from "./backoff.js";

/** The largest delay jitter can draw before each retry: min(cap, base × multiplier^(n−1)). */
export function backoffCeilings(b: BackoffSettings, retries: number): number[] {
  const out: number[] = [];
  for (let n = 1; n <= retries; n++) {
    // decorrelated jitter can reach the cap from the second retry on
    const exp =
      b.jitter === "decorrelated" && n > 1
        ? b.capMs
        : Math.min(b.capMs, b.baseMs * b.multiplier ** (n - 1));
    out.push(Math.round(exp));
  }
  return out;
}

/** A retry plan's worst case: `maxAttempts` attempts of `attemptMs` and every backoff ceiling. */
export function retryWorstCaseMs(
  attemptMs: number,
  maxAttempts: number,
  backoff: BackoffSettings,
): number {
  const delays = backoffCeilings(backoff, maxAttempts - 1);
  return attemptMs * maxAttempts + delays.reduce((a, b) => a + b, 0);
}

/** A hedged plan's worst case: the last copy, launched after every delay, at its timeout. */
export function hedgeWorstCaseMs(attemptMs: number, maxAttempts: number, delayMs: number): number {
  return delayMs * (maxAttempts - 1) + attemptMs;
}
