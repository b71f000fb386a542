import { describe, expect, it } from "vitest";
import {
  CircuitBreaker,
  createVirtualClock,
  REJECTED,
  type BreakerSettings,
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

// The breaker's pinned choices (docs/runtime.md, "Circuit breaker"), each in virtual time.

const count = (calls: number, minCalls: number): BreakerSettings => ({
  ...breakerSettings,
  window: { kind: "count", calls },
  minCalls,
});

const transitions = (events: ResilienceEvent[]): string[] =>
  events.flatMap((e) => (e.type === "breaker-transition" ? [`${e.from}->${e.to}`] : []));

describe("breaker: thresholds are checked after every outcome, a success too", () => {
  it("opens on F then S with minCalls 2 at exactly 50 %", () => {
    const breaker = new CircuitBreaker(count(10, 2), createVirtualClock());
    breaker.onFailure(breaker.tryAcquire(), 1);
    expect(breaker.state.state).toBe("closed");
    breaker.onSuccess(breaker.tryAcquire(), 1);
    expect(breaker.state.state).toBe("open");
    expect(breaker.tryAcquire()).toBe(REJECTED);
  });

  it("opens on F,F,F,S,S with minCalls 5 (60 %), and the next call never reaches the dependency", async () => {
    const h = harness({ breaker: count(10, 5) });
    const op = operation({ retry: null });
    for (const fails of [true, true, true, false, false]) {
      await h.dep
        .call(op, () => (fails ? Promise.reject(httpFailure(503)) : "ok"))
        .catch(() => undefined);
    }
    expect(h.dep.breaker?.state.state).toBe("open");
    expect(transitions(h.events)).toEqual(["closed->open"]);
    const opening = h.events.find((e) => e.type === "breaker-transition");
    expect(opening).toMatchObject({ window: { calls: 5, failures: 3 } });
    let reached = 0;
    const next = await h.dep.call(op, () => (reached++, "ok")).catch((e: unknown) => e);
    expect(reached).toBe(0);
    expect(next).toMatchObject({ kind: "circuit-open", attempts: 0 });
  });

  it("opens on a success in a time window too, and stays closed below the threshold", async () => {
    const clock = createVirtualClock();
    const breaker = new CircuitBreaker({ ...breakerSettings, minCalls: 4 }, clock);
    breaker.onFailure(breaker.tryAcquire(), 1);
    breaker.onFailure(breaker.tryAcquire(), 1);
    breaker.onSuccess(breaker.tryAcquire(), 1);
    expect(breaker.state.state).toBe("closed");
    breaker.onSuccess(breaker.tryAcquire(), 1);
    expect(breaker.state.state).toBe("open");

    const below = new CircuitBreaker({ ...breakerSettings, minCalls: 4 }, clock);
    below.onFailure(below.tryAcquire(), 1);
    for (let i = 0; i < 3; i++) below.onSuccess(below.tryAcquire(), 1);
    expect(below.state.state).toBe("closed");
    // once the failure has slid out of the window, successes alone never open it
    await clock.advance(breakerSettings.window.durationMs);
    for (let i = 0; i < 10; i++) below.onSuccess(below.tryAcquire(), 1);
    expect(below.health()).toMatchObject({ state: "closed", calls: 10, failures: 0 });
  });
});

describe("breaker: a transition to the current state is no transition", () => {
  it("reset() on a closed breaker emits nothing, and a failure in flight still counts", async () => {
    const h = harness({ breaker: count(10, 1) });
    const op = operation({ retry: null });
    const inFlight = track(
      h.dep.call(op, () => after(h.clock, 100, () => Promise.reject(httpFailure(503)))),
      h.clock,
    );
    await h.clock.advance(10);
    const generation = h.dep.breaker!.health().generation;
    h.dep.breaker!.reset();
    expect(transitions(h.events)).toEqual([]);
    expect(h.dep.breaker!.health().generation).toBe(generation);
    await h.clock.advance(100);
    expect(inFlight.error).toMatchObject({ kind: "http", status: 503 });
    expect(h.dep.breaker!.state.state).toBe("open");
    expect(transitions(h.events)).toEqual(["closed->open"]);
  });

  it("reset() on a closed breaker empties the window, without a new episode", () => {
    const breaker = new CircuitBreaker(count(10, 4), createVirtualClock());
    breaker.onFailure(breaker.tryAcquire(), 1);
    breaker.onSuccess(breaker.tryAcquire(), 1);
    breaker.reset();
    expect(breaker.health()).toMatchObject({
      state: "closed",
      calls: 0,
      failures: 0,
      generation: 0,
    });
  });

  it("isolate() twice emits one transition and starts one episode", () => {
    const seen: string[] = [];
    const breaker = new CircuitBreaker(breakerSettings, createVirtualClock(), (from, to) =>
      seen.push(`${from}->${to}`),
    );
    breaker.isolate();
    const generation = breaker.health().generation;
    breaker.isolate();
    expect(seen).toEqual(["closed->isolated"]);
    expect(breaker.health().generation).toBe(generation);
    breaker.reset();
    breaker.reset();
    expect(seen).toEqual(["closed->isolated", "isolated->closed"]);
  });
});

describe("breaker: a rejection carries the failure that opened the breaker as cause", () => {
  it("gives a new call rejected by an open breaker the opening failure, the same object every time", async () => {
    const h = harness({ breaker: { ...breakerSettings, minCalls: 1 } });
    const op = operation({ retry: null });
    const opening = httpFailure(503, true, {}, "overloaded");
    await h.dep.call(op, () => Promise.reject(opening)).catch(() => undefined);
    expect(h.dep.breaker?.state.state).toBe("open");
    const first = await h.dep.call(op, () => "ok").catch((e: unknown) => e);
    const second = await h.dep.call(op, () => "ok").catch((e: unknown) => e);
    expect(first).toMatchObject({ kind: "circuit-open", attempts: 0 });
    expect((first as Error).cause).toBe(opening);
    expect((second as Error).cause).toBe(opening);
    expect(h.dep.breaker?.openedBy).toBe(opening);
  });

  it("names the last failure when a success is what brings the rate to its threshold", async () => {
    const h = harness({ breaker: count(10, 2) });
    const op = operation({ retry: null });
    const failure = httpFailure(502);
    await h.dep.call(op, () => Promise.reject(failure)).catch(() => undefined);
    await h.dep.call(op, () => "ok");
    const rejected = await h.dep.call(op, () => "ok").catch((e: unknown) => e);
    expect(rejected).toMatchObject({ kind: "circuit-open" });
    expect((rejected as Error).cause).toBe(failure);
  });

  it("keeps the cause through half-open, takes the failed trial's on reopening, and has none once closed or isolated", async () => {
    const h = harness({
      breaker: { ...breakerSettings, minCalls: 1, halfOpen: { maxCalls: 1, successes: 1 } },
    });
    const op = operation({ retry: null });
    const opening = httpFailure(503);
    await h.dep.call(op, () => Promise.reject(opening)).catch(() => undefined);
    await h.clock.advance(breakerSettings.openForMs);
    // one trial in flight: the next call is rejected, still naming the opening failure
    const trial = track(h.dep.call(op, never), h.clock);
    const beyond = await h.dep.call(op, () => "ok").catch((e: unknown) => e);
    expect(beyond).toMatchObject({ kind: "circuit-open" });
    expect((beyond as Error).cause).toBe(opening);
    await h.clock.advance(250); // the trial times out: the breaker reopens
    expect(trial.error).toMatchObject({ kind: "timeout" });
    const reopened = await h.dep.call(op, () => "ok").catch((e: unknown) => e);
    expect((reopened as Error).cause).toBe(trial.error);

    await h.clock.advance(breakerSettings.openForMs);
    await h.dep.call(op, () => "ok");
    expect(h.dep.breaker?.state.state).toBe("closed");
    expect(h.dep.breaker?.openedBy).toBeUndefined();
    h.dep.breaker?.isolate();
    const isolated = await h.dep.call(op, () => "ok").catch((e: unknown) => e);
    expect(isolated).toMatchObject({ kind: "circuit-open" });
    expect((isolated as Error).cause).toBeUndefined();
  });
});
