// Fallbacks: their settings, the stale cache, request identity and serving a degraded outcome.
import type { ResilienceError, ResilienceErrorKind } from "./errors.js";

/**
 * What to answer when the dependency cannot:
 * - `value`: a constant.
 * - `stale`: the last good response to a request of the same identity (see
 *   {@link requestIdentity}), if younger than `maxAgeMs` milliseconds; at most `maxEntries` keys
 *   are kept (least recently used evicted). A miss serves `otherwise`, or throws the failure.
 *   Only for retry-safe reads (docs/runtime.md, "Fallback").
 * - `provided`: a function the caller passes with the call, which receives the error.
 * - `none`: no fallback (turns off one inherited from the dependency).
 */
export type FallbackSettings =
  | { readonly kind: "value"; readonly value: unknown }
  | {
      readonly kind: "stale";
      readonly maxAgeMs: number;
      readonly maxEntries: number;
      /**
       * Headers listed by the policy that partition the cache, besides Authorization, Cookie and
       * every per-call header.
       */
      readonly vary?: readonly string[] | undefined;
      /**
       * `redis`: the replicas share the entries in the store (docs/store.md, "Shared stale
       * cache"), keyed there by a SHA-256 of the identity, at most `maxEntries` of them for all
       * replicas together (the least recently written go first); absent or `memory`: this
       * process keeps its own.
       */
      readonly store?: "memory" | "redis" | undefined;
      /** What a miss serves; `null` or absent: the failure is thrown. */
      readonly otherwise?: StaleMiss | null | undefined;
    }
  | { readonly kind: "provided" }
  | { readonly kind: "none" };

/** What a stale fallback serves when it holds no entry young enough for the request. */
export type StaleMiss =
  { readonly kind: "value"; readonly value: unknown } | { readonly kind: "provided" };

/** Headers whose values always partition a stale cache (lower case). */
export const ALWAYS_VARY: readonly string[] = ["authorization", "cookie"];

/** What identifies an HTTP request to a stale cache. */
export interface RequestIdentity {
  /** HTTP method, upper case. */
  readonly method: string;
  /** The full URL, query included. */
  readonly url: string;
  /**
   * The request's headers as sent: the client's with the call's over them (`mergeHeaders`),
   * credentials included, the runtime's own (deadline, idempotency key) aside.
   */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /**
   * Names whose values are part of the identity besides Authorization and Cookie: every header
   * the call itself sets, and those `fallback.vary` lists.
   */
  readonly vary?: readonly string[] | undefined;
}

/**
 * The stale-cache identity of a request: method, full URL with query, and the values, as sent,
 * of the vary headers (Authorization, Cookie, and the names in `vary`), looked up
 * case-insensitively in the headers the request sends. An absent header is part of the identity
 * too, so a request without Authorization never gets an entry stored for one with it. Two
 * requests get the same string only if all of these are equal (the encoding is JSON, so no value
 * can imitate a separator).
 */
export function requestIdentity(request: RequestIdentity): string {
  const names = new Set<string>(ALWAYS_VARY);
  for (const name of request.vary ?? []) names.add(name.toLowerCase());
  const values: [string, string[]][] = [];
  for (const name of [...names].sort()) values.push([name, valuesOf(request.headers, name)]);
  return JSON.stringify([request.method.toUpperCase(), request.url, values]);
}

function valuesOf(headers: Readonly<Record<string, string>> | undefined, name: string): string[] {
  if (headers === undefined) return [];
  const out: string[] = [];
  for (const [key, value] of Object.entries(headers))
    if (key.toLowerCase() === name) out.push(value);
  return out;
}

/**
 * The key of a stale-cache entry: the request's identity (`undefined` when the caller made the
 * request itself, e.g. `transport: function`) and the caller's `cacheKey`, which partitions
 * further and never replaces the identity.
 */
export function staleKey(identity: string | undefined, cacheKey: string | undefined): string {
  return JSON.stringify([identity ?? null, cacheKey ?? null]);
}

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
  /** Age of a stale response in whole milliseconds, rounded down (only for `stale`). */
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
export function hasFallback(
  settings: FallbackSettings | null,
): settings is Exclude<FallbackSettings, { kind: "none" }> {
  return settings !== null && settings.kind !== "none";
}

interface Entry {
  readonly data: unknown;
  readonly storedAt: number;
  /** When this process last wrote the key to the shared store (shared caches only). */
  readonly sharedAt: number;
}

/** A stale entry as a lookup finds it. */
export interface StaleHit {
  readonly data: unknown;
  readonly ageMs: number;
}

/**
 * The store's side of a stale cache the replicas share (shared-stale.ts, `StoreStale`): writes
 * that never reject, and reads that answer `undefined` for a miss or a store that cannot answer.
 */
export interface SharedStale {
  put(key: string, data: unknown): void;
  get(key: string): Promise<StaleHit | undefined>;
}

/** A key is written to the shared store at most this often by one process. */
export const SHARE_EVERY_MS = 1_000;

/** Last good responses by key, bounded by age and count (least recently used evicted first). */
export class StaleCache {
  /** Most keys kept; the least recently used is evicted beyond it. */
  readonly maxEntries: number;
  /** Oldest entry served, in milliseconds. */
  readonly maxAgeMs: number;
  readonly #entries = new Map<string, Entry>();
  readonly #shared: SharedStale | undefined;
  readonly #shareEveryMs: number;

  constructor(maxEntries: number, maxAgeMs: number, shared?: SharedStale) {
    this.maxEntries = Math.max(0, Math.floor(maxEntries));
    this.maxAgeMs = Math.max(0, maxAgeMs);
    this.#shared = shared;
    this.#shareEveryMs = Math.min(SHARE_EVERY_MS, this.maxAgeMs / 2);
  }

  /**
   * The entry under `key` at `now`: this process's, or for a shared cache the youngest of this
   * process's and the store's (a promise then, since the store is a round trip away).
   */
  lookup(key: string, now: number): StaleHit | undefined | Promise<StaleHit | undefined> {
    const own = this.get(key, now);
    const shared = this.#shared;
    if (shared === undefined) return own;
    return shared
      .get(key)
      .then((hit) =>
        hit === undefined ||
        hit.ageMs > this.maxAgeMs ||
        (own !== undefined && own.ageMs <= hit.ageMs)
          ? own
          : hit,
      );
  }

  /** Entries held. */
  get size(): number {
    return this.#entries.size;
  }

  /** Stores `data` under `key` at clock time `now`. */
  set(key: string, data: unknown, now: number): void {
    if (this.maxEntries === 0) return;
    const previous = this.#entries.get(key);
    let sharedAt = previous?.sharedAt ?? Number.NEGATIVE_INFINITY;
    // a shared cache writes a key through at most every SHARE_EVERY_MS (or maxAge / 2)
    if (this.#shared !== undefined && now - sharedAt >= this.#shareEveryMs) {
      sharedAt = now;
      this.#shared.put(key, data);
    }
    this.#entries.delete(key);
    this.#entries.set(key, { data, storedAt: now, sharedAt });
    if (this.#entries.size > this.maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }

  /**
   * The entry under `key` if younger than `maxAgeMs` at clock time `now` (marking it recently
   * used).
   */
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
 * (no fresh-enough stale entry and no `otherwise`, or no provided function).
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
      if (cached !== undefined)
        return {
          data: cached.data as T,
          degraded: true,
          reason: error.kind,
          error,
          // whole milliseconds, rounded down: never older than the entry really is
          ageMs: Math.floor(cached.ageMs),
        };
      return settings.otherwise === null || settings.otherwise === undefined
        ? undefined
        : serveFallback(settings.otherwise, error, undefined, provided);
    case "provided":
      return provided === undefined
        ? undefined
        : { data: await provided(error), degraded: true, reason: error.kind, error };
  }
}
