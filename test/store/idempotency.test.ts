// Idempotent routes on a real Redis server (docs/store.md, docs/services.md): the three steps
// behave alike in both stores, a duplicate POST through two replicas (two processes, each with
// its own client) runs the handler once, and a store killed mid-test fails open or closed as the
// route says, without losing a response already stored.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BEGIN, COMPLETE, RELEASE } from "../../templates/runtime/idempotent-route.js";
import {
  createInboundMiddleware,
  createMemoryStore,
  createRedisStore,
  createVirtualClock,
  type IdempotencyEvent,
  type RouteSettings,
  type ServiceSettings,
  type SharedStore,
} from "../../templates/runtime/index.js";
import type { LogFields } from "../../templates/runtime/logger.js";
import {
  connectRedis,
  deletePrefix,
  startOwnRedisServer,
  testPrefix,
  type TestRedis,
} from "../helpers/redis.js";
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

describe.each(["memory", "redis"] as const)("the idempotency steps on a %s store", (kind) => {
  const clock = createVirtualClock(0);
  const store = (): SharedStore =>
    kind === "memory"
      ? createMemoryStore({ prefix, clock })
      : createRedisStore(redis, { prefix, timeoutMs: 2_000 });

  it("lock, store, replay: begin takes a free key, reports it running, then done with its response", async () => {
    const s = store();
    const key = s.key("orders", "idempotency", `steps-${kind}`, "k-1");
    expect(await s.run(BEGIN, [key], ["t-1", 2_000])).toEqual({ state: "acquired" });
    const running = await s.run(BEGIN, [key], ["t-2", 2_000]);
    expect(running.state).toBe("running");
    expect((running as { ttlMs: number }).ttlMs).toBeGreaterThan(1_000);
    expect((running as { ttlMs: number }).ttlMs).toBeLessThanOrEqual(2_000);
    // only the request holding the lock may store or free it
    expect(await s.run(COMPLETE, [key], ["t-2", "fp", "{}", 60_000])).toBe(false);
    expect(await s.run(RELEASE, [key], ["t-2"])).toBe(false);
    expect(await s.run(COMPLETE, [key], ["t-1", "fp", '{"status":201}', 60_000])).toBe(true);
    expect(await s.run(BEGIN, [key], ["t-3", 2_000])).toEqual({
      state: "done",
      fingerprint: "fp",
      response: '{"status":201}',
    });
    // a stored response lives for its ttl, not the lock's
    if (kind === "redis") expect(await redis.pTTL(key)).toBeGreaterThan(50_000);
  });

  it("release frees the key; a lock nobody completes expires on its own", async () => {
    const s = store();
    const key = s.key("orders", "idempotency", `expiry-${kind}`, "k-1");
    await s.run(BEGIN, [key], ["t-1", 60_000]);
    expect(await s.run(RELEASE, [key], ["t-1"])).toBe(true);
    expect(await s.run(BEGIN, [key], ["t-2", 50])).toEqual({ state: "acquired" });
    if (kind === "memory") await clock.advance(51);
    else await new Promise((r) => setTimeout(r, 80));
    expect(await s.run(BEGIN, [key], ["t-3", 50])).toEqual({ state: "acquired" });
  });
});

// ---- replicas: separate processes, each with its own Redis client -----------------------------

const REPLICA = fileURLToPath(new URL("./fixtures/replica.ts", import.meta.url));
const TSX = fileURLToPath(new URL("../../node_modules/tsx/dist/esm/index.mjs", import.meta.url));

interface Replica {
  readonly url: string;
  readonly child: ChildProcess;
}
const replicas: Replica[] = [];

async function startReplica(holdMs: number): Promise<Replica> {
  const child = spawn(process.execPath, ["--import", TSX, REPLICA], {
    env: {
      ...process.env,
      RESGEN_TEST_PREFIX: prefix,
      RESGEN_TEST_HOLD_MS: String(holdMs),
    },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout });
  const port = await within(
    new Promise<number>((resolve, reject) => {
      lines.once("line", (line) => resolve((JSON.parse(line) as { port: number }).port));
      child.once("exit", (code) => reject(new Error(`replica exited with ${String(code)}`)));
    }),
    15_000,
  );
  const replica = { url: `http://127.0.0.1:${port}`, child };
  replicas.push(replica);
  return replica;
}

async function stopReplicas(): Promise<void> {
  await Promise.all(
    replicas.splice(0).map(
      (r) =>
        new Promise<void>((done) => {
          if (r.child.exitCode !== null) {
            done();
            return;
          }
          r.child.once("exit", () => done());
          r.child.stdin?.end();
        }),
    ),
  );
}

const order = (url: string, key: string, body = '{"sku":"a"}') =>
  fetch(`${url}/orders`, {
    method: "POST",
    headers: { "idempotency-key": key, authorization: "Bearer alice" },
    body,
  });
const runs = async (r: Replica) => Number(await (await fetch(`${r.url}/runs`)).text());

describe("two replicas sharing one Redis", () => {
  afterAll(stopReplicas);

  it("run a duplicate POST once: the second replica replays the first one's response", async () => {
    const [a, b] = await Promise.all([startReplica(0), startReplica(0)]);
    const first = await order(a.url, "dup-1");
    expect(first.status).toBe(201);
    const body = await first.text();
    // the response was stored before it was sent: the other replica has it at once
    const again = await order(b.url, "dup-1");
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.text()).toBe(body);
    expect((await runs(a)) + (await runs(b))).toBe(1);
    // the same key with another body, through either replica, is refused
    expect((await order(b.url, "dup-1", '{"sku":"b"}')).status).toBe(422);
    expect((await order(a.url, "dup-1", '{"sku":"b"}')).status).toBe(422);
    expect((await runs(a)) + (await runs(b))).toBe(1);
  }, 30_000);

  it("run concurrent duplicates once: the one that arrives while the first runs gets 409", async () => {
    await stopReplicas();
    const [a, b] = await Promise.all([startReplica(300), startReplica(300)]);
    const sent = [order(a.url, "race-1"), order(b.url, "race-1")];
    const statuses = (await Promise.all(sent)).map((r) => r.status).sort();
    expect(statuses).toEqual([201, 409]);
    expect((await runs(a)) + (await runs(b))).toBe(1);
  }, 30_000);
});

// ---- a store killed mid-test -------------------------------------------------------------------

const route = (essential: boolean): RouteSettings => ({
  method: "POST",
  path: "/orders",
  essential,
  idempotency: {
    header: "idempotency-key",
    ttlMs: 60_000,
    store: "redis",
    required: false,
    maxBytes: 65_536,
    scope: ["authorization"],
  },
});

const service = (routes: RouteSettings[]): ServiceSettings => ({
  name: "orders",
  deadline: {
    edgeMs: 2_000,
    maxMs: 5_000,
    header: "x-request-timeout-ms",
    format: "ms",
    grpcTimeout: true,
    expiredStatus: 504,
  },
  admission: null,
  rejection: { status: 503, retryAfterS: 2 },
  defaultPriority: "normal",
  priorities: [],
  routes,
});

describe("a Redis server killed mid-test", () => {
  // CLIENT KILL is not enough here: node-redis reconnects at once, so the test kills a server of
  // its own, and restarts it from its append-only file
  const closers: (() => unknown)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  /** A replica in this process, on a client of a Redis server the test owns. */
  async function replica(essential: boolean) {
    const dir = mkdtempSync(join(tmpdir(), "resgen-redis-"));
    closers.push(() => rmSync(dir, { recursive: true, force: true }));
    const server = await startOwnRedisServer(dir);
    closers.push(() => server.stop());
    const client = await connectRedis(server.url, 50);
    closers.push(() => client.close().catch(() => undefined));
    const events: IdempotencyEvent[] = [];
    // what the store logs about its connection
    const logged: unknown[] = [];
    const logger = {
      warn: (_message: string, fields: LogFields) => void logged.push(fields["event"]),
      info: (_message: string, fields: LogFields) => void logged.push(fields["event"]),
    };
    const door = createInboundMiddleware(service([route(essential)]), {
      store: createRedisStore(client, { prefix, timeoutMs: 1_000, logger }),
      observer: (e) => {
        if (e.type === "request-idempotency") events.push(e);
      },
    });
    let ran = 0;
    const http = await listen(
      door.node((_req: IncomingMessage, res: ServerResponse) => {
        ran++;
        res.writeHead(201).end(`order ${ran}`);
      }),
    );
    closers.push(() => http.close());
    const until = (done: () => boolean, ms: number) =>
      within(
        (async () => {
          while (!done()) await new Promise((r) => setTimeout(r, 5));
        })(),
        ms,
      );
    return { url: http.url, events, logged, ran: () => ran, server, client, until };
  }

  it.each([
    [false, 201, true],
    [true, 503, false],
  ] as const)(
    "essential %s: answers %i while the store is gone (failOpen %s), and replays a response stored before",
    async (essential, status, failOpen) => {
      const r = await replica(essential);
      const key = `kill-${String(essential)}`;
      expect((await order(r.url, key)).status).toBe(201);
      expect(r.events.map((e) => e.outcome)).toEqual(["executed"]);

      await r.server.kill();
      await r.until(() => !r.client.isReady, 2_000);
      const during = await order(r.url, `${key}-new`);
      expect(during.status).toBe(status);
      if (!failOpen) expect(during.headers.get("retry-after")).toBe("2");
      expect(r.events.at(-1)).toEqual(
        expect.objectContaining({ outcome: "store-unavailable", failOpen, step: "begin" }),
      );
      expect(r.ran()).toBe(failOpen ? 2 : 1);
      expect(r.logged).toEqual(["resilience.store.connection_lost"]);

      await r.server.start();
      await r.until(() => r.client.isReady, 5_000);
      expect(r.logged).toEqual([
        "resilience.store.connection_lost",
        "resilience.store.connection_restored",
      ]);
      const replay = await order(r.url, key);
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(await replay.text()).toBe("order 1");
      expect(r.ran()).toBe(failOpen ? 2 : 1);
    },
    20_000,
  );
});
