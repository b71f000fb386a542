// The circuit breaker's outcome windows: time buckets or the last N calls.
/** Counts over a breaker window. */
export interface WindowCounts {
  /** Calls recorded. */
  readonly calls: number;
  /** Of which failed. */
  readonly failures: number;
  /** Of which took at least the slow-call duration. */
  readonly slowCalls: number;
}

/** A window over recent call outcomes, for the circuit breaker. */
export interface OutcomeWindow {
  /** Records one outcome at time `now` (clock milliseconds). */
  record(now: number, failed: boolean, slow: boolean): void;
  /** Counts of the outcomes still inside the window at time `now`. */
  counts(now: number): WindowCounts;
  /** Forgets everything. */
  clear(): void;
}

/** A window over the last `durationMs`, split into `buckets` time slices. */
export interface TimeWindowSettings {
  readonly kind: "time";
  /** Window length in milliseconds (e.g. 10,000). */
  readonly durationMs: number;
  /** Number of slices (e.g. 10); the window slides one slice at a time. */
  readonly buckets: number;
}

/** A window over the last `calls` outcomes. */
export interface CountWindowSettings {
  readonly kind: "count";
  /** Number of most recent calls considered (e.g. 100). */
  readonly calls: number;
}

/** Either window shape. */
export type WindowSettings = TimeWindowSettings | CountWindowSettings;

// Layout of one bucket in TimeWindow's array: its slice number, then its three counts.
const SLICE = 0;
const CALLS = 1;
const FAILURES = 2;
const SLOW_CALLS = 3;
const FIELDS = 4;

/**
 * Ring of time buckets in one preallocated typed array: memory is O(buckets) whatever the call
 * rate. A bucket is reused once its slice has left the window. (One array of four fields per
 * bucket rather than an array per field: every typed array carries about 150 bytes of overhead,
 * which would be most of a breaker's memory.)
 */
export class TimeWindow implements OutcomeWindow {
  readonly #size: number;
  readonly #sliceMs: number;
  readonly #buckets: Float64Array;
  // The slice last recorded into and its bucket's offset: calls in the same slice skip the
  // modulo (a floating-point remainder, the dearest step of a record).
  #slice = Number.NaN;
  #bucket = 0;

  constructor(settings: TimeWindowSettings) {
    this.#size = Math.max(1, Math.floor(settings.buckets));
    this.#sliceMs = Math.max(1, settings.durationMs / this.#size);
    this.#buckets = new Float64Array(this.#size * FIELDS);
    this.clear();
  }

  record(now: number, failed: boolean, slow: boolean): void {
    const slice = Math.floor(now / this.#sliceMs);
    const buckets = this.#buckets;
    let b = this.#bucket;
    if (slice !== this.#slice) {
      b = (((slice % this.#size) + this.#size) % this.#size) * FIELDS;
      this.#slice = slice;
      this.#bucket = b;
      if (buckets[b + SLICE] !== slice) {
        buckets[b + SLICE] = slice;
        buckets[b + CALLS] = 0;
        buckets[b + FAILURES] = 0;
        buckets[b + SLOW_CALLS] = 0;
      }
    }
    buckets[b + CALLS] = (buckets[b + CALLS] ?? 0) + 1;
    if (failed) buckets[b + FAILURES] = (buckets[b + FAILURES] ?? 0) + 1;
    if (slow) buckets[b + SLOW_CALLS] = (buckets[b + SLOW_CALLS] ?? 0) + 1;
  }

  counts(now: number): WindowCounts {
    const current = Math.floor(now / this.#sliceMs);
    const buckets = this.#buckets;
    let calls = 0;
    let failures = 0;
    let slowCalls = 0;
    for (let b = 0; b < buckets.length; b += FIELDS) {
      // a cleared slice is NaN, and so is its age: never in the window
      const age = current - (buckets[b + SLICE] ?? Number.NaN);
      if (age >= 0 && age < this.#size) {
        calls += buckets[b + CALLS] ?? 0;
        failures += buckets[b + FAILURES] ?? 0;
        slowCalls += buckets[b + SLOW_CALLS] ?? 0;
      }
    }
    return { calls, failures, slowCalls };
  }

  clear(): void {
    this.#slice = Number.NaN;
    for (let b = 0; b < this.#buckets.length; b += FIELDS) this.#buckets[b + SLICE] = Number.NaN;
  }
}

const FAILED = 1;
const SLOW = 2;

/** Ring of the last N outcomes, one byte each, with running totals. */
export class CountWindow implements OutcomeWindow {
  readonly #ring: Uint8Array;
  #next = 0;
  #filled = 0;
  #failures = 0;
  #slow = 0;

  constructor(settings: CountWindowSettings) {
    this.#ring = new Uint8Array(Math.max(1, Math.floor(settings.calls)));
  }

  record(_now: number, failed: boolean, slow: boolean): void {
    const size = this.#ring.length;
    if (this.#filled === size) {
      const old = this.#ring[this.#next] ?? 0;
      if ((old & FAILED) !== 0) this.#failures--;
      if ((old & SLOW) !== 0) this.#slow--;
    } else {
      this.#filled++;
    }
    this.#ring[this.#next] = (failed ? FAILED : 0) | (slow ? SLOW : 0);
    if (failed) this.#failures++;
    if (slow) this.#slow++;
    this.#next = (this.#next + 1) % size;
  }

  counts(): WindowCounts {
    return { calls: this.#filled, failures: this.#failures, slowCalls: this.#slow };
  }

  clear(): void {
    this.#next = 0;
    this.#filled = 0;
    this.#failures = 0;
    this.#slow = 0;
  }
}

/** Creates the window described by `settings`. */
export function createWindow(settings: WindowSettings): OutcomeWindow {
  return settings.kind === "time" ? new TimeWindow(settings) : new CountWindow(settings);
}
