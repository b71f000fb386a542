// Redis killed under load (docs/store.md, "When the store is down"): two replica processes whose
// Redis clients were made as the docs' first snippet made them, with no `error` listener of the
// application's, share a rate limit in a Redis server of the test's own. The server is killed
// (SIGKILL) mid-run and started again: neither process dies, the limit holds through the outage
// (each replica on its local share), and both go back to Redis once it is up.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { startOwnRedisServer, testPrefix } from "../helpers/redis.js";
import { listen, within } from "../services/helpers.js";

const REPLICA = fileURLToPath(new URL("./fixtures/outage-replica.ts", import.meta.url));
const TSX = fileURLToPath(new URL("../../node_modules/tsx/dist/esm/index.mjs", import.meta.url));

interface Report {
  readonly sends: number[];
  readonly localShare: number[];
  readonly refused: number;
  readonly logged: { at: number; level: string; event: unknown; message: string }[];
}

const RATE = 40;
const BURST = 4;
const REPLICAS = 2;
// the run, in milliseconds from its start: Redis is killed at KILL_AT and started at START_AT
const RUN_MS = 8_000;
const KILL_AT = 1_500;
const START_AT = 3_500;
/** Loops calling at once in each replica (fixtures/outage-replica.ts). */
const LOOPS = 3;

describe("two replicas, a Redis server killed under load and started again", () => {
  const closers: (() => unknown)[] = [];
  const children: ChildProcess[] = [];
  afterEach(async () => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill();
    for (const close of closers.splice(0).reverse()) await close();
  });

  function start(env: Record<string, string>): {
    ready: Promise<void>;
    done: Promise<Report>;
    exit: Promise<number | null>;
  } {
    const child = spawn(process.execPath, ["--import", TSX, REPLICA], {
      env: { ...process.env, ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    children.push(child);
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const lines = createInterface({ input: child.stdout });
    const waiting: ((line: string) => void)[] = [];
    const next = [0, 1].map(() => new Promise<string>((r) => waiting.push(r)));
    lines.on("line", (line) => waiting.shift()?.(line));
    const exit = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    const died = exit.then((code) => {
      throw new Error(`a replica exited with ${String(code)}: ${stderr.slice(-1_000)}`);
    });
    return {
      ready: Promise.race([next[0]!.then(() => undefined), died]),
      done: Promise.race([next[1]!.then((line) => JSON.parse(line) as Report), died]),
      exit,
    };
  }

  it("neither replica dies, the limit holds on local shares, and both use Redis again after", async () => {
    const dir = mkdtempSync(join(tmpdir(), "resgen-redis-"));
    closers.push(() => rmSync(dir, { recursive: true, force: true }));
    const server = await startOwnRedisServer(dir);
    closers.push(() => server.stop());
    const target = await listen((_req, res) => res.end("ok"));
    closers.push(() => target.close());
    const env = {
      RESGEN_TEST_REDIS_URL: server.url,
      RESGEN_TEST_PREFIX: testPrefix(),
      RESGEN_TEST_TARGET: target.url,
      RESGEN_TEST_RUN_MS: String(RUN_MS),
      RESGEN_TEST_RATE: String(RATE),
      RESGEN_TEST_BURST: String(BURST),
      RESGEN_TEST_REPLICAS: String(REPLICAS),
    };
    const replicas = [0, 1].map(() => start(env));
    await within(Promise.all(replicas.map((r) => r.ready)), 20_000);
    const startAt = Date.now() + 300;
    for (const child of children) child.stdin!.write(`go ${String(startAt)}\n`);

    const sleepUntil = (at: number) =>
      new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));
    await sleepUntil(startAt + KILL_AT);
    const killedAt = Date.now();
    await server.kill();
    await sleepUntil(startAt + START_AT);
    await server.start();
    const startedAt = Date.now();

    // no crash: both ran to the end, reported, and exited 0
    const reports = await within(Promise.all(replicas.map((r) => r.done)), RUN_MS + 15_000);
    expect(await Promise.all(replicas.map((r) => r.exit))).toEqual([0, 0]);

    const sends = reports.flatMap((r) => r.sends).sort((a, b) => a - b);
    const between = (from: number, to: number) => sends.filter((t) => t >= from && t < to).length;
    const seconds = (from: number, to: number) => Math.max(0, to - from) / 1_000;
    const endAt = startAt + RUN_MS;
    const lastLocal = Math.max(...reports.flatMap((r) => r.localShare));
    const localBurst = Math.max(1, Math.floor(BURST / REPLICAS));
    // a permit granted just before the kill may be sent just after it: one per loop at most
    const inFlight = REPLICAS * LOOPS;
    // the limit held, window by window: on Redis before the kill, ...
    expect(between(startAt, killedAt)).toBeLessThanOrEqual(
      BURST + RATE * seconds(startAt, killedAt) + 1,
    );
    // ... on the local shares while Redis was gone (RATE ÷ REPLICAS each, a burst of BURST ÷
    // REPLICAS each), ...
    expect(between(killedAt, startedAt)).toBeLessThanOrEqual(
      RATE * seconds(killedAt, startedAt) + REPLICAS * localBurst + inFlight + 1,
    );
    // ... on Redis again once every replica was back on it, ...
    expect(between(lastLocal + 1, endAt)).toBeLessThanOrEqual(
      BURST + RATE * seconds(lastLocal, endAt) + 1,
    );
    // ... and over the whole run: a replica back on Redis shares the limit while the other may
    // still be on its share for the rest of its reconnect delay (docs/store.md)
    const transition = seconds(startedAt, lastLocal);
    expect(sends.length).toBeLessThanOrEqual(
      2 * BURST +
        RATE * seconds(startAt, sends.at(-1)!) +
        REPLICAS * localBurst +
        (RATE / REPLICAS) * (REPLICAS - 1) * transition +
        inFlight +
        1,
    );
    // the limit is what bounded them: together they nearly reached it, before, during and after
    expect(between(startAt, killedAt)).toBeGreaterThanOrEqual(0.7 * RATE * (KILL_AT / 1_000));
    expect(between(killedAt, startedAt)).toBeGreaterThanOrEqual(
      0.7 * RATE * seconds(killedAt, startedAt),
    );
    expect(between(startedAt, endAt)).toBeGreaterThanOrEqual(
      0.7 * RATE * seconds(startedAt, endAt),
    );

    for (const r of reports) {
      // each fell back to its local share while Redis was gone, and only then
      expect(r.localShare.length).toBeGreaterThan(0);
      expect(Math.min(...r.localShare)).toBeGreaterThanOrEqual(killedAt);
      // and went back to Redis after it was up: node-redis reconnects within ~2 s, the limit
      // asks the store again a second after a failed step
      expect(Math.max(...r.localShare)).toBeLessThan(startedAt + 3_500);
      // the store said so, once for the loss and once for the return, in that order
      const events = r.logged.map((l) => l.event);
      expect(events).toEqual([
        "resilience.store.connection_lost",
        "resilience.store.connection_restored",
      ]);
      expect(r.logged[0]!.at).toBeGreaterThanOrEqual(killedAt);
      expect(r.logged[1]!.at).toBeGreaterThanOrEqual(startedAt);
    }
  }, 60_000);
});
