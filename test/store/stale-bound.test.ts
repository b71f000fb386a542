// The shared stale cache is bounded in Redis, and never costs an idempotency record its place
// (docs/store.md, "Shared stale cache"): at most maxEntries entries per operation live on the
// server whatever the number of replicas, nothing is written to a server whose maxmemory-policy
// may evict keys, and writes stop at 3/4 of a noeviction server's maxmemory. The policies are
// set on Redis servers of the tests' own; the count bound runs on the shared server.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BEGIN, COMPLETE } from "../../templates/runtime/idempotent-route.js";
import {
  createDependency,
  createRedisStore,
  logEvents,
  type ResilienceEvent,
  type SharedStore,
  type StoreScript,
} from "../../templates/runtime/index.js";
import {
  connectRedis,
  deletePrefix,
  startOwnRedisServer,
  testPrefix,
  type TestRedis,
} from "../helpers/redis.js";
import { dependencySettings, httpFailure, operation } from "../runtime/helpers.js";

/** A store that keeps every step it ran, so a test can wait for the fire-and-forget writes. */
class TrackingStore implements SharedStore {
  readonly kind = "redis";
  readonly #inner: SharedStore;
  readonly #pending: Promise<unknown>[] = [];
  constructor(inner: SharedStore) {
    this.#inner = inner;
  }
  key(...parts: readonly string[]): string {
    return this.#inner.key(...parts);
  }
  run<R>(script: StoreScript<R>, keys: readonly string[], args: readonly (string | number)[]) {
    const step = this.#inner.run(script, keys, args);
    this.#pending.push(step.catch(() => undefined));
    return step;
  }
  async settled(): Promise<void> {
    await Promise.all(this.#pending.splice(0));
  }
}

const fails = () => Promise.reject(httpFailure(503));

describe("the stale cache's bound in Redis", () => {
  let redis: TestRedis;
  const prefix = testPrefix();
  beforeAll(async () => {
    redis = await connectRedis();
  });
  afterAll(async () => {
    await deletePrefix(redis, prefix);
    await redis.close();
  });

  it("keeps at most maxEntries entries of an operation, written by any replica, the latest written", async () => {
    const op = operation({
      name: "getItem",
      retry: null,
      fallback: { kind: "stale", maxAgeMs: 60_000, maxEntries: 5, store: "redis" },
    });
    const stores = [0, 1, 2].map(
      () => new TrackingStore(createRedisStore(redis, { prefix, timeoutMs: 2_000 })),
    );
    const replicas = stores.map((store) =>
      createDependency(dependencySettings({ name: "items" }), { store }),
    );
    for (let i = 0; i < 60; i++) {
      await replicas[i % 3]!.call(op, () => ({ i }), { cacheKey: `item-${i}` });
      await stores[i % 3]!.settled();
    }
    const keys: string[] = [];
    for await (const batch of redis.scanIterator({ MATCH: `${prefix}:items:stale:getItem:*` }))
      keys.push(...batch);
    const index = `${prefix}:items:stale:getItem:index`;
    expect(keys.filter((k) => k !== index)).toHaveLength(5);
    expect(await redis.zCard(index)).toBe(5);
    // a replica of its own (nothing in its memory) is served the five written last, no other
    const fresh = createDependency(dependencySettings({ name: "items" }), {
      store: createRedisStore(redis, { prefix, timeoutMs: 2_000 }),
    });
    for (const i of [55, 57, 59])
      expect(await fresh.call(op, fails, { cacheKey: `item-${i}` })).toMatchObject({
        data: { i },
        degraded: true,
      });
    for (const i of [0, 30, 54])
      await expect(fresh.call(op, fails, { cacheKey: `item-${i}` })).rejects.toMatchObject({
        status: 503,
      });
  });
});

describe("a Redis server with a maxmemory", () => {
  const closers: (() => unknown)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  async function server(policy: string) {
    const dir = mkdtempSync(join(tmpdir(), "resgen-redis-"));
    closers.push(() => rmSync(dir, { recursive: true, force: true }));
    const own = await startOwnRedisServer(dir, [
      ...["--appendonly", "no", "--maxmemory", "8mb", "--maxmemory-policy", policy],
    ]);
    closers.push(() => own.stop());
    const client = await connectRedis(own.url);
    closers.push(() => client.close().catch(() => undefined));
    const store = new TrackingStore(createRedisStore(client, { prefix: "shop", timeoutMs: 5_000 }));
    // an order placed and stored, and one whose handler is still running (its lock)
    const done = store.key("orders", "idempotency", "POST /orders", "c1", "order-1");
    expect(await store.run(BEGIN, [done], ["t-1", 30_000])).toEqual({ state: "acquired" });
    const stored = await store.run(COMPLETE, [done], ["t-1", "fp", "{}", 86_400_000]);
    expect(stored).toBe(true);
    const running = store.key("orders", "idempotency", "POST /orders", "c1", "order-2");
    expect(await store.run(BEGIN, [running], ["t-2", 30_000])).toEqual({ state: "acquired" });
    const events: ResilienceEvent[] = [];
    const lines: string[] = [];
    const log = logEvents({ warn: (line) => lines.push(line), info: () => undefined });
    const dep = createDependency(dependencySettings({ name: "catalog" }), {
      store,
      observer: (event) => {
        events.push(event);
        log(event);
      },
    });
    // 600 distinct pages of 50 kB: 30 MB of stale writes against 8 MB
    const op = operation({
      name: "getPage",
      retry: null,
      fallback: { kind: "stale", maxAgeMs: 600_000, maxEntries: 100_000, store: "redis" },
    });
    const text = "x".repeat(50_000);
    const flood = async () => {
      for (let i = 0; i < 600; i++) await dep.call(op, () => ({ i, text }), { cacheKey: `p${i}` });
      await store.settled();
    };
    return { client, store, done, running, events, lines, flood };
  }

  describe.each(["volatile-lru", "allkeys-lru", "volatile-ttl", "allkeys-random"])(
    "and the eviction policy %s",
    (policy) => {
      it("keeps every idempotency record through a flood of stale writes: the stale cache does not write, and says why", async () => {
        const { client, store, done, running, events, lines, flood } = await server(policy);
        await flood();
        // a retry of the stored order is answered from it, one of the running order waits
        expect(await store.run(BEGIN, [done], ["t-3", 30_000])).toMatchObject({ state: "done" });
        expect(await store.run(BEGIN, [running], ["t-4", 30_000])).toMatchObject({
          state: "running",
        });
        expect(await client.dbSize()).toBe(2);
        const refused = events.filter((e) => e.type === "stale-store-refused");
        expect(refused).toEqual([
          {
            type: "stale-store-refused",
            dependency: "catalog",
            operation: "getPage",
            reason: "eviction-policy",
            policy,
          },
        ]);
        expect(lines).toEqual([
          `catalog.getPage: stale responses are not written to Redis: its maxmemory-policy ${policy} may evict other keys to make room`,
        ]);
      });
    },
  );

  it("and no eviction: the stale cache stops at 3/4 of it, so the server still takes an idempotent request", async () => {
    const { client, store, done, events, flood } = await server("noeviction");
    await flood();
    const info = await client.info("memory");
    const used = Number(/\nused_memory:(\d+)/.exec(info)?.[1]);
    expect(used).toBeLessThan(8 * 1024 * 1024 * 0.75 + 100_000);
    // some pages were kept before the bound
    expect(await client.dbSize()).toBeGreaterThan(10);
    // the next orders still take their lock and store their response (64 kB each): a server the
    // stale cache had filled would refuse them (OOM), and their retries would run again
    const response = JSON.stringify({ status: 201, body: "y".repeat(64_000) });
    for (let i = 3; i < 8; i++) {
      const next = store.key("orders", "idempotency", "POST /orders", "c1", `order-${i}`);
      expect(await store.run(BEGIN, [next], [`t-${i}`, 30_000])).toEqual({ state: "acquired" });
      expect(await store.run(COMPLETE, [next], [`t-${i}`, "fp", response, 86_400_000])).toBe(true);
    }
    expect(await store.run(BEGIN, [done], ["t-3", 30_000])).toMatchObject({ state: "done" });
    // said once, and again only after a write was taken: near the bound the server's used memory
    // moves both ways (freed buffers), so a page may be taken between two refusals
    const refused = events.filter((e) => e.type === "stale-store-refused");
    const pages = (await client.dbSize()) - 7 - 1; // less the seven orders and the index
    expect(600 - pages).toBeGreaterThan(100);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(refused.length).toBeLessThan(10);
    for (const event of refused)
      expect(event).toMatchObject({ reason: "memory", maxBytes: 8 * 1024 * 1024 });
  });
});
