// A stale cache the replicas share (docs/store.md, "Shared stale cache"), in virtual time over
// the memory store: two dependency stacks on one store stand for two replicas.
import { describe, expect, it } from "vitest";
import {
  createDependency,
  createMemoryStore,
  createVirtualClock,
  plainJson,
  SHARE_EVERY_MS,
  type VirtualClock,
} from "../../templates/runtime/index.js";
import { CountingStore, dependencySettings, httpFailure, operation } from "./helpers.js";

const op = operation({
  retry: null,
  fallback: { kind: "stale", maxAgeMs: 60_000, maxEntries: 10, store: "redis" },
});
const fails = () => Promise.reject(httpFailure(503));

function replicas(clock: VirtualClock) {
  const store = new CountingStore(createMemoryStore({ clock }));
  const make = () => createDependency(dependencySettings(), { clock, store, random: () => 0.5 });
  return { store, a: make(), b: make() };
}
// let the fire-and-forget write reach the store
const settle = () => new Promise((r) => setTimeout(r, 0));

describe("a stale cache the replicas share", () => {
  it("lets a replica that never saw a success serve another's, with the age the store counts", async () => {
    const clock = createVirtualClock(1_000);
    const { a, b } = replicas(clock);
    expect(await a.call(op, () => ({ user: 1 }), { cacheKey: "u1" })).toEqual({
      data: { user: 1 },
      degraded: false,
    });
    await settle();
    await clock.advance(5_000);
    expect(await b.call(op, fails, { cacheKey: "u1" })).toMatchObject({
      data: { user: 1 },
      degraded: true,
      ageMs: 5_000,
    });
    // another request's identity never gets it
    await expect(b.call(op, fails, { cacheKey: "u2" })).rejects.toMatchObject({ status: 503 });
    // past maxAge the store has let it go
    await clock.advance(60_000);
    await expect(b.call(op, fails, { cacheKey: "u1" })).rejects.toMatchObject({ status: 503 });
  });

  it("serves its own entry when it is younger than the store's", async () => {
    const clock = createVirtualClock(1_000);
    const { a, b } = replicas(clock);
    await a.call(op, () => "from a", { cacheKey: "k" });
    await settle();
    await clock.advance(SHARE_EVERY_MS * 3);
    await b.call(op, () => "from b", { cacheKey: "k" });
    await settle();
    await clock.advance(10);
    // b wrote after a, so the store has b's; a's own is older and loses to it
    expect(await a.call(op, fails, { cacheKey: "k" })).toMatchObject({ data: "from b", ageMs: 10 });
  });

  it("writes a key through at most once a second per replica, and keeps what is not plain JSON to itself", async () => {
    const clock = createVirtualClock(1_000);
    const { store, a, b } = replicas(clock);
    for (let i = 0; i < 10; i++) {
      await a.call(op, () => i, { cacheKey: "hot" });
      await clock.advance(100);
    }
    await settle();
    expect(store.steps.filter((s) => s === "stale-put")).toHaveLength(1);
    await a.call(op, () => new Date(0), { cacheKey: "date" });
    await settle();
    expect(store.steps.filter((s) => s === "stale-put")).toHaveLength(1);
    // a itself still serves the Date as it was; b has nothing for it
    expect(await a.call(op, fails, { cacheKey: "date" })).toMatchObject({ data: new Date(0) });
    await expect(b.call(op, fails, { cacheKey: "date" })).rejects.toMatchObject({ status: 503 });
  });

  it("falls back to the replica's own entries when the store cannot answer", async () => {
    const clock = createVirtualClock(1_000);
    const { store, a, b } = replicas(clock);
    await a.call(op, () => "kept", { cacheKey: "k" });
    await settle();
    store.down = true;
    expect(await a.call(op, fails, { cacheKey: "k" })).toMatchObject({ data: "kept" });
    // b has no entry of its own: the failure stands, the store's trouble does not replace it
    await expect(b.call(op, fails, { cacheKey: "k" })).rejects.toMatchObject({ status: 503 });
    // and a success while the store is down still answers at once
    expect(await b.call(op, () => "fresh", { cacheKey: "k" })).toEqual({
      data: "fresh",
      degraded: false,
    });
  });

  it("keeps at most maxEntries entries in the store, all replicas together: the latest written", async () => {
    const clock = createVirtualClock(1_000);
    const { store, a, b } = replicas(clock);
    const three = operation({
      retry: null,
      fallback: { kind: "stale", maxAgeMs: 60_000, maxEntries: 3, store: "redis" },
    });
    for (let i = 0; i < 10; i++) {
      await (i % 2 === 0 ? a : b).call(three, () => i, { cacheKey: `k${i}` });
      await settle();
      await clock.advance(10);
    }
    // a replica with nothing of its own sees only what the store kept
    const c = createDependency(dependencySettings(), { clock, store, random: () => 0.5 });
    for (const i of [7, 8, 9])
      expect(await c.call(three, fails, { cacheKey: `k${i}` })).toMatchObject({ data: i });
    for (const i of [0, 3, 6])
      await expect(c.call(three, fails, { cacheKey: `k${i}` })).rejects.toMatchObject({
        status: 503,
      });
  });

  it("needs a store: without one the operation's first call throws, naming what to pass", () => {
    const dep = createDependency(dependencySettings(), {});
    expect(() => dep.call(op, () => "x")).toThrow(/kept in Redis.*createRedisStore/);
  });
});

describe("what a shared stale cache writes", () => {
  it.each([
    [{ a: [1, "two", null, true], b: { c: 1.5 } }, true],
    ["text", true],
    [0, true],
    [null, true],
    [new Date(0), false],
    [new Map(), false],
    [{ at: new Date(0) }, false],
    [new Uint8Array(2), false],
    [{ a: undefined }, false],
    [[Number.NaN], false],
    [undefined, false],
    [{ big: 1n }, false],
  ])("writes %o: %s", (data, written) => {
    const json = plainJson(data);
    expect(json !== undefined).toBe(written);
    if (json !== undefined) expect(JSON.parse(json)).toEqual(data);
  });
});
