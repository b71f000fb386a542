// The shared stale cache on a real Redis server (docs/store.md, "Shared stale cache"): two
// replicas, each with its own Redis client, and a response only one of them received served by
// the other when the dependency fails, with the age Redis counts; the key expires with maxAge.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDependency, createRedisStore } from "../../templates/runtime/index.js";
import { connectRedis, deletePrefix, testPrefix, type TestRedis } from "../helpers/redis.js";
import { dependencySettings, httpFailure, operation } from "../runtime/helpers.js";

const prefix = testPrefix();
const clients: TestRedis[] = [];

beforeAll(async () => {
  clients.push(await connectRedis(), await connectRedis());
});
afterAll(async () => {
  await deletePrefix(clients[0]!, prefix);
  for (const client of clients) await client.close();
});

const op = operation({
  name: "getProfile",
  retry: null,
  fallback: { kind: "stale", maxAgeMs: 2_000, maxEntries: 10, store: "redis" },
});

describe("two replicas sharing a stale cache in Redis", () => {
  it("serve each other's last good response, and let it expire with maxAge", async () => {
    const [a, b] = clients.map((client) =>
      createDependency(dependencySettings({ name: "profiles" }), {
        store: createRedisStore(client, { prefix }),
      }),
    );
    const profile = { id: "u1", name: "Ada", tags: ["x"] };
    expect(await a!.call(op, () => profile, { cacheKey: "u1" })).toEqual({
      data: profile,
      degraded: false,
    });
    // the write is fire-and-forget: wait until it lands
    const written = async () => {
      const keys: string[] = [];
      for await (const batch of clients[0]!.scanIterator({ MATCH: `${prefix}:profiles:stale:*` }))
        keys.push(...batch);
      return keys;
    };
    let keys: string[] = [];
    for (let i = 0; i < 100 && (keys = await written()).length < 2; i++)
      await new Promise((r) => setTimeout(r, 5));
    // the entry, and the operation's index of its entries (what bounds their number)
    const index = `${prefix}:profiles:stale:getProfile:index`;
    expect(keys.sort()).toEqual([keys.find((k) => k !== index), index].sort());
    const key = keys.find((k) => k !== index)!;
    expect(await clients[0]!.zRange(index, 0, -1)).toEqual([key]);
    const ttl = await clients[0]!.pTTL(key);
    expect(ttl).toBeGreaterThan(1_000);
    expect(ttl).toBeLessThanOrEqual(2_000);
    const served = await b!.call(op, () => Promise.reject(httpFailure(503)), { cacheKey: "u1" });
    expect(served).toMatchObject({ data: profile, degraded: true });
    expect((served as { ageMs: number }).ageMs).toBeLessThan(1_000);
    // another caller's request is not served it
    await expect(
      b!.call(op, () => Promise.reject(httpFailure(503)), { cacheKey: "u2" }),
    ).rejects.toMatchObject({ status: 503 });
  });
});
