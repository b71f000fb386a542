// The store's two kinds run the same atomic steps alike, and a store that cannot answer says so
// in bounded time (docs/store.md).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createMemoryStore,
  createRedisStore,
  keySegment,
  StoreUnavailableError,
  TtlMap,
  type RedisScriptClient,
  type SharedStore,
  type StoreScript,
} from "../../templates/runtime/store.js";
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

  it("uses the store's clock", async () => {
    const clock = createVirtualClock();
    const s = createMemoryStore({ clock });
    const key = s.key("c");
    await s.run(counter, [key], [1_000]);
    await clock.advance(1_000);
    expect((await s.run(counter, [key], [1_000])).count).toBe(1);
  });
});
