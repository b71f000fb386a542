// Givens and thens after the behaviour peer libraries test in their rate limiters, in virtual
// time (docs/runtime.md, "Rate limit"). Each case names the project whose tests it mirrors.
import { describe, expect, it } from "vitest";
import {
  isRateLimitedError,
  RateLimiter,
  type RateLimitSettings,
} from "../../templates/runtime/index.js";
import { harness, operation, track } from "./helpers.js";

const limit = (overrides: Partial<RateLimitSettings> = {}): RateLimitSettings => ({
  rate: 1,
  periodMs: 100,
  burst: 1,
  maxWaitMs: 0,
  maxPauseMs: 0,
  ...overrides,
});
const once = operation({ retry: null, timeout: { attemptMs: 1_000, totalMs: 10_000 } });
const ok = (): string => "ok";

describe("peer cases", () => {
  // Resilience4j, AtomicRateLimiterTest (acquireAndRefreshWithEventPublishing): with no wait
  // allowed, one permit per cycle is granted, a second in the same cycle is refused, and the
  // next cycle grants one again.
  it("without a wait: one permit per interval, the second in the same interval refused", async () => {
    const h = harness({ rateLimit: limit() });
    expect(await h.dep.call(once, ok)).toBe("ok");
    expect(isRateLimitedError(await h.dep.call(once, ok).catch((e: unknown) => e))).toBe(true);
    await h.clock.advance(100);
    expect(await h.dep.call(once, ok)).toBe("ok");
    expect(isRateLimitedError(await h.dep.call(once, ok).catch((e: unknown) => e))).toBe(true);
  });

  // Resilience4j, AtomicRateLimiterTest (reserveFewThenSkipCyclesBeforeRefreshNonBlocking): a
  // caller allowed to wait one cycle reserves the next permit; another that would need two
  // cycles is refused and reserves nothing; after idle cycles, the permits are back to the limit
  // and no more.
  it("a wait within the timeout reserves the next permit; a longer one reserves nothing", async () => {
    const h = harness({ rateLimit: limit({ maxWaitMs: 100 }) });
    const starts: number[] = [];
    const send = () => {
      starts.push(h.clock.now());
      return "ok";
    };
    const first = track(h.dep.call(once, send), h.clock);
    const second = track(h.dep.call(once, send), h.clock);
    const third = track(h.dep.call(once, send), h.clock);
    await h.clock.advance(0);
    expect(isRateLimitedError(third.error)).toBe(true);
    await h.clock.advance(100);
    expect([first.value, second.value]).toEqual(["ok", "ok"]);
    expect(starts).toEqual([1_000, 1_100]);
    await h.clock.advance(500);
    expect(h.dep.health().rateLimit?.available).toBe(1);
  });

  // failsafe, SmoothRateLimiterStatsTest (testAcquireInitialStats): with one permit every 100 ms,
  // back-to-back acquisitions wait 0 then 100 ms; at 100 ms the next two wait 100 then 200 ms.
  it("queued reservations line up one interval apart", () => {
    const limiter = new RateLimiter(limit());
    const acquire = (now: number): number => {
      const wait = limiter.delayAt(now);
      limiter.take(now + wait);
      return wait;
    };
    expect([acquire(0), acquire(0)]).toEqual([0, 100]);
    expect([acquire(100), acquire(100)]).toEqual([100, 200]);
  });

  // failsafe, SmoothRateLimiterStatsTest (testAcquireInitialStats): after a quiet spell the
  // limiter does not bank permits beyond its burst: an acquisition after a gap waits nothing,
  // and the one right after it waits a full interval.
  it("a quiet spell banks no more than the burst", () => {
    const limiter = new RateLimiter(limit());
    limiter.take(0);
    expect(limiter.delayAt(150)).toBe(0);
    limiter.take(150);
    expect(limiter.delayAt(150)).toBe(100);
  });

  // Polly, RateLimiterResilienceStrategyTests (Execute_LeaseRejected): a rejected execution
  // fails with the limiter's own error carrying when to retry, the callback is never invoked,
  // and the rejection is reported to the listeners (OnRejected).
  it("a rejection carries its retry-after, never runs the transport, and is reported", async () => {
    const h = harness({ rateLimit: limit({ rate: 1, periodMs: 1_000 }) });
    await h.dep.call(once, ok);
    let ran = false;
    const rejected = await h.dep
      .call(once, () => {
        ran = true;
        return "ok";
      })
      .catch((e: unknown) => e);
    expect(rejected).toMatchObject({ kind: "rate-limited", retryAfterMs: 1_000 });
    expect(ran).toBe(false);
    expect(h.events.filter((e) => e.type === "rate-limit-rejected")).toMatchObject([
      { operation: "getCharge", waitMs: 1_000, reason: "rate" },
    ]);
  });

  // Polly, RateLimiterResilienceStrategyTests (Execute_HappyPath): with a permit free the
  // execution runs once and returns its result, and no rejection is reported.
  it("with a permit free, the call runs once and nothing is reported", async () => {
    const h = harness({ rateLimit: limit({ burst: 5 }) });
    let runs = 0;
    expect(
      await h.dep.call(once, () => {
        runs++;
        return "ok";
      }),
    ).toBe("ok");
    expect(runs).toBe(1);
    expect(h.events.some((e) => e.type.startsWith("rate-limit"))).toBe(false);
  });
});
