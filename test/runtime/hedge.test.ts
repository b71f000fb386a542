import { describe, expect, it } from "vitest";
import {
  HedgeBudget,
  isResilienceError,
  type AttemptContext,
} from "../../templates/runtime/index.js";
import { after, breakerSettings, harness, httpFailure, operation, track } from "./helpers.js";

const hedged = (maxAttempts = 3, budget = 1) =>
  operation({
    retry: null,
    hedge: { delayMs: 40, maxAttempts, budget },
    timeout: { attemptMs: 500, totalMs: 1_000 },
  });

describe("hedging", () => {
  it("launches copies after the hedge delay; the first success wins and the losers are aborted", async () => {
    const h = harness();
    const signals: AbortSignal[] = [];
    const latencies = [300, 50, 400];
    const starts: number[] = [];
    const result = track(
      h.dep.call(hedged(), (ctx: AttemptContext) => {
        signals.push(ctx.signal);
        starts.push(h.clock.now());
        const latency = latencies[ctx.attempt - 1]!;
        return after(h.clock, latency, () => `copy ${ctx.attempt}`);
      }),
      h.clock,
    );
    await h.clock.advance(1_000);
    expect(result.value).toBe("copy 2");
    expect(starts.map((t) => t - starts[0]!)).toEqual([0, 40, 80]);
    expect(result.at - starts[0]!).toBe(90);
    expect(signals.map((s) => s.aborted)).toEqual([true, false, true]);
    expect(h.events.filter((e) => e.type === "hedge-launched")).toHaveLength(2);
  });

  it("throws the first-launched copy's error, with the others attached, when every copy fails", async () => {
    const h = harness();
    const result = track(
      h.dep.call(hedged(), (ctx) =>
        after(h.clock, 100, () => {
          throw httpFailure(500 + ctx.attempt + 1);
        }),
      ),
      h.clock,
    );
    await h.clock.advance(1_000);
    expect(result.error).toMatchObject({ kind: "http", status: 502, attempts: 3 });
    expect((result.error as { others: { status: number }[] }).others.map((e) => e.status)).toEqual([
      503, 504,
    ]);
  });

  it("launches the next copy at once after a transient failure", async () => {
    const h = harness();
    const starts: number[] = [];
    const result = track(
      h.dep.call(hedged(2), (ctx) => {
        starts.push(h.clock.now());
        return ctx.attempt === 1 ? Promise.reject(httpFailure(503)) : "ok";
      }),
      h.clock,
    );
    await h.clock.flush();
    expect(result.value).toBe("ok");
    expect(starts[1]).toBe(starts[0]);
  });

  it("ends the call at once on a failure that is not transient", async () => {
    const h = harness();
    const result = track(
      h.dep.call(hedged(), (ctx) =>
        ctx.attempt === 1
          ? after(h.clock, 60, () => {
              throw httpFailure(404, false);
            })
          : after(h.clock, 500, () => "ok"),
      ),
      h.clock,
    );
    await h.clock.advance(60);
    expect(result.error).toMatchObject({ kind: "http", status: 404 });
  });

  it("releases the losers' breaker permits without a verdict", async () => {
    const h = harness({ breaker: { ...breakerSettings, halfOpen: { maxCalls: 3, successes: 3 } } });
    h.dep.breaker?.isolate();
    h.dep.breaker?.reset();
    const result = track(
      h.dep.call(hedged(3), (ctx) => after(h.clock, ctx.attempt === 2 ? 10 : 200, () => "ok")),
      h.clock,
    );
    await h.clock.advance(1_000);
    expect(result.value).toBe("ok");
    expect(h.dep.breaker?.health()).toMatchObject({ calls: 1, failures: 0 });
    expect(
      h.events
        .filter((e) => e.type === "attempt-end")
        .map((e) => (e as { outcome: string }).outcome)
        .sort(),
    ).toEqual(["cancelled", "success"]);
  });

  it("keeps hedges to the hedge budget's fraction of calls", async () => {
    const h = harness();
    let copies = 0;
    const calls = 1_000;
    for (let i = 0; i < calls; i++) {
      const result = track(
        h.dep.call(hedged(2, 0.05), () => {
          copies++;
          return after(h.clock, 100, () => "ok");
        }),
        h.clock,
      );
      await h.clock.advance(100);
      expect(result.value).toBe("ok");
    }
    const hedges = copies - calls;
    expect(hedges).toBeGreaterThan(0);
    expect(hedges).toBeLessThanOrEqual(0.05 * calls + new HedgeBudget(0.05).capacity);
  });

  it("is charged to the retry budget and stops when it refuses", async () => {
    const h = harness({ budget: { maxTokens: 4, tokenRatio: 0.1 } });
    let copies = 0;
    for (let i = 0; i < 5; i++) {
      const result = track(
        h.dep.call(hedged(2), () => {
          copies++;
          return after(h.clock, 100, () => {
            throw httpFailure(503);
          });
        }),
        h.clock,
      );
      await h.clock.advance(1_000);
      expect(isResilienceError(result.error)).toBe(true);
    }
    expect(copies).toBeLessThan(10);
    expect(h.events.some((e) => e.type === "budget-exhausted")).toBe(true);
  });
});
