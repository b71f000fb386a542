import { describe, expect, it } from "vitest";
import {
  CircuitBreaker,
  createVirtualClock,
  REJECTED,
  type BreakerSettings,
  type Clock,
} from "../../templates/runtime/index.js";
import { breakerSettings } from "./helpers.js";

function setup(overrides: Partial<BreakerSettings> = {}) {
  const clock = createVirtualClock();
  const transitions: string[] = [];
  const breaker = new CircuitBreaker({ ...breakerSettings, ...overrides }, clock, (from, to) =>
    transitions.push(`${from}->${to}`),
  );
  const record = (failures: number, successes: number, durationMs = 1): void => {
    for (let i = 0; i < successes; i++) breaker.onSuccess(breaker.tryAcquire(), durationMs);
    for (let i = 0; i < failures; i++) breaker.onFailure(breaker.tryAcquire(), durationMs);
  };
  return { clock, breaker, transitions, record };
}

describe("circuit breaker: opening", () => {
  it("opens when the failure rate is exactly at the threshold (>=)", () => {
    const { breaker, record } = setup({ minCalls: 10 });
    record(5, 5);
    expect(breaker.state.state).toBe("open");
  });

  it("stays closed just below the threshold", () => {
    const { breaker, record } = setup({ minCalls: 10 });
    record(4, 6);
    expect(breaker.state.state).toBe("closed");
    expect(breaker.health()).toMatchObject({ calls: 10, failures: 4, failureRate: 0.4 });
  });

  it("opens when the slow-call rate is exactly at its threshold, even if every call succeeded", () => {
    const { breaker } = setup({ minCalls: 4, slowCall: { durationMs: 100, rate: 0.5 } });
    breaker.onSuccess(breaker.tryAcquire(), 10);
    breaker.onSuccess(breaker.tryAcquire(), 10);
    breaker.onSuccess(breaker.tryAcquire(), 100);
    expect(breaker.state.state).toBe("closed");
    breaker.onSuccess(breaker.tryAcquire(), 150);
    expect(breaker.state.state).toBe("open");
  });

  it("never opens on consecutive failures alone", () => {
    const { breaker, record } = setup({ minCalls: 20 });
    record(19, 0);
    expect(breaker.state.state).toBe("closed");
    const other = setup({ minCalls: 20 });
    other.record(0, 100);
    other.record(40, 0);
    expect(other.breaker.state.state).toBe("closed");
  });

  it("forgets outcomes that slid out of the time window", async () => {
    const { breaker, clock, record } = setup({ minCalls: 10 });
    record(4, 0);
    await clock.advance(10_000);
    record(4, 6);
    expect(breaker.health()).toMatchObject({ calls: 10, failures: 4 });
    expect(breaker.state.state).toBe("closed");
    const again = setup({ minCalls: 10 });
    again.record(9, 0);
    await again.clock.advance(10_000);
    again.record(1, 9);
    expect(again.breaker.state.state).toBe("closed");
  });

  it("uses the last N calls with a count window", () => {
    const { breaker, record } = setup({ window: { kind: "count", calls: 10 }, minCalls: 10 });
    record(4, 6);
    expect(breaker.state.state).toBe("closed");
    record(0, 10);
    expect(breaker.health()).toMatchObject({ calls: 10, failures: 0 });
    record(5, 0);
    expect(breaker.state.state).toBe("open");
  });
});

describe("circuit breaker: open and half-open", () => {
  it("rejects until the open period has elapsed, and admits a trial when it has exactly (>=)", async () => {
    const { breaker, clock, record } = setup();
    record(10, 0);
    await clock.advance(breakerSettings.openForMs - 1);
    expect(breaker.tryAcquire()).toBe(REJECTED);
    expect(breaker.health().retryInMs).toBe(1);
    await clock.advance(1);
    expect(breaker.tryAcquire()).not.toBe(REJECTED);
    expect(breaker.state).toEqual({ state: "half-open", inFlight: 1, successes: 0 });
  });

  it("rejects trials beyond halfOpen.maxCalls at once and frees a slot on release", async () => {
    const { breaker, clock, record } = setup();
    record(10, 0);
    await clock.advance(breakerSettings.openForMs);
    const trials = [breaker.tryAcquire(), breaker.tryAcquire(), breaker.tryAcquire()];
    expect(trials).not.toContain(REJECTED);
    expect(breaker.tryAcquire()).toBe(REJECTED);
    breaker.release(trials[0]!);
    expect(breaker.state).toEqual({ state: "half-open", inFlight: 2, successes: 0 });
    expect(breaker.tryAcquire()).not.toBe(REJECTED);
  });

  it("closes as soon as `successes` trials succeed, even with another trial in flight", async () => {
    const { breaker, clock, record, transitions } = setup({
      halfOpen: { maxCalls: 3, successes: 2 },
    });
    record(10, 0);
    await clock.advance(breakerSettings.openForMs);
    const [a, b, c] = [breaker.tryAcquire(), breaker.tryAcquire(), breaker.tryAcquire()];
    breaker.onSuccess(a, 1);
    expect(breaker.state.state).toBe("half-open");
    breaker.onSuccess(b, 1);
    expect(breaker.state.state).toBe("closed");
    breaker.onFailure(c, 1);
    expect(breaker.state.state).toBe("closed");
    expect(breaker.health().calls).toBe(0);
    expect(transitions).toEqual(["closed->open", "open->half-open", "half-open->closed"]);
  });

  it("reopens on one failed trial, restarting the open period", async () => {
    const { breaker, clock, record } = setup();
    record(10, 0);
    await clock.advance(breakerSettings.openForMs);
    const a = breaker.tryAcquire();
    const b = breaker.tryAcquire();
    breaker.onSuccess(a, 1);
    breaker.onFailure(b, 1);
    expect(breaker.state).toEqual({ state: "open", openedAt: clock.now(), forMs: 30_000 });
    await clock.advance(breakerSettings.openForMs - 1);
    expect(breaker.tryAcquire()).toBe(REJECTED);
  });

  it("treats a slow trial as a failure", async () => {
    const { breaker, clock, record } = setup({ slowCall: { durationMs: 100, rate: 0.9 } });
    record(10, 0);
    await clock.advance(breakerSettings.openForMs);
    breaker.onSuccess(breaker.tryAcquire(), 100);
    expect(breaker.state.state).toBe("open");
  });

  it("can be isolated and reset by hand", () => {
    const { breaker } = setup();
    breaker.isolate();
    expect(breaker.tryAcquire()).toBe(REJECTED);
    expect(breaker.health().state).toBe("isolated");
    breaker.reset();
    expect(breaker.tryAcquire()).not.toBe(REJECTED);
    expect(breaker.state.state).toBe("closed");
  });

  it("reports health", async () => {
    const { breaker, clock, record } = setup({ minCalls: 10 });
    record(3, 7);
    expect(breaker.health()).toEqual({
      state: "closed",
      calls: 10,
      failures: 3,
      slowCalls: 0,
      failureRate: 0.3,
      slowCallRate: 0,
      openedAt: null,
      ageMs: null,
      retryInMs: null,
      trialsInFlight: 0,
      generation: 0,
      isolations: 0,
      reopenings: 0,
    });
    record(10, 0);
    await clock.advance(1_000);
    expect(breaker.health()).toMatchObject({ state: "open", retryInMs: 29_000, generation: 1 });
  });

  it("reports for people: rates to the thousandth, whole milliseconds, the opening in wall-clock time", async () => {
    // the virtual clock's wall time is its epoch plus its time
    const clock = createVirtualClock(0, Date.UTC(2025, 2, 1, 12, 0, 0));
    const breaker = new CircuitBreaker(
      { ...breakerSettings, minCalls: 3, failureRate: 0.6 },
      clock,
    );
    breaker.onSuccess(breaker.tryAcquire(), 5);
    breaker.onFailure(breaker.tryAcquire(), 5);
    await clock.advance(0.4);
    breaker.onSuccess(breaker.tryAcquire(), 5);
    // 1 failure in 3: 0.3333… in the decision, 0.333 in the report
    expect(breaker.health()).toMatchObject({ state: "closed", failureRate: 0.333, openedAt: null });
    breaker.onFailure(breaker.tryAcquire(), 5);
    breaker.onFailure(breaker.tryAcquire(), 5);
    expect(breaker.state.state).toBe("open");
    await clock.advance(1_234.7);
    const health = breaker.health();
    expect(health).toMatchObject({
      state: "open",
      openedAt: "2025-03-01T12:00:00.000Z",
      ageMs: 1_235,
      retryInMs: 28_766,
    });
    expect(JSON.stringify(health)).not.toMatch(/\d\.\d{4}/);
  });

  it("reads Date.now() for the wall time of a clock that has none", () => {
    let now = 5_000;
    const clock: Clock = { now: () => now, setTimer: () => undefined, clearTimer: () => undefined };
    const breaker = new CircuitBreaker({ ...breakerSettings, minCalls: 1 }, clock);
    breaker.onFailure(breaker.tryAcquire(), 5);
    now = 7_000;
    const before = Date.now();
    const openedAt = Date.parse(breaker.health().openedAt!);
    expect(openedAt).toBeGreaterThanOrEqual(before - 2_000 - 1);
    expect(openedAt).toBeLessThanOrEqual(Date.now() - 2_000 + 1);
    expect(breaker.health().ageMs).toBe(2_000);
  });
});

describe("circuit breaker: a clock that steps backwards", () => {
  it("never goes negative and keeps working", () => {
    let now = 100_000;
    const clock: Clock = { now: () => now, setTimer: () => undefined, clearTimer: () => undefined };
    const breaker = new CircuitBreaker({ ...breakerSettings, minCalls: 4 }, clock);
    breaker.onFailure(breaker.tryAcquire(), 5);
    now = 50_000;
    breaker.onFailure(breaker.tryAcquire(), -20);
    breaker.onSuccess(breaker.tryAcquire(), 5);
    now = -1e12;
    breaker.onFailure(breaker.tryAcquire(), 5);
    expect(breaker.state.state).toBe("open");
    const health = breaker.health();
    expect(health.retryInMs).toBeGreaterThanOrEqual(0);
    expect(health.retryInMs).toBeLessThanOrEqual(breakerSettings.openForMs);
    expect(health.calls).toBeGreaterThanOrEqual(0);
    now = 100_000 + breakerSettings.openForMs;
    expect(breaker.tryAcquire()).not.toBe(REJECTED);
  });
});
