// The global rate limit on a real Redis server (docs/store.md, "Global rate limit"): its two steps
// on the server, four replica processes (each with its own client) that together stay within the
// declared rate, and a Redis server killed mid-test, under which a replica falls back to its share
// of the rate and says so, then goes back to the store once it is up again.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { REFUND, TAKE } from "../../templates/runtime/shared-rate-limit.js";
import {
  createDependency,
  createRedisStore,
  isRateLimitedError,
  type ResilienceEvent,
  type SharedStore,
} from "../../templates/runtime/index.js";
import {
  connectRedis,
  deletePrefix,
  startOwnRedisServer,
  testPrefix,
  type TestRedis,
} from "../helpers/redis.js";
import { dependencySettings, operation } from "../runtime/helpers.js";
import { listen, within } from "../services/helpers.js";

let redis: TestRedis;
const prefix = testPrefix();

beforeAll(async () => {
  redis = await connectRedis();
});
afterAll(async () => {
  await deletePrefix(redis, prefix);
  await redis.close();
});

const list = operation({
  name: "list",
  retry: null,
  timeout: { attemptMs: 1_000, totalMs: 2_000 },
});

describe("the rate limit's steps on Redis", () => {
  let store: SharedStore;
  beforeAll(() => {
    store = createRedisStore(redis, { prefix });
  });
  // 10 per second: 100,000 µs between permits, a burst of 3
  const args = (bound: number) => [100_000, 200_000, 0, bound];

  it("grants the burst at once, then says how long the next permit is away", async () => {
    const key = store.key("quota", "rate-limit", "steps");
    // the server's clock runs between the steps: what it says is measured against the time that
    // passed here (a bound from both sides), so a slow machine cannot fail the test
    const started = Date.now();
    const elapsed = () => Date.now() - started + 1;
    for (let i = 0; i < 3; i++)
      expect(await store.run(TAKE, [key], args(0))).toMatchObject({ granted: true, waitMs: 0 });
    const refused = await store.run(TAKE, [key], args(0));
    expect(refused.granted).toBe(false);
    // the fourth permit is 100 ms after the first
    expect(refused.waitMs).toBeGreaterThanOrEqual(100 - elapsed());
    expect(refused.waitMs).toBeGreaterThan(0);
    expect(refused.waitMs).toBeLessThanOrEqual(100);
    // a permit that may wait is granted with its wait, and the key expires when its time passes
    const waited = await store.run(TAKE, [key], args(500));
    expect(waited).toMatchObject({ granted: true, free: 0 });
    expect(waited.waitMs).toBeGreaterThanOrEqual(100 - elapsed());
    expect(waited.waitMs).toBeLessThanOrEqual(100);
    const ttl = await redis.pTTL(key);
    expect(ttl).toBeGreaterThanOrEqual(400 - elapsed());
    expect(ttl).toBeLessThanOrEqual(400);
  });

  it("takes permits less than a microsecond apart: an arrival time at or near now still expires", async () => {
    const key = store.key("quota", "rate-limit", "fast");
    // a billion a second, beyond what a policy may say but not what a hand-made limit may
    for (let i = 0; i < 50; i++) {
      const taken = await store.run(TAKE, [key], [0.001, 0.001, 0, 0]);
      expect(taken.granted).toBe(true);
    }
    const ttl = await redis.pTTL(key);
    // expired already, or due within its one millisecond
    expect(ttl === -2 || (ttl >= 0 && ttl <= 1)).toBe(true);
  });

  it("gives a refunded permit back to the next caller", async () => {
    const key = store.key("quota", "rate-limit", "refund");
    const fill = [0, 1, 2].map(() => store.run(TAKE, [key], args(0)));
    await Promise.all(fill);
    expect((await store.run(TAKE, [key], args(0))).granted).toBe(false);
    await store.run(REFUND, [key], [100_000]);
    expect((await store.run(TAKE, [key], args(0))).granted).toBe(true);
  });
});

// ---- replicas: separate processes, each with its own Redis client -----------------------------

const REPLICA = fileURLToPath(new URL("./fixtures/rate-replica.ts", import.meta.url));
const TSX = fileURLToPath(new URL("../../node_modules/tsx/dist/esm/index.mjs", import.meta.url));

interface Sent {
  readonly sends: number[];
  readonly refused: number;
}

describe("four replicas sharing one limit in Redis", () => {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill();
  });

  function start(env: Record<string, string>): { ready: Promise<void>; done: Promise<Sent> } {
    const child = spawn(process.execPath, ["--import", TSX, REPLICA], {
      env: { ...process.env, ...env },
      stdio: ["pipe", "pipe", "inherit"],
    });
    children.push(child);
    const lines = createInterface({ input: child.stdout });
    const next: Promise<string>[] = [];
    const waiting: ((line: string) => void)[] = [];
    for (let i = 0; i < 2; i++) next.push(new Promise((r) => waiting.push(r)));
    lines.on("line", (line) => waiting.shift()?.(line));
    const exited = new Promise<never>((_, reject) =>
      child.once("exit", (code) => reject(new Error(`replica exited with ${String(code)}`))),
    );
    return {
      ready: Promise.race([next[0]!.then(() => undefined), exited]),
      done: Promise.race([next[1]!.then((line) => JSON.parse(line) as Sent), exited]),
    };
  }

  it("send at most burst + rate × time between them, within one permit, and nearly that many", async () => {
    let arrived = 0;
    const target = await listen((_req, res) => {
      arrived++;
      res.end("ok");
    });
    const rate = 100;
    const burst = 5;
    const runMs = 3_000;
    const env = {
      RESGEN_TEST_PREFIX: prefix,
      RESGEN_TEST_TARGET: target.url,
      RESGEN_TEST_RUN_MS: String(runMs),
      RESGEN_TEST_RATE: String(rate),
      RESGEN_TEST_BURST: String(burst),
      RESGEN_TEST_REPLICAS: "4",
    };
    try {
      const replicas = [0, 1, 2, 3].map(() => start(env));
      await within(Promise.all(replicas.map((r) => r.ready)), 20_000);
      const startAt = Date.now() + 300;
      const go = `go ${String(startAt)}\n`;
      for (const child of children) child.stdin!.write(go);
      const results = await within(Promise.all(replicas.map((r) => r.done)), runMs + 10_000);
      const sends = results.flatMap((r) => r.sends).sort((a, b) => a - b);
      // from the moment they all start, which is before the first permit, to the last send
      const spanS = (sends[sends.length - 1]! - startAt) / 1_000;
      expect(sends[0]).toBeGreaterThanOrEqual(startAt);
      // the limit holds for all four together, within one permit
      expect(sends.length).toBeLessThanOrEqual(burst + rate * spanS + 1);
      // and it is the limit that bounds them: together they nearly reach it
      expect(sends.length).toBeGreaterThanOrEqual(0.9 * rate * (runMs / 1_000));
      // every replica had a share, and the loops asked for far more than the rate
      for (const r of results) expect(r.sends.length).toBeGreaterThan(0);
      expect(results.reduce((n, r) => n + r.refused, 0)).toBeGreaterThan(0);
      // every permit became a request that reached the server
      expect(arrived).toBe(sends.length);
    } finally {
      await target.close();
    }
  }, 40_000);
});

describe("a Redis server killed mid-test", () => {
  const closers: (() => unknown)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  it("falls back to rate ÷ replicas while it is gone, says so, and goes back to it after", async () => {
    const dir = mkdtempSync(join(tmpdir(), "resgen-redis-"));
    closers.push(() => rmSync(dir, { recursive: true, force: true }));
    const server = await startOwnRedisServer(dir);
    closers.push(() => server.stop());
    const client = await connectRedis(server.url, 50);
    closers.push(() => client.close().catch(() => undefined));
    const events: ResilienceEvent[] = [];
    const dep = createDependency(
      dependencySettings({
        name: "quota",
        // the whole limit has a burst of 2; a quarter of it has 1
        rateLimit: {
          ...{ rate: 100, periodMs: 1_000, burst: 2, maxWaitMs: 0, maxPauseMs: 0 },
          ...{ store: "redis", replicas: 4 },
        },
      }),
      {
        store: createRedisStore(client, { prefix, timeoutMs: 500 }),
        observer: (e) => events.push(e),
      },
    );
    const ok = () => "ok";
    const burst = async () =>
      (await Promise.all([0, 1, 2].map(() => dep.call(list, ok).catch((e: unknown) => e)))).map(
        (r) => (r === "ok" ? "ok" : isRateLimitedError(r) ? "limited" : r),
      );
    const localShare = () => events.filter((e) => e.type === "rate-limit-local-share");

    expect(await burst()).toEqual(["ok", "ok", "limited"]);
    expect(localShare()).toHaveLength(0);

    await server.kill();
    const until = (done: () => boolean, ms: number) =>
      within(
        (async () => {
          while (!done()) await new Promise((r) => setTimeout(r, 5));
        })(),
        ms,
      );
    await until(() => !client.isReady, 2_000);
    // its own share: a burst of one
    expect(await burst()).toEqual(["ok", "limited", "limited"]);
    expect(localShare()[0]).toMatchObject({ perSecond: 25, dependency: "quota" });
    expect(dep.health().rateLimit?.shared).toEqual({
      store: "redis",
      replicas: 4,
      localShare: true,
    });

    await server.start();
    await until(() => client.isReady, 5_000);
    // once the store answers again, the whole limit is back (its burst too, after a quiet spell)
    await new Promise((r) => setTimeout(r, 1_100));
    const seen = localShare().length;
    expect(await burst()).toEqual(["ok", "ok", "limited"]);
    expect(localShare()).toHaveLength(seen);
    expect(dep.health().rateLimit?.shared?.localShare).toBe(false);
  }, 20_000);
});
