/** logEvents: structured log lines for breaker transitions and retry-budget exhaustion, without OpenTelemetry. */
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  consoleLogger,
  createDependency,
  createVirtualClock,
  logEvents,
  silentLogger,
} from "../../templates/runtime/index.js";
import { breakerSettings, httpFailure, operation, track } from "../runtime/helpers.js";
import { recordingLogger } from "./sdk.js";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("logEvents", () => {
  it("names the endpoint whose own breaker changed, for a dependency with several", async () => {
    const logger = recordingLogger();
    const dep = createDependency(
      {
        name: "payments",
        deadline: null,
        breaker: { ...breakerSettings, minCalls: 2 },
        bulkhead: null,
        budget: null,
      },
      {
        clock: createVirtualClock(),
        random: () => 0,
        observer: logEvents(logger),
        endpoints: ["http://a.internal", "http://b.internal"],
      },
    );
    const once = operation({ retry: null });
    // every call fails: each endpoint's breaker opens after its own two failures
    for (let i = 0; i < 6; i++)
      await dep.call(once, () => Promise.reject(httpFailure(503))).catch(() => undefined);
    expect(logger.lines.map((l) => [l.level, l.message, l.fields["endpoint"]])).toEqual([
      [
        "warn",
        "payments: circuit breaker (endpoint http://a.internal) closed -> open",
        "http://a.internal",
      ],
      [
        "warn",
        "payments: circuit breaker (endpoint http://b.internal) closed -> open",
        "http://b.internal",
      ],
    ]);
  });

  it("logs an opening as a warning with the window that tripped it, and the way back as info", async () => {
    const clock = createVirtualClock();
    const logger = recordingLogger();
    const dep = createDependency(
      {
        name: "payments",
        deadline: null,
        breaker: {
          ...breakerSettings,
          minCalls: 2,
          openForMs: 100,
          halfOpen: { maxCalls: 1, successes: 1 },
        },
        bulkhead: null,
        budget: null,
      },
      { clock, observer: logEvents(logger) },
    );
    const once = operation({ retry: null });
    for (let i = 0; i < 2; i++)
      await dep.call(once, () => Promise.reject(httpFailure(503))).catch(() => undefined);
    await clock.advance(100);
    await dep.call(once, () => "ok");
    expect(logger.lines).toEqual([
      {
        level: "warn",
        message: "payments: circuit breaker closed -> open",
        fields: {
          event: "resilience.breaker.transition",
          dependency: "payments",
          from: "closed",
          to: "open",
          calls: 2,
          failures: 2,
          slowCalls: 0,
        },
      },
      expect.objectContaining({
        level: "info",
        fields: expect.objectContaining({ from: "open", to: "half-open" }) as unknown,
      }),
      expect.objectContaining({
        level: "info",
        fields: expect.objectContaining({ from: "half-open", to: "closed" }) as unknown,
      }),
    ]);
  });

  it("logs budget exhaustion once until a retry is allowed again", async () => {
    const clock = createVirtualClock();
    const logger = recordingLogger();
    const dep = createDependency(
      {
        name: "payments",
        deadline: null,
        breaker: null,
        bulkhead: null,
        budget: { maxTokens: 4, tokenRatio: 1 },
      },
      { clock, random: () => 0.5, observer: logEvents(logger) },
    );
    const run = async (transport: () => unknown) => {
      const t = track(dep.call(operation(), transport), clock);
      await clock.runAll();
      return t;
    };
    // tokens 4 → 3 (retry) → 2: refused; then 1: refused again, not logged again
    expect((await run(() => Promise.reject(httpFailure(503)))).error).toMatchObject({
      kind: "budget-exhausted",
    });
    expect((await run(() => Promise.reject(httpFailure(503)))).error).toMatchObject({
      kind: "budget-exhausted",
    });
    expect(logger.lines.map((l) => l.fields.event)).toEqual(["resilience.retry_budget.exhausted"]);
    // successes refill the bucket; a retry goes through, so the next exhaustion is a new episode
    for (let i = 0; i < 3; i++) await run(() => "ok");
    await run(() => Promise.reject(httpFailure(503)));
    expect(logger.lines.map((l) => [l.fields.event, l.fields.tokens])).toEqual([
      ["resilience.retry_budget.exhausted", 2],
      ["resilience.retry_budget.exhausted", 2],
    ]);
  });

  it("consoleLogger writes one JSON object per line; silentLogger writes nothing", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const info = vi.spyOn(console, "info").mockImplementation(() => undefined);
    consoleLogger.warn("payments: circuit breaker closed -> open", {
      event: "resilience.breaker.transition",
      calls: 20,
    });
    silentLogger.warn("dropped", {});
    silentLogger.info("dropped", {});
    expect(warn.mock.calls).toEqual([
      [
        '{"level":"warn","msg":"payments: circuit breaker closed -> open","event":"resilience.breaker.transition","calls":20}',
      ],
    ]);
    expect(info).not.toHaveBeenCalled();
  });

  it("logs a classify hook that throws once per operation, with the verdict kept", async () => {
    const clock = createVirtualClock();
    const logger = recordingLogger();
    const dep = createDependency(
      { name: "payments", deadline: null, breaker: null, bulkhead: null, budget: null },
      {
        clock,
        observer: logEvents(logger),
        classify: () => {
          throw new Error("hook bug");
        },
      },
    );
    for (let i = 0; i < 3; i++) await dep.call(operation({ retry: null }), () => "ok");
    expect(logger.lines).toEqual([
      {
        level: "warn",
        message: "payments.getCharge: the classify hook threw (hook bug); built-in verdicts apply",
        fields: {
          event: "resilience.classify.failed",
          dependency: "payments",
          operation: "getCharge",
          verdict: "success",
        },
      },
    ]);
  });
});
