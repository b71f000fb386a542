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

/**
 * Ring of time buckets in preallocated typed arrays: memory is O(buckets) whatever the call
 * rate. A bucket is reused once its slice has left the window.
 */
export class TimeWindow implements OutcomeWindow {
  readonly #size: number;
  readonly #sliceMs: number;
  readonly #slice: Float64Array;
  readonly #calls: Uint32Array;
  readonly #failures: Uint32Array;
  readonly #slow: Uint32Array;

  constructor(settings: TimeWindowSettings) {
    this.#size = Math.max(1, Math.floor(settings.buckets));
    this.#sliceMs = Math.max(1, settings.durationMs / this.#size);
    this.#slice = new Float64Array(this.#size).fill(Number.NaN);
    this.#calls = new Uint32Array(this.#size);
    this.#failures = new Uint32Array(this.#size);
    this.#slow = new Uint32Array(this.#size);
  }

  record(now: number, failed: boolean, slow: boolean): void {
    const slice = Math.floor(now / this.#sliceMs);
    const i = ((slice % this.#size) + this.#size) % this.#size;
    if (this.#slice[i] !== slice) {
      this.#slice[i] = slice;
      this.#calls[i] = 0;
      this.#failures[i] = 0;
      this.#slow[i] = 0;
    }
    this.#calls[i]!++;
    if (failed) this.#failures[i]!++;
    if (slow) this.#slow[i]!++;
  }

  counts(now: number): WindowCounts {
    const current = Math.floor(now / this.#sliceMs);
    let calls = 0;
    let failures = 0;
    let slowCalls = 0;
    for (let i = 0; i < this.#size; i++) {
      const age = current - this.#slice[i]!;
      if (age >= 0 && age < this.#size) {
        calls += this.#calls[i]!;
        failures += this.#failures[i]!;
        slowCalls += this.#slow[i]!;
      }
    }
    return { calls, failures, slowCalls };
  }

  clear(): void {
    this.#slice.fill(Number.NaN);
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
      const old = this.#ring[this.#next]!;
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
