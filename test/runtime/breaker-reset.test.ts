/**
 * One name, one meaning (docs/runtime.md, "Circuit breaker" and "Manual control"): a breaker's
 * `reset()` and the control API's `reset()` both close the breaker with an empty window, as
 * Resilience4j's `CircuitBreaker.reset()` and Polly's manual close do; and what `health()` and
 * `snapshot()` report is rounded for people (whole milliseconds, thousandths), never a float
 * carrying the clock's sub-millisecond noise.
 */
import { describe, expect, it } from "vitest";
import {
  CircuitBreaker,
  createVirtualClock,
  GradientLimit,
  type BreakerSettings,
} from "../../templates/runtime/index.js";
import { after, breakerSettings, harness, httpFailure, operation, track } from "./helpers.js";

const count = (calls: number, minCalls: number): BreakerSettings => ({
  ...breakerSettings,
  window: { kind: "count", calls },
  minCalls,
});

/** A closed breaker holding one failure and one success in its window. */
function closedWithHistory(settings: BreakerSettings = count(10, 4)) {
  const seen: string[] = [];
  const breaker = new CircuitBreaker(settings, createVirtualClock(), (from, to) =>
    seen.push(`${from}->${to}`),
  );
  breaker.onFailure(breaker.tryAcquire(), 1);
  breaker.onSuccess(breaker.tryAcquire(), 1);
  expect(breaker.health()).toMatchObject({ state: "closed", calls: 2, failures: 1 });
  return { breaker, seen };
}

describe("reset(): the breaker's and the control API's are the same", () => {
  it.each([
    ["the breaker's reset()", (b: CircuitBreaker) => b.reset()],
    ["the control API's reset()", (b: CircuitBreaker) => b.control().reset()],
  ])("%s empties a closed breaker's window, with no transition", (_name, reset) => {
    const { breaker, seen } = closedWithHistory();
    const generation = breaker.health().generation;
    reset(breaker);
    expect(breaker.health()).toMatchObject({
      state: "closed",
      calls: 0,
      failures: 0,
      generation,
    });
    expect(seen).toEqual([]);
    // the failure that was in the window no longer counts towards opening: 3 more are needed
    // before minCalls (4) is reached, and then the rate is 3/4, over the 50% threshold
    for (let i = 0; i < 3; i++) breaker.onFailure(breaker.tryAcquire(), 1);
    expect(breaker.health()).toMatchObject({ state: "closed", calls: 3 });
  });

  it.each([
    ["the breaker's reset()", (b: CircuitBreaker) => b.reset()],
    ["the control API's reset()", (b: CircuitBreaker) => b.control().reset()],
  ])("%s closes an open breaker with an empty window", async (_name, reset) => {
    const clock = createVirtualClock();
    const breaker = new CircuitBreaker(count(10, 2), clock);
    breaker.onFailure(breaker.tryAcquire(), 1);
    breaker.onFailure(breaker.tryAcquire(), 1);
    expect(breaker.state.state).toBe("open");
    await clock.advance(10);
    reset(breaker);
    expect(breaker.health()).toMatchObject({ state: "closed", calls: 0, reopenings: 0 });
  });

  it("a dependency's breaker.reset() and client.breaker.reset() leave the same health", async () => {
    const seen = [];
    for (const which of ["dependency", "control"] as const) {
      const h = harness({ breaker: count(10, 5) });
      const op = operation({ retry: null });
      await h.dep.call(op, () => Promise.reject(httpFailure(503))).catch(() => undefined);
      await h.dep.call(op, () => Promise.resolve("ok"));
      expect(h.dep.breaker!.health()).toMatchObject({ calls: 2, failures: 1 });
      if (which === "dependency") h.dep.breaker!.reset();
      else h.dep.breaker!.control().reset();
      seen.push(h.dep.breaker!.health());
    }
    expect(seen[0]).toEqual(seen[1]);
    expect(seen[0]).toMatchObject({ state: "closed", calls: 0, failures: 0 });
  });

  it("a call in flight across a reset still counts, in the emptied window", async () => {
    const h = harness({ breaker: count(10, 1) });
    const op = operation({ retry: null });
    const inFlight = track(
      h.dep.call(op, () => after(h.clock, 100, () => Promise.reject(httpFailure(503)))),
      h.clock,
    );
    await h.clock.advance(10);
    h.dep.breaker!.reset();
    await h.clock.advance(100);
    expect(inFlight.error).toMatchObject({ kind: "http", status: 503 });
    expect(h.dep.breaker!.state.state).toBe("open");
  });
});

describe("health and snapshot report rounded values", () => {
  it("a ramping breaker's admitted share is to the thousandth, its snapshot's time left whole milliseconds", async () => {
    const clock = createVirtualClock();
    const breaker = new CircuitBreaker(
      {
        ...breakerSettings,
        minCalls: 2,
        halfOpen: { maxCalls: 1, successes: 1 },
        rampUpMs: 10_000,
      },
      clock,
    );
    breaker.onFailure(breaker.tryAcquire(), 1);
    breaker.onFailure(breaker.tryAcquire(), 1);
    await clock.advance(breakerSettings.openForMs);
    breaker.onSuccess(breaker.tryAcquire(), 1);
    await clock.advance(3_333.3337);
    // a third of the way through the ramp
    expect(breaker.health().rampUp?.admitted).toBe(0.333);
    await clock.advance(0.123457);
    expect(breaker.health().rampUp?.admitted).toBe(0.333);
    // reopen it and take a snapshot a fraction of a millisecond into the open period
    for (let i = 0; i < 20; i++) {
      const permit = breaker.tryAcquire();
      if (permit !== -1) breaker.onFailure(permit, 1);
    }
    expect(breaker.state.state).toBe("open");
    await clock.advance(1_000.4567);
    const saved = breaker.snapshot();
    expect(saved).toMatchObject({ state: "open" });
    expect(Number.isInteger(saved.remainingMs)).toBe(true);
    expect(breaker.checkSnapshot(saved)).toBeUndefined();
    const health = breaker.health();
    expect(Number.isInteger(health.ageMs)).toBe(true);
    expect(Number.isInteger(health.retryInMs)).toBe(true);
    expect(JSON.stringify({ health, saved })).not.toMatch(/\d\.\d{4}/);
  });

  it("an adaptive limit's latencies are to the thousandth of a millisecond", () => {
    const limit = new GradientLimit(4, {
      minLimit: 2,
      maxLimit: 100,
      smoothing: 1,
      tolerance: 1,
      windowMs: 100,
    });
    // a mean of 10.123456789 + 45/70 = 10.76631393…
    for (let i = 0; i < 10; i++) limit.sample(10.123456789 + i / 7, 4, 1_000 + i * 50);
    expect(limit.health()).toMatchObject({ latencyMs: 10.766, baselineMs: 10.766 });
  });

  it("a stale answer's age is whole milliseconds, in the outcome and in its event", async () => {
    const h = harness();
    const op = operation({
      retry: null,
      fallback: { kind: "stale", maxAgeMs: 60_000, maxEntries: 10 },
    });
    await h.clock.advance(0.25);
    await h.dep.call(op, () => "user 1", { cacheKey: "u1" });
    await h.clock.advance(5_000.875);
    const served = await h.dep.call(op, () => Promise.reject(httpFailure(503)), {
      cacheKey: "u1",
    });
    // 5000.875 ms old: 5000 whole milliseconds
    expect(served).toMatchObject({ data: "user 1", degraded: true, ageMs: 5_000 });
    expect(h.events.find((e) => e.type === "fallback-served")).toMatchObject({ ageMs: 5_000 });
  });
});
