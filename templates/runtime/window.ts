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
  /** What the window holds at time `now`, for a snapshot (times as ages, never readings). */
  snapshot(now: number): WindowSnapshot;
  /** `undefined` when `value` is a snapshot this window can restore, else what is wrong. */
  check(value: unknown): string | undefined;
  /** Replaces the contents with a snapshot `check` accepted, ages counted back from `now`. */
  restore(now: number, snapshot: WindowSnapshot): void;
}

/**
 * A window's persisted contents. A time window lists its slices still inside it as
 * `[age, calls, failures, slowCalls]`, `age` in slices before the current one (0 is the current
 * slice); a count window lists its outcomes oldest first, each 0 (success), 1 (failure), 2 (slow
 * success) or 3 (slow failure).
 */
export type WindowSnapshot =
  | {
      readonly kind: "time";
      readonly slices: readonly (readonly [number, number, number, number])[];
    }
  | { readonly kind: "count"; readonly outcomes: readonly number[] };

const isCount = (n: unknown): n is number => typeof n === "number" && Number.isInteger(n) && n >= 0;

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

  snapshot(now: number): WindowSnapshot {
    const current = Math.floor(now / this.#sliceMs);
    const buckets = this.#buckets;
    const slices: [number, number, number, number][] = [];
    for (let b = 0; b < buckets.length; b += FIELDS) {
      const age = current - (buckets[b + SLICE] ?? Number.NaN);
      const calls = buckets[b + CALLS] ?? 0;
      if (age >= 0 && age < this.#size && calls > 0)
        slices.push([age, calls, buckets[b + FAILURES] ?? 0, buckets[b + SLOW_CALLS] ?? 0]);
    }
    slices.sort((a, b) => b[0] - a[0]);
    return { kind: "time", slices };
  }

  check(value: unknown): string | undefined {
    if (typeof value !== "object" || value === null) return "breaker.window is not an object";
    const { kind, slices } = value as { kind?: unknown; slices?: unknown };
    if (kind !== "time") return `breaker.window.kind must be "time" for this breaker`;
    if (!Array.isArray(slices) || slices.length > this.#size)
      return `breaker.window.slices must be a list of at most ${String(this.#size)} slices`;
    const ages = new Set<number>();
    for (const slice of slices as unknown[]) {
      if (!Array.isArray(slice) || slice.length !== 4 || !slice.every(isCount))
        return "breaker.window.slices holds an entry that is not [age, calls, failures, slow]";
      const [age, calls, failures, slow] = slice as [number, number, number, number];
      if (age >= this.#size || ages.has(age))
        return `breaker.window.slices: age ${String(age)} is outside the window or repeated`;
      if (failures > calls || slow > calls)
        return "breaker.window.slices: more failures or slow calls than calls";
      ages.add(age);
    }
    return undefined;
  }

  restore(now: number, snapshot: WindowSnapshot): void {
    this.clear();
    if (snapshot.kind !== "time") return;
    const current = Math.floor(now / this.#sliceMs);
    const buckets = this.#buckets;
    for (const [age, calls, failures, slow] of snapshot.slices) {
      const slice = current - age;
      const b = (((slice % this.#size) + this.#size) % this.#size) * FIELDS;
      buckets[b + SLICE] = slice;
      buckets[b + CALLS] = calls;
      buckets[b + FAILURES] = failures;
      buckets[b + SLOW_CALLS] = slow;
    }
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

  snapshot(): WindowSnapshot {
    const size = this.#ring.length;
    const outcomes: number[] = [];
    const start = this.#filled === size ? this.#next : 0;
    for (let i = 0; i < this.#filled; i++) outcomes.push(this.#ring[(start + i) % size] ?? 0);
    return { kind: "count", outcomes };
  }

  check(value: unknown): string | undefined {
    if (typeof value !== "object" || value === null) return "breaker.window is not an object";
    const { kind, outcomes } = value as { kind?: unknown; outcomes?: unknown };
    if (kind !== "count") return `breaker.window.kind must be "count" for this breaker`;
    if (!Array.isArray(outcomes) || outcomes.length > this.#ring.length)
      return `breaker.window.outcomes must be a list of at most ${String(this.#ring.length)}`;
    if (!(outcomes as unknown[]).every((o) => isCount(o) && o <= (FAILED | SLOW)))
      return "breaker.window.outcomes holds a value other than 0, 1, 2 or 3";
    return undefined;
  }

  restore(_now: number, snapshot: WindowSnapshot): void {
    this.clear();
    if (snapshot.kind !== "count") return;
    for (const o of snapshot.outcomes) this.record(0, (o & FAILED) !== 0, (o & SLOW) !== 0);
  }
}

/** Creates the window described by `settings`. */
export function createWindow(settings: WindowSettings): OutcomeWindow {
  return settings.kind === "time" ? new TimeWindow(settings) : new CountWindow(settings);
}
