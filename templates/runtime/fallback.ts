import type { ResilienceError, ResilienceErrorKind } from "./errors.js";

/**
 * What to answer when the dependency cannot:
 * - `value`: a constant.
 * - `stale`: the last good response for the same operation and cache key, if younger than
 *   `maxAgeMs` milliseconds; at most `maxEntries` keys are kept (least recently used evicted).
 * - `provided`: a function the caller passes with the call, which receives the error.
 * - `none`: no fallback (turns off one inherited from the dependency).
 */
export type FallbackSettings =
  | { readonly kind: "value"; readonly value: unknown }
  | { readonly kind: "stale"; readonly maxAgeMs: number; readonly maxEntries: number }
  | { readonly kind: "provided" }
  | { readonly kind: "none" };

/** A response from the dependency, for an operation that has a fallback. */
export interface Fresh<T> {
  readonly data: T;
  readonly degraded: false;
}

/** A fallback's answer: never to be mistaken for fresh data. */
export interface Degraded<T> {
  readonly data: T;
  readonly degraded: true;
  /** Kind of the failure that was covered. */
  readonly reason: ResilienceErrorKind;
  /** The failure that was covered. */
  readonly error: ResilienceError;
  /** Age of a stale response in milliseconds (only for `stale`). */
  readonly ageMs?: number;
}

/** Result of an operation with a fallback. */
export type Outcome<T> = Fresh<T> | Degraded<T>;

/**
 * Result type of a call: plain `T` for operations without a fallback (`null` or `none`),
 * {@link Outcome} for operations with one.
 */
export type CallResult<T, F> = F extends null | { readonly kind: "none" } ? T : Outcome<T>;

/** Whether `settings` describes an actual fallback. */
export function hasFallback(settings: FallbackSettings | null): settings is Exclude<FallbackSettings, { kind: "none" }> {
  return settings !== null && settings.kind !== "none";
}

interface Entry {
  readonly data: unknown;
  readonly storedAt: number;
}

/** Last good responses by key, bounded by age and count (least recently used evicted first). */
export class StaleCache {
  /** Most keys kept; the least recently used is evicted beyond it. */
  readonly maxEntries: number;
  /** Oldest entry served, in milliseconds. */
  readonly maxAgeMs: number;
  readonly #entries = new Map<string, Entry>();

  constructor(maxEntries: number, maxAgeMs: number) {
    this.maxEntries = Math.max(0, Math.floor(maxEntries));
    this.maxAgeMs = Math.max(0, maxAgeMs);
  }

  /** Entries held. */
  get size(): number {
    return this.#entries.size;
  }

  /** Stores `data` under `key` at clock time `now`. */
  set(key: string, data: unknown, now: number): void {
    if (this.maxEntries === 0) return;
    this.#entries.delete(key);
    this.#entries.set(key, { data, storedAt: now });
    if (this.#entries.size > this.maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }

  /** The entry under `key` if younger than `maxAgeMs` at clock time `now` (marking it recently used). */
  get(key: string, now: number): { readonly data: unknown; readonly ageMs: number } | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    const ageMs = Math.max(0, now - entry.storedAt);
    if (ageMs > this.maxAgeMs) {
      this.#entries.delete(key);
      return undefined;
    }
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return { data: entry.data, ageMs };
  }
}

/**
 * The fallback answer for `error`, or `undefined` when this fallback has nothing to serve
 * (no fresh-enough stale entry, or no provided function).
 */
export async function serveFallback<T>(
  settings: Exclude<FallbackSettings, { kind: "none" }>,
  error: ResilienceError,
  cached: { readonly data: unknown; readonly ageMs: number } | undefined,
  provided: ((error: ResilienceError) => T | Promise<T>) | undefined,
): Promise<Degraded<T> | undefined> {
  switch (settings.kind) {
    case "value":
      return { data: settings.value as T, degraded: true, reason: error.kind, error };
    case "stale":
      return cached === undefined
        ? undefined
        : { data: cached.data as T, degraded: true, reason: error.kind, error, ageMs: cached.ageMs };
    case "provided":
      return provided === undefined ? undefined : { data: await provided(error), degraded: true, reason: error.kind, error };
  }
}
