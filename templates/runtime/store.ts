// State shared past one process: the store a service's replicas share, in memory or on Redis
// (docs/store.md).
import { systemClock, type Clock } from "./clock.js";
import { consoleLogger, type Logger } from "./logger.js";

/**
 * The members of a node-redis client (`redis` 5 or 6, or `@redis/client`) that the Redis store
 * uses. The runtime never imports the library: the application creates, connects and closes its
 * client, with its own URL, TLS and credentials, and hands it over.
 */
export interface RedisScriptClient {
  scriptLoad(script: string): Promise<string>;
  evalSha(sha1: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  /**
   * node-redis's: false while the client connects or reconnects. A step is then refused at once
   * instead of waiting in the client's offline queue, which has no bound.
   */
  readonly isReady?: boolean | undefined;
  /**
   * node-redis's (an EventEmitter's). The store listens to `error`, so that a connection lost
   * never throws from an emitter nobody listens to, and to `ready` and `terminated`, to log the
   * loss and the return once each (docs/store.md, "When the store is down").
   */
  on?(event: string, listener: (...args: unknown[]) => void): unknown;
}

/** Why a store could not answer: it is down, slow past `timeoutMs`, or refused the command. */
export class StoreUnavailableError extends Error {
  override readonly name: string = "StoreUnavailableError";
  constructor(
    message: string,
    /** What the client library threw, when it threw. */
    override readonly cause?: unknown,
  ) {
    super(message);
  }
}

/** One atomic step, written twice: as a Lua script for Redis and as a function for memory. */
export interface StoreScript<Result> {
  /** Names the step in errors and metrics. */
  readonly name: string;
  /**
   * Runs on the Redis server with `KEYS` and `ARGV` (all strings). The script reads the time
   * with `redis.call('TIME')`, so replicas' clocks never disagree about it.
   */
  readonly lua: string;
  /** Reads the Redis reply into the step's result. */
  readonly parse: (reply: unknown) => Result;
  /**
   * The same step over the memory store's map, at `now` (milliseconds of the store's clock).
   * JavaScript runs it to the end before anything else touches the map, so it is atomic.
   */
  readonly memory: (
    map: TtlMap,
    keys: readonly string[],
    args: readonly string[],
    now: number,
  ) => Result;
}

/** Settings shared by both kinds of store. */
export interface StoreOptions {
  /**
   * First segment of every key (`<prefix>:<service or dependency>:<feature>:…`), so that several
   * applications can share one Redis without meeting. Default `resgen`.
   */
  readonly prefix?: string | undefined;
  /**
   * Longest wait for one step, in milliseconds, after which the store counts as unavailable
   * and the feature does what it does without it (docs/store.md, "When the store is down").
   * Default 250. The memory store answers at once and ignores it.
   */
  readonly timeoutMs?: number | undefined;
  /** Times the memory store's expiries and the Redis store's waits; default the system clock. */
  readonly clock?: Clock | undefined;
  /**
   * Where the Redis store says its client lost the connection and got it back: a warning and an
   * info line per outage, never one per failed attempt. Default {@link consoleLogger}.
   */
  readonly logger?: Logger | undefined;
}

/** What every feature that keeps shared state is given. */
export interface SharedStore {
  /** `memory`: this process alone; `redis`: every replica that uses the same server and prefix. */
  readonly kind: "memory" | "redis";
  /** A key in this store's namespace: `<prefix>:<parts joined by ':'>`. */
  key(...parts: readonly string[]): string;
  /** Runs one atomic step; rejects with {@link StoreUnavailableError} when the store cannot. */
  run<Result>(
    script: StoreScript<Result>,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<Result>;
}

const DEFAULT_PREFIX = "resgen";
const DEFAULT_TIMEOUT_MS = 250;
const DEFAULT_MAX_KEYS = 100_000;

/**
 * A key segment as it goes into a key: `:` and `%` escaped, so that a segment taken from a
 * request (an idempotency key) can never imitate a separator and reach another namespace.
 */
export function keySegment(part: string): string {
  return part.replace(/[%:]/g, (c) => (c === "%" ? "%25" : "%3A"));
}

function joinKey(prefix: string, parts: readonly string[]): string {
  let key = keySegment(prefix);
  for (const part of parts) key += ":" + keySegment(part);
  return key;
}

/** A store on a Redis server, through the application's node-redis client. */
export class RedisStore implements SharedStore {
  readonly kind = "redis";
  readonly #client: RedisScriptClient;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  readonly #clock: Clock;
  /** SHA1 of each script this client has loaded, by script. */
  readonly #loaded = new Map<StoreScript<unknown>, Promise<string>>();

  constructor(client: RedisScriptClient, options: StoreOptions = {}) {
    this.#client = client;
    this.#prefix = options.prefix ?? DEFAULT_PREFIX;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#clock = options.clock ?? systemClock;
    watchConnection(client, options.logger ?? consoleLogger);
  }

  key(...parts: readonly string[]): string {
    return joinKey(this.#prefix, parts);
  }

  run<Result>(
    script: StoreScript<Result>,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<Result> {
    // a client that is not connected would queue the command until it is, without bound: the
    // step fails at once instead, and the feature does what it does without the store
    if (this.#client.isReady === false)
      return Promise.reject(
        new StoreUnavailableError(
          `store step ${script.name} not sent: the Redis client is not connected`,
        ),
      );
    const strings = args.map(String);
    return this.#bounded(script.name, this.#eval(script, [...keys], strings)).then(script.parse);
  }

  async #eval(script: StoreScript<unknown>, keys: string[], args: string[]): Promise<unknown> {
    const sha = await this.#sha(script);
    try {
      return await this.#client.evalSha(sha, { keys, arguments: args });
    } catch (error) {
      // A server restarted or flushed (SCRIPT FLUSH) has forgotten the script: load it again.
      if (!String((error as { message?: unknown }).message).startsWith("NOSCRIPT")) throw error;
      this.#loaded.delete(script);
      return this.#client.evalSha(await this.#sha(script), { keys, arguments: args });
    }
  }

  #sha(script: StoreScript<unknown>): Promise<string> {
    let sha = this.#loaded.get(script);
    if (sha === undefined) {
      sha = this.#client.scriptLoad(script.lua);
      // a failed load is not remembered, so the next step tries again
      sha.catch(() => this.#loaded.delete(script));
      this.#loaded.set(script, sha);
    }
    return sha;
  }

  /** The step, or a {@link StoreUnavailableError} once it fails or `timeoutMs` passes. */
  #bounded<T>(name: string, step: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = this.#clock.setTimer(() => {
        reject(
          new StoreUnavailableError(
            `store step ${name} took longer than ${String(this.#timeoutMs)} ms`,
          ),
        );
      }, this.#timeoutMs);
      step.then(
        (value) => {
          this.#clock.clearTimer(timer);
          resolve(value);
        },
        (error: unknown) => {
          this.#clock.clearTimer(timer);
          reject(
            error instanceof StoreUnavailableError
              ? error
              : new StoreUnavailableError(`store step ${name} failed: ${describe(error)}`, error),
          );
        },
      );
    });
  }
}

function describe(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === "string" ? message : String(error);
}

/** A message with the user and password of any URL in it taken out. */
export function redactCredentials(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s/@]*@/gi, "$1***@");
}

// the clients the store listens to: one listener per client, however many stores share it
const watched = new WeakSet<object>();

/**
 * Listens to the client's `error`, `ready` and `terminated` events. An EventEmitter that emits
 * `error` with no listener throws, which would end the process on the first lost connection;
 * node-redis emits one per failed reconnection attempt, so the loss is logged once, and the
 * return once.
 */
function watchConnection(client: RedisScriptClient, logger: Logger): void {
  if (typeof client.on !== "function" || watched.has(client)) return;
  watched.add(client);
  const fields = { store: "redis" } as const;
  let lost = false;
  client.on("error", (error: unknown) => {
    if (lost) return;
    lost = true;
    logger.warn(
      `store: the Redis connection failed (${redactCredentials(describe(error))}); ` +
        "store steps fail at once until the client has reconnected",
      { event: "resilience.store.connection_lost", ...fields },
    );
  });
  client.on("ready", () => {
    if (!lost) return;
    lost = false;
    logger.info("store: the Redis connection is back", {
      event: "resilience.store.connection_restored",
      ...fields,
    });
  });
  client.on("terminated", () => {
    lost = true;
    logger.warn(
      "store: the Redis client stopped reconnecting (its reconnectStrategy gave up); every " +
        "store step fails until the application connects it again",
      { event: "resilience.store.connection_terminated", ...fields },
    );
  });
}

/**
 * The memory store has no room for a key it was asked to write: every key it holds must be kept
 * until it expires (docs/store.md, "The memory store's bound"). Nothing was changed.
 */
export class StoreFullError extends StoreUnavailableError {
  override readonly name = "StoreFullError";
}

/** How a key is kept when the map is full. */
export interface TtlSetOptions {
  /**
   * Kept until it expires: never evicted to make room for another key (an idempotency lock or
   * stored response, which forgetting would let a request run twice). Default false: the key may
   * go, nearest to expiry first, once no expired key is left to drop.
   */
  readonly keep?: boolean | undefined;
}

interface TtlEntry {
  readonly key: string;
  value: unknown;
  expiresAt: number;
  /** Its heap: kept or evictable. */
  heap: ExpiryHeap;
  /** Its position in that heap. */
  index: number;
}

/** A binary min-heap of entries by expiry, each knowing its index: removal is O(log n). */
class ExpiryHeap {
  readonly #items: TtlEntry[] = [];

  get size(): number {
    return this.#items.length;
  }

  /** The entry that expires first. */
  peek(): TtlEntry | undefined {
    return this.#items[0];
  }

  push(entry: TtlEntry): void {
    entry.heap = this;
    entry.index = this.#items.length;
    this.#items.push(entry);
    this.#up(entry);
  }

  remove(entry: TtlEntry): void {
    const items = this.#items;
    const last = items.pop();
    if (last === undefined || last === entry) return;
    items[entry.index] = last;
    last.index = entry.index;
    this.update(last);
  }

  /** Puts an entry whose expiry changed back in order. */
  update(entry: TtlEntry): void {
    this.#up(entry);
    this.#down(entry);
  }

  #up(entry: TtlEntry): void {
    const items = this.#items;
    let at = entry.index;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      const above = items[parent];
      if (above === undefined || above.expiresAt <= entry.expiresAt) break;
      items[at] = above;
      above.index = at;
      at = parent;
    }
    items[at] = entry;
    entry.index = at;
  }

  #down(entry: TtlEntry): void {
    const items = this.#items;
    let at = entry.index;
    for (;;) {
      const left = items[2 * at + 1];
      const right = items[2 * at + 2];
      const below =
        right !== undefined && left !== undefined && right.expiresAt < left.expiresAt
          ? right
          : left;
      if (below === undefined || below.expiresAt >= entry.expiresAt) break;
      items[at] = below;
      const next = below.index;
      below.index = at;
      at = next;
    }
    items[at] = entry;
    entry.index = at;
  }
}

/** Expired keys a write drops, at most: each write adds at most one, so the backlog drains. */
const EXPIRED_PER_WRITE = 4;

/**
 * The memory store's keys: values with an expiry time, as Redis keeps them with `PX`. An expired
 * key reads as absent. At most `maxKeys` live at once. A new key past that takes the room of an
 * expired key, or else of the evictable key nearest to expiry; a key set with `keep` is never
 * evicted, and when every key is kept the write is refused with {@link StoreFullError}. Every
 * step costs O(log n): the keys are in two min-heaps by expiry, kept and evictable.
 */
export class TtlMap {
  readonly #entries = new Map<string, TtlEntry>();
  readonly #kept = new ExpiryHeap();
  readonly #evictable = new ExpiryHeap();
  readonly #maxKeys: number;

  constructor(maxKeys: number) {
    if (!Number.isSafeInteger(maxKeys) || maxKeys < 1)
      throw new RangeError(`maxKeys must be a whole number from 1, not ${String(maxKeys)}`);
    this.#maxKeys = maxKeys;
  }

  /** The value of `key` at `now`, or `undefined` when it is absent or expired. */
  get(key: string, now: number): unknown {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= now) {
      this.#remove(entry);
      return undefined;
    }
    return entry.value;
  }

  /** Milliseconds `key` has left at `now`; 0 when it is absent. */
  ttl(key: string, now: number): number {
    const entry = this.#entries.get(key);
    return entry === undefined || entry.expiresAt <= now ? 0 : entry.expiresAt - now;
  }

  /**
   * Sets `key` to `value` until `now + ttlMs` (a `ttlMs` of 0 or less deletes it). Replacing a
   * key that holds a value needs no room; a new key at the bound throws {@link StoreFullError}
   * when every key held must be kept, and then changes nothing.
   */
  set(key: string, value: unknown, ttlMs: number, now: number, options: TtlSetOptions = {}): void {
    if (!(ttlMs > 0)) {
      this.delete(key);
      return;
    }
    this.#dropExpired(now);
    const heap = options.keep === true ? this.#kept : this.#evictable;
    const expiresAt = now + ttlMs;
    const entry = this.#entries.get(key);
    if (entry !== undefined) {
      entry.value = value;
      entry.expiresAt = expiresAt;
      if (entry.heap === heap) heap.update(entry);
      else {
        entry.heap.remove(entry);
        heap.push(entry);
      }
      return;
    }
    if (this.#entries.size >= this.#maxKeys) {
      // no expired key is left (#dropExpired would have dropped one): the evictable key nearest
      // to expiry goes, and a key that must be kept never does
      const victim = this.#evictable.peek();
      if (victim === undefined)
        throw new StoreFullError(
          `the memory store is full: its ${String(this.#maxKeys)} keys must all be kept until ` +
            "they expire (running idempotency locks and stored responses); raise maxKeys " +
            "(createMemoryStore({ maxKeys })) or use a Redis store (docs/store.md)",
        );
      this.#remove(victim);
    }
    const added: TtlEntry = { key, value, expiresAt, heap, index: 0 };
    this.#entries.set(key, added);
    heap.push(added);
  }

  delete(key: string): void {
    const entry = this.#entries.get(key);
    if (entry !== undefined) this.#remove(entry);
  }

  /** Keys held (expired ones not yet dropped may still count). */
  get size(): number {
    return this.#entries.size;
  }

  /** Keys held that are kept until they expire (a subset of {@link size}). */
  get keptSize(): number {
    return this.#kept.size;
  }

  #remove(entry: TtlEntry): void {
    this.#entries.delete(entry.key);
    entry.heap.remove(entry);
  }

  // drops a few expired keys, those that expired first
  #dropExpired(now: number): void {
    for (let i = 0; i < EXPIRED_PER_WRITE; i++) {
      const kept = this.#kept.peek();
      const evictable = this.#evictable.peek();
      const first =
        kept === undefined || (evictable !== undefined && evictable.expiresAt < kept.expiresAt)
          ? evictable
          : kept;
      if (first === undefined || first.expiresAt > now) return;
      this.#remove(first);
    }
  }
}

/** Options of the memory store. */
export interface MemoryStoreOptions extends StoreOptions {
  /**
   * Most keys held at once (docs/store.md, "The memory store's bound"). Default 100,000.
   */
  readonly maxKeys?: number | undefined;
}

/** A store for one process: the default, and what tests use. */
export class MemoryStore implements SharedStore {
  readonly kind = "memory";
  readonly #prefix: string;
  readonly #clock: Clock;
  readonly #map: TtlMap;

  constructor(options: MemoryStoreOptions = {}) {
    this.#prefix = options.prefix ?? DEFAULT_PREFIX;
    this.#clock = options.clock ?? systemClock;
    this.#map = new TtlMap(options.maxKeys ?? DEFAULT_MAX_KEYS);
  }

  key(...parts: readonly string[]): string {
    return joinKey(this.#prefix, parts);
  }

  run<Result>(
    script: StoreScript<Result>,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<Result> {
    try {
      return Promise.resolve(script.memory(this.#map, keys, args.map(String), this.#clock.now()));
    } catch (error) {
      return Promise.reject(
        error instanceof StoreUnavailableError
          ? error
          : new StoreUnavailableError(
              `store step ${script.name} failed: ${describe(error)}`,
              error,
            ),
      );
    }
  }
}

/**
 * A store on Redis, for state every replica shares (docs/store.md). `client` is a node-redis
 * client; give it to the store before connecting it, so that the store listens to its errors
 * from the start (a lost connection is then logged, never thrown):
 *
 * ```ts
 * import { createClient } from "redis";
 * const redis = createClient({ url: process.env.REDIS_URL });
 * const store = createRedisStore(redis, { prefix: "shop" });
 * await redis.connect();
 * ```
 */
export function createRedisStore(
  client: RedisScriptClient,
  options: StoreOptions = {},
): SharedStore {
  return new RedisStore(client, options);
}

/** A store for this process alone: what a feature uses when no store is given. */
export function createMemoryStore(options: MemoryStoreOptions = {}): SharedStore {
  return new MemoryStore(options);
}
