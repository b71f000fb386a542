import { describe, expect, it } from "vitest";
import {
  createDependency,
  createVirtualClock,
  isResilienceError,
  type Clock,
  type ResilienceEvent,
} from "../../templates/runtime/index.js";
import { after, breakerSettings, harness, httpFailure, operation, track } from "./helpers.js";

describe("composed stack: what the breaker hears", () => {
  it("releases the permit of a request error (4xx) without a verdict", async () => {
    const h = harness({ breaker: { ...breakerSettings, minCalls: 1 } });
    for (let i = 0; i < 5; i++) {
      await expect(
        h.dep.call(operation(), () => Promise.reject(httpFailure(404, false))),
      ).rejects.toMatchObject({ status: 404 });
    }
    expect(h.dep.breaker?.health()).toMatchObject({ state: "closed", calls: 0 });
    await h.dep
      .call(operation({ retry: null }), () => Promise.reject(httpFailure(500, false)))
      .catch(() => undefined);
    expect(h.dep.breaker?.state.state).toBe("open");
  });

  it("does not let a half-open trial that fails with a 4xx reopen (or close) the breaker", async () => {
    const h = harness({
      breaker: { ...breakerSettings, minCalls: 1, halfOpen: { maxCalls: 1, successes: 1 } },
    });
    await h.dep
      .call(operation({ retry: null }), () => Promise.reject(httpFailure(503)))
      .catch(() => undefined);
    await h.clock.advance(breakerSettings.openForMs);
    await h.dep
      .call(operation(), () => Promise.reject(httpFailure(422, false)))
      .catch(() => undefined);
    expect(h.dep.breaker?.state).toEqual({ state: "half-open", inFlight: 0, successes: 0 });
    await h.dep.call(operation(), () => "ok");
    expect(h.dep.breaker?.state.state).toBe("closed");
  });

  it("counts a timed-out trial as a failure", async () => {
    const h = harness({
      breaker: { ...breakerSettings, minCalls: 1, halfOpen: { maxCalls: 1, successes: 1 } },
    });
    await h.dep
      .call(operation({ retry: null }), () => Promise.reject(httpFailure(503)))
      .catch(() => undefined);
    await h.clock.advance(breakerSettings.openForMs);
    const trial = track(
      h.dep.call(operation({ retry: null }), () => after(h.clock, 10_000, () => "late")),
      h.clock,
    );
    await h.clock.advance(250);
    expect(isResilienceError(trial.error, "timeout")).toBe(true);
    expect(h.dep.breaker?.state.state).toBe("open");
  });

  it("does not retry after the breaker opens mid-call, and keeps the last failure as cause", async () => {
    const h = harness({ breaker: { ...breakerSettings, minCalls: 1 } });
    let attempts = 0;
    const result = track(
      h.dep.call(operation(), () => {
        attempts++;
        return Promise.reject(httpFailure(503));
      }),
      h.clock,
    );
    await h.clock.advance(1_000);
    expect(attempts).toBe(1);
    expect(result.error).toMatchObject({ kind: "circuit-open", attempts: 1 });
    expect((result.error as Error).cause).toMatchObject({ status: 503 });
  });

  it("reports health of every layer", async () => {
    const h = harness({
      breaker: breakerSettings,
      bulkhead: { maxConcurrent: 2, maxQueue: 0, queueTimeoutMs: 0, overflow: "reject" },
      budget: { maxTokens: 10, tokenRatio: 0.1 },
    });
    const pending = track(
      h.dep.call(operation(), () => after(h.clock, 10, () => "ok")),
      h.clock,
    );
    await h.clock.flush();
    expect(h.dep.health()).toMatchObject({
      name: "payments",
      breaker: { state: "closed", calls: 0 },
      bulkhead: { inFlight: 1, queued: 0, maxConcurrent: 2 },
      budget: { tokens: 10, maxTokens: 10, allowsRetry: true },
    });
    await h.clock.advance(10);
    expect(pending.value).toBe("ok");
    expect(h.dep.health().breaker).toMatchObject({ calls: 1, failures: 0 });
  });

  it("unsubscribes observers", async () => {
    const h = harness();
    const seen: string[] = [];
    const stop = h.dep.subscribe((e) => seen.push(e.type));
    await h.dep.call(operation(), () => "ok");
    stop();
    await h.dep.call(operation(), () => "ok");
    expect(seen).toEqual(["call-start", "attempt-start", "attempt-end", "call-end"]);
  });
});

describe("composed stack: time", () => {
  it("leaves no timer behind once calls settle", async () => {
    const h = harness({
      breaker: breakerSettings,
      bulkhead: { maxConcurrent: 1, maxQueue: 5, queueTimeoutMs: 1_000, overflow: "reject" },
      budget: { maxTokens: 10, tokenRatio: 0.1 },
    });
    const hedged = operation({ retry: null, hedge: { delayMs: 10, maxAttempts: 3, budget: 1 } });
    let n = 0;
    const calls = [
      track(
        h.dep.call(hedged, (ctx) => after(h.clock, ctx.attempt === 2 ? 5 : 100, () => "hedged")),
        h.clock,
      ),
      track(
        h.dep.call(operation(), () =>
          ++n < 2 ? Promise.reject(httpFailure(503)) : after(h.clock, 5, () => "retried"),
        ),
        h.clock,
      ),
      track(
        h.dep.call(operation({ retry: null }), () => after(h.clock, 5, () => "queued")),
        h.clock,
      ),
    ];
    await h.clock.advance(1_000);
    expect(calls.map((c) => c.value)).toEqual(["hedged", "retried", "queued"]);
    await h.clock.advance(1_000);
    expect(h.clock.pendingTimers).toBe(0);
  });

  it("survives a clock that steps backwards mid-call: no negative durations, no crash", async () => {
    const virtual = createVirtualClock(10_000);
    let offset = 0;
    const clock: Clock = {
      now: () => virtual.now() + offset,
      setTimer: (cb, ms) => virtual.setTimer(cb, ms),
      clearTimer: (handle) => virtual.clearTimer(handle),
    };
    const events: ResilienceEvent[] = [];
    const dep = createDependency(
      {
        name: "d",
        deadline: null,
        breaker: { ...breakerSettings, minCalls: 2 },
        bulkhead: null,
        budget: { maxTokens: 10, tokenRatio: 0.1 },
      },
      { clock, observer: (e) => events.push(e) },
    );
    const result = track(
      dep.call(operation(), () =>
        after(virtual, 20, () => {
          offset -= 5_000;
          throw httpFailure(503);
        }),
      ),
      virtual,
    );
    await virtual.advance(2_000);
    expect(isResilienceError(result.error)).toBe(true);
    for (const e of events)
      if (e.type === "attempt-end") expect(e.durationMs).toBeGreaterThanOrEqual(0);
    const health = dep.health().breaker!;
    expect(health.calls).toBeGreaterThanOrEqual(0);
    expect(health.retryInMs ?? 0).toBeGreaterThanOrEqual(0);
  });
});

describe("composed stack: clock reads", () => {
  const full = {
    name: "payments",
    deadline: { propagate: true, marginMs: 10, header: "x-request-timeout-ms", format: "ms" },
    breaker: breakerSettings,
    bulkhead: { maxConcurrent: 5, maxQueue: 0, queueTimeoutMs: 0, overflow: "reject" },
    budget: { maxTokens: 10, tokenRatio: 0.1 },
  } as const;

  /** A virtual clock that counts how often the time is read. */
  function counted(): {
    clock: Clock;
    reads: () => number;
    advance: (ms: number) => Promise<void>;
  } {
    const inner = createVirtualClock(1_000);
    let reads = 0;
    const clock: Clock = {
      now: () => {
        reads++;
        return inner.now();
      },
      setTimer: (callback, delayMs) => inner.setTimer(callback, delayMs),
      clearTimer: (handle) => inner.clearTimer(handle),
    };
    return { clock, reads: () => reads, advance: (ms) => inner.advance(ms) };
  }

  it("reads the clock once for a call whose first attempt succeeds, with every layer on and nobody observing", async () => {
    const { clock, reads } = counted();
    const dep = createDependency(full, { clock, random: () => 0.5 });
    const op = operation({ fallback: { kind: "value", value: "cached" } });
    await dep.call(op, () => Promise.resolve("ok"));
    const before = reads();
    await expect(dep.call(op, () => Promise.resolve("ok"))).resolves.toEqual({
      data: "ok",
      degraded: false,
    });
    expect(reads() - before).toBe(1);
  });

  it("reads it again at the end of an attempt when the breaker checks slow calls", async () => {
    const { clock, reads } = counted();
    const dep = createDependency(
      { ...full, breaker: { ...breakerSettings, slowCall: { durationMs: 100, rate: 0.5 } } },
      { clock, random: () => 0.5 },
    );
    const before = reads();
    await dep.call(operation(), () => Promise.resolve("ok"));
    expect(reads() - before).toBe(2);
  });

  it("counts a success whose end time was not read in the latest window slice the breaker has seen", async () => {
    const { clock, advance } = counted();
    const dep = createDependency(
      { ...full, breaker: { ...breakerSettings, minCalls: 100 } },
      { clock, random: () => 0.5 },
    );
    const op = operation({ retry: null, timeout: { attemptMs: null, totalMs: null } });
    let finish: (value: string) => void = () => undefined;
    const long = dep.call(op, () => new Promise<string>((resolve) => (finish = resolve)));
    // 12 s later, longer than the 10 s window: a failure is recorded at its end time
    await advance(12_000);
    await dep.call(op, () => Promise.reject(httpFailure(503))).catch(() => undefined);
    finish("late");
    await expect(long).resolves.toBe("late");
    // the success lands next to the failure, not in the slice of its start (long gone from the window)
    expect(dep.breaker?.health()).toMatchObject({ calls: 2, failures: 1 });
  });
});
