import { describe, expect, it } from "vitest";
import {
  CircuitBreaker,
  createDependency,
  createVirtualClock,
  isCircuitOpenError,
  SnapshotError,
  type BreakerSettings,
  type DependencySettings,
  type DependencySnapshot,
  type ResilienceEvent,
} from "../../templates/runtime/index.js";
import { breakerSettings, dependencySettings, operation } from "./helpers.js";

// Givens and thens drawn from what peer libraries test of their breakers (docs/runtime.md,
// "Circuit breaker": manual control, open-duration backoff, snapshot and restore). Each case
// names the behaviour it mirrors; where resgen differs on purpose, the case says so.

const count = (overrides: Partial<BreakerSettings> = {}): BreakerSettings => ({
  ...breakerSettings,
  window: { kind: "count", calls: 10 },
  minCalls: 2,
  halfOpen: { maxCalls: 1, successes: 1 },
  ...overrides,
});

const backoff = count({ openForMs: 5_000, openBackoff: { capMs: 300_000, multiplier: 2 } });

function trip(breaker: CircuitBreaker): void {
  breaker.onFailure(breaker.tryAcquire(), 1);
  breaker.onFailure(breaker.tryAcquire(), 1);
}

function dep(settings: Partial<DependencySettings> = {}, extra: object = {}) {
  const clock = createVirtualClock(1_000);
  const events: ResilienceEvent[] = [];
  const dependency = createDependency(
    dependencySettings({ breaker: breakerSettings, ...settings }),
    {
      clock,
      random: () => 0.5,
      observer: (e) => events.push(e),
      policyHash: "p1",
      ...extra,
    },
  );
  return { clock, events, dependency };
}

const transitions = (events: ResilienceEvent[]) =>
  events.flatMap((e) =>
    e.type === "breaker-transition" ? [`${e.from}->${e.to}${e.manual ? " (manual)" : ""}`] : [],
  );

describe("manual control", () => {
  // cockatiel CircuitBreakerPolicy.test.ts: isolate() returns a disposable; while held, calls fail
  // with an isolated-circuit error without running; disposing it closes the circuit.
  it("isolates until the handle is disposed, failing fast without calling the dependency", async () => {
    const { dependency, events } = dep();
    const control = dependency.breakerControl!;
    const handle = control.isolate();
    expect(control.state).toBe("isolated");
    let sent = 0;
    const error = await dependency
      .call(operation({ retry: null }), () => {
        sent++;
        return "ok";
      })
      .catch((e: unknown) => e);
    expect(sent).toBe(0);
    expect(isCircuitOpenError(error)).toBe(true);
    expect((error as Error).message).toContain("circuit open (isolated)");
    handle.dispose();
    expect(control.state).toBe("closed");
    await expect(dependency.call(operation({ retry: null }), () => "ok")).resolves.toBe("ok");
    expect(transitions(events)).toEqual(["closed->isolated (manual)", "isolated->closed (manual)"]);
    expect(events).toContainEqual(
      expect.objectContaining({ type: "breaker-rejected", state: "isolated" }),
    );
  });

  // cockatiel: isolation is reference-counted, two isolate() calls need two disposals; disposing
  // the same handle twice does not release another's isolation.
  it("needs one release per isolation, and a second release of one handle is harmless", () => {
    const breaker = new CircuitBreaker(count(), createVirtualClock());
    const a = breaker.isolate();
    const b = breaker.isolate();
    expect(breaker.health()).toMatchObject({ state: "isolated", isolations: 2 });
    a.dispose();
    a.dispose();
    expect(breaker.health()).toMatchObject({ state: "isolated", isolations: 1 });
    b.dispose();
    expect(breaker.health()).toMatchObject({ state: "closed", isolations: 0 });
  });

  // Resilience4j CircuitBreakerStateMachineTest: transitionToForcedOpenState() from OPEN holds
  // the breaker open past its wait duration; Polly's IsolateAsync likewise ignores the break
  // duration.
  it("stays isolated past the open period of a breaker that was open", async () => {
    const clock = createVirtualClock();
    const breaker = new CircuitBreaker(count(), clock);
    trip(breaker);
    expect(breaker.state.state).toBe("open");
    const handle = breaker.isolate();
    await clock.advance(10 * breakerSettings.openForMs);
    expect(breaker.tryAcquire()).toBe(-1);
    expect(breaker.state.state).toBe("isolated");
    handle.dispose();
    expect(breaker.state.state).toBe("closed");
  });

  // Resilience4j reset(): back to CLOSED with the metrics cleared, whatever the state; Polly's
  // CloseAsync ends an isolation. resgen's reset also voids outstanding isolation handles.
  it("reset() closes with an empty window, ends every isolation, and old handles do nothing", () => {
    const breaker = new CircuitBreaker(count({ minCalls: 5 }), createVirtualClock());
    const control = breaker.control();
    breaker.onFailure(breaker.tryAcquire(), 1);
    control.reset();
    expect(breaker.health()).toMatchObject({ state: "closed", calls: 0, failures: 0 });
    const a = control.isolate();
    control.isolate();
    control.reset();
    expect(breaker.health()).toMatchObject({ state: "closed", isolations: 0 });
    const c = control.isolate();
    a.dispose(); // from before the reset: must not end c's isolation
    expect(control.state).toBe("isolated");
    c.dispose();
    expect(control.state).toBe("closed");
  });

  // opossum's health/status and cockatiel's `state` getter: the isolation shows in health().
  it("shows isolation in health()", () => {
    const { dependency } = dep();
    dependency.breakerControl!.isolate();
    expect(dependency.health().breaker).toMatchObject({ state: "isolated", isolations: 1 });
  });

  // A dependency without a breaker has nothing to control (client.breaker is absent there).
  it("has no control without a breaker", () => {
    const { dependency } = dep({ breaker: null });
    expect(dependency.breakerControl).toBeNull();
  });
});

describe("open-duration backoff", () => {
  // Polly v8 BreakDurationGenerator / cockatiel's halfOpenAfter backoff (#68): each reopening
  // after a failed trial waits longer; Resilience4j #1044 asks for an exponential wait in open.
  it("lengthens each reopening after a failed trial: 5s, 10s, 20s … up to the cap", async () => {
    const clock = createVirtualClock();
    const seen: number[] = [];
    const breaker = new CircuitBreaker(backoff, clock);
    trip(breaker);
    for (let n = 0; n < 9; n++) {
      const forMs = breaker.retryInMs();
      seen.push(forMs);
      await clock.advance(forMs - 1);
      expect(breaker.tryAcquire()).toBe(-1); // not a millisecond early
      await clock.advance(1);
      const trial = breaker.tryAcquire();
      expect(breaker.state.state).toBe("half-open");
      breaker.onFailure(trial, 1);
    }
    expect(seen).toEqual([
      5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000,
    ]);
  });

  // cockatiel's backoff resets when the circuit closes; so does Polly's failure count.
  it("starts again from the base once a trial closes the breaker", async () => {
    const clock = createVirtualClock();
    const breaker = new CircuitBreaker(backoff, clock);
    trip(breaker);
    await clock.advance(5_000);
    breaker.onFailure(breaker.tryAcquire(), 1);
    expect(breaker.retryInMs()).toBe(10_000);
    await clock.advance(10_000);
    breaker.onSuccess(breaker.tryAcquire(), 1);
    expect(breaker.health()).toMatchObject({ state: "closed", reopenings: 0 });
    trip(breaker);
    expect(breaker.retryInMs()).toBe(5_000);
  });

  it("reports each open period's length on the transition event", async () => {
    const { dependency, events, clock } = dep({ breaker: backoff });
    const fail = () =>
      dependency
        .call(operation({ retry: null }), () => Promise.reject(new Error("x")))
        .catch(() => undefined);
    await fail();
    await fail();
    await clock.advance(5_000);
    await fail();
    const opens = events.flatMap((e) =>
      e.type === "breaker-transition" && e.to === "open" ? [e.openForMs] : [],
    );
    expect(opens).toEqual([5_000, 10_000]);
  });

  it("without backoff every open period is openFor", async () => {
    const clock = createVirtualClock();
    const breaker = new CircuitBreaker(count({ openForMs: 5_000 }), clock);
    trip(breaker);
    await clock.advance(5_000);
    breaker.onFailure(breaker.tryAcquire(), 1);
    expect(breaker.retryInMs()).toBe(5_000);
  });
});

describe("snapshot and restore", () => {
  // cockatiel #89 / CircuitBreakerPolicy toJSON() with `initialState`: a new breaker built from a
  // saved state is open as the old one was. resgen stores the time left, not a clock reading.
  it("round-trips an open breaker: the time left, then a trial", async () => {
    const a = dep({ breaker: backoff });
    const fail = () =>
      a.dependency
        .call(operation({ retry: null }), () => Promise.reject(new Error("x")))
        .catch(() => undefined);
    await fail();
    await fail();
    await a.clock.advance(5_000);
    await fail(); // reopened for 10 s
    await a.clock.advance(4_000);
    const saved = JSON.parse(JSON.stringify(a.dependency.snapshot())) as DependencySnapshot;
    expect(saved.breaker).toMatchObject({ state: "open", remainingMs: 6_000, reopenings: 1 });

    const b = dep({ breaker: backoff }, { state: saved });
    expect(b.dependency.health().breaker).toMatchObject({ state: "open", retryInMs: 6_000 });
    await b.clock.advance(5_999);
    await expect(b.dependency.call(operation({ retry: null }), () => "ok")).rejects.toMatchObject({
      kind: "circuit-open",
    });
    await b.clock.advance(1);
    // the trial fails: the backoff continues from where the first process left it (20 s)
    await b.dependency
      .call(operation({ retry: null }), () => Promise.reject(new Error("x")))
      .catch(() => undefined);
    expect(b.dependency.health().breaker).toMatchObject({ state: "open", retryInMs: 20_000 });
  });

  // opossum's state initialisation and Resilience4j's sliding window: a closed breaker keeps its
  // counts, so a restored process opens after the same failures the old one would have.
  it("round-trips a count window and the retry budget", () => {
    const settings = {
      breaker: count({ minCalls: 4 }),
      budget: { maxTokens: 10, tokenRatio: 0.1 },
    };
    const a = dep(settings);
    const br = a.dependency.breaker!;
    br.onFailure(br.tryAcquire(), 1);
    br.onSuccess(br.tryAcquire(), 1);
    br.onFailure(br.tryAcquire(), 1);
    a.dependency.budget!.onFailure();
    a.dependency.budget!.onSuccess();
    const saved = a.dependency.snapshot();
    expect(saved.breaker?.window).toEqual({ kind: "count", outcomes: [1, 0, 1] });
    expect(saved.budget).toEqual({ tokens: 9.1 });
    const b = dep(settings, { state: saved });
    expect(b.dependency.health()).toMatchObject({
      breaker: { state: "closed", calls: 3, failures: 2 },
      budget: { tokens: 9.1 },
    });
    const br2 = b.dependency.breaker!;
    br2.onSuccess(br2.tryAcquire(), 1); // 2 of 4: 50 %
    expect(br2.state.state).toBe("open");
  });

  it("round-trips a time window by age: slices keep their place in the window", async () => {
    const a = dep();
    const br = a.dependency.breaker!;
    for (let i = 0; i < 4; i++) br.onFailure(br.tryAcquire(), 1, a.clock.now());
    await a.clock.advance(5_000);
    for (let i = 0; i < 4; i++) br.onSuccess(br.tryAcquire(), 1, a.clock.now());
    const saved = a.dependency.snapshot();
    expect(saved.breaker?.window).toEqual({
      kind: "time",
      slices: [
        [5, 4, 4, 0],
        [0, 4, 0, 0],
      ],
    });
    const b = dep({}, { state: saved });
    await b.clock.advance(4_999); // the failures are 9.999 s old: still inside the 10 s window
    expect(b.dependency.health().breaker).toMatchObject({ calls: 8, failures: 4 });
    await b.clock.advance(1_000);
    expect(b.dependency.health().breaker).toMatchObject({ calls: 4, failures: 0 });
  });

  // cockatiel: isolation is the holder's; resgen records what releasing it would leave.
  it("records an isolated breaker as closed and empty", () => {
    const a = dep();
    a.dependency.breakerControl!.isolate();
    expect(a.dependency.snapshot().breaker).toEqual({
      state: "closed",
      remainingMs: null,
      reopenings: 0,
      window: { kind: "time", slices: [] },
    });
  });

  it("refuses a snapshot of another policy, dependency, version or shape, applying nothing", () => {
    const good = dep().dependency.snapshot();
    const cases: [unknown, string][] = [
      [{ ...good, policy: "other" }, "policy"],
      [{ ...good, dependency: "inventory" }, "dependency"],
      [{ ...good, version: 2 }, "version"],
      ["{}", "malformed"],
      [{ ...good, breaker: { ...good.breaker, state: "half-open" } }, "malformed"],
      [
        { ...good, breaker: { ...good.breaker, window: { kind: "count", outcomes: [] } } },
        "malformed",
      ],
      [{ ...good, breaker: { ...good.breaker, state: "open", remainingMs: 1e9 } }, "malformed"],
      [{ ...good, budget: { tokens: 1e6 } }, "malformed"],
    ];
    for (const [state, problem] of cases) {
      let thrown: unknown;
      try {
        dep({ budget: { maxTokens: 10, tokenRatio: 0.1 } }, { state });
      } catch (e) {
        thrown = e;
      }
      expect(thrown, JSON.stringify(state)).toBeInstanceOf(SnapshotError);
      expect((thrown as SnapshotError).problem).toBe(problem);
    }
  });

  it("never half-applies: a bad budget leaves the breaker untouched too", () => {
    const settings = { breaker: count(), budget: { maxTokens: 10, tokenRatio: 0.1 } };
    const clock = createVirtualClock();
    const open = new CircuitBreaker(count(), clock);
    trip(open);
    const state = {
      ...dep(settings).dependency.snapshot(),
      breaker: open.snapshot(),
      budget: { tokens: -1 },
    };
    const breaker = new CircuitBreaker(count(), clock);
    expect(breaker.checkSnapshot(state.breaker)).toBeUndefined();
    expect(() => dep(settings, { state })).toThrow(/budget.tokens/);
  });
});
