// A connection to the Redis server the store tests run against (docs/store.md, "Tests"):
// REDIS_URL, by default the server on 127.0.0.1:6379. Every test gets a key prefix of its own and
// deletes its keys when it ends.
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createServer, type AddressInfo } from "node:net";
import { createClient } from "redis";

export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

export type TestRedis = Awaited<ReturnType<typeof connectRedis>>;

/**
 * A connected client that fails fast instead of queueing commands while disconnected, and
 * reconnects `reconnectMs` after losing its connection.
 */
export async function connectRedis(url = REDIS_URL, reconnectMs = 50) {
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: 2_000,
      reconnectStrategy: (retries) => (retries > 100 ? false : reconnectMs),
    },
  });
  client.on("error", () => {
    // reported by the command that fails; a test that kills connections expects these
  });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(
      `no Redis server answers at ${url} (${String(error)}): the store's tests need one; ` +
        "start one or set REDIS_URL (docs/store.md, Tests)",
    );
  }
  return client;
}

/**
 * A prefix no other test or run uses, `resgen-test-<uuid>`: no `:` in it, since the store escapes
 * one in a key segment and `deletePrefix` must match the keys as written.
 */
export function testPrefix(): string {
  return `resgen-test-${randomUUID()}`;
}

/** Deletes every key under `prefix` (SCAN, never KEYS, so a shared server is not blocked). */
export async function deletePrefix(client: TestRedis, prefix: string): Promise<number> {
  let deleted = 0;
  for await (const keys of client.scanIterator({ MATCH: `${prefix}:*`, COUNT: 500 })) {
    if (keys.length > 0) deleted += await client.del(keys);
  }
  return deleted;
}

/** A Redis server of a test's own, on a free loopback port, that the test may kill and restart. */
export interface OwnRedisServer {
  readonly url: string;
  /** Kills the server at once (SIGKILL), as a crash would. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data folder; what it had written to its log is back. */
  start(): Promise<void>;
  /** Stops it for good. */
  stop(): Promise<void>;
}

/**
 * Starts `redis-server` on a free port of 127.0.0.1 with an append-only file synced on every
 * write in `dir`, so that a restart after a kill has every completed write. `extraArgs` go after
 * these and override them (`["--maxmemory", "8mb", "--maxmemory-policy", "volatile-lru"]`).
 */
export async function startOwnRedisServer(
  dir: string,
  extraArgs: readonly string[] = [],
): Promise<OwnRedisServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    const server = spawn(
      "redis-server",
      [
        ...["--port", String(port), "--bind", "127.0.0.1", "--save", ""],
        ...["--appendonly", "yes", "--appendfsync", "always", "--dir", dir],
        ...extraArgs,
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    child = server;
    await new Promise<void>((ready, fail) => {
      const timer = setTimeout(() => fail(new Error("redis-server did not start in 10 s")), 10_000);
      let out = "";
      server.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes("Ready to accept connections")) {
          clearTimeout(timer);
          ready();
        }
      });
      server.once("error", (error) => {
        clearTimeout(timer);
        fail(
          new Error(
            `cannot start redis-server (${error.message}): these tests start a Redis server of ` +
              "their own; install one (docs/store.md, Tests)",
          ),
        );
      });
      server.once("exit", (code) => {
        clearTimeout(timer);
        fail(new Error(`redis-server exited with ${String(code)}: ${out.slice(-500)}`));
      });
    });
  };
  const kill = async (): Promise<void> => {
    const server = child;
    child = undefined;
    if (server === undefined || server.exitCode !== null) return;
    await new Promise<void>((done) => {
      server.once("exit", () => done());
      server.kill("SIGKILL");
    });
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, kill, start, stop: kill };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
