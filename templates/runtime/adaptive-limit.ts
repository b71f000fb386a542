// The adaptive concurrency limit of a bulkhead: a gradient between the recent and the long-term
// latency (docs/runtime.md, "Adaptive concurrency").

/** Settings of an adaptive limit; the starting limit is the bulkhead's `maxConcurrent`. */
export interface GradientLimitSettings {
  /** Lowest the limit goes, however slow the dependency. */
  readonly minLimit: number;
  /** Highest the limit goes, however fast the dependency. */
  readonly maxLimit: number;
  /** Share of each new estimate taken into the limit (0 < smoothing ≤ 1). */
  readonly smoothing: number;
  /** How many times the long-term latency the recent latency may reach before the limit is cut. */
  readonly tolerance: number;
  /** Milliseconds of completed calls averaged into one update (at least 10 calls each). */
  readonly windowMs: number;
}

/** A snapshot of the adaptive limit, returned in the bulkhead's health. */
export interface GradientLimitHealth {
  /** The current limit, in calls (the estimate rounded down). */
  readonly limit: number;
  readonly minLimit: number;
  readonly maxLimit: number;
  /** Mean latency of the last full window, in milliseconds to the thousandth (0 before any). */
  readonly latencyMs: number;
  /**
   * Long-term latency the recent one is compared with, in milliseconds to the thousandth (0
   * before the first).
   */
  readonly baselineMs: number;
}

/**
 * Updates of the long-term latency averaged before it becomes an exponential average, and the
 * weight of that average (2 / (N + 1) for N = 600 windows, as concurrency-limits' Gradient2): a
 * degradation lasting a few hundred windows is seen as one; a longer one slowly becomes the new
 * normal. A window closes with at least MIN_SAMPLES calls, so a quiet spell makes no noisy update.
 */
const WARMUP = 10;
const LONG_WEIGHT = 2 / 601;
const MIN_SAMPLES = 10;

/**
 * Gradient limit after Netflix concurrency-limits' Gradient2: once per window (`windowMs` and
 * at least ten completed calls), with `recent` the window's mean latency,
 *
 *     gradient = clamp(tolerance × baseline / recent, 0.5, 1)
 *     estimate = limit × (1 − smoothing) + (limit × gradient + √limit) × smoothing
 *
 * clamped to [minLimit, maxLimit]. A recent latency within `tolerance` of the baseline lets the
 * limit grow by √limit × smoothing; a slower one cuts it, by at most half the smoothing share.
 * A window in which fewer than half the limit's calls were in flight leaves the limit alone
 * (the caller, not the dependency, bounded it: it says nothing about a higher limit).
 */
export class GradientLimit {
  readonly settings: GradientLimitSettings;
  #estimate: number;
  #sum = 0;
  #count = 0;
  #windowStart = Number.NaN;
  #peak = 0;
  #latency = 0;
  #baseline = 0;
  #updates = 0;

  constructor(initial: number, settings: GradientLimitSettings) {
    this.settings = settings;
    this.#estimate = Math.min(settings.maxLimit, Math.max(settings.minLimit, initial));
  }

  /** The current limit, in calls. */
  get limit(): number {
    return Math.floor(this.#estimate);
  }

  /**
   * Records one completed call.
   *
   * @param latencyMs How long it held its permit.
   * @param inFlight Calls in flight when it completed, itself included.
   * @param now The clock's time.
   * @returns Whether the limit (in whole calls) changed.
   */
  sample(latencyMs: number, inFlight: number, now: number): boolean {
    if (this.#count === 0) this.#windowStart = now;
    this.#sum += latencyMs;
    if (inFlight > this.#peak) this.#peak = inFlight;
    if (++this.#count < MIN_SAMPLES || now - this.#windowStart < this.settings.windowMs) {
      return false;
    }
    const recent = Math.max(this.#sum / this.#count, 0.001);
    const peak = this.#peak;
    this.#sum = 0;
    this.#count = 0;
    this.#peak = 0;
    return this.#update(recent, peak);
  }

  #update(recent: number, peak: number): boolean {
    this.#latency = recent;
    this.#updates++;
    if (this.#updates <= WARMUP) {
      this.#baseline += (recent - this.#baseline) / this.#updates;
    } else {
      this.#baseline += (recent - this.#baseline) * LONG_WEIGHT;
    }
    // back to normal after a long degradation: the baseline comes down faster than its average
    if (this.#baseline / recent > 2) this.#baseline *= 0.95;
    const before = this.limit;
    if (peak < this.#estimate / 2) return false;
    const { smoothing, tolerance, minLimit, maxLimit } = this.settings;
    const gradient = Math.max(0.5, Math.min(1, (tolerance * this.#baseline) / recent));
    const next = this.#estimate * gradient + Math.sqrt(this.#estimate);
    const smoothed = this.#estimate * (1 - smoothing) + next * smoothing;
    this.#estimate = Math.min(maxLimit, Math.max(minLimit, smoothed));
    return this.limit !== before;
  }

  /** A snapshot of the limit and the latencies it follows. */
  health(): GradientLimitHealth {
    return {
      limit: this.limit,
      minLimit: this.settings.minLimit,
      maxLimit: this.settings.maxLimit,
      // for people, to the microsecond: the arithmetic keeps the exact values
      latencyMs: Math.round(this.#latency * 1_000) / 1_000,
      baselineMs: Math.round(this.#baseline * 1_000) / 1_000,
    };
  }
}
