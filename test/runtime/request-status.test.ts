/**
 * A 4xx that describes the request (400, 401, 403, 404, 405, 409, 410, 422) is the caller's bug,
 * not the dependency's health: it is never retried and never counts against the breaker or the
 * retry budget, even when `retry.on` lists it (templates/runtime/errors.ts, describesRequest;
 * resgen check refuses such a list, RG225).
 */
import { describe, expect, it } from "vitest";
import { describesRequest } from "../../templates/runtime/index.js";
import { after, breakerSettings, harness, httpFailure, operation, track } from "./helpers.js";

const listed = operation({
  retry: {
    maxAttempts: 3,
    backoff: { baseMs: 50, capMs: 1_000, multiplier: 2, jitter: "none" },
    on: ["timeout", "network", 400, 404, 422, 429, 503],
    retryAfter: { maxMs: null },
  },
});

describe("a 4xx that describes the request", () => {
  it("is not retried, opens no breaker and costs no budget token, though retry.on lists it", async () => {
    const h = harness({ breaker: breakerSettings, budget: { maxTokens: 10, tokenRatio: 0.1 } });
    let attempts = 0;
    for (let i = 0; i < 30; i++) {
      const status = [400, 404, 422][i % 3]!;
      const t = track(
        h.dep.call(listed, () => {
          attempts++;
          return after(h.clock, 20, () => {
            throw httpFailure(status, true);
          });
        }),
        h.clock,
      );
      await h.clock.advance(20);
      expect(t.settled).toBe(true);
      expect(t.error).toMatchObject({ kind: "http", status, transient: false, attempts: 1 });
      expect(describesRequest(t.error as never)).toBe(true);
    }
    // one attempt per call, in virtual time: no backoff was waited
    expect(attempts).toBe(30);
    expect(h.dep.breaker!.state.state).toBe("closed");
    expect(h.dep.budget!.tokens).toBe(10);
    expect(h.events.filter((e) => e.type === "retry-scheduled")).toEqual([]);
  });

  it("leaves 408, 425 and 429 to retry.on: listed, they are retried and count as failures", async () => {
    const h = harness({ breaker: breakerSettings, budget: { maxTokens: 10, tokenRatio: 0.1 } });
    let attempts = 0;
    const t = track(
      h.dep.call(listed, () => {
        attempts++;
        return after(h.clock, 20, () => {
          throw httpFailure(429, true);
        });
      }),
      h.clock,
    );
    await h.clock.advance(1_000);
    expect(t.settled).toBe(true);
    expect(t.error).toMatchObject({ kind: "http", status: 429, transient: true, attempts: 3 });
    expect(attempts).toBe(3);
    expect(h.dep.budget!.tokens).toBeLessThan(10);
    expect(describesRequest(httpFailure(429, true))).toBe(false);
  });
});
