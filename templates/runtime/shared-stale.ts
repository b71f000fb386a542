// A stale cache the replicas share: the last good response of a request, kept in the store as
// JSON up to `maxAge`, so a replica that never saw a success can serve one (docs/store.md,
// "Shared stale cache").
import type { SharedStale, StaleHit } from "./fallback.js";
import { sha256Hex } from "./sha256.js";
import type { SharedStore, StoreScript } from "./store.js";

/** The largest response a shared stale cache writes to the store, as JSON. */
export const MAX_SHARED_BYTES = 1024 * 1024;

/**
 * Keeps a response. KEYS[1] the entry; ARGV its JSON and the milliseconds it may be served.
 * The time it was stored is the server's, so every replica reads the same age.
 */
export const STALE_PUT: StoreScript<void> = {
  name: "stale-put",
  lua: `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSET', KEYS[1], 'data', ARGV[1], 'at', now)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`,
  parse: () => undefined,
  memory: (map, [key = ""], [data = "null", ttlMs = "0"], now) => {
    map.set(key, { data, at: now }, Number(ttlMs), now);
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

  constructor(store: SharedStore, options: StoreStaleOptions) {
    this.#store = store;
    this.#dependency = options.dependency;
    this.#operation = options.operation;
    this.#ttlMs = Math.max(1, Math.ceil(options.maxAgeMs));
  }

  put(key: string, data: unknown): void {
    const json = plainJson(data);
    if (json === undefined || json.length > MAX_SHARED_BYTES) return;
    const write = (entry: string): void => {
      this.#store.run(STALE_PUT, [entry], [json, this.#ttlMs]).catch(ignore);
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
