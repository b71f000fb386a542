// Hedging settings of an operation and the hedge budget that keeps its extra copies to a fraction
// of calls.

/** Hedging settings of an idempotent operation (used instead of retry). */
export interface HedgeSettings {
  /** Milliseconds after the latest copy before the next copy is launched (e.g. the p95 latency). */
  readonly delayMs: number;
  /** Copies in total, counting the first (e.g. 2). */
  readonly maxAttempts: number;
  /** Fraction of calls allowed to send a hedge, in [0, 1] (e.g. 0.05 for 5 %). */
  readonly budget: number;
}

/**
 * Keeps hedges to a fraction of calls: every call earns `ratio` tokens, every hedge spends one.
 * The bucket holds at most max(1, ratio × 100) tokens and starts full, so short bursts are
 * allowed but the long-run hedge rate cannot exceed `ratio`.
 */
export class HedgeBudget {
  /** Tokens earned per call: the long-run fraction of calls that may hedge. */
  readonly ratio: number;
  /** Most tokens the bucket holds (the largest burst of hedges). */
  readonly capacity: number;
  #tokens: number;

  /** @param ratio Fraction of calls allowed to hedge, clamped to [0, 1]. */
  constructor(ratio: number) {
    this.ratio = Math.min(1, Math.max(0, ratio));
    this.capacity = Math.max(1, this.ratio * 100);
    this.#tokens = this.ratio > 0 ? this.capacity : 0;
  }

  /** Current tokens. */
  get tokens(): number {
    return this.#tokens;
  }

  /** Credits one logical call. */
  onCall(): void {
    const next = this.#tokens + this.ratio;
    this.#tokens = next < this.capacity ? next : this.capacity;
  }

  /** Spends a token for one hedge if available. */
  tryTake(): boolean {
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}
