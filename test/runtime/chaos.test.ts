import { afterEach, describe, expect, it } from "vitest";
import {
  CHAOS_KILL_SWITCH,
  createDependency,
  createVirtualClock,
  type ChaosOptions,
  type DependencySettings,
  type ResilienceEvent,
} from "../../templates/runtime/index.js";
import { dependencySettings, operation, track } from "./helpers.js";

// The `chaos` option (docs/runtime.md, "Chaos"), in virtual time.

function drill(chaos: ChaosOptions | undefined, settings: Partial<DependencySettings> = {}) {
  const clock = createVirtualClock(1_000);
  const events: ResilienceEvent[] = [];
  const dep = createDependency(dependencySettings(settings), {
    clock,
    random: () => 0.5,
    observer: (e) => events.push(e),
    chaos,
  });
  let reached = 0;
  const ok = () => (reached++, Promise.resolve("ok"));
  return { clock, dep, events, ok, reached: () => reached };
}

const noRetry = operation({ retry: null });
const ends = (events: ResilienceEvent[]) =>
  events.flatMap((e) => (e.type === "attempt-end" ? [e] : []));

afterEach(() => {
  Reflect.deleteProperty(process.env, CHAOS_KILL_SWITCH);
});

describe("without the option", () => {
  it("sends every attempt as it is, and the control is inert", async () => {
    const d = drill(undefined);
    expect(await d.dep.call(noRetry, d.ok)).toBe("ok");
    expect(d.reached()).toBe(1);
    expect(d.dep.chaos.enabled).toBe(false);
    d.dep.chaos.disable();
    expect(d.dep.chaos.injected()).toEqual({ latency: 0, status: 0, network: 0, hang: 0 });
    expect(ends(d.events)[0]).not.toHaveProperty("injected");
    expect(d.events.some((e) => e.type === "chaos-injected")).toBe(false);
  });
});

describe("faults", () => {
  it("a status with Retry-After fails the attempt as the dependency would, and the retry honours the wait", async () => {
    const d = drill({
      seed: 1,
      faults: [{ kind: "status", status: 503, retryAfterMs: 2_500, rate: 1 }],
    });
    const op = operation({ timeout: { attemptMs: 250, totalMs: null } });
    const result = track(d.dep.call(op, d.ok, { deadline: 60_000 }), d.clock);
    await d.clock.runAll();
    expect(d.reached()).toBe(0);
    expect(result.error).toMatchObject({ kind: "http", status: 503, attempts: 3 });
    const retries = d.events.flatMap((e) => (e.type === "retry-scheduled" ? [e] : []));
    // the header carries whole seconds: 2.5 s is sent as 3
    expect(retries.map((r) => [r.delayMs, r.retryAfter])).toEqual([
      [3_000, true],
      [3_000, true],
    ]);
    const end = ends(d.events)[0]!;
    expect(end.injected).toEqual(["status"]);
    expect(end.error).toMatchObject({ status: 503, retryAfterMs: 3_000, transient: true });
    expect(d.dep.chaos.injected().status).toBe(3);
  });

  it("a status the operation does not retry is a failure, not retried", async () => {
    const d = drill({ seed: 1, faults: [{ kind: "status", status: 400, rate: 1 }] });
    const result = track(d.dep.call(operation(), d.ok), d.clock);
    await d.clock.runAll();
    expect(result.error).toMatchObject({ kind: "http", status: 400, transient: false });
    expect(ends(d.events)).toHaveLength(1);
  });

  it("a network error is transient when the operation retries network errors", async () => {
    const d = drill({ seed: 1, faults: [{ kind: "network", rate: 1 }] });
    const result = track(d.dep.call(operation(), d.ok), d.clock);
    await d.clock.runAll();
    expect(result.error).toMatchObject({ kind: "network", attempts: 3 });
    expect(ends(d.events).map((e) => e.injected)).toEqual([["network"], ["network"], ["network"]]);
  });

  it("latency under the attempt timeout delays the answer by its length", async () => {
    const d = drill({ seed: 1, faults: [{ kind: "latency", ms: 100, rate: 1 }] });
    const result = track(d.dep.call(noRetry, d.ok), d.clock);
    await d.clock.runAll();
    expect(result.value).toBe("ok");
    expect(result.at - 1_000).toBe(100);
    expect(ends(d.events)[0]).toMatchObject({ outcome: "success", durationMs: 100 });
  });

  // Polly's latency strategy injects nothing for a zero delay, and reports nothing either
  it("latency of 0 ms is no fault: not counted, not reported, and the draws of the others stay", async () => {
    const faults = (ms: number): ChaosOptions => ({
      seed: 1,
      faults: [
        { kind: "latency", ms, rate: 1 },
        { kind: "latency", ms: 0, rate: 0.5 },
        { kind: "network", rate: 0.5 },
      ],
    });
    const zero = drill(faults(0));
    const some = drill(faults(5));
    for (const d of [zero, some])
      for (let i = 0; i < 8; i++) {
        track(d.dep.call(noRetry, d.ok), d.clock);
        await d.clock.runAll();
      }
    expect(zero.dep.chaos.injected().latency).toBe(0);
    expect(zero.events.some((e) => e.type === "chaos-injected" && e.fault === "latency")).toBe(
      false,
    );
    expect(ends(zero.events).every((e) => !(e.injected ?? []).includes("latency"))).toBe(true);
    // a call with no fault at all carries no `injected`
    expect(ends(zero.events).filter((e) => e.injected === undefined).length).toBe(
      8 - zero.dep.chaos.injected().network,
    );
    // the network faults fall on the same attempts with or without a real delay before them
    const networks = (d: typeof zero) => ends(d.events).map((e) => e.outcome === "failure");
    expect(networks(zero)).toEqual(networks(some));
    expect(some.dep.chaos.injected().latency).toBe(8);
    expect(zero.dep.chaos.injected().network).toBeGreaterThan(0);
    expect(zero.dep.chaos.injected().network).toBeLessThan(8);
  });

  it("latency past the attempt timeout times the attempt out, and the transport is never reached", async () => {
    const d = drill({ seed: 1, faults: [{ kind: "latency", ms: 400, rate: 1 }] });
    const result = track(d.dep.call(noRetry, d.ok), d.clock);
    await d.clock.runAll();
    expect(result.error).toMatchObject({ kind: "timeout" });
    expect(result.at - 1_000).toBe(250);
    expect(d.reached()).toBe(0);
  });

  it("a hang ends at the attempt timeout, with no timer left behind", async () => {
    const d = drill({ seed: 1, faults: [{ kind: "hang", rate: 1 }] });
    const result = track(d.dep.call(noRetry, d.ok), d.clock);
    await d.clock.runAll();
    expect(result.error).toMatchObject({ kind: "timeout" });
    expect(result.at - 1_000).toBe(250);
    expect(d.clock.pendingTimers).toBe(0);
    expect(ends(d.events)[0]).toMatchObject({ outcome: "timeout", injected: ["hang"] });
  });

  it("latency and an outcome compose: the delay, then the outcome; the first outcome drawn wins", async () => {
    const d = drill({
      seed: 1,
      faults: [
        { kind: "latency", ms: 50, rate: 1 },
        { kind: "status", status: 500, rate: 1 },
        { kind: "network", rate: 1 },
      ],
    });
    const result = track(d.dep.call(noRetry, d.ok), d.clock);
    await d.clock.runAll();
    expect(result.error).toMatchObject({ kind: "http", status: 500 });
    expect(result.at - 1_000).toBe(50);
    expect(ends(d.events)[0]!.injected).toEqual(["latency", "status"]);
    const injected = d.events.flatMap((e) => (e.type === "chaos-injected" ? [e] : []));
    expect(injected.map((e) => [e.call, e.attempt, e.fault])).toEqual([
      [1, 1, "latency"],
      [1, 1, "status"],
    ]);
  });

  it("a fault scoped to operations leaves the others alone", async () => {
    const d = drill({
      seed: 1,
      faults: [{ kind: "network", rate: 1, operations: ["refund"] }],
    });
    expect(await d.dep.call(noRetry, d.ok)).toBe("ok");
    const refund = track(d.dep.call({ ...noRetry, name: "refund" }, d.ok), d.clock);
    await d.clock.runAll();
    expect(refund.error).toMatchObject({ kind: "network", operation: "refund" });
  });
});

describe("rates and seeds", () => {
  async function pattern(seed: number, rate: number): Promise<boolean[]> {
    const d = drill({ seed, faults: [{ kind: "network", rate }] });
    const failed: boolean[] = [];
    for (let i = 0; i < 400; i++) {
      const r = track(d.dep.call(noRetry, d.ok), d.clock);
      await d.clock.flush();
      failed.push(r.error !== undefined);
    }
    return failed;
  }

  it("the same seed injects into the same attempts; another seed into others", async () => {
    const a = await pattern(42, 0.25);
    expect(await pattern(42, 0.25)).toEqual(a);
    expect(await pattern(43, 0.25)).not.toEqual(a);
  });

  it("injects at about its rate, never at 0, always at 1", async () => {
    const count = (xs: boolean[]) => xs.filter(Boolean).length;
    // 400 draws at 0.25: the mean is 100, three standard deviations are 26
    expect(count(await pattern(7, 0.25))).toBeGreaterThan(74);
    expect(count(await pattern(7, 0.25))).toBeLessThan(126);
    expect(count(await pattern(7, 0))).toBe(0);
    expect(count(await pattern(7, 1))).toBe(400);
  });

  it("one fault's rate never changes which attempts another gets", async () => {
    const hits = async (latencyRate: number) => {
      const d = drill({
        seed: 9,
        faults: [
          { kind: "latency", ms: 1, rate: latencyRate },
          { kind: "network", rate: 0.3 },
        ],
      });
      const failed: boolean[] = [];
      for (let i = 0; i < 100; i++) {
        const r = track(d.dep.call(noRetry, d.ok), d.clock);
        await d.clock.runAll();
        failed.push(r.error !== undefined);
      }
      return failed;
    };
    expect(await hits(0.9)).toEqual(await hits(0.1));
  });
});

describe("the kill switch", () => {
  it("disable() spares every attempt that starts after it, a started call's retries included", async () => {
    const d = drill({ seed: 1, faults: [{ kind: "status", status: 503, rate: 1 }] });
    const op = operation({ timeout: { attemptMs: 250, totalMs: null } });
    const result = track(d.dep.call(op, d.ok, { deadline: 60_000 }), d.clock);
    await d.clock.flush();
    expect(d.dep.chaos.injected().status).toBe(1);
    d.dep.chaos.disable();
    expect(d.dep.chaos.enabled).toBe(false);
    await d.clock.runAll();
    expect(result.value).toBe("ok");
    expect(d.reached()).toBe(1);
    expect(await d.dep.call(noRetry, d.ok)).toBe("ok");
    expect(d.dep.chaos.injected().status).toBe(1);
  });

  for (const value of ["off", "0", "false", " OFF "]) {
    it(`${CHAOS_KILL_SWITCH}=${JSON.stringify(value)} at creation keeps chaos off`, async () => {
      process.env[CHAOS_KILL_SWITCH] = value;
      const d = drill({ seed: 1, faults: [{ kind: "network", rate: 1 }] });
      expect(d.dep.chaos.enabled).toBe(false);
      expect(await d.dep.call(noRetry, d.ok)).toBe("ok");
    });
  }

  it("is read at creation: setting it later changes nothing, other values do not turn chaos off", async () => {
    process.env[CHAOS_KILL_SWITCH] = "on";
    const d = drill({ seed: 1, faults: [{ kind: "network", rate: 1 }] });
    process.env[CHAOS_KILL_SWITCH] = "off";
    expect(d.dep.chaos.enabled).toBe(true);
    const result = track(d.dep.call(noRetry, d.ok), d.clock);
    await d.clock.runAll();
    expect(result.error).toMatchObject({ kind: "network" });
  });
});

describe("an invalid option", () => {
  it("throws at creation, listing every problem", () => {
    const bad = {
      seed: Number.NaN,
      faults: [
        { kind: "latency", ms: -1, rate: 2 },
        { kind: "status", status: 200, retryAfterMs: Number.POSITIVE_INFINITY, rate: 0.5 },
        { kind: "explode", rate: 1 },
      ],
    } as unknown as ChaosOptions;
    expect(() => drill(bad)).toThrow(
      new RangeError(
        "payments: invalid chaos option: seed: must be a finite number; " +
          "faults[0].rate: must be from 0 to 1; " +
          "faults[0].ms: must be a finite number of milliseconds, 0 or more; " +
          "faults[1].status: must be an error status from 400 to 599; " +
          "faults[1].retryAfterMs: must be a finite number of milliseconds, 0 or more; " +
          "faults[2].kind: must be one of latency, status, network, hang",
      ),
    );
  });

  it("is copied at creation: changing the caller's object later changes nothing", async () => {
    const faults = [{ kind: "network" as const, rate: 1 }];
    const d = drill({ seed: 1, faults });
    faults[0]!.rate = 0;
    const result = track(d.dep.call(noRetry, d.ok), d.clock);
    await d.clock.runAll();
    expect(result.error).toMatchObject({ kind: "network" });
  });
});

describe("reconfigure({ chaos })", () => {
  it("replaces the faults for attempts that start after it, and says so", async () => {
    const d = drill({ seed: 1, faults: [{ kind: "network", rate: 1 }] });
    const first = track(d.dep.call(noRetry, d.ok), d.clock);
    await d.clock.runAll();
    expect(first.error).toMatchObject({ kind: "network" });
    const result = d.dep.reconfigure({
      chaos: { seed: 2, faults: [{ kind: "status", status: 429, rate: 1 }] },
    });
    expect(result).toEqual({ applied: true, changed: ["chaos"] });
    const second = track(d.dep.call(noRetry, d.ok), d.clock);
    await d.clock.runAll();
    expect(second.error).toMatchObject({ kind: "http", status: 429 });
    expect(d.dep.reconfigure({ chaos: { seed: 2, faults: [] } }).applied).toBe(true);
    expect(await d.dep.call(noRetry, d.ok)).toBe("ok");
    expect(d.events.filter((e) => e.type === "reconfigured")).toHaveLength(2);
  });

  it("refuses invalid faults whole, with the rest of the change, and keeps the old ones", async () => {
    const d = drill({ seed: 1, faults: [{ kind: "network", rate: 1 }] });
    const ops = d.dep.operations({ getCharge: noRetry });
    const result = d.dep.reconfigure({
      operations: { getCharge: { timeout: { attemptMs: 100 } } },
      chaos: { seed: 1, faults: [{ kind: "latency", ms: 10, rate: 1.5 }] },
    });
    expect(result).toEqual({
      applied: false,
      problems: ["chaos.faults[0].rate: must be from 0 to 1"],
    });
    expect(ops.getCharge.timeout.attemptMs).toBe(250);
    const call = track(d.dep.call(ops.getCharge, d.ok), d.clock);
    await d.clock.runAll();
    expect(call.error).toMatchObject({ kind: "network" });
  });

  it("is refused on a client created without the option: only its creator turns chaos on", () => {
    const d = drill(undefined);
    const result = d.dep.reconfigure({ chaos: { seed: 1, faults: [{ kind: "hang", rate: 1 }] } });
    expect(result.applied).toBe(false);
    expect(d.dep.chaos.enabled).toBe(false);
  });

  it("never comes from an overrides document, even on a client with the option", () => {
    const d = drill({ seed: 1, faults: [] });
    expect(() =>
      d.dep.operations(
        { getCharge: noRetry },
        { chaos: { seed: 1, faults: [{ kind: "hang", rate: 1 }] } },
      ),
    ).toThrow(/chaos: only code turns chaos on .*never an overrides document/);
  });

  it("leaves a thrown kill switch thrown", async () => {
    const d = drill({ seed: 1, faults: [] });
    d.dep.chaos.disable();
    d.dep.reconfigure({ chaos: { seed: 1, faults: [{ kind: "network", rate: 1 }] } });
    expect(d.dep.chaos.enabled).toBe(false);
    expect(await d.dep.call(noRetry, d.ok)).toBe("ok");
  });
});
