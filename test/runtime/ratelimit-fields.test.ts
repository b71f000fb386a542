// The server's RateLimit header fields (docs/runtime.md, "Rate limit"): what pauses the limiter,
// what is malformed and ignored, and Retry-After's precedence, in virtual time.
// draft-ietf-httpapi-ratelimit-headers-11, section 7: "Malformed RateLimit header fields MUST be
// ignored"; "If a response contains both the RateLimit and Retry-After fields, the Retry-After
// field MUST take precedence".
import { describe, expect, it } from "vitest";
import {
  exhaustedResetMs,
  RateLimiter,
  sendHttp,
  type RateLimitSettings,
  type ResilienceEvent,
} from "../../templates/runtime/index.js";
import { harness, operation } from "./helpers.js";

const limit: RateLimitSettings = {
  rate: 10,
  periodMs: 1_000,
  burst: 10,
  maxWaitMs: 0,
  maxPauseMs: 120_000,
};

/** The pause, in ms, a limiter takes from one response of `status` with `headers`. */
function pauseFrom(status: number, headers: Record<string, string>, retryAfterMs?: number) {
  const limiter = new RateLimiter(limit);
  limiter.observe(0, status, new Headers(headers), retryAfterMs);
  return limiter.pauseLeft(0);
}

describe("RateLimit field (draft-ietf-httpapi-ratelimit-headers-11): malformed fields are ignored", () => {
  const cases: readonly (readonly [given: string, field: string, pauseMs: number])[] = [
    ["a well-formed spent quota", '"default";r=0;t=30', 30_000],
    ["a well-formed quota left", '"default";r=5;t=30', 0],
    ["an empty r=", '"default";r=;t=30', 0],
    ["r= followed by nothing at the end", '"default";t=30;r=', 0],
    ["a decimal r", '"default";r=0.0;t=30', 0],
    ["a string r", '"default";r="0";t=30', 0],
    ["a token r", '"default";r=zero;t=30', 0],
    ["a negative r", '"default";r=-1;t=30', 0],
    ["no r at all", '"default";t=30', 0],
    ["a boolean r (a parameter with no value)", '"default";r;t=30', 0],
    ["a negative t", '"default";r=0;t=-30', 0],
    ["a decimal t", '"default";r=0;t=1.5', 0],
    ["an empty t=", '"default";r=0;t=', 0],
    ["an integer of 16 digits", '"default";r=0;t=1000000000000000', 0],
    ["one malformed item among good ones", '"a";r=0;t=30, "b";r=;t=60', 0],
    ["a trailing comma", '"default";r=0;t=30,', 0],
    ["an unterminated string", '"default;r=0;t=30', 0],
    ["space before a parameter's semicolon", '"default" ;r=0;t=30', 0],
    ["an empty field", "", 0],
    ["garbage", "garbage!", 0],
  ];
  it.each(cases)("given %s (%j), pauses %d ms", (_given, field, pauseMs) => {
    expect(pauseFrom(200, { ratelimit: field })).toBe(pauseMs);
    if (pauseMs === 0) expect(exhaustedResetMs(field)).toBeUndefined();
  });

  it("given a spent quota with no t, does not pause: nothing says for how long", () => {
    expect(pauseFrom(200, { ratelimit: '"default";r=0' })).toBe(0);
  });

  it("given a parameter twice, the last one counts (RFC 9651, section 4.2.3.2)", () => {
    expect(pauseFrom(200, { ratelimit: '"default";r=0;t=30;t=5' })).toBe(5_000);
    expect(pauseFrom(200, { ratelimit: '"default";r=0;r=7;t=30' })).toBe(0);
    expect(pauseFrom(200, { ratelimit: '"default";r=7;r=0;t=30' })).toBe(30_000);
  });

  it("given several spent quotas, pauses for the longest; other parameters are comments", () => {
    expect(pauseFrom(200, { ratelimit: '"burst";r=0;t=1, "hour";r=0;t=60' })).toBe(60_000);
    expect(exhaustedResetMs('"burst";r=0;t=1, "day";r=0;t=3600')).toBe(3_600_000);
    expect(pauseFrom(200, { ratelimit: '"d";r=0;t=9;pk=:cHsdsRa894==:;acme-x=?1' })).toBe(9_000);
    expect(pauseFrom(200, { ratelimit: "default;r=0;t=4" })).toBe(4_000);
  });

  it("given the earlier dictionary form, reads it with the same strictness", () => {
    expect(pauseFrom(200, { ratelimit: "limit=100, remaining=0, reset=7" })).toBe(7_000);
    expect(pauseFrom(200, { ratelimit: "limit=100, remaining=, reset=7" })).toBe(0);
    expect(pauseFrom(200, { ratelimit: "limit=100, remaining=-1, reset=7" })).toBe(0);
    expect(pauseFrom(200, { ratelimit: "limit=100, remaining=0, reset=1.5" })).toBe(0);
  });

  it("given the older RateLimit-Remaining and RateLimit-Reset, ignores malformed values", () => {
    expect(pauseFrom(200, { "ratelimit-remaining": "0", "ratelimit-reset": "2" })).toBe(2_000);
    expect(pauseFrom(200, { "ratelimit-remaining": "", "ratelimit-reset": "30" })).toBe(0);
    expect(pauseFrom(200, { "ratelimit-remaining": "-1", "ratelimit-reset": "30" })).toBe(0);
    expect(pauseFrom(200, { "ratelimit-remaining": "0.0", "ratelimit-reset": "30" })).toBe(0);
    expect(pauseFrom(200, { "ratelimit-remaining": "0", "ratelimit-reset": "-30" })).toBe(0);
    expect(pauseFrom(200, { "ratelimit-remaining": "0", "ratelimit-reset": "" })).toBe(0);
  });
});

describe("Retry-After takes precedence over the RateLimit fields", () => {
  it("given a 429 with Retry-After: 5 and RateLimit t=30, pauses 5 s", () => {
    const headers = { "retry-after": "5", ratelimit: '"default";r=0;t=30' };
    expect(pauseFrom(429, headers, 5_000)).toBe(5_000);
    const older = { "retry-after": "5", "ratelimit-remaining": "0", "ratelimit-reset": "30" };
    expect(pauseFrom(429, older, 5_000)).toBe(5_000);
  });

  it("given a 429 whose Retry-After is longer than the window, pauses for the Retry-After", () => {
    expect(pauseFrom(429, { ratelimit: '"default";r=0;t=3' }, 20_000)).toBe(20_000);
  });

  it("given a 429 with a malformed Retry-After, the RateLimit field still counts", () => {
    expect(pauseFrom(429, { "retry-after": "soon", ratelimit: '"d";r=0;t=30' })).toBe(30_000);
  });

  it("through sendHttp: a 429 with Retry-After: 5 and RateLimit t=30 pauses the client 5 s", async () => {
    const h = harness({ rateLimit: limit });
    const fetch = (() =>
      Promise.resolve(
        new Response("slow down", {
          status: 429,
          headers: { "retry-after": "5", ratelimit: '"default";r=0;t=30' },
        }),
      )) as typeof globalThis.fetch;
    await h.dep
      .call(operation({ retry: null }), (ctx) =>
        sendHttp({ fetch, baseUrl: "https://api.example", method: "GET", path: "/x" }, ctx),
      )
      .catch(() => undefined);
    expect(h.dep.health().rateLimit?.pausedForMs).toBe(5_000);
    const paused = h.events.filter(
      (e): e is Extract<ResilienceEvent, { type: "rate-limit-paused" }> =>
        e.type === "rate-limit-paused",
    );
    expect(paused.map((e) => [e.pauseMs, e.source])).toEqual([[5_000, "retry-after"]]);
  });
});
