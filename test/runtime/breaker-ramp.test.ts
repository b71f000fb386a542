import { describe, expect, it } from "vitest";
import {
  CircuitBreaker,
  createVirtualClock,
  REJECTED,
  type BreakerSettings,
} from "../../templates/runtime/index.js";
import { breakerSettings, harness, operation } from "./helpers.js";

// docs/runtime.md, "Circuit breaker": after a half-open breaker closes, `rampUpMs` admits a share
// of calls rising linearly (from 10 %) over the window; the rest are rejected as circuit-open.

async function recovered(overrides: Partial<BreakerSettings> = {}) {
  const clock = createVirtualClock();
  const transitions: string[] = [];
  const breaker = new CircuitBreaker(
    {
      ...breakerSettings,
      minCalls: 2,
      halfOpen: { maxCalls: 1, successes: 1 },
      rampUpMs: 10_000,
      ...overrides,
    },
    clock,
    (from, to) => transitions.push(`${from}->${to}`),
  );
  breaker.onFailure(breaker.tryAcquire(), 1);
  breaker.onFailure(breaker.tryAcquire(), 1);
  expect(breaker.state.state).toBe("open");
  await clock.advance(breakerSettings.openForMs);
  breaker.onSuccess(breaker.tryAcquire(), 1);
  expect(breaker.state.state).toBe("closed");
  return { clock, breaker, transitions };
}

/** Calls admitted out of `n` asked for at the current time (each admitted one succeeds at once). */
function admitted(breaker: CircuitBreaker, n: number): number {
  let count = 0;
  for (let i = 0; i < n; i++) {
    const permit = breaker.tryAcquire();
    if (permit === REJECTED) continue;
    count++;
    breaker.onSuccess(permit, 1);
  }
  return count;
}

describe("circuit breaker: slow start after recovery (rampUpMs)", () => {
  it("admits a share rising linearly over the window, deterministically, then everything", async () => {
    const { clock, breaker, transitions } = await recovered();
    expect(breaker.state).toMatchObject({ state: "closed", rampingSince: clock.now() });
    // at the start: the floor (the first call is admitted)
    expect(breaker.rampFraction()).toBe(0.1);
    expect(admitted(breaker, 100)).toBe(10);
    await clock.advance(2_500);
    expect(breaker.rampFraction()).toBe(0.25);
    expect(admitted(breaker, 100)).toBe(25);
    await clock.advance(2_500);
    expect(admitted(breaker, 100)).toBe(50);
    expect(breaker.health().rampUp).toEqual({ admitted: 0.5 });
    await clock.advance(5_000);
    expect(breaker.rampFraction()).toBeNull();
    expect(admitted(breaker, 100)).toBe(100);
    expect(breaker.state).toEqual({ state: "closed" });
    expect(breaker.health().rampUp).toBeUndefined();
    // the ramp is no state of its own: one transition in, none out
    expect(transitions).toEqual(["closed->open", "open->half-open", "half-open->closed"]);
  });

  it("a failure rate reached while ramping opens it again and ends the ramp", async () => {
    const { breaker } = await recovered();
    // outcomes of admitted calls count as in any closed breaker
    for (let failed = 0; failed < 2;) {
      const permit = breaker.tryAcquire();
      if (permit !== REJECTED) {
        breaker.onFailure(permit, 1);
        failed++;
      }
    }
    expect(breaker.state.state).toBe("open");
    expect(breaker.rampFraction()).toBeNull();
  });

  it("reset() ends the ramp; without rampUpMs the breaker closes at full traffic", async () => {
    const { breaker } = await recovered();
    breaker.reset();
    expect(admitted(breaker, 10)).toBe(10);
    const plain = (await recovered({ rampUpMs: undefined })).breaker;
    expect(plain.state).toEqual({ state: "closed" });
    expect(admitted(plain, 10)).toBe(10);
  });

  it("rejects the excess as circuit-open, saying why, with the admitted share on the event", async () => {
    const { clock, dep, events } = harness({
      breaker: {
        ...breakerSettings,
        minCalls: 2,
        halfOpen: { maxCalls: 1, successes: 1 },
        rampUpMs: 30_000,
      },
    });
    const op = operation({ retry: null });
    for (let i = 0; i < 2; i++) {
      await dep
        .call(op, () => Promise.reject(Object.assign(new Error("down"), { code: "ECONNRESET" })))
        .catch(() => undefined);
    }
    expect(dep.breaker?.state.state).toBe("open");
    await clock.advance(breakerSettings.openForMs);
    await dep.call(op, () => Promise.resolve(1));
    expect(dep.breaker?.state.state).toBe("closed");
    await dep.call(op, () => Promise.resolve(1)); // the first call after closing is admitted
    await clock.advance(15_000);
    const results = await Promise.all(
      Array.from({ length: 4 }, () =>
        dep.call(op, () => Promise.resolve(1)).catch((e: unknown) => e),
      ),
    );
    const rejected = results.filter((r) => r !== 1);
    expect(rejected).toHaveLength(2);
    expect(rejected[0]).toMatchObject({ kind: "circuit-open", attempts: 0 });
    expect((rejected[0] as Error).message).toBe(
      "payments.getCharge: circuit open (ramping up after recovery, 50 % admitted)",
    );
    expect(events.filter((e) => e.type === "breaker-rejected")).toContainEqual(
      expect.objectContaining({ state: "closed", admitted: 0.5 }),
    );
  });
});
