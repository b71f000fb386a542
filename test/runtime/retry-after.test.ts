import { describe, expect, it } from "vitest";
import { sendHttp, type ResilienceEvent } from "../../templates/runtime/index.js";
import { harness, httpFailure, operation, track } from "./helpers.js";

// Retry-After's pinned choices (docs/runtime.md, "Retry"), in virtual time.

const serverWait = (ms: number) => Object.assign(httpFailure(503), { retryAfterMs: ms });

const withMax = (
  maxMs: number,
  overrides: Partial<NonNullable<ReturnType<typeof operation>["retry"]>> = {},
) =>
  operation({
    timeout: { attemptMs: 250, totalMs: null }, // the call's deadline option bounds it
    retry: { ...operation().retry!, maxAttempts: 5, retryAfter: { maxMs }, ...overrides },
  });

const scheduled = (events: ResilienceEvent[]) => events.filter((e) => e.type === "retry-scheduled");

describe("Retry-After beyond retryAfter.max", () => {
  for (const waitMs of [5_000, 3_600_000]) {
    it(`gives up at once when the server asks for ${waitMs / 1_000} s over a 1 s max, with the wait on the error`, async () => {
      const h = harness();
      let attempts = 0;
      const start = h.clock.now();
      const result = track(
        h.dep.call(withMax(1_000), () => (attempts++, Promise.reject(serverWait(waitMs))), {
          deadline: 10 * 3_600_000,
        }),
        h.clock,
      );
      await h.clock.flush();
      expect(result.settled).toBe(true);
      expect(result.at).toBe(start);
      expect(attempts).toBe(1);
      expect(result.error).toMatchObject({
        kind: "http",
        status: 503,
        retryAfterMs: waitMs,
        attempts: 1,
      });
      expect(scheduled(h.events)).toEqual([]);
      expect(h.clock.pendingTimers).toBe(0);
    });
  }

  it("gives up at once on an HTTP-date an hour ahead (sendHttp)", async () => {
    const h = harness();
    const served = Date.parse("Wed, 21 Oct 2015 07:28:00 GMT");
    let requests = 0;
    const fetch = (() => {
      requests++;
      return Promise.resolve(
        new Response("busy", {
          status: 503,
          headers: {
            date: new Date(served).toUTCString(),
            "retry-after": new Date(served + 3_600_000).toUTCString(),
          },
        }),
      );
    }) as typeof globalThis.fetch;
    const start = h.clock.now();
    const result = track(
      h.dep.call(
        withMax(1_000),
        (ctx) =>
          sendHttp(
            { fetch, baseUrl: "http://payments.test", method: "GET", path: "/charges/1" },
            ctx,
          ),
        {
          deadline: 10 * 3_600_000,
        },
      ),
      h.clock,
    );
    await h.clock.flush();
    expect(result.at).toBe(start);
    expect(requests).toBe(1);
    expect(result.error).toMatchObject({
      kind: "http",
      status: 503,
      retryAfterMs: 3_600_000,
      body: "busy",
    });
  });

  it("still waits a server wait exactly at the max, then retries", async () => {
    const h = harness();
    const starts: number[] = [];
    const result = track(
      h.dep.call(
        withMax(1_000),
        () => {
          starts.push(h.clock.now());
          return starts.length === 1 ? Promise.reject(serverWait(1_000)) : "ok";
        },
        { deadline: 10_000 },
      ),
      h.clock,
    );
    await h.clock.advance(1_000);
    expect(result.value).toBe("ok");
    expect(starts.map((t) => t - starts[0]!)).toEqual([0, 1_000]);
    expect(scheduled(h.events)).toMatchObject([{ delayMs: 1_000, retryAfter: true }]);
  });
});

describe("backoff after a server-set wait", () => {
  it("restarts at base (gRPC A6 pushback)", async () => {
    const h = harness();
    const starts: number[] = [];
    // base 50, multiplier 2, no jitter: 50, 100, then the server's 200, then 50 again (not 400)
    const result = track(
      h.dep.call(
        withMax(1_000),
        () => {
          starts.push(h.clock.now());
          if (starts.length === 3) return Promise.reject(serverWait(200));
          return starts.length < 5 ? Promise.reject(httpFailure(503)) : "ok";
        },
        { deadline: 10_000 },
      ),
      h.clock,
    );
    await h.clock.advance(2_000);
    expect(result.value).toBe("ok");
    expect(
      scheduled(h.events).map((e) => [
        (e as { delayMs: number }).delayMs,
        (e as { retryAfter: boolean }).retryAfter,
      ]),
    ).toEqual([
      [50, false],
      [100, false],
      [200, true],
      [50, false],
    ]);
    expect(starts.map((t) => t - starts[0]!)).toEqual([0, 50, 150, 350, 400]);
  });

  it("restarts decorrelated jitter from base too", async () => {
    const h = harness(); // random() is 0.5
    const op = withMax(10_000, {
      backoff: { baseMs: 100, capMs: 10_000, multiplier: 2, jitter: "decorrelated" },
    });
    const result = track(
      h.dep.call(
        op,
        (ctx) => {
          if (ctx.attempt === 2) return Promise.reject(serverWait(5_000));
          return ctx.attempt < 4 ? Promise.reject(httpFailure(503)) : "ok";
        },
        { deadline: 60_000 },
      ),
      h.clock,
    );
    await h.clock.advance(20_000);
    expect(result.value).toBe("ok");
    // U(100, 300) = 200; the server's 5000; then from base again: U(100, 300) = 200, not U(100, 600)
    expect(scheduled(h.events).map((e) => (e as { delayMs: number }).delayMs)).toEqual([
      200, 5_000, 200,
    ]);
  });
});
