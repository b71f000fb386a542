import { describe, expect, it } from "vitest";
import {
  abortedError,
  isResilienceError,
  parseRetryAfter,
  type ResilienceEvent,
} from "../../templates/runtime/index.js";
import { harness, httpFailure, operation, track } from "./helpers.js";

describe("Retry-After parsing", () => {
  it("reads delta-seconds", () => {
    expect(parseRetryAfter("120")).toBe(120_000);
    expect(parseRetryAfter(" 0 ")).toBe(0);
  });

  it("reads an HTTP-date relative to the response's Date header when present", () => {
    expect(
      parseRetryAfter(
        "Wed, 21 Oct 2015 07:28:30 GMT",
        "Wed, 21 Oct 2015 07:28:00 GMT",
        Date.parse("2030-01-01"),
      ),
    ).toBe(30_000);
  });

  it("reads an HTTP-date relative to the wall clock without a Date header, and past dates give 0", () => {
    const now = Date.parse("Wed, 21 Oct 2015 07:28:00 GMT");
    expect(parseRetryAfter("Wed, 21 Oct 2015 07:28:05 GMT", null, now)).toBe(5_000);
    expect(parseRetryAfter("Wed, 21 Oct 2015 07:28:05 GMT", "not a date", now)).toBe(5_000);
    expect(parseRetryAfter("Wed, 21 Oct 2015 07:00:00 GMT", null, now)).toBe(0);
  });

  it("ignores absent and malformed values", () => {
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter("soon")).toBeUndefined();
    expect(parseRetryAfter("-5")).toBeUndefined();
  });
});

function retryAfterFailure(ms: number) {
  return Object.assign(httpFailure(503), { retryAfterMs: ms });
}

describe("the retry loop", () => {
  it("counts the first attempt in maxAttempts", async () => {
    const h = harness();
    let attempts = 0;
    const result = track(
      h.dep.call(operation(), () => {
        attempts++;
        return Promise.reject(httpFailure(503));
      }),
      h.clock,
    );
    await h.clock.advance(1_000);
    expect(attempts).toBe(3);
    expect(result.error).toMatchObject({ kind: "http", attempts: 3 });
  });

  it("does not retry failures outside the retry conditions", async () => {
    const h = harness();
    let attempts = 0;
    await expect(
      h.dep.call(operation(), () => {
        attempts++;
        return Promise.reject(httpFailure(404, false));
      }),
    ).rejects.toMatchObject({ kind: "http", status: 404, transient: false });
    expect(attempts).toBe(1);
  });

  it("sleeps the jittered backoff between attempts", async () => {
    const h = harness();
    const starts: number[] = [];
    const result = track(
      h.dep.call(operation(), () => {
        starts.push(h.clock.now());
        return starts.length < 3 ? Promise.reject(httpFailure(503)) : "ok";
      }),
      h.clock,
    );
    await h.clock.advance(1_000);
    expect(result.value).toBe("ok");
    expect(starts.map((t) => t - starts[0]!)).toEqual([0, 50, 150]);
    expect(
      h.events
        .filter((e) => e.type === "retry-scheduled")
        .map((e) => (e as { delayMs: number }).delayMs),
    ).toEqual([50, 100]);
  });

  it("honours Retry-After in place of the backoff, and gives up at once on a wait over the cap", async () => {
    const h = harness();
    const starts: number[] = [];
    const op = operation({ retry: { ...operation().retry!, retryAfter: { maxMs: 300 } } });
    const result = track(
      h.dep.call(
        op,
        () => {
          starts.push(h.clock.now());
          return starts.length === 1
            ? Promise.reject(retryAfterFailure(200))
            : starts.length === 2
              ? Promise.reject(retryAfterFailure(5_000))
              : "ok";
        },
        { deadline: 10_000 },
      ),
      h.clock,
    );
    await h.clock.advance(2_000);
    expect(starts.map((t) => t - starts[0]!)).toEqual([0, 200]);
    expect(result.at).toBe(starts[1]);
    expect(result.error).toMatchObject({
      kind: "http",
      status: 503,
      retryAfterMs: 5_000,
      attempts: 2,
    });
  });

  it("gives up at once with the last failure when Retry-After would pass the deadline", async () => {
    const h = harness();
    let attempts = 0;
    const result = track(
      h.dep.call(operation(), () => {
        attempts++;
        return Promise.reject(retryAfterFailure(2_000));
      }),
      h.clock,
    );
    const start = h.clock.now();
    await h.clock.flush();
    expect(result.settled).toBe(true);
    expect(result.at).toBe(start);
    expect(attempts).toBe(1);
    expect(result.error).toMatchObject({ kind: "http", status: 503, retryAfterMs: 2_000 });
    expect(
      h.events.some((e: ResilienceEvent) => e.type === "deadline-exceeded" && e.stage === "retry"),
    ).toBe(true);
  });

  it("stops sleeping as soon as the caller aborts", async () => {
    const h = harness();
    const controller = new AbortController();
    let attempts = 0;
    const op = operation({
      retry: {
        ...operation().retry!,
        backoff: { baseMs: 500, capMs: 500, multiplier: 1, jitter: "none" },
      },
    });
    const result = track(
      h.dep.call(
        op,
        () => {
          attempts++;
          return Promise.reject(httpFailure(503));
        },
        { signal: controller.signal },
      ),
      h.clock,
    );
    await h.clock.advance(100);
    expect(result.settled).toBe(false);
    controller.abort(new Error("user went away"));
    await h.clock.flush();
    expect(result.settled).toBe(true);
    expect(isResilienceError(result.error, "aborted")).toBe(true);
    expect(attempts).toBe(1);
  });

  it("throws budget-exhausted, with the last failure as cause, when the budget refuses a retry", async () => {
    const h = harness({ budget: { maxTokens: 2, tokenRatio: 0.1 } });
    const result = track(
      h.dep.call(operation(), () => Promise.reject(httpFailure(503))),
      h.clock,
    );
    await h.clock.advance(1_000);
    expect(result.error).toMatchObject({ kind: "budget-exhausted", attempts: 1 });
    expect((result.error as Error).cause).toMatchObject({ kind: "http", status: 503 });
  });

  it("shares one budget between all operations of a dependency", async () => {
    const h = harness({ budget: { maxTokens: 4, tokenRatio: 0.1 } });
    let b = 0;
    const first = track(
      h.dep.call(operation({ name: "a" }), () => Promise.reject(httpFailure(503))),
      h.clock,
    );
    await h.clock.advance(1_000);
    expect(first.error).toMatchObject({ kind: "budget-exhausted", attempts: 2 });
    const second = track(
      h.dep.call(operation({ name: "b" }), () => {
        b++;
        return Promise.reject(httpFailure(503));
      }),
      h.clock,
    );
    await h.clock.advance(1_000);
    expect(b).toBe(1);
    expect(second.error).toMatchObject({ kind: "budget-exhausted" });
    expect(h.dep.health().budget).toMatchObject({ tokens: 1, allowsRetry: false });
  });

  it("reports a caller abort before the call as aborted", async () => {
    const h = harness();
    await expect(
      h.dep.call(operation(), () => "ok", { signal: AbortSignal.abort() }),
    ).rejects.toSatisfy((e: unknown) => isResilienceError(e, "aborted"));
    expect(abortedError("x").kind).toBe("aborted");
  });
});
