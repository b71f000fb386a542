import { runInNewContext } from "node:vm";
import { setFlagsFromString } from "node:v8";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  CircuitBreaker,
  createDependency,
  createVirtualClock,
  isResilienceError,
  ResilienceError,
  type AttemptContext,
  type Clock,
  type FallbackSettings,
  type ResilienceEvent,
  type TimerHandle,
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

const failing = (): Promise<never> => Promise.reject(httpFailure(503));

async function tripBreaker(h: ReturnType<typeof harness>): Promise<void> {
  const op = operation({ retry: null });
  for (let i = 0; i < breakerSettings.minCalls; i++) {
    await h.dep.call(op, failing).catch(() => undefined);
  }
  expect(h.dep.breaker?.state.state).toBe("open");
}

describe("I1: the deadline bounds every call", () => {
  it("starts no attempt after the deadline and settles by deadline + 5 ms when the transport never answers", async () => {
    const h = harness({
      deadline: { propagate: true, marginMs: 10, header: "x-request-timeout-ms", format: "ms" },
    });
    const starts: number[] = [];
    const op = operation({
      timeout: { attemptMs: 300, totalMs: 1_000 },
      retry: {
        maxAttempts: 10,
        backoff: { baseMs: 20, capMs: 20, multiplier: 1, jitter: "none" },
        on: ["timeout"],
        retryAfter: null,
      },
    });
    const deadline = h.clock.now() + 1_000;
    const result = track(
      h.dep.call(op, () => {
        starts.push(h.clock.now());
        return never<string>();
      }),
      h.clock,
    );
    await h.clock.advance(5_000);
    expect(result.settled).toBe(true);
    expect(result.at).toBeLessThanOrEqual(deadline + 5);
    expect(starts.length).toBeGreaterThan(1);
    for (const start of starts) expect(start).toBeLessThan(deadline);
    expect(isResilienceError(result.error)).toBe(true);
  });

  it("never sleeps a backoff that would end past the deadline", async () => {
    const h = harness();
    const starts: number[] = [];
    const op = operation({
      timeout: { attemptMs: 250, totalMs: 1_000 },
      retry: {
        maxAttempts: 10,
        backoff: { baseMs: 300, capMs: 5_000, multiplier: 2, jitter: "none" },
        on: [503],
        retryAfter: null,
      },
    });
    const deadline = h.clock.now() + 1_000;
    const result = track(
      h.dep.call(op, () => {
        starts.push(h.clock.now());
        return Promise.reject(httpFailure(503));
      }),
      h.clock,
    );
    await h.clock.advance(5_000);
    expect(starts.map((t) => t - starts[0]!)).toEqual([0, 300, 900]);
    expect(result.at).toBeLessThanOrEqual(deadline + 5);
    expect(result.error).toMatchObject({ kind: "http", status: 503, attempts: 3 });
  });

  it("fails at once, without an attempt, when no time is left past the margin", async () => {
    const h = harness({ deadline: { propagate: false, marginMs: 10, header: "x", format: "ms" } });
    let attempts = 0;
    const error = await h.dep
      .call(operation(), () => ++attempts, { deadline: 10 })
      .catch((e: unknown) => e);
    expect(attempts).toBe(0);
    expect(isResilienceError(error, "deadline")).toBe(true);
  });
});

describe("I2: an open breaker sheds load", () => {
  it("lets zero attempts reach the transport and settles without sleeping", async () => {
    const h = harness({ breaker: breakerSettings });
    await tripBreaker(h);
    let reached = 0;
    const results = Array.from({ length: 50 }, () =>
      track(
        h.dep.call(operation(), () => {
          reached++;
          return "ok";
        }),
        h.clock,
      ),
    );
    await h.clock.flush();
    expect(reached).toBe(0);
    expect(h.clock.pendingTimers).toBe(0);
    for (const r of results) {
      expect(r.settled).toBe(true);
      expect(isResilienceError(r.error, "circuit-open")).toBe(true);
    }
  });
});

describe("I3: half-open admits at most halfOpen.maxCalls trials", () => {
  it("admits 3 of 1,000 concurrent calls and rejects the rest at once", async () => {
    const h = harness({ breaker: breakerSettings });
    await tripBreaker(h);
    await h.clock.advance(breakerSettings.openForMs);
    let inFlight = 0;
    let maxInFlight = 0;
    const results = Array.from({ length: 1_000 }, () =>
      track(
        h.dep.call(operation({ retry: null }), () => {
          maxInFlight = Math.max(maxInFlight, ++inFlight);
          return after(h.clock, 100, () => {
            inFlight--;
            return "ok";
          });
        }),
        h.clock,
      ),
    );
    await h.clock.flush();
    const rejected = results.filter((r) => r.settled && isResilienceError(r.error, "circuit-open"));
    expect(rejected).toHaveLength(1_000 - breakerSettings.halfOpen.maxCalls);
    expect(maxInFlight).toBe(breakerSettings.halfOpen.maxCalls);
    await h.clock.advance(100);
    expect(h.dep.breaker?.state.state).toBe("closed");
  });
});

describe("I4: the bulkhead bounds concurrency and the queue", () => {
  it("keeps at most 30 of 1,000 concurrent calls in flight and rejects the rest at once", async () => {
    const h = harness({
      bulkhead: { maxConcurrent: 30, maxQueue: 0, queueTimeoutMs: 0, overflow: "reject" },
    });
    let inFlight = 0;
    let maxInFlight = 0;
    const results = Array.from({ length: 1_000 }, () =>
      track(
        h.dep.call(operation({ retry: null }), () => {
          maxInFlight = Math.max(maxInFlight, ++inFlight);
          return after(h.clock, 50, () => {
            inFlight--;
            return "ok";
          });
        }),
        h.clock,
      ),
    );
    await h.clock.flush();
    expect(
      results.filter((r) => r.settled && isResilienceError(r.error, "bulkhead-full")),
    ).toHaveLength(970);
    expect(maxInFlight).toBe(30);
    await h.clock.advance(50);
    expect(results.filter((r) => r.value === "ok")).toHaveLength(30);
    expect(h.dep.bulkhead?.inFlight).toBe(0);
  });

  it("never holds more than maxQueue waiters, however many calls arrive", async () => {
    const h = harness({
      bulkhead: { maxConcurrent: 2, maxQueue: 3, queueTimeoutMs: 1_000, overflow: "reject" },
    });
    let maxQueued = 0;
    let maxInFlight = 0;
    let inFlight = 0;
    h.dep.subscribe((e) => {
      if (e.type === "bulkhead-queued") maxQueued = Math.max(maxQueued, e.queued);
    });
    const results = Array.from({ length: 40 }, () =>
      track(
        h.dep.call(
          operation({ retry: null, timeout: { attemptMs: null, totalMs: 10_000 } }),
          () => {
            maxInFlight = Math.max(maxInFlight, ++inFlight);
            return after(h.clock, 10, () => {
              inFlight--;
              return "ok";
            });
          },
        ),
        h.clock,
      ),
    );
    await h.clock.flush();
    expect(h.dep.bulkhead?.queued).toBe(3);
    await h.clock.advance(100);
    expect(maxQueued).toBe(3);
    expect(maxInFlight).toBe(2);
    expect(results.filter((r) => r.value === "ok")).toHaveLength(5);
  });
});

describe("I5: the retry budget bounds amplification in a total outage", () => {
  it("makes at most N + maxTokens/2 + 1 attempts for N calls", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 120 }),
        fc.integer({ min: 2, max: 60 }),
        fc.integer({ min: 1, max: 6 }),
        async (calls, maxTokens, maxAttempts) => {
          const clock = createVirtualClock();
          const dep = createDependency(
            {
              name: "d",
              deadline: null,
              breaker: null,
              bulkhead: null,
              budget: { maxTokens, tokenRatio: 0.1 },
            },
            { clock },
          );
          const op = operation({
            timeout: { attemptMs: null, totalMs: null },
            retry: {
              maxAttempts,
              backoff: { baseMs: 0, capMs: 0, multiplier: 2, jitter: "none" },
              on: [503],
              retryAfter: null,
            },
          });
          let attempts = 0;
          for (let i = 0; i < calls; i++) {
            await dep
              .call(op, () => {
                attempts++;
                return failing();
              })
              .catch(() => undefined);
          }
          expect(attempts).toBeLessThanOrEqual(calls + maxTokens / 2 + 1);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe("I6: a non-idempotent operation without a key is attempted exactly once", () => {
  it("is never retried", async () => {
    const h = harness();
    let attempts = 0;
    const op = operation({ repeatable: false, idempotencyKey: null });
    await expect(
      h.dep.call(op, () => {
        attempts++;
        return failing();
      }),
    ).rejects.toMatchObject({ kind: "http", status: 503 });
    expect(attempts).toBe(1);
  });

  it("is never hedged", async () => {
    const h = harness();
    let attempts = 0;
    const op = operation({
      repeatable: false,
      retry: null,
      hedge: { delayMs: 10, maxAttempts: 3, budget: 1 },
    });
    const result = track(
      h.dep.call(op, () => {
        attempts++;
        return after(h.clock, 100, () => "ok");
      }),
      h.clock,
    );
    await h.clock.advance(200);
    expect(result.value).toBe("ok");
    expect(attempts).toBe(1);
  });
});

describe("I7: one idempotency key per logical call", () => {
  it("sends the same key on every retry and hedge, and a new one per call", async () => {
    const h = harness();
    const seen: string[] = [];
    // distinct fallbacks: a missing key or header cannot pass for a matching pair
    const record = (ctx: AttemptContext): void => {
      const header = ctx.headers()["Idempotency-Key"] ?? "(no header)";
      seen.push(`${ctx.idempotencyKey ?? "(no key)"}|${header}`);
    };
    const retried = operation({ repeatable: false, idempotencyKey: { header: "Idempotency-Key" } });
    let n = 0;
    const first = track(
      h.dep.call(retried, (ctx) => {
        record(ctx);
        return ++n < 3 ? failing() : "ok";
      }),
      h.clock,
    );
    await h.clock.advance(1_000);
    expect(first.value).toBe("ok");
    expect(seen).toHaveLength(3);
    expect(new Set(seen).size).toBe(1);
    const key = seen[0]!.split("|")[0]!;
    expect(seen[0]).toBe(`${key}|${key}`);

    seen.length = 0;
    const hedged = operation({
      idempotencyKey: { header: "Idempotency-Key" },
      retry: null,
      hedge: { delayMs: 20, maxAttempts: 3, budget: 1 },
    });
    const second = track(
      h.dep.call(hedged, (ctx) => {
        record(ctx);
        return after(h.clock, 100, () => "ok");
      }),
      h.clock,
    );
    await h.clock.advance(200);
    expect(second.value).toBe("ok");
    expect(seen).toHaveLength(3);
    expect(new Set(seen).size).toBe(1);
    expect(seen[0]!.startsWith(key)).toBe(false);
  });
});

describe("I8: outcomes from an earlier breaker episode are ignored", () => {
  it("does not let a late outcome change the current episode", async () => {
    const clock = createVirtualClock();
    const breaker = new CircuitBreaker(
      { ...breakerSettings, minCalls: 2, halfOpen: { maxCalls: 2, successes: 1 } },
      clock,
    );
    const stale = breaker.tryAcquire();
    breaker.onFailure(breaker.tryAcquire(), 1);
    breaker.onFailure(breaker.tryAcquire(), 1);
    expect(breaker.state.state).toBe("open");
    await clock.advance(breakerSettings.openForMs);
    const trial = breaker.tryAcquire();
    expect(breaker.state).toEqual({ state: "half-open", inFlight: 1, successes: 0 });
    breaker.onSuccess(stale, 1);
    expect(breaker.state).toEqual({ state: "half-open", inFlight: 1, successes: 0 });
    breaker.onFailure(stale, 1);
    expect(breaker.state.state).toBe("half-open");
    breaker.onSuccess(trial, 1);
    expect(breaker.state.state).toBe("closed");
    breaker.onFailure(stale, 1);
    breaker.onFailure(trial, 1);
    expect(breaker.health().calls).toBe(0);
  });
});

describe("I9: breaker memory is O(buckets)", () => {
  it("does not grow with the call rate", () => {
    setFlagsFromString("--expose_gc");
    const gc = runInNewContext("gc") as () => void;
    let now = 0;
    const clock = { now: () => now, setTimer: () => undefined, clearTimer: () => undefined };
    const breaker = new CircuitBreaker({ ...breakerSettings, minCalls: 1_000_000_000 }, clock);
    gc();
    const before = process.memoryUsage();
    for (let i = 0; i < 300_000; i++) {
      now = i / 30;
      const permit = breaker.tryAcquire();
      if (i % 3 === 0) breaker.onFailure(permit, 1);
      else breaker.onSuccess(permit, 1);
    }
    gc();
    const afterUse = process.memoryUsage();
    const grown =
      afterUse.heapUsed + afterUse.arrayBuffers - (before.heapUsed + before.arrayBuffers);
    expect(grown).toBeLessThan(1_000_000);
    const health = breaker.health();
    expect(health.calls).toBe(300_000);
    expect(health.failures).toBe(100_000);
  });
});

describe("I10: every layer reports, and a throwing observer breaks nothing", () => {
  it("emits every event type while an observer throws on each one", async () => {
    const clock = createVirtualClock();
    const types = new Set<ResilienceEvent["type"]>();
    const dep = createDependency(
      {
        name: "payments",
        deadline: { propagate: true, marginMs: 5, header: "x-request-timeout-ms", format: "ms" },
        breaker: { ...breakerSettings, minCalls: 4 },
        bulkhead: { maxConcurrent: 1, maxQueue: 1, queueTimeoutMs: 100, overflow: "reject" },
        budget: { maxTokens: 4, tokenRatio: 0.1 },
      },
      {
        clock,
        random: () => 0.5,
        observer: (e) => {
          types.add(e.type);
          throw new Error("observer bug");
        },
      },
    );
    const fallbackOp = operation({ retry: null, fallback: { kind: "value", value: "cached" } });
    // hedge-launched, attempt-start/end
    const hedged = track(
      dep.call(operation({ retry: null, hedge: { delayMs: 10, maxAttempts: 2, budget: 1 } }), () =>
        after(clock, 30, () => "ok"),
      ),
      clock,
    );
    // bulkhead-queued and bulkhead-rejected
    const queued = track(
      dep.call(operation({ retry: null }), () => "ok"),
      clock,
    );
    const rejected = track(
      dep.call(fallbackOp, () => "ok"),
      clock,
    );
    await clock.advance(100);
    expect(hedged.value).toBe("ok");
    expect(queued.value).toBe("ok");
    expect(rejected.value).toMatchObject({
      degraded: true,
      reason: "bulkhead-full",
      data: "cached",
    });
    // retry-scheduled, then budget-exhausted
    const retried = track(
      dep.call(operation(), () => failing()),
      clock,
    );
    await clock.advance(1_000);
    expect(retried.error).toMatchObject({ kind: "budget-exhausted" });
    // breaker-transition and breaker-rejected
    await dep.call(operation({ retry: null }), failing).catch(() => undefined);
    await dep.call(operation({ retry: null }), failing).catch(() => undefined);
    await expect(dep.call(operation(), () => "ok")).rejects.toMatchObject({ kind: "circuit-open" });
    // deadline-exceeded
    await expect(dep.call(operation(), () => "ok", { deadline: 1 })).rejects.toMatchObject({
      kind: "deadline",
    });
    expect([...types].sort()).toEqual(
      [
        "attempt-end",
        "attempt-start",
        "breaker-rejected",
        "breaker-transition",
        "budget-exhausted",
        "bulkhead-queued",
        "call-end",
        "call-start",
        "bulkhead-rejected",
        "deadline-exceeded",
        "fallback-served",
        "hedge-launched",
        "retry-scheduled",
      ].sort(),
    );
  });
});

describe("I11: every call settles once and gives back everything it took", () => {
  const outcome = fc.oneof(
    fc.record({ kind: fc.constant("ok" as const), ms: fc.integer({ min: 0, max: 400 }) }),
    fc.record({
      kind: fc.constant("fail" as const),
      ms: fc.integer({ min: 0, max: 400 }),
      status: fc.constantFrom(404, 500, 503),
    }),
    fc.record({ kind: fc.constant("hang" as const) }),
    fc.record({ kind: fc.constant("throw" as const) }),
  );
  const call = fc.record({
    startMs: fc.integer({ min: 0, max: 2_000 }),
    outcomes: fc.array(outcome, { minLength: 1, maxLength: 4 }),
    abortMs: fc.option(fc.integer({ min: 0, max: 1_500 }), { nil: undefined }),
    repeatable: fc.boolean(),
    hedge: fc.boolean(),
    fallback: fc.boolean(),
  });
  const layers = fc.record({
    maxConcurrent: fc.integer({ min: 1, max: 3 }),
    maxQueue: fc.integer({ min: 0, max: 3 }),
    minCalls: fc.integer({ min: 1, max: 4 }),
    trials: fc.integer({ min: 1, max: 2 }),
    maxAttempts: fc.integer({ min: 1, max: 3 }),
  });

  it("leaves no bulkhead slot, trial permit or timer behind, and starts no attempt after settling", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(call, { minLength: 1, maxLength: 12 }),
        layers,
        async (calls, l) => {
          const clock = createVirtualClock();
          // the runtime's own timers (the transports below use the clock directly)
          const live = new Set<TimerHandle>();
          const runtimeClock: Clock = {
            now: () => clock.now(),
            setTimer: (callback, delayMs) => {
              const handle: TimerHandle = clock.setTimer(() => {
                live.delete(handle);
                callback();
              }, delayMs);
              live.add(handle);
              return handle;
            },
            clearTimer: (handle) => {
              live.delete(handle);
              clock.clearTimer(handle);
            },
          };
          const dep = createDependency(
            {
              name: "d",
              deadline: {
                propagate: true,
                marginMs: 5,
                header: "x-request-timeout-ms",
                format: "ms",
              },
              breaker: {
                ...breakerSettings,
                minCalls: l.minCalls,
                openForMs: 300,
                halfOpen: { maxCalls: l.trials, successes: 1 },
              },
              bulkhead: {
                maxConcurrent: l.maxConcurrent,
                maxQueue: l.maxQueue,
                queueTimeoutMs: 200,
                overflow: "reject",
              },
              budget: { maxTokens: 10, tokenRatio: 0.5 },
            },
            { clock: runtimeClock, random: () => 0.5 },
          );
          const settled = calls.map(() => 0);
          const attempts = calls.map(() => 0);
          let late = 0;
          calls.forEach((c, i) => {
            clock.setTimer(() => {
              const controller = c.abortMs === undefined ? undefined : new AbortController();
              if (controller !== undefined) clock.setTimer(() => controller.abort(), c.abortMs!);
              const op = operation<FallbackSettings | null>({
                repeatable: c.repeatable,
                timeout: { attemptMs: 250, totalMs: 1_000 },
                retry: {
                  maxAttempts: l.maxAttempts,
                  backoff: { baseMs: 20, capMs: 100, multiplier: 2, jitter: "none" },
                  on: ["timeout", "network", 500, 503],
                  retryAfter: null,
                },
                hedge: c.hedge ? { delayMs: 50, maxAttempts: 2, budget: 1 } : null,
                fallback: c.fallback ? { kind: "value", value: "fallback" } : null,
              });
              dep
                .call(
                  op,
                  () => {
                    if (settled[i]! > 0) late++;
                    const o = c.outcomes[Math.min(attempts[i]!++, c.outcomes.length - 1)]!;
                    switch (o.kind) {
                      case "ok":
                        return after(clock, o.ms, () => "ok");
                      case "fail":
                        return after(clock, o.ms, () => {
                          throw httpFailure(o.status, o.status >= 500);
                        });
                      case "hang":
                        return never<string>();
                      case "throw":
                        throw new Error("transport bug");
                    }
                  },
                  controller === undefined ? {} : { signal: controller.signal },
                )
                .then(
                  () => settled[i]!++,
                  () => settled[i]!++,
                );
            }, c.startMs);
          });
          // step until every call has settled: from then on the runtime holds no timer at all
          for (let t = 0; t < 10_000 && settled.some((n) => n === 0); t += 5)
            await clock.advance(5);
          expect(settled).toEqual(calls.map(() => 1));
          expect(live.size).toBe(0);
          await clock.advance(10_000);
          expect(settled).toEqual(calls.map(() => 1));
          expect(late).toBe(0);
          for (const [i, c] of calls.entries()) {
            // hedged copies count as attempts too; never more than the retry or hedge plan allows
            expect(attempts[i]).toBeLessThanOrEqual(
              c.repeatable ? Math.max(l.maxAttempts, c.hedge ? 2 : 1) : 1,
            );
          }
          expect(dep.bulkhead?.health()).toMatchObject({ inFlight: 0, queued: 0 });
          expect(dep.breaker?.health().trialsInFlight).toBe(0);
          expect(clock.pendingTimers).toBe(0);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("errors carry what happened", () => {
  it("throws the last HTTP failure, with status, headers and body, when attempts run out", async () => {
    const h = harness();
    let n = 0;
    const result = track(
      h.dep.call(operation({ retry: { ...operation().retry!, maxAttempts: 3 } }), () =>
        Promise.reject(httpFailure(501 + ++n, true, { "x-n": String(n) }, `body ${n}`)),
      ),
      h.clock,
    );
    await h.clock.advance(1_000);
    expect(n).toBe(3);
    expect(result.error).toBeInstanceOf(ResilienceError);
    expect(result.error).toMatchObject({
      kind: "http",
      status: 504,
      headers: { "x-n": "3" },
      body: "body 3",
      attempts: 3,
    });
  });
});
