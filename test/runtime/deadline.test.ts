import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  createVirtualClock,
  currentDeadline,
  Deadline,
  deadlineFromHeader,
  decodeTimeout,
  encodeTimeout,
  withDeadline,
  type Clock,
} from "../../templates/runtime/index.js";
import { harness, operation } from "./helpers.js";

describe("deadline header encoding", () => {
  it("encodes grpc-timeout in milliseconds, finer under 1 ms, coarser past 8 digits", () => {
    expect(encodeTimeout(250, "grpc-timeout")).toBe("250m");
    expect(encodeTimeout(2_000.9, "grpc-timeout")).toBe("2000m");
    expect(encodeTimeout(0.5, "grpc-timeout")).toBe("500u");
    expect(encodeTimeout(0.0005, "grpc-timeout")).toBe("500n");
    expect(encodeTimeout(-3, "grpc-timeout")).toBe("0n");
    expect(encodeTimeout(200_000_000, "grpc-timeout")).toBe("200000S");
    expect(encodeTimeout(1e14, "grpc-timeout")).toBe("27777777H");
    expect(encodeTimeout(249.7, "ms")).toBe("249");
  });

  it("decodes every grpc-timeout unit and rejects malformed values", () => {
    expect(decodeTimeout("250m", "grpc-timeout")).toBe(250);
    expect(decodeTimeout("2S", "grpc-timeout")).toBe(2_000);
    expect(decodeTimeout("3M", "grpc-timeout")).toBe(180_000);
    expect(decodeTimeout("1H", "grpc-timeout")).toBe(3_600_000);
    expect(decodeTimeout("500u", "grpc-timeout")).toBe(0.5);
    expect(decodeTimeout("7n", "grpc-timeout")).toBeCloseTo(0.000007);
    for (const bad of ["", "250", "m", "123456789m", "12x", "-5m", "1.5S"]) {
      expect(decodeTimeout(bad, "grpc-timeout")).toBeUndefined();
    }
    expect(decodeTimeout("250", "ms")).toBe(250);
    expect(decodeTimeout("abc", "ms")).toBeUndefined();
  });

  it("round-trips without ever promising more time than was left (property)", () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e13, noNaN: true }), (ms) => {
        const encoded = encodeTimeout(ms, "grpc-timeout");
        expect(encoded).toMatch(/^\d{1,8}[HMSmun]$/);
        const decoded = decodeTimeout(encoded, "grpc-timeout")!;
        expect(decoded).toBeLessThanOrEqual(ms + 1e-9);
        const unitMs = { n: 1e-6, u: 1e-3, m: 1, S: 1e3, M: 6e4, H: 3.6e6 }[encoded.slice(-1)]!;
        expect(ms - decoded).toBeLessThan(unitMs + 1e-9);
        const asMs = decodeTimeout(encodeTimeout(ms, "ms"), "ms")!;
        expect(ms - asMs).toBeLessThan(1);
      }),
    );
  });
});

describe("deadlines", () => {
  it("measures remaining time with a margin and never goes negative, even if the clock steps back", () => {
    let now = 1_000;
    const clock: Clock = { now: () => now, setTimer: () => undefined, clearTimer: () => undefined };
    const deadline = Deadline.after(100, clock);
    expect(deadline.remaining()).toBe(100);
    expect(deadline.remaining(10)).toBe(90);
    now = 1_200;
    expect(deadline.remaining()).toBe(0);
    expect(deadline.expired()).toBe(true);
    now = 0;
    expect(deadline.remaining()).toBe(1_100);
  });

  it("is ambient inside withDeadline, and nested scopes can only shorten it", async () => {
    const clock = createVirtualClock();
    expect(currentDeadline()).toBeUndefined();
    await withDeadline(
      100,
      async () => {
        expect(currentDeadline()?.remaining()).toBe(100);
        withDeadline(500, () => expect(currentDeadline()?.remaining()).toBe(100), clock);
        withDeadline(20, () => expect(currentDeadline()?.remaining()).toBe(20), clock);
        await clock.advance(30);
        expect(currentDeadline()?.remaining()).toBe(70);
      },
      clock,
    );
    expect(currentDeadline()).toBeUndefined();
  });

  it("builds a deadline from an inbound header", () => {
    const clock = createVirtualClock(50);
    expect(deadlineFromHeader("2S", "grpc-timeout", clock)?.at).toBe(2_050);
    expect(deadlineFromHeader("oops", "grpc-timeout", clock)).toBeUndefined();
    expect(deadlineFromHeader(null, "ms", clock)).toBeUndefined();
  });

  it("takes the earliest of the caller's deadline, the ambient one and the total timeout", async () => {
    const h = harness({
      deadline: { propagate: true, marginMs: 10, header: "grpc-timeout", format: "grpc-timeout" },
    });
    const seen: Array<[number, string | undefined]> = [];
    const op = operation({ timeout: { attemptMs: 250, totalMs: 1_000 }, retry: null });
    const probe = (ctx: { timeoutMs: number; headers(): Record<string, string> }): string => {
      seen.push([ctx.timeoutMs, ctx.headers()["grpc-timeout"]]);
      return "ok";
    };
    await h.dep.call(op, probe);
    await withDeadline(120, () => h.dep.call(op, probe), h.clock);
    await withDeadline(120, () => h.dep.call(op, probe, { deadline: 60 }), h.clock);
    await h.dep.call(operation({ timeout: { attemptMs: 250, totalMs: 100 }, retry: null }), probe);
    expect(seen).toEqual([
      [250, "250m"],
      [110, "110m"],
      [50, "50m"],
      [90, "90m"],
    ]);
  });

  it("says what a deadline that fell inside an attempt means: the time the attempt was given, under its own timeout", async () => {
    const h = harness({
      deadline: { propagate: false, marginMs: 11, header: "x-request-timeout-ms", format: "ms" },
    });
    const op = operation({ timeout: { attemptMs: 500, totalMs: 500 }, retry: null });
    const cut = h.dep.call(op, () => new Promise<string>(() => undefined)).catch((e: unknown) => e);
    await h.clock.advance(489);
    expect(await cut).toMatchObject({
      kind: "deadline",
      tier: "deadline",
      message:
        "payments.getCharge: attempt 1 ran into the call's deadline: it started with 489 ms left before it, less than its own 500 ms attempt timeout",
    });
    const unbounded = operation({ timeout: { attemptMs: null, totalMs: 300 }, retry: null });
    const open = h.dep
      .call(unbounded, () => new Promise<string>(() => undefined))
      .catch((e: unknown) => e);
    await h.clock.advance(289);
    expect((await open) as Error).toHaveProperty(
      "message",
      "payments.getCharge: attempt 1 ran into the call's deadline: it started with 289 ms left before it, and has no attempt timeout of its own",
    );
  });
});
