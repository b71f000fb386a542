/**
 * Live reconfiguration (docs/runtime.md, "Reconfiguration"), in virtual time: a change applies
 * to the calls that start after it while calls in flight keep their settings; a bad change is
 * refused whole with every problem, and the stack behaves as before it.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  createDependency,
  createVirtualClock,
  isBulkheadFullError,
  isCircuitOpenError,
  overridesVariable,
  ReconfigurationError,
  type ResilienceEvent,
} from "../../templates/runtime/index.js";
import { planOperation } from "../../src/model/plan.js";
import type { ResolvedRetry } from "../../src/model/resolved.js";
import { operationWorstCaseMs } from "../../templates/runtime/reconfigure.js";
import {
  breakerSettings,
  dependencySettings,
  httpFailure,
  never,
  operation,
  track,
} from "./helpers.js";

const bulkhead = { maxConcurrent: 1, maxQueue: 0, queueTimeoutMs: 0, overflow: "reject" } as const;

function stack(overrides: Parameters<typeof dependencySettings>[0] = {}) {
  const clock = createVirtualClock(1_000);
  const events: ResilienceEvent[] = [];
  const dep = createDependency(dependencySettings(overrides), {
    clock,
    random: () => 0.5,
    observer: (e) => events.push(e),
  });
  return { clock, dep, events };
}

describe("reconfigure: atomic for calls that start after it", () => {
  it("gives a call in flight its old timeout and a call after the change the new one", async () => {
    const { clock, dep } = stack();
    const ops = dep.operations({ getCharge: operation({ retry: null }) });
    const timeouts: number[] = [];
    const before = track(
      dep.call(ops.getCharge, (ctx) => (timeouts.push(ctx.timeoutMs), never())),
      clock,
    );
    await clock.flush();
    const result = dep.reconfigure({ operations: { getCharge: { timeout: { attemptMs: 100 } } } });
    expect(result).toEqual({
      applied: true,
      changed: ["operations.getCharge.timeout.attemptMs"],
    });
    const afterChange = track(
      dep.call(ops.getCharge, (ctx) => (timeouts.push(ctx.timeoutMs), never())),
      clock,
    );
    await clock.advance(100);
    expect(afterChange).toMatchObject({ settled: true, at: 1_100 });
    expect(before.settled).toBe(false);
    await clock.advance(150);
    expect(before).toMatchObject({ settled: true, at: 1_250 });
    expect(timeouts).toEqual([250, 100]);
  });

  it("keeps a retrying call's attempts and backoff while a new call gets the changed ones", async () => {
    const { clock, dep } = stack();
    const ops = dep.operations({ getCharge: operation() });
    const starts: Record<string, number[]> = { old: [], new: [] };
    const failing = (label: string) => () => {
      starts[label]!.push(clock.now());
      return Promise.reject(httpFailure(503));
    };
    const old = track(dep.call(ops.getCharge, failing("old")), clock);
    await clock.flush();
    dep.reconfigure({
      operations: { getCharge: { retry: { maxAttempts: 2, backoff: { baseMs: 10 } } } },
    });
    const changed = track(dep.call(ops.getCharge, failing("new")), clock);
    await clock.runAll();
    // 3 attempts 50 and 100 ms apart, against 2 attempts 10 ms apart
    expect(starts).toEqual({ old: [1_000, 1_050, 1_150], new: [1_000, 1_010] });
    expect(old.error).toMatchObject({ status: 503 });
    expect(changed.error).toMatchObject({ status: 503 });
  });

  it("opens the breaker by the new thresholds and keeps it open for the new duration", async () => {
    const { clock, dep } = stack({ breaker: breakerSettings });
    const ops = dep.operations({ getCharge: operation({ retry: null }) });
    dep.reconfigure({ breaker: { minCalls: 2, openForMs: 1_000 } });
    for (let i = 0; i < 2; i++)
      await dep.call(ops.getCharge, () => Promise.reject(httpFailure(503))).catch(() => undefined);
    expect(dep.health().breaker?.state).toBe("open");
    await expect(dep.call(ops.getCharge, () => "ok")).rejects.toSatisfy(isCircuitOpenError);
    await clock.advance(1_000);
    await expect(dep.call(ops.getCharge, () => "ok")).resolves.toBe("ok");
  });

  it("admits more calls at once after the bulkhead grows, without cutting those that hold a permit", async () => {
    const { clock, dep } = stack({ bulkhead });
    const ops = dep.operations({ getCharge: operation({ retry: null }) });
    const held = track(
      dep.call(ops.getCharge, () => never()),
      clock,
    );
    await expect(dep.call(ops.getCharge, () => "ok")).rejects.toSatisfy(isBulkheadFullError);
    dep.reconfigure({ bulkhead: { maxConcurrent: 2 } });
    await expect(dep.call(ops.getCharge, () => "ok")).resolves.toBe("ok");
    expect(dep.health().bulkhead).toMatchObject({ inFlight: 1, maxConcurrent: 2 });
    dep.reconfigure({ bulkhead: { maxConcurrent: 1 } });
    await expect(dep.call(ops.getCharge, () => "ok")).rejects.toSatisfy(isBulkheadFullError);
    expect(held.settled).toBe(false);
  });

  it("lets a larger burst through a rate limit at once", async () => {
    const rateLimit = { rate: 1, periodMs: 1_000, burst: 1, maxWaitMs: 0, maxPauseMs: 0 };
    const { dep } = stack({ rateLimit });
    const ops = dep.operations({ getCharge: operation({ retry: null }) });
    dep.reconfigure({ rateLimit: { burst: 3 } });
    for (let i = 0; i < 3; i++) await expect(dep.call(ops.getCharge, () => i)).resolves.toBe(i);
    expect(dep.health().rateLimit).toMatchObject({ available: 0, burst: 3 });
  });
});

describe("reconfigure: refusals", () => {
  it("lists every problem, applies nothing and leaves the stack as it was", async () => {
    const { clock, dep } = stack({ breaker: breakerSettings, bulkhead });
    const ops = dep.operations({ getCharge: operation({ retry: null }) });
    const before = dep.settings();
    const result = dep.reconfigure({
      operations: { getCharge: { timeout: { attemptMs: 0, totalMs: "2s" } }, missing: {} },
      breaker: { failureRate: 0, window: { calls: 5 } },
      bulkhead: { maxConcurrent: 2.5, maxQueue: 3 },
      chaos: {},
    });
    expect(result.applied).toBe(false);
    expect(result.applied ? [] : result.problems).toEqual([
      "chaos: this client was created without the chaos option, and only the code that creates a client turns chaos on",
      "operations.getCharge.timeout.attemptMs (timeout.attempt): must be 1ms to 3600000ms, got 0ms",
      'operations.getCharge.timeout.totalMs (timeout.total): must be a finite number, got "2s"',
      "operations.missing: no such operation (operations: getCharge)",
      "breaker.failureRate (breaker.failureRate): must be more than 0 and at most 1, got 0",
      expect.stringMatching(/^breaker\.window: not reconfigurable/),
      "bulkhead.maxConcurrent (bulkhead.maxConcurrent): must be a whole number, got 2.5",
    ]);
    expect(dep.settings()).toEqual(before);
    expect(ops.getCharge).toBe(before.operations["getCharge"]);
    expect(dep.health().bulkhead).toMatchObject({ maxConcurrent: 1, maxQueue: 0 });
    // the valid maxQueue: 3 was not applied either: a second call is still turned away at once
    const timeouts: number[] = [];
    track(
      dep.call(ops.getCharge, (ctx) => (timeouts.push(ctx.timeoutMs), never())),
      clock,
    );
    await expect(dep.call(ops.getCharge, () => "ok")).rejects.toSatisfy(isBulkheadFullError);
    expect(timeouts).toEqual([250]);
  });

  it("never throws, whatever it is given", () => {
    const { dep } = stack();
    dep.operations({ getCharge: operation() });
    const hostile = Object.defineProperty({}, "breaker", {
      enumerable: true,
      get() {
        throw new Error("boom");
      },
    });
    for (const change of [null, 42, "x", [], hostile, { operations: [] }])
      expect(dep.reconfigure(change)).toMatchObject({ applied: false });
  });

  it("refuses a section the dependency does not have", () => {
    const { dep } = stack();
    expect(dep.reconfigure({ bulkhead: { maxConcurrent: 5 } })).toEqual({
      applied: false,
      problems: ["bulkhead: the dependency has no bulkhead to change"],
    });
  });

  it("refuses an attempt timeout that is not below the total (RG205)", () => {
    const { dep } = stack();
    dep.operations({ getCharge: operation() });
    const result = dep.reconfigure({
      operations: { getCharge: { timeout: { attemptMs: 1_000 } } },
    });
    expect(result).toEqual({
      applied: false,
      problems: [
        "operations.getCharge.timeout: attempt timeout 1000ms (timeout.attempt) must be below the total 1000ms (timeout.total): one slow attempt would use the whole deadline, so the other 2 attempts could never run",
      ],
    });
  });

  it("refuses a worst case over the total (RG207), yet takes a change that shortens an overrun", () => {
    const { dep } = stack();
    // 3 × 250ms + 50ms + 100ms = 900ms
    dep.operations({
      getCharge: operation(),
      over: operation({ name: "over", timeout: { attemptMs: 250, totalMs: 880 } }),
    });
    expect(dep.reconfigure({ operations: { getCharge: { retry: { maxAttempts: 4 } } } })).toEqual({
      applied: false,
      problems: [
        "operations.getCharge: worst case 1350ms (every attempt at its timeout, every backoff at its cap) exceeds the total timeout 1000ms (timeout.total)",
      ],
    });
    const shorter = { operations: { over: { retry: { backoff: { baseMs: 40 } } } } };
    expect(dep.reconfigure(shorter)).toMatchObject({ applied: true });
    const longer = { operations: { over: { retry: { backoff: { baseMs: 60 } } } } };
    expect(dep.reconfigure(longer)).toMatchObject({ applied: false });
  });

  it("refuses a backoff base above its cap (RG106)", () => {
    const { dep } = stack();
    dep.operations({ getCharge: operation() });
    const result = dep.reconfigure({
      operations: { getCharge: { retry: { backoff: { baseMs: 2_000 } } } },
    });
    expect(result.applied ? [] : result.problems).toEqual([
      "operations.getCharge.retry.backoff: baseMs 2000ms (retry.backoff.base) must be at most capMs 1000ms (retry.backoff.cap)",
    ]);
  });

  it("computes the worst case of every plan as the compiler does", () => {
    const retry = operation().retry!;
    for (const repeatable of [true, false])
      for (const maxAttempts of [1, 2, 5])
        for (const jitter of ["full", "decorrelated"] as const)
          for (const hedged of [false, true]) {
            const backoff = { ...retry.backoff, baseMs: 70, capMs: 300, multiplier: 3, jitter };
            const settings = operation({
              repeatable,
              retry: { ...retry, maxAttempts, backoff },
              hedge: hedged ? { delayMs: 40, maxAttempts: 3, budget: 0.1 } : null,
            });
            const resolved = {
              maxAttempts,
              backoff,
              on: [],
              errors: [],
              retryAfter: undefined,
            } as unknown as ResolvedRetry;
            const plan = planOperation(
              {
                repeatable,
                idempotency: "method",
                retry: resolved,
                hedge: settings.hedge,
                budget: null,
              },
              { attemptMs: 250, totalMs: 10_000 },
            );
            expect(operationWorstCaseMs(settings)).toBe(plan.worstCase.ms);
          }
  });
});

describe("overrides at creation", () => {
  const variable = overridesVariable("payments");
  afterEach(() => {
    Reflect.deleteProperty(process.env, variable);
  });

  it("names the variable after the dependency", () => {
    expect(variable).toBe("RESGEN_OVERRIDES_PAYMENTS");
    expect(overridesVariable("payments-eu.v2")).toBe("RESGEN_OVERRIDES_PAYMENTS_EU_V2");
  });

  it("applies a JSON document, then the environment variable over it", () => {
    process.env[variable] = JSON.stringify({
      operations: { getCharge: { timeout: { totalMs: 2_000 } } },
    });
    const { dep, events } = stack({ bulkhead });
    const ops = dep.operations(
      { getCharge: operation() },
      '{ "operations": { "getCharge": { "timeout": { "attemptMs": 300, "totalMs": 1500 } } }, "bulkhead": { "maxQueue": 4 } }',
    );
    expect(ops.getCharge.timeout).toMatchObject({ attemptMs: 300, totalMs: 2_000 });
    expect(dep.health().bulkhead).toMatchObject({ maxQueue: 4 });
    expect(events.map((e) => e.type === "reconfigured" && [e.source, e.changed])).toEqual([
      [
        "overrides",
        [
          "operations.getCharge.timeout.attemptMs",
          "operations.getCharge.timeout.totalMs",
          "bulkhead.maxQueue",
        ],
      ],
      ["overrides", ["operations.getCharge.timeout.totalMs"]],
    ]);
  });

  it("throws at creation with every problem of a document it refuses", () => {
    const create = () =>
      stack().dep.operations(
        { getCharge: operation() },
        { operations: { getCharge: { timeout: { attemptMs: -1 }, retry: { maxAttempts: 0 } } } },
      );
    expect(create).toThrow(ReconfigurationError);
    expect(create).toThrow(
      [
        "the overrides option refused:",
        "  - operations.getCharge.timeout.attemptMs (timeout.attempt): must be 1ms to 3600000ms, got -1ms",
        "  - operations.getCharge.retry.maxAttempts (retry.maxAttempts): must be 1 to 100, got 0",
      ].join("\n"),
    );
  });

  it("throws at creation on an environment variable that is not JSON", () => {
    process.env[variable] = "{ timeout: 1 }";
    const { dep } = stack();
    expect(() => dep.operations({ getCharge: operation() })).toThrow(
      /^RESGEN_OVERRIDES_PAYMENTS refused:\n {2}- not JSON: /,
    );
  });

  it("works where there is no process (workerd)", () => {
    const saved = globalThis.process;
    // @ts-expect-error -- removed for this test, as on workerd
    delete globalThis.process;
    try {
      const { dep } = stack();
      expect(dep.operations({ getCharge: operation() }).getCharge.timeout.attemptMs).toBe(250);
    } finally {
      globalThis.process = saved;
    }
  });
});

describe("reconfiguration events", () => {
  it("reports each change and each refusal", () => {
    const { dep, events } = stack({ breaker: breakerSettings });
    dep.operations({ getCharge: operation() });
    dep.reconfigure({ breaker: { failureRate: 0.25, minCalls: breakerSettings.minCalls } });
    dep.reconfigure({ breaker: { minCalls: 0 } });
    expect(events).toEqual([
      {
        type: "reconfigured",
        dependency: "payments",
        operation: "",
        source: "reconfigure",
        changed: ["breaker.failureRate"],
      },
      {
        type: "reconfigure-refused",
        dependency: "payments",
        operation: "",
        source: "reconfigure",
        problems: ["breaker.minCalls (breaker.minCalls): must be 1 to 100000, got 0"],
      },
    ]);
  });
});

describe("reconfigure: several endpoints", () => {
  it("gives every endpoint's breaker the new thresholds", async () => {
    const clock = createVirtualClock(1_000);
    const dep = createDependency(dependencySettings({ breaker: breakerSettings }), {
      clock,
      random: () => 0.5,
      endpoints: ["https://a.internal", "https://b.internal"],
    });
    const ops = dep.operations({ getCharge: operation({ retry: null }) });
    expect(dep.reconfigure({ breaker: { minCalls: 1 } })).toMatchObject({ applied: true });
    for (let i = 0; i < 2; i++)
      await dep.call(ops.getCharge, () => Promise.reject(httpFailure(503))).catch(() => undefined);
    // one failure each opens both breakers: with minCalls 20 none would have opened
    expect(dep.health().endpoints?.map((e) => e.breaker?.state)).toEqual(["open", "open"]);
  });
});
