// The store's two kinds run the same atomic steps alike, and a store that cannot answer says so
// in bounded time (docs/store.md).
import { EventEmitter } from "node:events";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createMemoryStore,
  createRedisStore,
  keySegment,
  StoreFullError,
  StoreUnavailableError,
  TtlMap,
  type RedisScriptClient,
  type SharedStore,
  type StoreScript,
} from "../../templates/runtime/store.js";
import type { LogFields, Logger } from "../../templates/runtime/logger.js";
import { createVirtualClock } from "../../templates/runtime/virtual-clock.js";
import { connectRedis, deletePrefix, testPrefix, type TestRedis } from "../helpers/redis.js";

/** INCR with an expiry, returning the count and the milliseconds left: one atomic step. */
const counter: StoreScript<{ count: number; ttlMs: number }> = {
  name: "test-counter",
  lua: `
    local n = redis.call('INCR', KEYS[1])
    if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
    return { n, redis.call('PTTL', KEYS[1]) }`,
  parse: (reply) => {
    const [count, ttl] = reply as [number, number];
    return { count, ttlMs: ttl };
  },
  memory: (map, keys, args, now) => {
    const count = ((map.get(keys[0]!, now) as number | undefined) ?? 0) + 1;
    const ttlMs = count === 1 ? Number(args[0]) : map.ttl(keys[0]!, now);
    map.set(keys[0]!, count, ttlMs, now);
    return { count, ttlMs };
  },
};

let redis: TestRedis;
const prefix = testPrefix();

beforeAll(async () => {
  redis = await connectRedis();
});
afterAll(async () => {
  await deletePrefix(redis, prefix);
  await redis.close();
});

describe.each(["memory", "redis"] as const)("a %s store", (kind) => {
  const store = (): SharedStore =>
    kind === "memory" ? createMemoryStore({ prefix }) : createRedisStore(redis, { prefix });

  it("runs a step atomically under its own namespace, and the key expires", async () => {
    const s = store();
    const key = s.key(kind, "counter");
    expect(key).toBe(`${keySegment(prefix)}:${kind}:counter`);
    const counts = await Promise.all(
      Array.from({ length: 20 }, () => s.run(counter, [key], [60_000])),
    );
    expect(counts.map((c) => c.count).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
    for (const { ttlMs } of counts) {
      expect(ttlMs).toBeGreaterThan(50_000);
      expect(ttlMs).toBeLessThanOrEqual(60_000);
    }
  });

  it("keeps a key's parts from imitating a separator", () => {
    const s = store();
    expect(s.key("svc", "a:b")).not.toBe(s.key("svc", "a", "b"));
    expect(s.key("svc", "a%3Ab")).not.toBe(s.key("svc", "a:b"));
  });
});

describe("the Redis store", () => {
  it("loads a script again when the server has forgotten it", async () => {
    const s = createRedisStore(redis, { prefix });
    const key = s.key("reload");
    expect((await s.run(counter, [key], [60_000])).count).toBe(1);
    await redis.scriptFlush();
    expect((await s.run(counter, [key], [60_000])).count).toBe(2);
  });

  it("gives up on a step that does not answer within timeoutMs", async () => {
    const clock = createVirtualClock();
    const hung: RedisScriptClient = {
      scriptLoad: () => Promise.resolve("sha"),
      evalSha: () => new Promise<never>(() => {}),
    };
    const s = createRedisStore(hung, { timeoutMs: 100, clock });
    const step = s.run(counter, [s.key("k")], [1]);
    const seen = step.catch((error: unknown) => error);
    await clock.advance(99);
    await clock.advance(1);
    const error = await seen;
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toContain("test-counter took longer than 100 ms");
  });

  it("reports a refused command as unavailable, keeping what the client threw", async () => {
    const refused = new Error("ECONNREFUSED 127.0.0.1:1");
    const down: RedisScriptClient = {
      scriptLoad: () => Promise.reject(refused),
      evalSha: () => Promise.reject(refused),
    };
    const s = createRedisStore(down);
    const error = await s.run(counter, [s.key("k")], [1]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreUnavailableError).cause).toBe(refused);
    // a failed load is not remembered: the next step loads again
    let loads = 0;
    const flaky: RedisScriptClient = {
      scriptLoad: () => (++loads === 1 ? Promise.reject(refused) : Promise.resolve("sha")),
      evalSha: () => Promise.resolve([1, 5]),
    };
    const f = createRedisStore(flaky);
    await expect(f.run(counter, ["k"], [1])).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(f.run(counter, ["k"], [1])).resolves.toEqual({ count: 1, ttlMs: 5 });
    expect(loads).toBe(2);
  });
});

describe("the Redis store's client", () => {
  /** A client as node-redis makes one: an EventEmitter, ready or not, counting its commands. */
  function fakeClient() {
    const emitter = new EventEmitter();
    let commands = 0;
    const client = Object.assign(emitter, {
      isReady: true,
      commands: () => commands,
      scriptLoad: () => {
        commands++;
        return Promise.resolve("sha");
      },
      evalSha: () => {
        commands++;
        return Promise.resolve([1, 5]);
      },
    });
    return client;
  }
  const recording = () => {
    const lines: { level: string; message: string; fields: LogFields }[] = [];
    const logger: Logger = {
      warn: (message, fields) => lines.push({ level: "warn", message, fields }),
      info: (message, fields) => lines.push({ level: "info", message, fields }),
    };
    return { lines, logger };
  };

  it("owns the client's errors: a lost connection never throws, and is logged once per outage without the password", () => {
    const client = fakeClient();
    const { lines, logger } = recording();
    createRedisStore(client, { logger });
    // a second store on the same client adds no second listener
    createRedisStore(client, { logger });
    expect(client.listenerCount("error")).toBe(1);
    const lost = new Error("connect ECONNREFUSED redis://app:s3cr3t-pw@10.0.0.5:6379");
    // node-redis emits one per failed reconnection attempt
    for (let i = 0; i < 5; i++) expect(() => client.emit("error", lost)).not.toThrow();
    client.emit("ready");
    client.emit("error", new Error("Socket closed unexpectedly"));
    client.emit("terminated", new Error("gave up"));
    expect(lines.map((l) => [l.level, l.fields["event"]])).toEqual([
      ["warn", "resilience.store.connection_lost"],
      ["info", "resilience.store.connection_restored"],
      ["warn", "resilience.store.connection_lost"],
      ["warn", "resilience.store.connection_terminated"],
    ]);
    expect(lines[0]!.message).toContain("ECONNREFUSED redis://***@10.0.0.5:6379");
    expect(JSON.stringify(lines)).not.toContain("s3cr3t-pw");
  });

  it("refuses a step at once while the client is not connected, sending nothing for its offline queue", async () => {
    const client = fakeClient();
    const clock = createVirtualClock();
    const s = createRedisStore(client, { clock, logger: recording().logger });
    expect(await s.run(counter, [s.key("k")], [1])).toEqual({ count: 1, ttlMs: 5 });
    const sent = client.commands();
    client.isReady = false;
    const error = await s.run(counter, [s.key("k")], [1]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toContain("not connected");
    // refused without a command and without waiting for timeoutMs
    expect(client.commands()).toBe(sent);
    expect(clock.pendingTimers).toBe(0);
    client.isReady = true;
    expect(await s.run(counter, [s.key("k")], [1])).toEqual({ count: 1, ttlMs: 5 });
  });
});

describe("the memory store's map", () => {
  it("forgets a key when its time is up", () => {
    const map = new TtlMap(10);
    map.set("a", 1, 100, 0);
    expect(map.get("a", 99)).toBe(1);
    expect(map.ttl("a", 40)).toBe(60);
    expect(map.get("a", 100)).toBeUndefined();
    map.set("b", 1, 0, 0);
    expect(map.get("b", 0)).toBeUndefined();
  });

  it("never holds more than its bound, dropping the key nearest to expiry", () => {
    const map = new TtlMap(3);
    map.set("long", 1, 1_000, 0);
    map.set("short", 1, 10, 0);
    map.set("mid", 1, 500, 0);
    map.set("new", 1, 800, 0);
    expect(map.size).toBe(3);
    expect(map.get("short", 1)).toBeUndefined();
    expect(map.get("long", 1)).toBe(1);
    expect(map.get("new", 1)).toBe(1);
  });

  it("never evicts a kept key: a new key takes an expired key's room, then an evictable one's, else is refused", () => {
    const map = new TtlMap(3);
    const keep = { keep: true };
    map.set("lock", 1, 10, 0, keep); // the key nearest to expiry, but kept
    map.set("cache", 1, 500, 0);
    map.set("record", 1, 1_000, 0, keep);
    map.set("new", 1, 800, 0, keep);
    // the evictable key went, though the lock expires sooner
    expect(map.get("cache", 1)).toBeUndefined();
    expect(map.get("lock", 1)).toBe(1);
    expect([map.size, map.keptSize]).toEqual([3, 3]);
    // every key is kept: a new one is refused, and nothing changes
    expect(() => map.set("more", 1, 100, 1)).toThrow(StoreFullError);
    expect(() => map.set("more", 1, 100, 1, keep)).toThrow(/memory store is full.*maxKeys/);
    expect(map.get("more", 1)).toBeUndefined();
    expect(["lock", "record", "new"].map((k) => map.get(k, 1))).toEqual([1, 1, 1]);
    // a key already held needs no room: a lock becomes a stored response
    map.set("lock", 2, 5_000, 1, keep);
    expect(map.ttl("lock", 1)).toBe(5_000);
    // once a kept key has expired, its room is free again
    expect(() => map.set("more", 1, 100, 1_000, keep)).not.toThrow();
    expect(map.get("record", 1_000)).toBeUndefined();
    expect(map.get("more", 1_000)).toBe(1);
  });

  // bound, key names, most milliseconds between writes, tenths of writes that keep their key:
  // chosen so that runs fill the map, evict from it and refuse
  it.each([
    [5, 12, 12, 5],
    [24, 40, 1, 9],
  ])(
    "keeps its promises under any sequence of writes, bound %i, %i names (checked against a plain model)",
    (max, names, gap, kept) => {
      fc.assert(
        fc.property(
          fc.array(
            fc.record({
              key: fc.integer({ min: 0, max: names - 1 }),
              ttl: fc.integer({ min: -5, max: 60 }),
              keep: fc.integer({ min: 0, max: 9 }).map((n) => n < kept),
              advance: fc.integer({ min: 0, max: gap }),
              del: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
            }),
            { minLength: 100, maxLength: 400 },
          ),
          (ops) => {
            const map = new TtlMap(max);
            // the model: what each key holds, until when, and whether it is kept
            const model = new Map<string, { value: number; at: number; keep: boolean }>();
            let now = 0;
            ops.forEach((op, value) => {
              now += op.advance;
              for (const [k, e] of model) if (e.at <= now) model.delete(k);
              const key = `k${op.key}`;
              if (op.del) {
                map.delete(key);
                model.delete(key);
                return;
              }
              const live = [...model.values()];
              const full = !model.has(key) && model.size >= max;
              const evictable = live.filter((e) => !e.keep);
              let thrown: unknown;
              try {
                map.set(key, value, op.ttl, now, { keep: op.keep });
              } catch (error) {
                thrown = error;
              }
              if (op.ttl <= 0) {
                expect(thrown).toBeUndefined();
                model.delete(key);
              } else if (full && evictable.length === 0) {
                // refused only when every live key is kept
                expect(thrown).toBeInstanceOf(StoreFullError);
              } else {
                expect(thrown).toBeUndefined();
                if (full) {
                  // the evictable key nearest to expiry went (or one that expires with it)
                  const soonest = Math.min(...evictable.map((e) => e.at));
                  const gone = [...model].filter(([k]) => map.get(k, now) === undefined);
                  expect(gone).toHaveLength(1);
                  expect(gone[0]![1]).toMatchObject({ keep: false, at: soonest });
                  model.delete(gone[0]![0]);
                }
                model.set(key, { value, at: now + op.ttl, keep: op.keep });
              }
              // every live key of the model reads back, with its time left
              for (const [k, e] of model)
                if (map.get(k, now) !== e.value || map.ttl(k, now) !== e.at - now)
                  throw new Error(`${k} lost: ${String(map.get(k, now))}, ${map.ttl(k, now)} ms`);
              expect(map.size).toBeLessThanOrEqual(max);
            });
          },
        ),
        { numRuns: 100 },
      );
    },
  );

  it("refuses a bound that is not a whole number from 1", () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => new TtlMap(bad)).toThrow(RangeError);
    expect(() => createMemoryStore({ maxKeys: 0 })).toThrow(/maxKeys/);
  });

  it("uses the store's clock", async () => {
    const clock = createVirtualClock();
    const s = createMemoryStore({ clock });
    const key = s.key("c");
    await s.run(counter, [key], [1_000]);
    await clock.advance(1_000);
    expect((await s.run(counter, [key], [1_000])).count).toBe(1);
  });
});
