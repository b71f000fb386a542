import { describe, expect, it } from "vitest";
import { isResilienceError, type BulkheadSettings } from "../../templates/runtime/index.js";
import {
  after,
  breakerSettings,
  harness,
  httpFailure,
  never,
  operation,
  track,
} from "./helpers.js";

const bulkhead = (overrides: Partial<BulkheadSettings>): BulkheadSettings => ({
  maxConcurrent: 1,
  maxQueue: 1,
  queueTimeoutMs: 100,
  overflow: "reject",
  ...overrides,
});
const slow = (h: ReturnType<typeof harness>, ms: number) => () => after(h.clock, ms, () => "ok");
const op = operation({ retry: null, timeout: { attemptMs: null, totalMs: 10_000 } });

describe("bulkhead", () => {
  it("queues a call and admits it when a permit is returned", async () => {
    const h = harness({ bulkhead: bulkhead({}) });
    const first = track(h.dep.call(op, slow(h, 50)), h.clock);
    const second = track(h.dep.call(op, slow(h, 50)), h.clock);
    await h.clock.advance(50);
    expect(first.value).toBe("ok");
    expect(second.settled).toBe(false);
    await h.clock.advance(50);
    expect(second.value).toBe("ok");
    expect(h.dep.bulkhead?.health()).toEqual({
      inFlight: 0,
      queued: 0,
      maxConcurrent: 1,
      maxQueue: 1,
    });
  });

  it("gives up waiting after the queue timeout", async () => {
    const h = harness({ bulkhead: bulkhead({ queueTimeoutMs: 30 }) });
    track(h.dep.call(op, slow(h, 100)), h.clock);
    const waiting = track(h.dep.call(op, slow(h, 10)), h.clock);
    await h.clock.advance(30);
    expect(isResilienceError(waiting.error, "bulkhead-full")).toBe(true);
    expect(h.dep.bulkhead?.queued).toBe(0);
  });

  it("never waits past the call's deadline", async () => {
    const h = harness({ bulkhead: bulkhead({ queueTimeoutMs: 0 }) });
    track(h.dep.call(op, slow(h, 1_000)), h.clock);
    const waiting = track(h.dep.call(op, slow(h, 10), { deadline: 40 }), h.clock);
    await h.clock.advance(40);
    expect(waiting.settled).toBe(true);
    expect(waiting.at).toBe(1_040);
    expect(isResilienceError(waiting.error, "deadline")).toBe(true);
    expect(h.events.find((e) => e.type === "deadline-exceeded")).toMatchObject({ stage: "queue" });
  });

  it("rejects the newcomer when the queue is full with overflow reject", async () => {
    const h = harness({ bulkhead: bulkhead({}) });
    track(h.dep.call(op, slow(h, 50)), h.clock);
    const queued = track(h.dep.call(op, slow(h, 50)), h.clock);
    const newcomer = track(h.dep.call(op, slow(h, 50)), h.clock);
    await h.clock.flush();
    expect(isResilienceError(newcomer.error, "bulkhead-full")).toBe(true);
    await h.clock.advance(100);
    expect(queued.value).toBe("ok");
  });

  it("evicts the oldest waiter with overflow drop-oldest", async () => {
    const h = harness({
      bulkhead: bulkhead({ overflow: "drop-oldest", maxQueue: 2, queueTimeoutMs: 1_000 }),
    });
    track(h.dep.call(op, slow(h, 50)), h.clock);
    const oldest = track(h.dep.call(op, slow(h, 50)), h.clock);
    const middle = track(h.dep.call(op, slow(h, 50)), h.clock);
    const newcomer = track(h.dep.call(op, slow(h, 50)), h.clock);
    await h.clock.flush();
    expect(isResilienceError(oldest.error, "bulkhead-full")).toBe(true);
    expect(h.events.find((e) => e.type === "bulkhead-rejected")).toMatchObject({
      reason: "evicted",
    });
    await h.clock.advance(150);
    expect(middle.value).toBe("ok");
    expect(newcomer.value).toBe("ok");
  });

  it("holds one permit for the whole logical call, across retries and backoff", async () => {
    const h = harness({ bulkhead: bulkhead({ maxQueue: 0 }) });
    let attempts = 0;
    const retried = track(
      h.dep.call(operation(), () => (++attempts < 3 ? Promise.reject(httpFailure(503)) : "ok")),
      h.clock,
    );
    await h.clock.advance(60);
    expect(attempts).toBe(2);
    const other = track(
      h.dep.call(op, () => "other"),
      h.clock,
    );
    await h.clock.flush();
    expect(isResilienceError(other.error, "bulkhead-full")).toBe(true);
    await h.clock.advance(500);
    expect(retried.value).toBe("ok");
    expect(h.dep.bulkhead?.inFlight).toBe(0);
  });

  it("leaves the queue when the caller aborts", async () => {
    const h = harness({ bulkhead: bulkhead({}) });
    track(h.dep.call(op, slow(h, 50)), h.clock);
    const controller = new AbortController();
    const waiting = track(h.dep.call(op, slow(h, 50), { signal: controller.signal }), h.clock);
    await h.clock.flush();
    controller.abort();
    await h.clock.flush();
    expect(isResilienceError(waiting.error, "aborted")).toBe(true);
    expect(h.dep.bulkhead?.queued).toBe(0);
    await h.clock.advance(50);
    expect(h.dep.bulkhead?.inFlight).toBe(0);
  });

  it("gives back the half-open trial permit of a call aborted just as the queue admitted it", async () => {
    const h = harness({
      bulkhead: bulkhead({}),
      breaker: { ...breakerSettings, minCalls: 1, halfOpen: { maxCalls: 2, successes: 2 } },
    });
    await h.dep.call(op, () => Promise.reject(httpFailure(503))).catch(() => undefined);
    await h.clock.advance(breakerSettings.openForMs);
    const first = new AbortController();
    const queued = new AbortController();
    track(h.dep.call(op, never, { signal: first.signal }), h.clock); // the first trial, holding the slot
    const late = track(h.dep.call(op, slow(h, 50), { signal: queued.signal }), h.clock);
    await h.clock.flush();
    expect(h.dep.bulkhead?.queued).toBe(1);
    // ending the first call hands its slot to the queued one, which is aborted before it starts
    first.abort();
    queued.abort();
    await h.clock.flush();
    expect(isResilienceError(late.error, "aborted")).toBe(true);
    expect(h.dep.breaker?.state).toEqual({ state: "half-open", inFlight: 0, successes: 0 });
    expect(h.dep.bulkhead?.inFlight).toBe(0);
  });
});
