// What the shared stale cache's bound costs, on the Redis server of the store's tests
// (docs/store.md, "Shared stale cache"). Not a test: run it by hand and read the figures.
//
//   npx tsx test/store/stale-put.measure.ts [requests=3000] [bytes=20000]
//
// 1. `requests` distinct GETs of `bytes` each through one dependency with the default
//    maxEntries (1000): the keys and bytes left in Redis.
// 2. The time of one `stale-put` step, and its ratio to the same step without the INFO check
//    and to a plain HSET + PEXPIRE (no index): sequential steps, so mostly the round trip.
import { performance } from "node:perf_hooks";
import {
  createDependency,
  createRedisStore,
  type StoreScript,
} from "../../templates/runtime/index.js";
import { STALE_PUT } from "../../templates/runtime/shared-stale.js";
import { connectRedis, deletePrefix, testPrefix } from "../helpers/redis.js";
import { dependencySettings, operation } from "../runtime/helpers.js";

const requests = Number(process.argv[2] ?? 3_000);
const bytes = Number(process.argv[3] ?? 20_000);
const redis = await connectRedis();
const prefix = testPrefix();
try {
  const store = createRedisStore(redis, { prefix, timeoutMs: 5_000 });
  const dep = createDependency(dependencySettings({ name: "catalog" }), { store });
  const op = operation({
    name: "getPage",
    retry: null,
    fallback: { kind: "stale", maxAgeMs: 600_000, maxEntries: 1_000, store: "redis" },
  });
  const text = "x".repeat(bytes);
  for (let i = 0; i < requests; i++) await dep.call(op, () => ({ i, text }), { cacheKey: `${i}` });
  await new Promise((r) => setTimeout(r, 200));
  let keys = 0;
  let used = 0;
  for await (const batch of redis.scanIterator({ MATCH: `${prefix}:*`, COUNT: 1_000 }))
    for (const key of batch) {
      keys++;
      used += (await redis.memoryUsage(key)) ?? 0;
    }
  console.log(
    JSON.stringify({ requests, bytes, keysInRedis: keys, megabytes: +(used / 1e6).toFixed(1) }),
  );

  const withoutInfo: StoreScript<unknown> = {
    ...STALE_PUT,
    name: "stale-put-without-info",
    lua: STALE_PUT.lua.slice(STALE_PUT.lua.indexOf("local t = redis.call('TIME')")),
  };
  const plain: StoreScript<unknown> = {
    ...STALE_PUT,
    name: "stale-put-plain",
    lua: `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSET', KEYS[1], 'data', ARGV[1], 'at', now)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {'written'}`,
  };
  const steps = 1_000;
  const time = async (script: StoreScript<unknown>): Promise<number> => {
    const index = store.key("m", "stale", script.name, "index");
    const data = JSON.stringify({ text: "y".repeat(1_000) });
    for (let i = 0; i < 200; i++)
      await store.run(
        script,
        [store.key("m", "stale", script.name, `w${i}`), index],
        [data, 60_000, 1_000],
      );
    const start = performance.now();
    for (let i = 0; i < steps; i++)
      await store.run(
        script,
        [store.key("m", "stale", script.name, `${i}`), index],
        [data, 60_000, 1_000],
      );
    return ((performance.now() - start) * 1_000) / steps;
  };
  // rounds interleaved, medians: the machine's other load spreads over all three alike
  const rounds: [number[], number[], number[]] = [[], [], []];
  for (let round = 0; round < 5; round++) {
    rounds[0].push(await time(plain));
    rounds[1].push(await time(withoutInfo));
    rounds[2].push(await time(STALE_PUT));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const [plainUs, noInfoUs, fullUs] = rounds.map(median) as [number, number, number];
  console.log(
    JSON.stringify({
      stalePutUs: +fullUs.toFixed(1),
      withoutInfoUs: +noInfoUs.toFixed(1),
      plainUs: +plainUs.toFixed(1),
      ratioToWithoutInfo: +(fullUs / noInfoUs).toFixed(2),
      ratioToPlain: +(fullUs / plainUs).toFixed(2),
    }),
  );
} finally {
  await deletePrefix(redis, prefix);
  await redis.close();
}
