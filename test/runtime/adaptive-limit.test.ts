/**
 * The adaptive concurrency limit (docs/runtime.md, "Adaptive concurrency"): the Gradient2
 * arithmetic on its own, then inside a bulkhead (the queue, health, the limit-changed event).
 * The arithmetic cases follow the behaviours Netflix concurrency-limits' VegasLimitTest and
 * Gradient2 documentation state (an initial limit, growth while latency holds, a cut when it
 * rises, no change while the caller is the bound), written here as our own givens and thens.
 */
import { describe, expect, it } from "vitest";
import {
  GradientLimit,
  Bulkhead,
  createVirtualClock,
  Emitter,
  isResilienceError,
  type ResilienceEvent,
  type GradientLimitSettings,
  type BulkheadSettings,
} from "../../templates/runtime/index.js";
import { after, harness, operation, track } from "./helpers.js";

const settings = (overrides: Partial<GradientLimitSettings> = {}): GradientLimitSettings => ({
  minLimit: 2,
  maxLimit: 100,
  smoothing: 1,
  tolerance: 1,
  windowMs: 100,
  ...overrides,
});

/** Feeds one full window (10 calls over `windowMs`) of `latencyMs` each, `inFlight` at once. */
function windowOf(
  limit: GradientLimit,
  latencyMs: number,
  inFlight: number,
  start: number,
): boolean {
  let changed = false;
  for (let i = 0; i < 10; i++) {
    changed = limit.sample(latencyMs, inFlight, start + (i * limit.settings.windowMs) / 9);
  }
  return changed;
}

describe("GradientLimit (Gradient2)", () => {
  it("starts at the initial limit, clamped into [minLimit, maxLimit]", () => {
    expect(new GradientLimit(20, settings()).limit).toBe(20);
    expect(new GradientLimit(1, settings({ minLimit: 5 })).limit).toBe(5);
    expect(new GradientLimit(500, settings({ maxLimit: 50 })).limit).toBe(50);
  });

  it("updates once per window: not before ten calls, not before windowMs", () => {
    const limit = new GradientLimit(16, settings());
    for (let i = 0; i < 9; i++) expect(limit.sample(10, 16, 1_000 + i * 50)).toBe(false);
    expect(limit.health().baselineMs).toBe(0);
    // the tenth call closes the window (450ms ≥ 100ms): the first update sets the baseline
    limit.sample(10, 16, 1_450);
    expect(limit.health()).toMatchObject({ latencyMs: 10, baselineMs: 10 });
    // ten calls within 50ms of a new window: still open
    for (let i = 0; i < 10; i++) limit.sample(10, 16, 2_000 + i * 5);
    expect(limit.health().latencyMs).toBe(10);
  });

  it("grows by √limit while latency holds at the baseline and the calls fill the limit", () => {
    const limit = new GradientLimit(16, settings());
    expect(windowOf(limit, 10, 16, 0)).toBe(true);
    // gradient 1: 16 × 1 + √16 = 20
    expect(limit.limit).toBe(20);
    windowOf(limit, 10, 20, 1_000);
    expect(limit.limit).toBe(24);
  });

  it("cuts the limit when latency rises past tolerance × baseline, by at most half", () => {
    const limit = new GradientLimit(16, settings());
    windowOf(limit, 10, 16, 0); // baseline 10ms, limit 20
    windowOf(limit, 15, 20, 1_000); // baseline (10 + 15) / 2 = 12.5: gradient 12.5/15
    expect(limit.limit).toBe(Math.floor(20 * (12.5 / 15) + Math.sqrt(20)));
    const before = limit.limit;
    windowOf(limit, 1_000, before, 2_000); // a hundredfold: the gradient stops at 0.5
    expect(limit.limit).toBe(Math.floor(before * 0.5 + Math.sqrt(before)));
  });

  it("tolerates latency up to tolerance × baseline without a cut", () => {
    const limit = new GradientLimit(16, settings({ tolerance: 2 }));
    windowOf(limit, 10, 16, 0);
    windowOf(limit, 19, 20, 1_000); // baseline 14.5: 2 × 14.5 ≥ 19, gradient 1
    expect(limit.limit).toBe(Math.floor(20 + Math.sqrt(20)));
  });

  it("leaves the limit alone while fewer than half its calls are in flight (the caller is the bound)", () => {
    const limit = new GradientLimit(40, settings());
    windowOf(limit, 10, 19, 0);
    windowOf(limit, 500, 19, 1_000);
    expect(limit.limit).toBe(40);
  });

  it("smoothing takes only its share of each estimate", () => {
    const limit = new GradientLimit(16, settings({ smoothing: 0.5 }));
    windowOf(limit, 10, 16, 0);
    // 16 × 0.5 + (16 + 4) × 0.5 = 18
    expect(limit.limit).toBe(18);
  });

  it("never leaves [minLimit, maxLimit]", () => {
    const low = new GradientLimit(8, settings({ minLimit: 6 }));
    windowOf(low, 10, 8, 0);
    for (let w = 1; w < 20; w++) windowOf(low, 10 * 2 ** w, 8, w * 1_000);
    expect(low.limit).toBe(6);
    const high = new GradientLimit(8, settings({ maxLimit: 12 }));
    for (let w = 0; w < 20; w++) windowOf(high, 10, 12, w * 1_000);
    expect(high.limit).toBe(12);
  });
});

const adaptive = (overrides: Partial<BulkheadSettings> = {}): BulkheadSettings => ({
  maxConcurrent: 4,
  maxQueue: 10,
  queueTimeoutMs: 10_000,
  overflow: "reject",
  adaptive: { minLimit: 1, maxLimit: 8, smoothing: 1, tolerance: 1, windowMs: 1 },
  ...overrides,
});
const op = operation({ retry: null, timeout: { attemptMs: null, totalMs: 60_000 } });

describe("adaptive bulkhead", () => {
  it("a static bulkhead reports no adaptive health and never emits limit changes", async () => {
    const h = harness({ bulkhead: adaptive({ adaptive: null }) });
    for (let i = 0; i < 30; i++) {
      track(
        h.dep.call(op, () => after(h.clock, 10, () => "ok")),
        h.clock,
      );
    }
    await h.clock.advance(1_000);
    expect(h.dep.bulkhead?.health()).toEqual({
      inFlight: 0,
      queued: 0,
      maxConcurrent: 4,
      maxQueue: 10,
    });
    expect(h.events.some((e) => e.type === "bulkhead-limit-changed")).toBe(false);
  });

  it("raises the limit while latency holds, admitting queued calls at once, and reports it", async () => {
    const h = harness({ bulkhead: adaptive() });
    const calls = Array.from({ length: 20 }, () =>
      track(
        h.dep.call(op, () => after(h.clock, 10, () => "ok")),
        h.clock,
      ),
    );
    expect(h.dep.bulkhead?.health()).toMatchObject({ inFlight: 4, queued: 10, maxConcurrent: 4 });
    await h.clock.advance(0);
    // calls 15 to 20 found the queue full
    expect(calls.slice(14).every((c) => isResilienceError(c.error, "bulkhead-full"))).toBe(true);
    await h.clock.advance(30);
    // 12 calls done: the tenth closed a window at 10ms latency, limit 4 → 4 + √4 = 6
    const changed = h.events.find((e) => e.type === "bulkhead-limit-changed");
    expect(changed).toMatchObject({ dependency: "payments", previous: 4, limit: 6, latencyMs: 10 });
    await h.clock.advance(100);
    expect(calls.slice(0, 14).every((c) => c.value === "ok")).toBe(true);
    expect(h.dep.bulkhead?.health()).toMatchObject({
      inFlight: 0,
      queued: 0,
      maxConcurrent: 6,
      adaptive: { limit: 6, minLimit: 1, maxLimit: 8, latencyMs: 10, baselineMs: 10 },
    });
  });

  it("a lowered limit admits no queued call until the calls in flight fall below it", async () => {
    const clock = createVirtualClock(0);
    const events: ResilienceEvent[] = [];
    const bulkhead = new Bulkhead(
      "payments",
      adaptive({ maxConcurrent: 8 }),
      clock,
      new Emitter((e) => events.push(e)),
    );
    const admitted: number[] = [];
    for (let i = 0; i < 8; i++) expect(bulkhead.enter("getCharge", 60_000)).toBeUndefined();
    // five windows of ten calls at 10ms, 1ms apart (calls that leave and come back at once)
    for (let w = 0; w < 5; w++) {
      for (let i = 0; i < 10; i++) {
        await clock.advance(1);
        bulkhead.observe("getCharge", 10, clock.now());
        bulkhead.leave();
        expect(bulkhead.enter("getCharge", 60_000)).toBeUndefined();
      }
    }
    expect(bulkhead.limit).toBe(8);
    // eight calls in flight, four waiting
    const waiting = Array.from({ length: 4 }, (_, i) => {
      const entry = bulkhead.enter("getCharge", 60_000);
      if (!(entry instanceof Promise)) throw new Error("expected to queue");
      return entry.then(() => admitted.push(i));
    });
    // then a window at 1s: baseline (5 × 10 + 1000) / 6 = 175ms, gradient clamped at 0.5:
    // 8 × 0.5 + √8 = 6.83 → 6
    // (nine calls complete without leaving yet: the window is still open, the limit still 8)
    await clock.advance(1_000);
    for (let i = 0; i < 9; i++) {
      bulkhead.observe("getCharge", 1_000, clock.now());
      await clock.advance(1);
    }
    expect(bulkhead.limit).toBe(8);
    bulkhead.observe("getCharge", 1_000, clock.now());
    expect(bulkhead.limit).toBe(6);
    expect(events.filter((e) => e.type === "bulkhead-limit-changed")).toEqual([
      expect.objectContaining({ previous: 8, limit: 6, latencyMs: 1_000 }),
    ]);
    // 8 in flight over a limit of 6: the next two to leave hand their permit to no one
    bulkhead.leave();
    bulkhead.leave();
    await clock.advance(0);
    expect(admitted).toEqual([]);
    expect(bulkhead.health()).toMatchObject({ inFlight: 6, queued: 4 });
    // at 6 of 6, a permit returned goes to the oldest waiter
    bulkhead.leave();
    await clock.advance(0);
    expect(admitted).toEqual([0]);
    expect(bulkhead.health()).toMatchObject({ inFlight: 6, queued: 3 });
    for (let i = 0; i < 3; i++) bulkhead.leave();
    await Promise.all(waiting);
    expect(admitted).toEqual([0, 1, 2, 3]);
  });

  it("a caller's abort is not a latency sample", async () => {
    const h = harness({ bulkhead: adaptive() });
    for (let i = 0; i < 12; i++) {
      const controller = new AbortController();
      track(
        h.dep.call(op, () => after(h.clock, 1_000, () => "ok"), { signal: controller.signal }),
        h.clock,
      );
      controller.abort();
    }
    await h.clock.advance(2_000);
    expect(h.dep.bulkhead?.health().adaptive).toMatchObject({ limit: 4, latencyMs: 0 });
  });
});
