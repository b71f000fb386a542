import { afterEach, describe, expect, it } from "vitest";
import { isResilienceError, type AttemptContext } from "../../templates/runtime/index.js";
import { after, breakerSettings, harness, never, operation, track } from "./helpers.js";

const RealAbortController = globalThis.AbortController;
let created = 0;

function countControllers(): void {
  created = 0;
  globalThis.AbortController = class extends RealAbortController {
    constructor() {
      super();
      created++;
    }
  };
}

afterEach(() => {
  globalThis.AbortController = RealAbortController;
});

describe("attempt timeout", () => {
  it("gives the transport min(attempt timeout, deadline − margin)", async () => {
    const h = harness({ deadline: { propagate: false, marginMs: 10, header: "x", format: "ms" } });
    const seen: number[] = [];
    const op = operation({ timeout: { attemptMs: 250, totalMs: 1_000 }, retry: null });
    await h.dep.call(op, (ctx) => seen.push(ctx.timeoutMs));
    await h.dep.call(op, (ctx) => seen.push(ctx.timeoutMs), { deadline: 100 });
    expect(seen).toEqual([250, 90]);
  });

  it("stops waiting for a transport that ignores its signal, with a transient timeout", async () => {
    const h = harness();
    const result = track(
      h.dep.call(operation({ retry: null }), () => never<string>()),
      h.clock,
    );
    await h.clock.advance(249);
    expect(result.settled).toBe(false);
    await h.clock.advance(1);
    expect(result.settled).toBe(true);
    expect(result.error).toMatchObject({ kind: "timeout", transient: true, attempts: 1 });
    expect(h.clock.pendingTimers).toBe(0);
  });

  it("aborts the transport's signal on timeout, with the timeout error as reason", async () => {
    const h = harness();
    let signal: AbortSignal | undefined;
    const result = track(
      h.dep.call(operation({ retry: null }), (ctx) => {
        signal = ctx.signal;
        return never<string>();
      }),
      h.clock,
    );
    await h.clock.advance(250);
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toBe(result.error);
  });

  it("reports a deadline, not a retryable timeout, when the deadline cut the attempt short", async () => {
    const h = harness();
    const result = track(
      h.dep.call(operation(), () => never<string>(), { deadline: 100 }),
      h.clock,
    );
    await h.clock.advance(100);
    expect(result.error).toMatchObject({ kind: "deadline", transient: false, attempts: 1 });
  });

  it("creates an AbortController only for transports that read the signal", async () => {
    const h = harness();
    countControllers();
    await h.dep.call(operation({ retry: null }), () => "ok");
    await h.dep.call(operation({ retry: null }), () => "ok");
    expect(created).toBe(0);
    await h.dep.call(operation({ retry: null }), (ctx: AttemptContext) => ctx.signal.aborted);
    expect(created).toBe(1);
  });

  it("lets the caller's signal abort an attempt in flight, releasing its breaker permit without a verdict", async () => {
    const h = harness({ breaker: { ...breakerSettings, minCalls: 1 } });
    const controller = new AbortController();
    let signal: AbortSignal | undefined;
    const result = track(
      h.dep.call(
        operation(),
        (ctx) => {
          signal = ctx.signal;
          return after(h.clock, 100, () => "late");
        },
        { signal: controller.signal },
      ),
      h.clock,
    );
    await h.clock.advance(10);
    controller.abort();
    await h.clock.flush();
    expect(isResilienceError(result.error, "aborted")).toBe(true);
    expect(signal?.aborted).toBe(true);
    expect(h.dep.breaker?.health()).toMatchObject({ state: "closed", calls: 0 });
    expect(h.events.find((e) => e.type === "attempt-end")).toMatchObject({ outcome: "cancelled" });
  });
});
