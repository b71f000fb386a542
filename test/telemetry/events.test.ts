/** The events the telemetry adapter is built on: call-start, call-end and the call number. */
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  createDependency,
  createVirtualClock,
  Emitter,
  type ResilienceEvent,
} from "../../templates/runtime/index.js";
import { breakerSettings, harness, httpFailure, operation, track } from "../runtime/helpers.js";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("call events", () => {
  it("bracket each logical call, and its attempts and retries carry its number", async () => {
    const h = harness();
    let n = 0;
    const retried = track(
      h.dep.call(operation(), () => (++n === 1 ? Promise.reject(httpFailure(503)) : "ok")),
      h.clock,
    );
    const other = track(
      h.dep.call(operation(), () => "other"),
      h.clock,
    );
    await h.clock.runAll();
    expect([retried.value, other.value]).toEqual(["ok", "other"]);
    const brief = h.events.map((e) => ("call" in e ? [e.type, e.call] : [e.type]));
    expect(brief.filter(([, call]) => call === 1)).toEqual([
      ["call-start", 1],
      ["attempt-start", 1],
      ["attempt-end", 1],
      ["retry-scheduled", 1],
      ["attempt-start", 1],
      ["attempt-end", 1],
      ["call-end", 1],
    ]);
    expect(brief.filter(([, call]) => call === 2)).toEqual([
      ["call-start", 2],
      ["attempt-start", 2],
      ["attempt-end", 2],
      ["call-end", 2],
    ]);
  });

  it("report the time left at the start and the duration, on the injected clock", async () => {
    const h = harness();
    const call = track(
      h.dep.call(
        operation(),
        (ctx) => new Promise((resolve) => h.clock.setTimer(() => resolve(ctx.attempt), 40)),
        { deadline: 600 },
      ),
      h.clock,
    );
    await h.clock.runAll();
    expect(call.value).toBe(1);
    expect(h.events.find((e) => e.type === "call-start")).toMatchObject({ deadlineMs: 600 });
    expect(h.events.find((e) => e.type === "call-end")).toMatchObject({
      outcome: "success",
      durationMs: 40,
      error: undefined,
    });
  });

  it("end as fallback with the covered error, or as failure with the thrown one", async () => {
    const h = harness({ breaker: { ...breakerSettings, minCalls: 1 } });
    const withFallback = operation({ retry: null, fallback: { kind: "value", value: "cached" } });
    expect(await h.dep.call(withFallback, () => Promise.reject(httpFailure(503)))).toMatchObject({
      degraded: true,
      data: "cached",
    });
    await expect(h.dep.call(operation(), () => "ok")).rejects.toMatchObject({
      kind: "circuit-open",
    });
    const ends = h.events.flatMap((e) =>
      e.type === "call-end" ? [[e.outcome, e.error?.kind]] : [],
    );
    expect(ends).toEqual([
      ["fallback", "http"],
      ["failure", "circuit-open"],
    ]);
  });

  it("without an observer, nothing is emitted: every layer checks first", async () => {
    const emit = vi.spyOn(Emitter.prototype, "emit");
    const clock = createVirtualClock();
    const dep = createDependency(
      {
        name: "payments",
        deadline: null,
        breaker: { ...breakerSettings, minCalls: 2 },
        bulkhead: { maxConcurrent: 1, maxQueue: 0, queueTimeoutMs: 0, overflow: "reject" },
        budget: { maxTokens: 10, tokenRatio: 0.1 },
      },
      { clock },
    );
    let n = 0;
    const call = track(
      dep.call(operation(), () => (++n === 1 ? Promise.reject(httpFailure(503)) : "ok")),
      clock,
    );
    await clock.runAll();
    expect(call.value).toBe("ok");
    // the failure and the retry's success are 1 of 2 failed: 50 % reaches the threshold, so the
    // breaker opens after the success; the next call is refused, the last has no time
    expect(dep.health().breaker?.state).toBe("open");
    await expect(dep.call(operation(), () => "ok")).rejects.toMatchObject({ kind: "circuit-open" });
    await expect(dep.call(operation(), () => "ok", { deadline: 0 })).rejects.toMatchObject({
      kind: "deadline",
    });
    expect(dep.health().breaker?.state).toBe("open");
    expect(emit).not.toHaveBeenCalled();

    // and with one, the same calls are reported
    const seen: ResilienceEvent["type"][] = [];
    dep.subscribe((e) => seen.push(e.type));
    await expect(dep.call(operation(), () => "ok")).rejects.toMatchObject({ kind: "circuit-open" });
    expect(seen).toEqual(["call-start", "breaker-rejected", "call-end"]);
  });
});
