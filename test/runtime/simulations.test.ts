import { beforeAll, describe, expect, it } from "vitest";
import {
  adaptiveTrace,
  breakerTrace,
  busiestWindow,
  cascade,
  outageAmplification,
  retryStorm,
  ADAPTIVE_SCENARIO,
  type AdaptiveTraceOptions,
  type AdaptiveTraceResult,
} from "../../bench/simulations.js";

describe("simulation: retry storm of 200 clients on the 3rd retry (base 100 ms)", () => {
  it("finds the busiest window", () => {
    expect(busiestWindow([0, 5, 19.9, 20, 100], 20)).toBe(3);
    expect(busiestWindow([], 20)).toBe(0);
  });

  for (const seed of [1, 2, 3, 42, 1234]) {
    it(`puts all 200 in one 20 ms window without jitter, ~20 with full and ~32 with equal jitter (seed ${seed})`, () => {
      const storm = retryStorm({
        clients: 200,
        retry: 3,
        baseMs: 100,
        capMs: 10_000,
        windowMs: 20,
        seed,
      });
      expect(storm.none).toBe(200);
      expect(Math.abs(storm.full - 20)).toBeLessThanOrEqual(8);
      expect(Math.abs(storm.equal - 32)).toBeLessThanOrEqual(10);
      expect(storm.decorrelated).toBeLessThan(200);
    });
  }
});

describe("simulation: total outage", () => {
  it("makes about 137 attempts for 100 calls of 4 attempts with a budget of 100 tokens (ratio 0.1)", async () => {
    const budgeted = await outageAmplification({
      calls: 100,
      maxAttempts: 4,
      budget: { maxTokens: 100, tokenRatio: 0.1 },
      seed: 7,
    });
    expect(Math.abs(budgeted.attempts - 137)).toBeLessThanOrEqual(2);
    const unbudgeted = await outageAmplification({
      calls: 100,
      maxAttempts: 4,
      budget: null,
      seed: 7,
    });
    expect(unbudgeted.attempts).toBe(400);
  });
});

describe("simulation: breaker at 100 calls/s, failing from 10 s, recovering at 60 s", () => {
  it("opens near 15 s, fails a probe near 45 s and closes near 75 s", async () => {
    const trace = await breakerTrace({
      rate: 100,
      durationMs: 90_000,
      failFromMs: 10_000,
      recoverAtMs: 60_000,
      latencyMs: 5,
    });
    const steps = trace.transitions.map((t) => `${t.from}->${t.to}`);
    expect(steps).toEqual([
      "closed->open",
      "open->half-open",
      "half-open->open",
      "open->half-open",
      "half-open->closed",
    ]);
    const [opened, probe, reopened, , closed] = trace.transitions;
    expect(Math.abs(opened!.atMs - 15_000)).toBeLessThanOrEqual(1_000);
    expect(opened!.failures / opened!.calls).toBeGreaterThanOrEqual(0.5);
    expect(Math.abs(opened!.calls - 1_000)).toBeLessThanOrEqual(100);
    expect(Math.abs(probe!.atMs - 45_000)).toBeLessThanOrEqual(1_000);
    expect(Math.abs(reopened!.atMs - 45_000)).toBeLessThanOrEqual(1_000);
    expect(Math.abs(closed!.atMs - 75_000)).toBeLessThanOrEqual(1_000);
    expect(trace.attempts + trace.rejected).toBe(9_000);
  });
});

describe("simulation: cascade (checkout at 200 rps, pool of 200, recommendations slows from 20 ms to 5 s at 10 s)", () => {
  const scenario = {
    rate: 200,
    pool: 200,
    durationMs: 60_000,
    slowFromMs: 10_000,
    healthyMs: 20,
    slowMs: 5_000,
    workMs: 30,
    seed: 42,
  };

  it("collapses with naive calls: the pool fills and about two thirds of checkouts are turned away", async () => {
    const naive = await cascade({ ...scenario, mode: "naive" });
    expect(naive.requests).toBe(12_000);
    expect(naive.peakInFlight).toBe(200);
    // 10 s healthy (2,000 served), then 200 slots each held 5 s: about 40 served a second.
    expect(Math.abs(naive.successRate - 0.34)).toBeLessThanOrEqual(0.03);
    expect(naive.rejected).toBe(naive.requests - naive.succeeded);
  });

  it("keeps checkout up through the stack: fallbacks instead of waits, a bounded pool and few calls to the slow dependency", async () => {
    const naive = await cascade({ ...scenario, mode: "naive" });
    const stack = await cascade({ ...scenario, mode: "stack" });
    expect(stack.successRate).toBeGreaterThanOrEqual(0.99);
    expect(stack.rejected).toBe(0);
    // 200 rps × (30 ms of work + at most a 250 ms attempt) = 56 in flight at worst.
    expect(stack.peakInFlight).toBeLessThanOrEqual(60);
    expect(stack.slowCalls).toBeLessThan(naive.slowCalls / 2);
    // Every call after the slowdown ends with the fallback (10,000 requests arrive after 10 s).
    expect(Math.abs(stack.degraded - 10_000)).toBeLessThanOrEqual(50);
  });
});

describe.each([42, 1234])(
  "simulation: adaptive concurrency (load ramps past the knee of 20 calls, then the dependency drops to 8 and recovers; seed %i)",
  (seed) => {
    const scenario: Omit<AdaptiveTraceOptions, "mode"> = {
      ...ADAPTIVE_SCENARIO,
      stepMs: 2_000,
      seed,
    };
    const row = (r: AdaptiveTraceResult, atMs: number) => r.trace.find((x) => x.atMs === atMs)!;
    let fixed: AdaptiveTraceResult;
    let adaptive: AdaptiveTraceResult;
    beforeAll(async () => {
      fixed = await adaptiveTrace({ ...scenario, mode: "static" });
      adaptive = await adaptiveTrace({ ...scenario, mode: "adaptive" });
    });

    it("under overload the limit settles near the knee, and latency stays near the no-load 50 ms", () => {
      // 30 s to 40 s: 800 calls/s offered, the dependency answers about 400/s at best
      for (const at of [32_000, 36_000, 40_000]) {
        const r = row(adaptive, at);
        expect(r.limit).toBeGreaterThanOrEqual(scenario.capacity);
        expect(r.limit).toBeLessThanOrEqual(scenario.capacity * 2.5);
        expect(r.latencyMs).toBeLessThan(50 * 2.5);
        // the static bulkhead fills to its 100: every call waits five times as long
        expect(row(fixed, at).latencyMs).toBeGreaterThan(200);
      }
      // and no less gets through: the dependency's throughput is the same past the knee
      expect(row(adaptive, 40_000).answered).toBeGreaterThanOrEqual(row(fixed, 40_000).answered);
    });

    it("backs off when the dependency degrades, so calls stop timing out", () => {
      const before = row(adaptive, 40_000).limit;
      const during = row(adaptive, 60_000);
      expect(during.limit).toBeLessThan(before * 0.6);
      expect(during.latencyMs).toBeLessThan(scenario.attemptMs / 2);
      expect(adaptive.timedOut).toBe(0);
      // the static bulkhead keeps 100 in flight at a dependency serving 8: calls time out
      expect(fixed.timedOut).toBeGreaterThan(1_000);
      expect(adaptive.answered).toBeGreaterThan(fixed.answered * 1.2);
    });

    it("recovers after: the limit climbs back and latency returns near 50 ms", () => {
      const during = row(adaptive, 60_000).limit;
      const last = adaptive.trace.at(-1)!;
      expect(last.limit).toBeGreaterThan(during * 1.5);
      expect(row(adaptive, 64_000).latencyMs).toBeLessThan(50 * 1.5);
      expect(adaptive.limitChanges).toBeGreaterThan(10);
      expect(fixed.limitChanges).toBe(0);
    });
  },
);
