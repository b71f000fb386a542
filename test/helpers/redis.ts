// A connection to the Redis server the store tests run against (docs/store.md, "Tests"):
// REDIS_URL, by default the server on 127.0.0.1:6379. Every test gets a key prefix of its own and
// deletes its keys when it ends.
import { randomUUID } from "node:crypto";
import { createClient } from "redis";

export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

export type TestRedis = Awaited<ReturnType<typeof connectRedis>>;

/** A connected client that fails fast instead of queueing commands while disconnected. */
export async function connectRedis(url = REDIS_URL) {
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: 2_000, reconnectStrategy: (retries) => (retries > 20 ? false : 50) },
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

/** A prefix no other test or run uses, under `resgen-test:`. */
export function testPrefix(): string {
  return `resgen-test:${randomUUID()}`;
}

/** Deletes every key under `prefix` (SCAN, never KEYS, so a shared server is not blocked). */
export async function deletePrefix(client: TestRedis, prefix: string): Promise<number> {
  let deleted = 0;
  for await (const keys of client.scanIterator({ MATCH: `${prefix}:*`, COUNT: 500 })) {
    if (keys.length > 0) deleted += await client.del(keys);
  }
  return deleted;
}
