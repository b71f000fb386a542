// A shared stale cache keys its entries by the SHA-256 of the request identity, never by the
// identity (docs/store.md, "Shared stale cache"): on Node with its synchronous hash, and where
// only Web Crypto's asynchronous digest exists (browsers, workerd, Deno), loaded here with
// process.getBuiltinModule hidden.
import { createHash } from "node:crypto";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  createMemoryStore,
  requestIdentity,
  staleKey,
  StaleCache,
  type SharedStore,
  type StoreScript,
} from "../../templates/runtime/index.js";

type Module = typeof import("../../templates/runtime/shared-stale.js");
type Digest = typeof import("../../templates/runtime/sha256.js");

/** A memory store that records every key and argument a step is given. */
class RecordingStore implements SharedStore {
  readonly kind = "redis";
  readonly seen: string[] = [];
  readonly #inner = createMemoryStore({ prefix: "shop" });
  key(...parts: readonly string[]): string {
    return this.#inner.key(...parts);
  }
  run<R>(script: StoreScript<R>, keys: readonly string[], args: readonly (string | number)[]) {
    this.seen.push(...keys, ...args.map(String));
    return this.#inner.run(script, keys, args);
  }
}

const BEARER = "sk_live_4eC39HqLyjWDarjtT1zdp7dc";
const identity = staleKey(
  requestIdentity({
    method: "GET",
    url: "https://api.example/v1/me?api_key=q_secret_9f8e7d",
    headers: { Authorization: `Bearer ${BEARER}` },
  }),
  undefined,
);
const digestOf = (text: string) => createHash("sha256").update(text).digest("hex");

async function loadWithout(hidden: boolean): Promise<{ stale: Module; digest: Digest }> {
  const host = process as { getBuiltinModule?: unknown };
  const saved = host.getBuiltinModule;
  if (hidden) host.getBuiltinModule = undefined;
  try {
    vi.resetModules();
    const digest = await import("../../templates/runtime/sha256.js");
    const stale = await import("../../templates/runtime/shared-stale.js");
    return { stale, digest };
  } finally {
    host.getBuiltinModule = saved;
  }
}

afterEach(() => {
  vi.resetModules();
});

describe.each([
  ["Node's synchronous hash", false],
  ["Web Crypto's asynchronous digest", true],
])("the shared stale cache's keys with %s", (_name, hidden) => {
  it("hash like SHA-256 (FIPS 180-2 vector)", async () => {
    const { digest } = await loadWithout(hidden);
    const answer = digest.sha256Hex("abc");
    expect(typeof answer === "string").toBe(!hidden);
    expect(await answer).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });

  it("write and read an entry under the digest of the identity, the identity nowhere", async () => {
    const { stale } = await loadWithout(hidden);
    const store = new RecordingStore();
    const shared = new stale.StoreStale(store, {
      dependency: "me",
      operation: "getMe",
      maxAgeMs: 60_000,
      maxEntries: 10,
    });
    const [a, b] = [new StaleCache(10, 60_000, shared), new StaleCache(10, 60_000, shared)];
    a.set(identity, { name: "Ada" }, 0);
    let hit: unknown;
    for (let i = 0; i < 50 && hit === undefined; i++) {
      hit = await b.lookup(identity, 0);
      if (hit === undefined) await new Promise((r) => setTimeout(r, 1));
    }
    expect(hit).toMatchObject({ data: { name: "Ada" } });
    expect(store.seen).toContain(`shop:me:stale:getMe:${digestOf(identity)}`);
    for (const seen of store.seen) {
      expect(seen).not.toContain(BEARER);
      expect(seen).not.toContain("q_secret_9f8e7d");
      expect(seen).not.toContain("api.example");
    }
  });
});
