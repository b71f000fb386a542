/**
 * Which attempt outcomes count against the breaker and the retry budget (docs/runtime.md, "What
 * counts against the breaker and the budget"), in virtual time.
 */
import { describe, expect, it } from "vitest";
import {
  networkError,
  ResilienceError,
  type ResilienceEvent,
} from "../../templates/runtime/index.js";
import {
  after,
  breakerSettings,
  harness,
  httpFailure,
  never,
  operation,
  track,
} from "./helpers.js";

const budget = { maxTokens: 100, tokenRatio: 0.1 } as const;
const retried = (on: ("timeout" | "network" | number)[]) =>
  operation({
    retry: {
      maxAttempts: 3,
      backoff: { baseMs: 10, capMs: 10, multiplier: 1, jitter: "none" },
      on,
      retryAfter: null,
    },
  });

describe("the retry budget is charged only by failures the retry policy would retry (gRPC A6)", () => {
  it("does not charge a 5xx that retry.on does not list, nor a parse error", async () => {
    const h = harness({ budget });
    const op = retried(["network", 503]);
    for (const failure of [
      () => httpFailure(500, false),
      () => new ResilienceError({ kind: "parse", message: "bad json" }),
    ]) {
      for (let i = 0; i < 20; i++) {
        const call = track(
          h.dep.call(op, () =>
            after(h.clock, 5, () => {
              throw failure();
            }),
          ),
          h.clock,
        );
        await h.clock.advance(50);
        expect(call.error).toBeInstanceOf(ResilienceError);
      }
    }
    expect(h.dep.health().budget?.tokens).toBe(100);
  });

  it("does not charge the failures of an operation that is attempted once", async () => {
    const h = harness({ budget });
    for (const op of [operation({ repeatable: false }), operation({ retry: null })]) {
      const call = track(
        h.dep.call(op, () =>
          after(h.clock, 5, () => {
            throw networkError("reset");
          }),
        ),
        h.clock,
      );
      await h.clock.advance(50);
      expect(call.error).toMatchObject({ kind: "network", attempts: 1 });
    }
    expect(h.dep.health().budget?.tokens).toBe(100);
  });

  it("still charges every retried failure, and every failed hedged copy", async () => {
    const h = harness({ budget });
    const call = track(
      h.dep.call(retried(["network"]), () =>
        after(h.clock, 5, () => {
          throw networkError("reset");
        }),
      ),
      h.clock,
    );
    await h.clock.advance(100);
    expect(call.error).toMatchObject({ kind: "network", attempts: 3 });
    expect(h.dep.health().budget?.tokens).toBe(97);
    const hedged = operation({
      name: "search",
      retry: null,
      hedge: { delayMs: 40, maxAttempts: 2, budget: 1 },
    });
    const copies = track(
      h.dep.call(hedged, () =>
        after(h.clock, 5, () => {
          throw httpFailure(503);
        }),
      ),
      h.clock,
    );
    await h.clock.advance(100);
    expect(copies.error).toMatchObject({ kind: "http", attempts: 2 });
    expect(h.dep.health().budget?.tokens).toBe(95);
  });
});

describe("a hedge asks the breaker before it spends its hedge token", () => {
  it("a hedge the half-open breaker refuses leaves the token for the next call", async () => {
    const h = harness({
      breaker: {
        ...breakerSettings,
        window: { kind: "count", calls: 2 },
        minCalls: 2,
        openForMs: 1_000,
        halfOpen: { maxCalls: 1, successes: 1 },
      },
    });
    // open the breaker with two failures of another operation
    for (let i = 0; i < 2; i++)
      await h.dep
        .call(operation({ retry: null }), () => Promise.reject(networkError("down")))
        .catch(() => undefined);
    expect(h.dep.breaker?.health().state).toBe("open");
    await h.clock.advance(1_000);
    // budget 1% of calls: the bucket holds one hedge
    const hedged = operation({
      name: "search",
      retry: null,
      hedge: { delayMs: 40, maxAttempts: 2, budget: 0.01 },
    });
    let copies = 0;
    const slow = () => {
      copies++;
      return after(h.clock, 100, () => "ok");
    };
    // the trial: its hedge at 40 ms finds the one trial slot taken
    const trial = track(h.dep.call(hedged, slow), h.clock);
    await h.clock.advance(200);
    expect(trial.value).toBe("ok");
    expect(copies).toBe(1);
    expect(h.dep.breaker?.health().state).toBe("closed");
    // the token was not spent on the refused hedge: this call hedges
    const next = track(h.dep.call(hedged, slow), h.clock);
    await h.clock.advance(200);
    expect(next.value).toBe("ok");
    expect(copies).toBe(3);
  });
});

describe("an attempt cut short by the caller's deadline gets no verdict", () => {
  it("a healthy dependency (20-30 ms) called with 5-20 ms left keeps its breaker closed and the budget full", async () => {
    const h = harness({ breaker: breakerSettings, budget });
    const op = retried(["timeout", "network", 503]);
    for (let i = 0; i < 50; i++) {
      const left = 5 + (i % 16);
      const call = track(
        h.dep.call(op, () => after(h.clock, 20 + (i % 11), () => "ok"), { deadline: left }),
        h.clock,
      );
      await h.clock.advance(40);
      expect(call.error).toMatchObject({ kind: "deadline", attempts: 1 });
    }
    expect(h.dep.breaker?.health()).toMatchObject({
      state: "closed",
      calls: 0,
      failures: 0,
      trialsInFlight: 0,
    });
    expect(h.dep.health().budget?.tokens).toBe(100);
    const ends = h.events.filter(
      (e): e is Extract<ResilienceEvent, { type: "attempt-end" }> => e.type === "attempt-end",
    );
    expect(ends.every((e) => e.error?.kind === "deadline")).toBe(true);
  });

  it("in half-open, a trial cut by the deadline gives its slot back", async () => {
    const h = harness({
      breaker: {
        ...breakerSettings,
        window: { kind: "count", calls: 2 },
        minCalls: 2,
        openForMs: 1_000,
        halfOpen: { maxCalls: 1, successes: 1 },
      },
    });
    for (let i = 0; i < 2; i++)
      await h.dep
        .call(operation({ retry: null }), () => Promise.reject(networkError("down")))
        .catch(() => undefined);
    await h.clock.advance(1_000);
    const cut = track(
      h.dep.call(operation({ retry: null }), () => never<string>(), { deadline: 10 }),
      h.clock,
    );
    await h.clock.advance(10);
    expect(cut.error).toMatchObject({ kind: "deadline" });
    expect(h.dep.breaker?.health()).toMatchObject({ state: "half-open", trialsInFlight: 0 });
    const trial = track(
      h.dep.call(operation({ retry: null }), () => "ok"),
      h.clock,
    );
    await h.clock.advance(1);
    expect(trial.value).toBe("ok");
    expect(h.dep.breaker?.health().state).toBe("closed");
  });

  it("an attempt that outlives its own attempt timeout is still a failure, and charged when timeout is retried", async () => {
    const h = harness({ breaker: breakerSettings, budget });
    const op = operation({
      timeout: { attemptMs: 10, totalMs: 10_000 },
      retry: {
        maxAttempts: 2,
        backoff: { baseMs: 5, capMs: 5, multiplier: 1, jitter: "none" },
        on: ["timeout"],
        retryAfter: null,
      },
    });
    for (let i = 0; i < 5; i++) {
      const call = track(
        h.dep.call(op, () => never<string>(), { deadline: 5_000 }),
        h.clock,
      );
      await h.clock.advance(100);
      expect(call.error).toMatchObject({ kind: "timeout", attempts: 2 });
    }
    expect(h.dep.breaker?.health()).toMatchObject({ state: "open" });
    expect(h.dep.health().budget?.tokens).toBe(90);
  });
});
