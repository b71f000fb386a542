/**
 * The minimum attempt budget (docs/runtime.md, "Deadlines") and tiered timeouts ("Tiered
 * timeouts"): every time limit that fires names itself in `error.tier` and in `attempt-end`.
 * Virtual time, except one real socket on 127.0.0.1 for the headers timeout of sendHttp.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  createDependency,
  isResilienceError,
  networkError,
  sendHttp,
  systemClock,
  type ResilienceError,
} from "../../templates/runtime/index.js";
import { after, breakerSettings, harness, never, operation, track } from "./helpers.js";

const deadline = {
  propagate: false,
  marginMs: 10,
  header: "x-request-timeout-ms",
  format: "ms",
} as const;

describe("minimum attempt budget", () => {
  it("fails at once with deadline, no attempt and no breaker verdict, when less than the minimum is left", async () => {
    const h = harness({ deadline, breaker: breakerSettings });
    let sent = 0;
    const op = operation({
      timeout: { attemptMs: 250, totalMs: 1_000, minAttemptMs: 80 },
      retry: null,
    });
    const t = track(
      h.dep.call(op, () => ((sent += 1), "ok"), { deadline: 22 }),
      h.clock,
    );
    await h.clock.flush();
    expect(t.settled).toBe(true);
    const error = t.error as ResilienceError;
    expect(isResilienceError(error, "deadline")).toBe(true);
    expect(error.tier).toBe("deadline");
    expect(error.attempts).toBe(0);
    expect(error.message).toContain("12 ms left before attempt 1, under its minimum of 80 ms");
    expect(sent).toBe(0);
    expect(h.events.filter((e) => e.type === "attempt-start")).toEqual([]);
    expect(h.dep.breaker!.health()).toMatchObject({ state: "closed" });
    expect(h.events.some((e) => e.type === "deadline-exceeded" && e.stage === "before-call")).toBe(
      true,
    );
  });

  it("still starts an attempt with the minimum left, and without a minimum with any time left", async () => {
    const h = harness({ deadline });
    const op = operation({
      timeout: { attemptMs: 250, totalMs: 1_000, minAttemptMs: 80 },
      retry: null,
    });
    expect(await h.dep.call(op, () => "ok", { deadline: 90 })).toBe("ok");
    expect(await h.dep.call(operation({ retry: null }), () => "ok", { deadline: 12 })).toBe("ok");
  });

  it("does not retry when the backoff would leave less than the minimum", async () => {
    const h = harness({ deadline });
    let sent = 0;
    const op = operation({ timeout: { attemptMs: 100, totalMs: 1_000, minAttemptMs: 80 } });
    const fail = () => {
      sent += 1;
      return after(h.clock, 50, () => {
        throw networkError("reset");
      });
    };
    // 290 ms past the margin: attempt 1 (50 ms), backoff 50 ms leaves 190 ms: attempt 2 (50 ms),
    // backoff 100 ms would leave 40 ms, under the minimum: no attempt 3
    const t = track(h.dep.call(op, fail, { deadline: 300 }), h.clock);
    await h.clock.runAll();
    expect(sent).toBe(2);
    expect(t.settled).toBe(true);
    expect(h.events.some((e) => e.type === "deadline-exceeded" && e.stage === "retry")).toBe(true);
    // without a minimum the third attempt goes out with those 40 ms
    sent = 0;
    await Promise.all([
      h.dep
        .call(operation({ timeout: { attemptMs: 100, totalMs: 1_000 } }), fail, { deadline: 300 })
        .catch(() => undefined),
      h.clock.runAll(),
    ]);
    expect(sent).toBe(3);
  });

  it("ends a bulkhead queue wait while the minimum is still left", async () => {
    const h = harness({
      deadline,
      bulkhead: { maxConcurrent: 1, maxQueue: 1, queueTimeoutMs: 0, overflow: "reject" },
    });
    const op = operation({
      timeout: { attemptMs: 1_000, totalMs: 1_000, minAttemptMs: 80 },
      retry: null,
    });
    const busy = track(
      h.dep.call(op, () => after(h.clock, 500, () => "first"), { deadline: 1_000 }),
      h.clock,
    );
    const queued = track(
      h.dep.call(op, () => "second", { deadline: 300 }),
      h.clock,
    );
    await h.clock.advance(209);
    expect(queued.settled).toBe(false);
    await h.clock.advance(2);
    expect(queued.settled).toBe(true);
    expect((queued.error as ResilienceError).kind).toBe("deadline");
    expect((queued.error as ResilienceError).tier).toBe("deadline");
    await h.clock.runAll();
    expect(busy.value).toBe("first");
  });
});

describe("tiered timeouts", () => {
  it("fails an attempt whose headers do not arrive within headersMs with a timeout of tier headers", async () => {
    const h = harness({ breaker: breakerSettings });
    const op = operation({
      timeout: { attemptMs: 1_000, totalMs: 5_000, headersMs: 100 },
      retry: null,
    });
    let aborted = false;
    const t = track(
      h.dep.call(op, (ctx) => {
        expect(ctx.headersTimeoutMs).toBe(100);
        ctx.signal.addEventListener("abort", () => (aborted = true));
        return ctx.awaitHeaders(never<string>());
      }),
      h.clock,
    );
    await h.clock.advance(99);
    expect(t.settled).toBe(false);
    await h.clock.advance(1);
    const error = t.error as ResilienceError;
    expect(error.kind).toBe("timeout");
    expect(error.tier).toBe("headers");
    expect(t.at).toBe(1_100);
    expect(aborted).toBe(true);
    const end = h.events.find((e) => e.type === "attempt-end");
    expect(end).toMatchObject({ outcome: "timeout", tier: "headers" });
    // a headers timeout is the dependency's slowness: it counts against the breaker
    expect(h.dep.breaker!.health().failures).toBe(1);
  });

  it("lets the attempt run on once the headers arrived in time, and retries a headers timeout like any timeout", async () => {
    const h = harness();
    const op = operation({ timeout: { attemptMs: 1_000, totalMs: 5_000, headersMs: 100 } });
    let n = 0;
    const t = track(
      h.dep.call(op, (ctx) => {
        n += 1;
        if (n === 1) return ctx.awaitHeaders(never<string>());
        // headers after 50 ms, then a body that takes 400 ms more: only the attempt timeout bounds it
        return ctx
          .awaitHeaders(after(h.clock, 50, () => "headers"))
          .then(() => after(h.clock, 400, () => "body"));
      }),
      h.clock,
    );
    await h.clock.runAll();
    expect(t.value).toBe("body");
    expect(n).toBe(2);
    expect(h.events.filter((e) => e.type === "retry-scheduled")).toMatchObject([
      { reason: "timeout" },
    ]);
  });

  it("has no headers tier when the attempt's own time is shorter", async () => {
    const h = harness();
    const op = operation({
      timeout: { attemptMs: 80, totalMs: 1_000, headersMs: 100 },
      retry: null,
    });
    const t = track(
      h.dep.call(
        op,
        (ctx) => (
          expect(ctx.headersTimeoutMs).toBe(Number.POSITIVE_INFINITY),
          ctx.awaitHeaders(never())
        ),
      ),
      h.clock,
    );
    await h.clock.runAll();
    expect((t.error as ResilienceError).tier).toBe("attempt");
    expect(h.events.find((e) => e.type === "attempt-end")).toMatchObject({ tier: "attempt" });
  });

  it("names the deadline when it cuts an attempt short, and the queue when the queue wait runs out", async () => {
    const h = harness({
      bulkhead: { maxConcurrent: 1, maxQueue: 1, queueTimeoutMs: 50, overflow: "reject" },
    });
    const op = operation({ timeout: { attemptMs: 1_000, totalMs: 1_000 }, retry: null });
    const cut = track(
      h.dep.call(op, () => never(), { deadline: 200 }),
      h.clock,
    );
    const queued = track(
      h.dep.call(op, () => "second"),
      h.clock,
    );
    await h.clock.runAll();
    expect((cut.error as ResilienceError).tier).toBe("deadline");
    expect((queued.error as ResilienceError).kind).toBe("bulkhead-full");
    expect((queued.error as ResilienceError).tier).toBe("queue");
  });
});

describe("sendHttp on a real socket", () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) =>
      server === undefined ? resolve() : server.close(() => resolve()),
    );
    server = undefined;
  });

  it("fails with tier headers when the server holds its headers back, long before the attempt timeout", async () => {
    const timers: NodeJS.Timeout[] = [];
    server = createServer((_req, res) => {
      timers.push(
        setTimeout(
          () => res.writeHead(200, { "content-type": "application/json" }).end("{}"),
          5_000,
        ),
      );
    });
    server.on("close", () => timers.forEach(clearTimeout));
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const dep = createDependency(
      { name: "slow", deadline: null, breaker: null, bulkhead: null, budget: null },
      { clock: systemClock },
    );
    const op = operation({
      timeout: { attemptMs: 3_000, totalMs: 3_000, headersMs: 150 },
      retry: null,
    });
    const started = Date.now();
    const error = await dep
      .call(op, (ctx) => sendHttp({ baseUrl, method: "GET", path: "/" }, ctx))
      .then(
        () => undefined,
        (e: unknown) => e as ResilienceError,
      );
    const took = Date.now() - started;
    timers.forEach(clearTimeout);
    expect(error?.kind).toBe("timeout");
    expect(error?.tier).toBe("headers");
    expect(took).toBeGreaterThanOrEqual(140);
    expect(took).toBeLessThan(2_000);
  });
});
