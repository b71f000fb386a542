import { describe, expect, expectTypeOf, it } from "vitest";
import { StaleCache, type Outcome, type ResilienceError } from "../../templates/runtime/index.js";
import { breakerSettings, harness, httpFailure, operation } from "./helpers.js";

describe("stale cache", () => {
  it("evicts the least recently used entry beyond maxEntries", () => {
    const cache = new StaleCache(2, 1_000);
    cache.set("a", 1, 0);
    cache.set("b", 2, 0);
    expect(cache.get("a", 0)?.data).toBe(1);
    cache.set("c", 3, 0);
    expect(cache.get("b", 0)).toBeUndefined();
    expect(cache.get("a", 0)?.data).toBe(1);
    expect(cache.get("c", 0)?.data).toBe(3);
    expect(cache.size).toBe(2);
  });

  it("drops entries older than maxAge and reports the age of the others", () => {
    const cache = new StaleCache(10, 1_000);
    cache.set("a", 1, 0);
    expect(cache.get("a", 1_000)).toEqual({ data: 1, ageMs: 1_000 });
    expect(cache.get("a", 1_001)).toBeUndefined();
    expect(cache.size).toBe(0);
  });
});

const fails =
  (status: number, transient = true) =>
  () =>
    Promise.reject(httpFailure(status, transient));

describe("fallback", () => {
  it("labels fresh data and serves a constant when the dependency fails", async () => {
    const h = harness();
    const op = operation({ retry: null, fallback: { kind: "value", value: ["default"] } });
    expect(await h.dep.call(op, () => ["fresh"])).toEqual({ data: ["fresh"], degraded: false });
    const served = await h.dep.call(op, fails(503));
    expect(served).toMatchObject({ data: ["default"], degraded: true, reason: "http" });
    expect(h.events.find((e) => e.type === "fallback-served")).toMatchObject({
      fallback: "value",
      reason: "http",
    });
  });

  it("does not cover caller bugs: 400, 401, 403, 404 and 422 are thrown", async () => {
    const h = harness();
    const op = operation({ retry: null, fallback: { kind: "value", value: "default" } });
    for (const status of [400, 401, 403, 404, 422]) {
      await expect(h.dep.call(op, fails(status, false))).rejects.toMatchObject({
        kind: "http",
        status,
      });
    }
  });

  it("covers an open breaker, a deadline and an exhausted budget", async () => {
    const h = harness({
      breaker: { ...breakerSettings, minCalls: 1 },
      budget: { maxTokens: 1, tokenRatio: 0 },
    });
    const op = operation({ fallback: { kind: "value", value: "default" } });
    expect(await h.dep.call(op, fails(503))).toMatchObject({
      degraded: true,
      reason: "budget-exhausted",
    });
    expect(await h.dep.call(op, () => "ok")).toMatchObject({
      degraded: true,
      reason: "circuit-open",
    });
    h.dep.breaker?.reset();
    expect(await h.dep.call(op, () => "ok", { deadline: 0 })).toMatchObject({
      degraded: true,
      reason: "deadline",
    });
  });

  it("serves the last good response per key with its age, and rethrows without one", async () => {
    const h = harness();
    const op = operation({
      retry: null,
      fallback: { kind: "stale", maxAgeMs: 60_000, maxEntries: 10 },
    });
    await h.dep.call(op, () => "user 1", { cacheKey: "u1" });
    await h.clock.advance(5_000);
    expect(await h.dep.call(op, fails(503), { cacheKey: "u1" })).toMatchObject({
      data: "user 1",
      degraded: true,
      ageMs: 5_000,
    });
    await expect(h.dep.call(op, fails(503), { cacheKey: "u2" })).rejects.toMatchObject({
      status: 503,
    });
    await h.clock.advance(60_000);
    await expect(h.dep.call(op, fails(503), { cacheKey: "u1" })).rejects.toMatchObject({
      status: 503,
    });
  });

  it("calls a provided fallback with the error", async () => {
    const h = harness();
    const op = operation({ retry: null, fallback: { kind: "provided" } });
    let seen: ResilienceError | undefined;
    const served = await h.dep.call(op, fails(502), {
      fallback: (error) => {
        seen = error;
        return "from caller";
      },
    });
    expect(served).toMatchObject({ data: "from caller", degraded: true, reason: "http" });
    expect(seen?.status).toBe(502);
    await expect(h.dep.call(op, fails(502))).rejects.toMatchObject({ status: 502 });
  });

  it("returns plain data when the operation has no fallback, and types the result accordingly", async () => {
    const h = harness();
    const plain = await h.dep.call(operation({ retry: null }), () => 42);
    expect(plain).toBe(42);
    expectTypeOf(plain).toEqualTypeOf<number>();
    const none = await h.dep.call(
      operation({ retry: null, fallback: { kind: "none" } as const }),
      () => 42,
    );
    expect(none).toBe(42);
    expectTypeOf(none).toEqualTypeOf<number>();
    const labelled = await h.dep.call(
      operation({ retry: null, fallback: { kind: "value", value: 0 } as const }),
      () => 42,
    );
    expectTypeOf(labelled).toEqualTypeOf<Outcome<number>>();
  });
});
