// A stale cache the replicas share: the last good response of a request, kept in the store as
// JSON up to `maxAge`, so a replica that never saw a success can serve one (docs/store.md,
// "Shared stale cache").
import type { SharedStale, StaleHit } from "./fallback.js";
import { sha256Hex } from "./sha256.js";
import type { SharedStore, StoreScript } from "./store.js";

/** The largest response a shared stale cache writes to the store, as JSON. */
export const MAX_SHARED_BYTES = 1024 * 1024;

/**
 * Why a shared stale cache did not write a response (docs/store.md, "Shared stale cache"):
 * - `eviction-policy`: the server has a `maxmemory` and a `maxmemory-policy` that evicts keys, so
 *   a stale entry could push out a key that must stay (an idempotency record); `policy` names it.
 * - `memory`: the server evicts nothing but has used 3/4 of its `maxmemory`; the rest is left to
 *   the writes that cannot do without it.
 */
export type StaleStoreRefusal =
  | { readonly reason: "eviction-policy"; readonly policy: string }
  | { readonly reason: "memory"; readonly usedBytes: number; readonly maxBytes: number };

/** What the put step did. */
export type StalePutResult =
  { readonly written: true } | { readonly written: false; readonly refusal: StaleStoreRefusal };

/**
 * Keeps a response, within the operation's bound. KEYS[1] the entry, KEYS[2] the operation's
 * index (a sorted set of its entries' keys by write time in microseconds, made unique so that
 * two writes in one microsecond keep their order); ARGV the response's JSON, the
 * milliseconds it may be served, and the most entries the operation keeps. The time is the
 * server's, so every replica reads the same age, and the bound holds whatever the number of
 * replicas: past it, the entries written least recently are deleted in the same step.
 *
 * Nothing is written when the server could evict keys to make room (a `maxmemory` with any
 * policy but `noeviction`), nor past 3/4 of its `maxmemory`: the cache is only a fallback, and
 * must never be the reason an idempotency record is evicted or refused (docs/store.md).
 */
export const STALE_PUT: StoreScript<StalePutResult> = {
  name: "stale-put",
  lua: `local info = redis.call('INFO', 'memory')
local max = tonumber(string.match(info, '\\nmaxmemory:(%d+)') or '0')
if max > 0 then
  local policy = string.match(info, '\\nmaxmemory_policy:([%w%-]+)') or 'unknown'
  if policy ~= 'noeviction' then return {'eviction-policy', policy} end
  local used = tonumber(string.match(info, '\\nused_memory:(%d+)') or '0')
  if (used + string.len(ARGV[1])) * 4 > max * 3 then
    return {'memory', tostring(used), tostring(max)}
  end
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'data', ARGV[1], 'at', now)
redis.call('PEXPIRE', KEYS[1], ttl)
local us = tonumber(t[1]) * 1000000 + tonumber(t[2])
local top = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
if top[2] and tonumber(top[2]) >= us then us = tonumber(top[2]) + 1 end
redis.call('ZADD', KEYS[2], us, KEYS[1])
local before = us - ttl * 1000
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', before)
for i = 1, #expired do redis.call('DEL', expired[i]) end
if #expired > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', before) end
local over = redis.call('ZCARD', KEYS[2]) - math.max(1, tonumber(ARGV[3]))
if over > 0 then
  local oldest = redis.call('ZPOPMIN', KEYS[2], over)
  for i = 1, #oldest, 2 do redis.call('DEL', oldest[i]) end
end
redis.call('PEXPIRE', KEYS[2], ttl)
return {'written'}`,
  parse: (reply) => {
    const [what, a = "", b = ""] = reply as string[];
    if (what === "eviction-policy") return { written: false, refusal: { reason: what, policy: a } };
    if (what === "memory")
      return {
        written: false,
        refusal: { reason: what, usedBytes: Number(a), maxBytes: Number(b) },
      };
    return { written: true };
  },
  memory: (map, [key = "", index = ""], [data = "null", ttlMs = "0", most = "1"], now) => {
    const ttl = Number(ttlMs);
    map.set(key, { data, at: now }, ttl, now);
    // entry keys by write time, oldest first (a Map keeps the order keys were set in)
    const written =
      (map.get(index, now) as Map<string, number> | undefined) ?? new Map<string, number>();
    written.delete(key);
    written.set(key, now);
    const max = Math.max(1, Number(most));
    for (const [entry, at] of written) {
      if (at > now - ttl && written.size <= max) break;
      written.delete(entry);
      map.delete(entry);
    }
    map.set(index, written, ttl, now);
    return { written: true };
  },
};

interface Kept {
  readonly data: string;
  readonly ageMs: number;
}

/** The response kept under KEYS[1] and its age in milliseconds, or nothing. */
export const STALE_GET: StoreScript<Kept | undefined> = {
  name: "stale-get",
  lua: `local v = redis.call('HMGET', KEYS[1], 'data', 'at')
if not v[1] then return false end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return {v[1], tostring(now - tonumber(v[2]))}`,
  parse: (reply) => {
    if (!Array.isArray(reply)) return undefined;
    const [data, age] = reply as [string, string];
    return { data, ageMs: Math.max(0, Number(age)) };
  },
  memory: (map, [key = ""], _args, now) => {
    const kept = map.get(key, now) as { data: string; at: number } | undefined;
    return kept === undefined ? undefined : { data: kept.data, ageMs: now - kept.at };
  },
};

/** Where a shared stale cache keeps its entries: one dependency's operation. */
export interface StoreStaleOptions {
  readonly dependency: string;
  readonly operation: string;
  /** Oldest entry served, in milliseconds: every entry expires after it. */
  readonly maxAgeMs: number;
  /** Most entries the operation keeps in the store, all replicas together. */
  readonly maxEntries: number;
  /**
   * Told when the store stops taking writes, and why; once, until it takes one again (the
   * stack turns it into a `stale-store-refused` event).
   */
  readonly onRefused?: ((refusal: StaleStoreRefusal) => void) | undefined;
}

/**
 * The store's side of a shared stale cache. A response is written only when it is plain JSON
 * data (objects, arrays, strings, numbers, booleans, null) of at most {@link MAX_SHARED_BYTES}, so
 * what another replica reads back is what this one received; anything else stays in this
 * process. Writes never reject and a read that fails is a miss: the cache is a fallback's, and
 * must never make a failure worse.
 *
 * The store never sees a request's identity: it holds credentials (Authorization, Cookie, API
 * keys in headers, the query or the path), so an entry's key ends in the identity's SHA-256
 * (docs/store.md, "Shared stale cache"), and its value holds only the response and its time.
 */
export class StoreStale implements SharedStale {
  readonly #store: SharedStore;
  readonly #dependency: string;
  readonly #operation: string;
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #index: string;
  readonly #onRefused: ((refusal: StaleStoreRefusal) => void) | undefined;
  /** The refusal last reported, until a write is taken again. */
  #refused: string | undefined;

  constructor(store: SharedStore, options: StoreStaleOptions) {
    this.#store = store;
    this.#dependency = options.dependency;
    this.#operation = options.operation;
    this.#ttlMs = Math.max(1, Math.ceil(options.maxAgeMs));
    this.#maxEntries = Math.max(1, Math.floor(options.maxEntries));
    // "index" is no digest (64 hex digits), so it never names an entry
    this.#index = store.key(options.dependency, "stale", options.operation, "index");
    this.#onRefused = options.onRefused;
  }

  put(key: string, data: unknown): void {
    const json = plainJson(data);
    if (json === undefined || json.length > MAX_SHARED_BYTES) return;
    const write = (entry: string): void => {
      this.#store
        .run(STALE_PUT, [entry, this.#index], [json, this.#ttlMs, this.#maxEntries])
        .then((result) => {
          this.#report(result);
        }, ignore);
    };
    const entry = this.#entryKey(key);
    if (typeof entry === "string") write(entry);
    else entry.then(write, ignore);
  }

  get(key: string): Promise<StaleHit | undefined> {
    return Promise.resolve(this.#entryKey(key))
      .then((entry) => this.#store.run(STALE_GET, [entry], []))
      .then(
        (kept) =>
          kept === undefined
            ? undefined
            : { data: JSON.parse(kept.data) as unknown, ageMs: kept.ageMs },
        () => undefined,
      );
  }

  #report(result: StalePutResult): void {
    if (result.written) {
      this.#refused = undefined;
      return;
    }
    const refusal = result.refusal;
    const what =
      refusal.reason === "memory" ? refusal.reason : `${refusal.reason} ${refusal.policy}`;
    if (this.#refused === what) return;
    this.#refused = what;
    this.#onRefused?.(refusal);
  }

  /** The store key of the entry for `key`: the identity's digest, never the identity. */
  #entryKey(key: string): string | Promise<string> {
    const digest = sha256Hex(key);
    const keyOf = (hex: string) => this.#store.key(this.#dependency, "stale", this.#operation, hex);
    return typeof digest === "string" ? keyOf(digest) : digest.then(keyOf);
  }
}

const NOT_PLAIN = new Error("not plain JSON");

/** `data` as JSON when it is plain JSON data; `undefined` for anything else. */
export function plainJson(data: unknown): string | undefined {
  try {
    return JSON.stringify(data, function (this: unknown, key: string, value: unknown) {
      // the holder's own value, before any toJSON (a Date would otherwise become a string)
      const own = (this as Record<string, unknown>)[key];
      if (typeof own === "object" && own !== null) {
        const proto: unknown = Object.getPrototypeOf(own);
        if (!Array.isArray(own) && proto !== Object.prototype && proto !== null) throw NOT_PLAIN;
      } else if (
        // dropped or changed by JSON, so what another replica reads back would differ
        own === undefined ||
        typeof own === "function" ||
        typeof own === "symbol" ||
        typeof own === "bigint" ||
        (typeof own === "number" && !Number.isFinite(own))
      ) {
        throw NOT_PLAIN;
      }
      return value;
    });
  } catch {
    return undefined;
  }
}

function ignore(): void {
  // a write the store did not take only means another replica cannot serve this entry
}
