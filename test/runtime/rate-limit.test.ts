// The client-side rate limit (docs/runtime.md, "Rate limit"), in virtual time.
import { describe, expect, it } from "vitest";
import {
  exhaustedResetMs,
  isRateLimitedError,
  isResilienceError,
  RateLimiter,
  ResilienceError,
  sendHttp,
  type RateLimitSettings,
  type ResilienceEvent,
} from "../../templates/runtime/index.js";
import { after, breakerSettings, harness, httpFailure, operation, track } from "./helpers.js";

const limit = (overrides: Partial<RateLimitSettings> = {}): RateLimitSettings => ({
  rate: 10,
  periodMs: 1_000,
  burst: 1,
  maxWaitMs: 0,
  maxPauseMs: 60_000,
  ...overrides,
});
const once = operation({ retry: null, timeout: { attemptMs: 250, totalMs: 1_000 } });
const ok = (): string => "ok";
const of = <T extends ResilienceEvent["type"]>(events: ResilienceEvent[], type: T) =>
  events.filter((e): e is Extract<ResilienceEvent, { type: T }> => e.type === type);

describe("rate limit: steady rate and bursts", () => {
  it("lets one call through per interval and rejects the one in between without sending it", async () => {
    const h = harness({ rateLimit: limit() });
    let sent = 0;
    const send = () => {
      sent++;
      return "ok";
    };
    expect(await h.dep.call(once, send)).toBe("ok");
    await h.clock.advance(50);
    const early = await h.dep.call(once, send).catch((e: unknown) => e);
    expect(isRateLimitedError(early)).toBe(true);
    expect(early).toMatchObject({ attempts: 0, retryAfterMs: 50, transient: false });
    await h.clock.advance(50);
    expect(await h.dep.call(once, send)).toBe("ok");
    expect(sent).toBe(2);
  });

  it("allows `burst` calls at once after a quiet spell, then the steady rate", async () => {
    const h = harness({ rateLimit: limit({ burst: 5 }) });
    const results = await Promise.allSettled(Array.from({ length: 6 }, () => h.dep.call(once, ok)));
    expect(results.map((r) => r.status)).toEqual([
      ...Array<string>(5).fill("fulfilled"),
      "rejected",
    ]);
    expect(h.dep.health().rateLimit?.available).toBe(0);
    await h.clock.advance(100);
    expect(h.dep.health().rateLimit?.available).toBe(1);
    await h.clock.advance(10_000);
    // a long quiet spell refills to the burst, never beyond
    expect(h.dep.health().rateLimit).toMatchObject({ available: 5, perSecond: 10, burst: 5 });
  });

  it("reads rates per minute as evenly spaced permits", () => {
    const limiter = new RateLimiter(limit({ rate: 6_000, periodMs: 60_000 }));
    expect(limiter.intervalMs).toBe(10);
  });
});

describe("rate limit: waiting", () => {
  it("waits for the next permit within maxWait and then sends", async () => {
    const h = harness({ rateLimit: limit({ maxWaitMs: 200 }) });
    const starts: number[] = [];
    const send = () => {
      starts.push(h.clock.now());
      return "ok";
    };
    const a = track(h.dep.call(once, send), h.clock);
    const b = track(h.dep.call(once, send), h.clock);
    const c = track(h.dep.call(once, send), h.clock);
    await h.clock.advance(200);
    expect([a.value, b.value, c.value]).toEqual(["ok", "ok", "ok"]);
    expect(starts).toEqual([1_000, 1_100, 1_200]);
    expect(of(h.events, "rate-limit-waited").map((e) => e.waitMs)).toEqual([100, 200]);
  });

  it("never waits past the call's deadline: rejects at once instead", async () => {
    const h = harness({ rateLimit: limit({ maxWaitMs: 500 }) });
    await h.dep.call(once, ok);
    const short = operation({ retry: null, timeout: { attemptMs: 50, totalMs: 80 } });
    const rejected = track(h.dep.call(short, ok), h.clock);
    await h.clock.advance(0);
    expect(rejected.at).toBe(1_000);
    expect(isRateLimitedError(rejected.error)).toBe(true);
    expect((rejected.error as Error).message).toContain("past the call's deadline");
    // nothing was taken: the next call at 100 ms finds its permit
    await h.clock.advance(100);
    expect(await h.dep.call(once, ok)).toBe("ok");
  });

  it("gives the permit back when the caller aborts the wait", async () => {
    const h = harness({ rateLimit: limit({ maxWaitMs: 500 }) });
    await h.dep.call(once, ok);
    const controller = new AbortController();
    const waiting = track(h.dep.call(once, ok, { signal: controller.signal }), h.clock);
    await h.clock.advance(10);
    controller.abort();
    await h.clock.advance(0);
    expect(isResilienceError(waiting.error, "aborted")).toBe(true);
    await h.clock.advance(90);
    // the aborted call's permit (at 200 ms) was returned: this one goes at once at 100 ms
    expect(h.dep.health().rateLimit?.available).toBe(1);
  });
});

describe("rate limit: in the stack", () => {
  it("is never a breaker failure", async () => {
    const h = harness({
      rateLimit: limit(),
      breaker: { ...breakerSettings, minCalls: 1, failureRate: 0.01 },
    });
    await h.dep.call(once, ok);
    for (let i = 0; i < 5; i++) await h.dep.call(once, ok).catch(() => undefined);
    const breaker = h.dep.health().breaker;
    expect(breaker?.state).toBe("closed");
    expect(breaker).toMatchObject({ calls: 1, failures: 0 });
  });

  it("takes a permit for every retry, overlapping the backoff", async () => {
    const h = harness({ rateLimit: limit({ maxWaitMs: 1_000 }) });
    const starts: number[] = [];
    const op = operation({ timeout: { attemptMs: 250, totalMs: 5_000 } });
    const failing = track(
      h.dep.call(op, () => {
        starts.push(h.clock.now());
        throw httpFailure(503);
      }),
      h.clock,
    );
    await h.clock.runAll();
    expect(isResilienceError(failing.error, "http")).toBe(true);
    // backoff 50 ms, then 100 ms; permits every 100 ms: the second retry needs none extra
    expect(starts).toEqual([1_000, 1_100, 1_200]);
    expect(of(h.events, "retry-scheduled").map((e) => e.delayMs)).toEqual([100, 100]);
  });

  it("ends the call as rate-limited, not retried, when a retry would wait past maxWait", async () => {
    const h = harness({ rateLimit: limit({ maxWaitMs: 10 }) });
    let sent = 0;
    const result = track(
      h.dep.call(operation(), () => {
        sent++;
        throw httpFailure(503);
      }),
      h.clock,
    );
    await h.clock.runAll();
    expect(sent).toBe(1);
    expect(isRateLimitedError(result.error)).toBe(true);
    expect((result.error as ResilienceError).cause).toMatchObject({ kind: "http", status: 503 });
  });

  it("uses an operation's own limit instead of the dependency's, and none with `false`", async () => {
    const h = harness({ rateLimit: limit() });
    const own = operation({ name: "search", retry: null, rateLimit: limit({ burst: 3 }) });
    const free = operation({ name: "health", retry: null, rateLimit: false });
    await h.dep.call(once, ok);
    expect(
      await Promise.all([h.dep.call(own, ok), h.dep.call(own, ok), h.dep.call(own, ok)]),
    ).toEqual(["ok", "ok", "ok"]);
    for (let i = 0; i < 10; i++) expect(await h.dep.call(free, ok)).toBe("ok");
    expect(isRateLimitedError(await h.dep.call(once, ok).catch((e: unknown) => e))).toBe(true);
  });

  it("launches no hedge without a free permit", async () => {
    const h = harness({ rateLimit: limit({ burst: 1 }) });
    const hedged = operation({
      retry: null,
      hedge: { delayMs: 20, maxAttempts: 2, budget: 1 },
      timeout: { attemptMs: 250, totalMs: 1_000 },
    });
    const call = track(
      h.dep.call(hedged, () => after(h.clock, 60, ok)),
      h.clock,
    );
    await h.clock.advance(60);
    expect(call.value).toBe("ok");
    expect(of(h.events, "hedge-launched")).toHaveLength(0);
  });
});

describe("rate limit: the server's signals", () => {
  it("pauses until a 429's Retry-After, then issues again", async () => {
    const h = harness({ rateLimit: limit({ burst: 10 }) });
    const throttled = httpFailure(429, false, { "retry-after": "2" });
    const withWait = new ResilienceError({
      kind: "http",
      message: "429",
      status: 429,
      headers: throttled.headers,
      retryAfterMs: 2_000,
    });
    await h.dep.call(once, () => Promise.reject(withWait)).catch(() => undefined);
    expect(of(h.events, "rate-limit-paused")).toMatchObject([
      { pauseMs: 2_000, source: "retry-after" },
    ]);
    const paused = await h.dep.call(once, ok).catch((e: unknown) => e);
    expect(isRateLimitedError(paused)).toBe(true);
    expect(of(h.events, "rate-limit-rejected")).toMatchObject([{ reason: "paused" }]);
    await h.clock.advance(2_000);
    expect(await h.dep.call(once, ok)).toBe("ok");
  });

  it("cuts a server's pause to maxPause", () => {
    const limiter = new RateLimiter(limit({ maxPauseMs: 5_000 }));
    limiter.pause(0, 120_000, "retry-after");
    expect(limiter.delayAt(0)).toBe(5_000);
    const deaf = new RateLimiter(limit({ maxPauseMs: 0 }));
    deaf.pause(0, 120_000, "retry-after");
    expect(deaf.delayAt(0)).toBe(0);
  });

  it("reads the RateLimit header fields of a successful response through sendHttp", async () => {
    const h = harness({ rateLimit: limit({ burst: 10 }) });
    const reply = (headers: Record<string, string>) =>
      (() => Promise.resolve(new Response("{}", { status: 200, headers }))) as typeof fetch;
    const get = (fetch: typeof globalThis.fetch) =>
      h.dep.call(once, (ctx) =>
        sendHttp({ fetch, baseUrl: "https://api.example/", method: "GET", path: "/x" }, ctx),
      );
    await get(
      reply({ "ratelimit-policy": '"default";q=100;w=60', ratelimit: '"default";r=0;t=3' }),
    );
    expect(h.dep.health().rateLimit).toMatchObject({
      pausedForMs: 3_000,
      serverPolicy: '"default";q=100;w=60',
    });
    await h.clock.advance(3_000);
    await get(reply({ "ratelimit-remaining": "0", "ratelimit-reset": "2" }));
    expect(h.dep.health().rateLimit?.pausedForMs).toBe(2_000);
    await h.clock.advance(2_000);
    await get(reply({ ratelimit: '"default";r=50;t=30' }));
    expect(h.dep.health().rateLimit?.pausedForMs).toBe(0);
    expect(of(h.events, "rate-limit-paused").map((e) => e.source)).toEqual([
      "ratelimit",
      "ratelimit-reset",
    ]);
  });

  it("parses both forms of the RateLimit field", () => {
    expect(exhaustedResetMs('"default";r=0;t=30')).toBe(30_000);
    expect(exhaustedResetMs('"burst";r=0;t=1, "day";r=0;t=3600')).toBe(3_600_000);
    expect(exhaustedResetMs('"default";r=5;t=30')).toBeUndefined();
    expect(exhaustedResetMs("limit=100, remaining=0, reset=7")).toBe(7_000);
    expect(exhaustedResetMs("garbage")).toBeUndefined();
  });
});
