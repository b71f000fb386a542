/**
 * The OpenTelemetry adapter against the real SDK: one scripted fault-injection run in virtual
 * time through a dependency with every layer, then the metrics, spans and log lines it left.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { ATTR, installOpenTelemetry, METRIC } from "../../templates/telemetry/opentelemetry.js";
import {
  createDependency,
  createVirtualClock,
  ResilienceError,
  type Dependency,
  type OperationSettings,
  type VirtualClock,
} from "../../templates/runtime/index.js";
import { after, breakerSettings, httpFailure, operation, track } from "../runtime/helpers.js";
import { createSdk, recordingLogger, type Metrics, type Sdk } from "./sdk.js";

const DEP = { [ATTR.dependency]: "payments" };
const CHARGE = { ...DEP, [ATTR.operation]: "getCharge" };
const QUOTE = { ...DEP, [ATTR.operation]: "getQuote" };
const RATES = { ...DEP, [ATTR.operation]: "getRates" };

// attempts 100 ms, calls 1 s, up to 3 attempts 10 ms apart (no jitter)
const getCharge = operation({
  timeout: { attemptMs: 100, totalMs: 1_000 },
  retry: {
    maxAttempts: 3,
    backoff: { baseMs: 10, capMs: 1_000, multiplier: 2, jitter: "none" },
    on: ["timeout", "network", 503],
    retryAfter: null,
  },
});
const getQuote = operation({
  name: "getQuote",
  timeout: { attemptMs: 100, totalMs: 1_000 },
  retry: null,
  hedge: { delayMs: 20, maxAttempts: 2, budget: 1 },
});
const getRates: OperationSettings = operation({
  name: "getRates",
  timeout: { attemptMs: 100, totalMs: 1_000 },
  retry: null,
  fallback: { kind: "value", value: [] },
});

function breakerGauge(m: Metrics): Record<string, number> {
  return Object.fromEntries(
    m
      .points(METRIC.breakerState, DEP)
      .map((p) => [String(p.attributes[ATTR.breakerState]), p.value as number]),
  );
}

describe("OpenTelemetry adapter: a fault-injection run", () => {
  let sdk: Sdk;
  let clock: VirtualClock;
  let dep: Dependency;
  const logger = recordingLogger();
  const gauge: Record<string, number>[] = [];
  let duringTrial: Metrics;
  let m: Metrics;

  beforeAll(async () => {
    sdk = createSdk();
    clock = createVirtualClock(1_000);
    dep = createDependency(
      {
        name: "payments",
        deadline: null,
        // opens at a failure rate of 50 % over at least 7 calls; one trial closes it again
        breaker: {
          failureRate: 0.5,
          slowCall: null,
          window: { kind: "count", calls: 20 },
          minCalls: 7,
          openForMs: 1_000,
          halfOpen: { maxCalls: 1, successes: 1 },
        },
        bulkhead: { maxConcurrent: 1, maxQueue: 0, queueTimeoutMs: 0, overflow: "reject" },
        // retries need more than 2 tokens; a failure costs 1, a success earns 0.5
        budget: { maxTokens: 4, tokenRatio: 0.5 },
      },
      { clock, random: () => 0.5 },
    );
    installOpenTelemetry(dep, {
      meter: sdk.meterProvider.getMeter("test"),
      tracer: sdk.tracerProvider.getTracer("test"),
      logger,
    });
    const settle = async <T>(promise: Promise<T>) => {
      const t = track(promise, clock);
      await clock.runAll();
      return t;
    };

    // 1. a success
    await settle(dep.call(getCharge, () => "ok"));
    gauge.push(breakerGauge(await sdk.collect()));
    // 2. a 503, then a success after one retry (10 ms)
    let n = 0;
    await settle(dep.call(getCharge, () => (++n === 1 ? Promise.reject(httpFailure(503)) : "ok")));
    // 3. hedged: the first copy is slow, the hedge after 20 ms wins
    await settle(
      dep.call(getQuote, (ctx) => after(clock, ctx.attempt === 1 ? 50 : 5, () => "quote")),
    );
    // 4. two 503s, then the budget refuses the second retry
    await settle(dep.call(getCharge, () => Promise.reject(httpFailure(503))));
    // 5. an attempt timeout: the breaker opens (4 failures in 7 calls), the budget refuses
    await settle(dep.call(getCharge, () => new Promise<string>(() => undefined)));
    gauge.push(breakerGauge(await sdk.collect()));
    // 6. rejected by the open breaker; 7. the same, covered by a fallback
    await settle(dep.call(getCharge, () => "ok"));
    await settle(dep.call(getRates, () => ["rate"]));
    // 8. after the open period, a trial in flight (half-open) while 9. the bulkhead turns a call away
    await clock.advance(1_000);
    const trial = track(
      dep.call(getCharge, () => after(clock, 50, () => "ok")),
      clock,
    );
    await clock.flush();
    const turnedAway = track(
      dep.call(getCharge, () => "ok"),
      clock,
    );
    await clock.flush();
    expect(turnedAway.error).toMatchObject({ kind: "bulkhead-full" });
    duringTrial = await sdk.collect();
    gauge.push(breakerGauge(duringTrial));
    await clock.advance(50);
    expect(trial.value).toBe("ok");
    gauge.push(breakerGauge(await sdk.collect()));
    // 10. no time left at all
    await settle(dep.call(getCharge, () => "ok", { deadline: 0 }));
    m = await sdk.collect();
  });

  it("the breaker state gauge goes closed, open, half-open, closed", () => {
    const only = (state: string) => ({
      closed: 0,
      open: 0,
      "half-open": 0,
      isolated: 0,
      [state]: 1,
    });
    expect(gauge).toEqual([only("closed"), only("open"), only("half-open"), only("closed")]);
  });

  it("counts breaker transitions and rejections", () => {
    const transition = (from: string, to: string) =>
      m.sum(METRIC.breakerTransitions, {
        ...DEP,
        [ATTR.breakerPreviousState]: from,
        [ATTR.breakerState]: to,
      });
    expect(transition("closed", "open")).toBe(1);
    expect(transition("open", "half-open")).toBe(1);
    expect(transition("half-open", "closed")).toBe(1);
    expect(m.sum(METRIC.breakerTransitions)).toBe(3);
    expect(m.sum(METRIC.breakerTransitions, { [ATTR.breakerTrigger]: "automatic" })).toBe(3);
    expect(m.sum(METRIC.breakerRejections, { ...CHARGE, [ATTR.breakerState]: "open" })).toBe(1);
    expect(m.sum(METRIC.breakerRejections, { ...RATES, [ATTR.breakerState]: "open" })).toBe(1);
    expect(m.sum(METRIC.breakerRejections)).toBe(2);
  });

  it("records every attempt by outcome and error type", () => {
    const attempts = (match: Record<string, string | number | boolean>) =>
      m.histogram(METRIC.attemptDuration, match).count;
    expect(attempts({ ...CHARGE, [ATTR.outcome]: "success" })).toBe(3);
    expect(
      attempts({
        ...CHARGE,
        [ATTR.outcome]: "failure",
        [ATTR.errorType]: "http",
        [ATTR.statusCode]: 503,
      }),
    ).toBe(3);
    expect(
      attempts({
        ...CHARGE,
        [ATTR.outcome]: "timeout",
        [ATTR.errorType]: "timeout",
        [ATTR.timeoutTier]: "attempt",
      }),
    ).toBe(1);
    expect(attempts({ ...QUOTE, [ATTR.outcome]: "success", [ATTR.hedge]: true })).toBe(1);
    expect(
      attempts({
        ...QUOTE,
        [ATTR.outcome]: "cancelled",
        [ATTR.hedge]: false,
        [ATTR.errorType]: "aborted",
      }),
    ).toBe(1);
    expect(attempts({})).toBe(9);
    // the verdict each attempt counted as: a retried 503 is transient, a lost hedge is ignored
    expect(attempts({ ...CHARGE, [ATTR.verdict]: "success" })).toBe(3);
    expect(attempts({ ...CHARGE, [ATTR.statusCode]: 503, [ATTR.verdict]: "transient" })).toBe(3);
    expect(attempts({ ...QUOTE, [ATTR.outcome]: "cancelled", [ATTR.verdict]: "ignore" })).toBe(1);
    // virtual time: the timed-out attempt took exactly its 100 ms
    expect(
      m.histogram(METRIC.attemptDuration, { ...CHARGE, [ATTR.outcome]: "timeout" }).sum,
    ).toBeCloseTo(0.1, 9);
  });

  it("records every logical call by outcome", () => {
    const calls = (match: Record<string, string>) => m.histogram(METRIC.callDuration, match).count;
    expect(calls({ ...CHARGE, [ATTR.outcome]: "success" })).toBe(3);
    expect(
      calls({ ...CHARGE, [ATTR.outcome]: "failure", [ATTR.errorType]: "budget-exhausted" }),
    ).toBe(2);
    expect(calls({ ...CHARGE, [ATTR.outcome]: "failure", [ATTR.errorType]: "circuit-open" })).toBe(
      1,
    );
    expect(calls({ ...CHARGE, [ATTR.outcome]: "failure", [ATTR.errorType]: "bulkhead-full" })).toBe(
      1,
    );
    expect(calls({ ...CHARGE, [ATTR.outcome]: "failure", [ATTR.errorType]: "deadline" })).toBe(1);
    expect(calls({ ...QUOTE, [ATTR.outcome]: "success" })).toBe(1);
    expect(calls({ ...RATES, [ATTR.outcome]: "fallback", [ATTR.errorType]: "circuit-open" })).toBe(
      1,
    );
    expect(calls({})).toBe(10);
  });

  it("records retries, retry delay and hedges per call, only for calls that had them", () => {
    expect(m.histogram(METRIC.callRetries, CHARGE)).toEqual({ count: 2, sum: 2 });
    expect(m.histogram(METRIC.callRetryDelay, CHARGE).count).toBe(2);
    expect(m.histogram(METRIC.callRetryDelay, CHARGE).sum).toBeCloseTo(0.02, 9);
    expect(m.histogram(METRIC.callHedges, QUOTE)).toEqual({ count: 1, sum: 1 });
    expect(m.histogram(METRIC.callHedges, CHARGE).count).toBe(0);
  });

  it("counts budget exhaustion, bulkhead rejections, deadlines and fallbacks", () => {
    expect(m.sum(METRIC.budgetExhausted, CHARGE)).toBe(2);
    expect(m.sum(METRIC.bulkheadRejections, { ...CHARGE, [ATTR.bulkheadReason]: "full" })).toBe(1);
    expect(m.sum(METRIC.deadlineExceeded, { ...CHARGE, [ATTR.deadlineStage]: "before-call" })).toBe(
      1,
    );
    expect(m.sum(METRIC.deadlineExceeded)).toBe(1);
    expect(
      m.sum(METRIC.fallbacks, {
        ...RATES,
        [ATTR.fallbackKind]: "value",
        [ATTR.errorType]: "circuit-open",
      }),
    ).toBe(1);
  });

  it("records the time left at call start, zero for the call that had none", () => {
    const remaining = m.histogram(METRIC.deadlineRemaining);
    expect(remaining.count).toBe(10);
    expect(m.histogram(METRIC.deadlineRemaining, CHARGE).sum).toBeCloseTo(7 * 1, 9);
  });

  it("observes bulkhead occupancy and budget tokens from health()", () => {
    expect(duringTrial.sum(METRIC.bulkheadInFlight, DEP)).toBe(1);
    expect(m.sum(METRIC.bulkheadInFlight, DEP)).toBe(0);
    expect(m.sum(METRIC.bulkheadQueued, DEP)).toBe(0);
    expect(m.sum(METRIC.bulkheadLimit, DEP)).toBe(1);
    // 4 − 1 + 0.5 (call 2), +0.5 (hedge), −2 (call 4), −1 (call 5), +0.5 (trial)
    expect(m.sum(METRIC.budgetTokens, DEP)).toBe(1.5);
    expect(dep.health().budget?.tokens).toBe(1.5);
  });

  it("gives every logical call a span and every attempt a child span", () => {
    const spans = sdk.spans.getFinishedSpans();
    const calls = spans.filter((s) => !s.name.endsWith(" attempt"));
    const attempts = spans.filter((s) => s.name.endsWith(" attempt"));
    expect(calls).toHaveLength(10);
    expect(attempts).toHaveLength(9);
    const byId = new Map(calls.map((s) => [s.spanContext().spanId, s]));
    for (const attempt of attempts)
      expect(byId.has(attempt.parentSpanContext?.spanId ?? "")).toBe(true);

    // call 2: two attempts, the second 10 ms of backoff after the first
    const retried = calls.find(
      (s) => s.attributes[ATTR.retries] === 1 && s.attributes[ATTR.outcome] === "success",
    )!;
    const children = attempts.filter(
      (s) => s.parentSpanContext?.spanId === retried.spanContext().spanId,
    );
    expect(
      children.map((s) => [
        s.attributes[ATTR.attempt],
        s.attributes[ATTR.attemptDelay],
        s.attributes[ATTR.outcome],
        s.status.code,
      ]),
    ).toEqual([
      [1, 0, "failure", 2],
      [2, 0.01, "success", 0],
    ]);
    expect(retried.events.map((e) => e.name)).toEqual(["retry"]);
    expect(retried.attributes[ATTR.attempts]).toBe(2);

    // a call the breaker refused has no attempt and an error status naming the kind
    const refused = calls.find(
      (s) =>
        s.attributes[ATTR.errorType] === "circuit-open" &&
        s.attributes[ATTR.operation] === "getCharge",
    )!;
    expect(refused.status).toMatchObject({ code: 2, message: "circuit-open" });
    expect(refused.attributes[ATTR.attempts]).toBe(0);

    // the hedged call: one hedge event, the winning copy marked as a hedge
    const hedged = calls.find((s) => s.attributes[ATTR.operation] === "getQuote")!;
    expect(hedged.events.map((e) => e.name)).toEqual(["hedge"]);
    expect(hedged.attributes[ATTR.hedges]).toBe(1);
  });

  it("keeps attributes bounded: names, outcomes, kinds and states only", () => {
    const allowed = new Set<string>(Object.values(ATTR));
    for (const name of m.names) {
      for (const point of m.points(name))
        for (const key of Object.keys(point.attributes))
          expect(allowed.has(key), `${name}: ${key}`).toBe(true);
    }
  });

  it("logs breaker transitions and the retry budget running out once per episode", () => {
    expect(
      logger.lines.map((l) => [l.level, l.fields.event, l.fields.to ?? l.fields.tokens]),
    ).toEqual([
      ["warn", "resilience.retry_budget.exhausted", 2],
      ["warn", "resilience.breaker.transition", "open"],
      ["info", "resilience.breaker.transition", "half-open"],
      ["info", "resilience.breaker.transition", "closed"],
    ]);
    expect(logger.lines[1]).toMatchObject({
      message: "payments: circuit breaker closed -> open",
      fields: { dependency: "payments", from: "closed", calls: 7, failures: 4 },
    });
  });
});

describe("installOpenTelemetry", () => {
  it("counts manual transitions apart, and the gauge shows isolation", async () => {
    const sdk = createSdk();
    const dep = createDependency(
      { name: "payments", deadline: null, breaker: breakerSettings, bulkhead: null, budget: null },
      { clock: createVirtualClock() },
    );
    installOpenTelemetry(dep, {
      meter: sdk.meterProvider.getMeter("t"),
      tracer: sdk.tracerProvider.getTracer("t"),
      logger: recordingLogger(),
    });
    const handle = dep.breakerControl!.isolate();
    expect(breakerGauge(await sdk.collect())).toMatchObject({ isolated: 1, closed: 0 });
    handle.dispose();
    const m = await sdk.collect();
    const manual = (from: string, to: string) =>
      m.sum(METRIC.breakerTransitions, {
        ...DEP,
        [ATTR.breakerPreviousState]: from,
        [ATTR.breakerState]: to,
        [ATTR.breakerTrigger]: "manual",
      });
    expect(manual("closed", "isolated")).toBe(1);
    expect(manual("isolated", "closed")).toBe(1);
    expect(m.sum(METRIC.breakerTransitions, { [ATTR.breakerTrigger]: "automatic" })).toBe(0);
  });

  it("stops recording once uninstalled", async () => {
    const sdk = createSdk();
    const dep = createDependency(
      { name: "payments", deadline: null, breaker: null, bulkhead: null, budget: null },
      { clock: createVirtualClock() },
    );
    const stop = installOpenTelemetry(dep, {
      meter: sdk.meterProvider.getMeter("t"),
      tracer: sdk.tracerProvider.getTracer("t"),
      logger: recordingLogger(),
    });
    await dep.call(getCharge, () => "ok");
    stop();
    await dep.call(getCharge, () => "ok");
    expect((await sdk.collect()).histogram(METRIC.callDuration).count).toBe(1);
    expect(sdk.spans.getFinishedSpans()).toHaveLength(2);
  });

  it("shares instruments between dependencies on one meter, told apart by resilience.dependency", async () => {
    const sdk = createSdk();
    const options = {
      meter: sdk.meterProvider.getMeter("t"),
      tracer: sdk.tracerProvider.getTracer("t"),
      logger: recordingLogger(),
    };
    const settings = { deadline: null, breaker: breakerSettings, bulkhead: null, budget: null };
    const a = createDependency({ name: "payments", ...settings }, { clock: createVirtualClock() });
    const b = createDependency({ name: "inventory", ...settings }, { clock: createVirtualClock() });
    installOpenTelemetry(a, options);
    installOpenTelemetry(b, options);
    await a.call(getCharge, () => "ok");
    await b.call(getCharge, () => "ok");
    await b.call(getCharge, () => "ok");
    const m = await sdk.collect();
    expect(m.histogram(METRIC.callDuration, { [ATTR.dependency]: "payments" }).count).toBe(1);
    expect(m.histogram(METRIC.callDuration, { [ATTR.dependency]: "inventory" }).count).toBe(2);
    expect(
      m
        .points(METRIC.breakerState, { [ATTR.breakerState]: "closed" })
        .map((p) => [p.attributes[ATTR.dependency], p.value])
        .sort(),
    ).toEqual([
      ["inventory", 1],
      ["payments", 1],
    ]);
  });

  it("without a meter or tracer uses the global API, which records nothing until a provider is registered", async () => {
    const dep = createDependency(
      { name: "payments", deadline: null, breaker: null, bulkhead: null, budget: null },
      { clock: createVirtualClock() },
    );
    const stop = installOpenTelemetry(dep, { logger: recordingLogger() });
    await expect(dep.call(getCharge, () => "ok")).resolves.toBe("ok");
    stop();
  });
});

describe("OpenTelemetry adapter: the rate limit", () => {
  it("counts rejections by reason, records waits and pauses, and observes free permits", async () => {
    const sdk = createSdk();
    const clock = createVirtualClock(1_000);
    const dep = createDependency(
      {
        name: "payments",
        deadline: null,
        breaker: null,
        bulkhead: null,
        budget: null,
        rateLimit: { rate: 10, periodMs: 1_000, burst: 2, maxWaitMs: 100, maxPauseMs: 5_000 },
      },
      { clock },
    );
    installOpenTelemetry(dep, {
      meter: sdk.meterProvider.getMeter("test"),
      tracer: sdk.tracerProvider.getTracer("test"),
      logger: recordingLogger(),
    });
    const once = operation({ retry: null, timeout: { attemptMs: 100, totalMs: 1_000 } });
    const settle = async <T>(promise: Promise<T>) => {
      const t = track(promise, clock);
      await clock.runAll();
      return t;
    };
    // two at once (the burst), a third waits 100 ms, a fourth would wait 200 ms: rejected
    const calls = [0, 1, 2, 3].map(() =>
      track(
        dep.call(once, () => "ok"),
        clock,
      ),
    );
    await clock.runAll();
    expect(calls.map((c) => c.error === undefined)).toEqual([true, true, true, false]);
    const throttled = new ResilienceError({
      kind: "http",
      message: "429",
      status: 429,
      retryAfterMs: 2_000,
    });
    await clock.advance(1_000);
    await settle(dep.call(once, () => Promise.reject(throttled)));
    const paused = await settle(dep.call(once, () => "ok"));
    expect(paused.error).toMatchObject({ kind: "rate-limited" });
    const m = await sdk.collect();
    const reason = (r: string) => ({ ...CHARGE, [ATTR.rateLimitReason]: r });
    expect(m.sum(METRIC.rateLimitRejections, reason("rate"))).toBe(1);
    expect(m.sum(METRIC.rateLimitRejections, reason("paused"))).toBe(1);
    expect(m.histogram(METRIC.rateLimitWait, CHARGE)).toMatchObject({ count: 1 });
    expect(m.histogram(METRIC.rateLimitWait, CHARGE).sum).toBeCloseTo(0.1, 9);
    expect(m.sum(METRIC.rateLimitPauses, { ...DEP, [ATTR.rateLimitSource]: "retry-after" })).toBe(
      1,
    );
    expect(m.sum(METRIC.rateLimitAvailable, DEP)).toBe(dep.health().rateLimit?.available);
  });
});

describe("OpenTelemetry adapter: several endpoints", () => {
  it("labels attempts, breaker transitions and each endpoint's breaker state by endpoint", async () => {
    const sdk = createSdk();
    const clock = createVirtualClock(1_000);
    const A = "http://a.internal";
    const B = "http://b.internal";
    const dep = createDependency(
      { name: "payments", deadline: null, breaker: breakerSettings, bulkhead: null, budget: null },
      { clock, random: () => 0.5, endpoints: [A, B] },
    );
    installOpenTelemetry(dep, {
      meter: sdk.meterProvider.getMeter("test"),
      tracer: sdk.tracerProvider.getTracer("test"),
      logger: recordingLogger(),
    });
    const once = operation({ retry: null, timeout: { attemptMs: 100, totalMs: 1_000 } });
    // B fails every call until its breaker opens; A answers
    for (let i = 0; i < 40; i++)
      await dep
        .call(once, (ctx) => {
          if (ctx.endpoint === B) throw httpFailure(503);
          return "ok";
        })
        .catch(() => undefined);
    const m = await sdk.collect();
    const at = (endpoint: string) => ({ ...CHARGE, [ATTR.endpoint]: endpoint });
    const attemptsOf = (endpoint: string) =>
      m.histogram(METRIC.attemptDuration, at(endpoint)).count;
    expect(attemptsOf(A) + attemptsOf(B)).toBe(40);
    expect(attemptsOf(B)).toBe(10);
    expect(
      m.sum(METRIC.breakerTransitions, { ...DEP, [ATTR.endpoint]: B, [ATTR.breakerState]: "open" }),
    ).toBe(1);
    expect(m.sum(METRIC.breakerTransitions, { ...DEP, [ATTR.endpoint]: A })).toBe(0);
    const state = (endpoint: string) =>
      m
        .points(METRIC.breakerState, { ...DEP, [ATTR.endpoint]: endpoint })
        .filter((p) => p.value === 1)
        .map((p) => p.attributes[ATTR.breakerState]);
    expect(state(A)).toEqual(["closed"]);
    expect(state(B)).toEqual(["open"]);
    // no label values beyond the endpoints the client was given
    const labels = new Set(
      m.points(METRIC.attemptDuration, DEP).map((p) => p.attributes[ATTR.endpoint]),
    );
    expect([...labels].sort()).toEqual([A, B]);
  });
});

describe("OpenTelemetry adapter: an adaptive bulkhead", () => {
  it("counts limit changes by direction and observes the current limit", async () => {
    const sdk = createSdk();
    const clock = createVirtualClock(1_000);
    const dep = createDependency(
      {
        name: "payments",
        deadline: null,
        breaker: null,
        bulkhead: {
          maxConcurrent: 4,
          maxQueue: 0,
          queueTimeoutMs: 0,
          overflow: "reject",
          adaptive: { minLimit: 1, maxLimit: 16, smoothing: 1, tolerance: 1, windowMs: 1 },
        },
        budget: null,
      },
      { clock },
    );
    installOpenTelemetry(dep, {
      meter: sdk.meterProvider.getMeter("test"),
      tracer: sdk.tracerProvider.getTracer("test"),
      logger: recordingLogger(),
    });
    const once = operation({ retry: null, timeout: { attemptMs: 1_000, totalMs: 5_000 } });
    // rounds of 4 calls at once: 10 ms each (a window every 10 calls), then 200 ms
    const round = async (ms: number) => {
      const limit = dep.health().bulkhead?.maxConcurrent ?? 0;
      for (let i = 0; i < limit; i++) {
        track(
          dep.call(once, () => new Promise((r) => clock.setTimer(() => r("ok"), ms))),
          clock,
        );
      }
      await clock.advance(ms);
    };
    for (let i = 0; i < 3; i++) await round(10);
    const raised = dep.health().bulkhead?.maxConcurrent ?? 0;
    expect(raised).toBeGreaterThan(4);
    for (let i = 0; i < 3; i++) await round(200);
    const m = await sdk.collect();
    const direction = (d: string) => ({ ...DEP, [ATTR.bulkheadDirection]: d });
    expect(m.sum(METRIC.bulkheadLimitChanges, direction("up"))).toBeGreaterThanOrEqual(1);
    expect(m.sum(METRIC.bulkheadLimitChanges, direction("down"))).toBeGreaterThanOrEqual(1);
    expect(dep.health().bulkhead?.maxConcurrent).toBeLessThan(raised);
    expect(m.sum(METRIC.bulkheadLimit, DEP)).toBe(dep.health().bulkhead?.maxConcurrent);
  });
});
