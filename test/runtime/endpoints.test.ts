// Several endpoints of one dependency (docs/runtime.md, "Endpoints"), in virtual time.
import { describe, expect, it } from "vitest";
import {
  createDependency,
  createSeededRandom,
  createVirtualClock,
  EndpointPool,
  isResilienceError,
  sendHttp,
  type AttemptContext,
  type DependencySettings,
  type EndpointSettings,
  type ResilienceEvent,
} from "../../templates/runtime/index.js";
import { after, breakerSettings, dependencySettings, httpFailure, operation } from "./helpers.js";

const A = "http://a.internal";
const B = "http://b.internal";
const C = "http://c.internal";

function setup(
  overrides: Partial<DependencySettings> = {},
  endpoints: readonly string[] = [A, B, C],
  seed = 7,
) {
  const clock = createVirtualClock(1_000);
  const events: ResilienceEvent[] = [];
  const dep = createDependency(dependencySettings({ breaker: breakerSettings, ...overrides }), {
    clock,
    random: createSeededRandom(seed),
    observer: (e) => events.push(e),
    endpoints,
  });
  return { clock, dep, events };
}

const once = operation({ retry: null });
const retried = operation();
// a transport that fails on the endpoints in `bad` and records where each attempt went
function transport(bad: ReadonlySet<string>, sent: string[]) {
  return (ctx: AttemptContext): string => {
    const at = ctx.endpoint ?? "(none)";
    sent.push(at);
    if (bad.has(at)) throw httpFailure(503);
    return at;
  };
}

describe("endpoints: a breaker per endpoint", () => {
  it("opens the failing endpoint's breaker while the others keep serving", async () => {
    const { dep, events } = setup();
    const sent: string[] = [];
    const send = transport(new Set([B]), sent);
    const results: unknown[] = [];
    for (let i = 0; i < 60; i++) results.push(await dep.call(once, send).catch((e: unknown) => e));
    const health = dep.health();
    expect(health.breaker).toBeNull();
    const byEndpoint = new Map(health.endpoints?.map((e) => [e.endpoint, e]));
    expect(byEndpoint.get(B)?.breaker?.state).toBe("open");
    expect(byEndpoint.get(A)?.breaker?.state).toBe("closed");
    expect(byEndpoint.get(C)?.breaker?.state).toBe("closed");
    // B is sent nothing once its breaker opened: minCalls (10) failures, at 100 % failure rate
    expect(sent.filter((s) => s === B)).toHaveLength(10);
    expect(byEndpoint.get(B)).toMatchObject({ attempts: 10, failures: 10, inFlight: 0 });
    // the last calls all succeed, on A or C
    expect(results.slice(-20).every((r) => r === A || r === C)).toBe(true);
    const opened = events.filter((e) => e.type === "breaker-transition" && e.to === "open");
    expect(opened).toEqual([expect.objectContaining({ endpoint: B, dependency: "payments" })]);
  });

  it("fails fast with circuit-open when every endpoint's breaker is open, sending nothing", async () => {
    const { dep, clock, events } = setup({}, [A, B]);
    const sent: string[] = [];
    const send = transport(new Set([A, B]), sent);
    for (let i = 0; i < 40; i++) await dep.call(once, send).catch(() => undefined);
    expect(sent).toHaveLength(20);
    await clock.advance(1_000);
    const error = await dep.call(retried, send).catch((e: unknown) => e);
    expect(sent).toHaveLength(20);
    expect(isResilienceError(error) && error.kind).toBe("circuit-open");
    expect(error).toMatchObject({ attempts: 0 });
    expect((error as Error).message).toContain(
      "circuit open on all 2 endpoints (first trial in 29000 ms",
    );
    // the failure that opened the soonest endpoint's breaker is the cause
    expect((error as Error).cause).toMatchObject({ kind: "http", status: 503 });
    expect(events.at(-2)).toMatchObject({ type: "breaker-rejected", state: "open", endpoints: 2 });
    expect(dep.breakerControl?.state).toBe("open");
    // past the open period one endpoint takes a trial again
    await clock.advance(29_000);
    await dep.call(once, () => "ok");
    expect(dep.health().endpoints?.map((e) => e.breaker?.state)).toContain("half-open");
  });

  it("lists each endpoint in health() with its breaker and counts", async () => {
    const { dep } = setup({}, [A, B]);
    const sent: string[] = [];
    for (let i = 0; i < 6; i++) await dep.call(once, transport(new Set([A]), sent)).catch(() => 0);
    const health = dep.health().endpoints ?? [];
    expect(health.map((e) => e.endpoint)).toEqual([A, B]);
    const a = sent.filter((s) => s === A).length;
    expect(health[0]).toMatchObject({ attempts: a, failures: a, inFlight: 0 });
    expect(health[0]?.breaker).toMatchObject({ state: "closed", failures: a, calls: a });
    expect(health[1]).toMatchObject({ attempts: 6 - a, failures: 0 });
    expect(a).toBeGreaterThan(0);
    expect(a).toBeLessThan(6);
  });

  it("isolates and resets every endpoint's breaker through one control", async () => {
    const { dep } = setup({}, [A, B]);
    const control = dep.breakerControl;
    const held = control?.isolate();
    expect(control?.state).toBe("isolated");
    const error = await dep.call(once, () => "ok").catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: "circuit-open" });
    expect((error as Error).message).toContain("(isolated)");
    held?.dispose();
    expect(control?.state).toBe("closed");
    expect(await dep.call(once, () => "ok")).toBe("ok");
  });
});

describe("endpoints: retries and hedges go elsewhere", () => {
  it("sends each retry to an endpoint the call has not tried", async () => {
    for (let seed = 1; seed <= 20; seed++) {
      const { dep, clock } = setup({ breaker: null }, [A, B, C], seed);
      const sent: string[] = [];
      const send = (ctx: AttemptContext): string => {
        sent.push(ctx.endpoint ?? "");
        if (ctx.attempt < 3) throw httpFailure(503);
        return "ok";
      };
      const pending = dep.call(retried, send);
      await clock.advance(1_000);
      expect(await pending).toBe("ok");
      expect(new Set(sent).size).toBe(3);
    }
  });

  it("with more attempts than endpoints, goes back to one already tried", async () => {
    const { dep, clock, events } = setup({ breaker: null }, [A, B]);
    const sent: string[] = [];
    const pending = dep.call(retried, transport(new Set([A, B]), sent)).catch((e: unknown) => e);
    await clock.advance(1_000);
    expect(await pending).toMatchObject({ kind: "http", status: 503, attempts: 3 });
    expect(new Set(sent.slice(0, 2)).size).toBe(2);
    expect(sent).toHaveLength(3);
    const ends = events.filter((e) => e.type === "attempt-end").map((e) => e.endpoint);
    expect(ends).toEqual(sent);
  });

  it("skips an endpoint whose breaker is open when retrying", async () => {
    const { dep, clock } = setup({}, [A, B]);
    const sent: string[] = [];
    // open A's breaker: 10 failures of A-only traffic
    const onlyA = transport(new Set([A]), sent);
    while (dep.health().endpoints?.[0]?.breaker?.state !== "open")
      await dep.call(once, onlyA).catch(() => undefined);
    sent.length = 0;
    const pending = dep.call(retried, transport(new Set([B]), sent)).catch((e: unknown) => e);
    await clock.advance(1_000);
    await pending;
    // B fails, the retries can go nowhere else: B again, never A
    expect(sent).toEqual([B, B, B]);
  });

  it("sends a hedged copy to another endpoint than the slow one", async () => {
    for (let seed = 1; seed <= 10; seed++) {
      const { dep, clock, events } = setup({ breaker: null }, [A, B, C], seed);
      const hedged = operation({ retry: null, hedge: { delayMs: 40, maxAttempts: 2, budget: 1 } });
      let slow = "";
      const send = (ctx: AttemptContext): Promise<string> => {
        const at = ctx.endpoint ?? "";
        if (ctx.attempt === 1) slow = at;
        return after(clock, ctx.attempt === 1 ? 500 : 10, () => at);
      };
      const pending = dep.call(hedged, send);
      await clock.advance(100);
      const winner = await pending;
      expect(winner).not.toBe(slow);
      const starts = events.filter((e) => e.type === "attempt-start");
      expect(starts.map((e) => e.endpoint)).toEqual([slow, winner]);
      expect(starts[1]).toMatchObject({ hedge: true });
    }
  });
});

describe("endpoints: behaviours of the peers", () => {
  // Envoy's previous_hosts retry predicate (envoy.retry_host_predicates.previous_hosts) with
  // host_selection_retry_max_attempts: a retry avoids the hosts already attempted; when no other
  // host can be selected, host selection gives up avoiding and a previous host is used.
  it("given three endpoints and three attempts, then each attempt reaches a different endpoint", async () => {
    for (let seed = 21; seed <= 30; seed++) {
      const { dep, clock, events } = setup({ breaker: null }, [A, B, C], seed);
      const pending = dep.call(retried, transport(new Set([A, B, C]), [])).catch(() => undefined);
      await clock.advance(1_000);
      await pending;
      const at = events.filter((e) => e.type === "attempt-start").map((e) => e.endpoint);
      expect(at).toHaveLength(3);
      expect(new Set(at).size).toBe(3);
    }
  });

  it("given the only other endpoint open, then a retry goes back to the one already tried", async () => {
    const { dep, clock } = setup({}, [A, B]);
    const sent: string[] = [];
    const onlyB = transport(new Set([B]), sent);
    while (dep.health().endpoints?.[1]?.breaker?.state !== "open")
      await dep.call(once, onlyB).catch(() => undefined);
    sent.length = 0;
    let failedOnce = false;
    const pending = dep.call(retried, (ctx) => {
      sent.push(ctx.endpoint ?? "");
      if (!failedOnce) {
        failedOnce = true;
        throw httpFailure(503);
      }
      return "ok";
    });
    await clock.advance(1_000);
    expect(await pending).toBe("ok");
    expect(sent).toEqual([A, A]);
  });

  // Microsoft.Extensions.Http.Resilience, standard hedging handler with ordered-groups routing:
  // each hedged attempt is sent to the next endpoint, none twice while another is left.
  it("given three endpoints and three hedged copies of a slow call, then the copies go to three endpoints", async () => {
    for (let seed = 31; seed <= 40; seed++) {
      const { dep, clock, events } = setup({ breaker: null }, [A, B, C], seed);
      const hedged = operation({ retry: null, hedge: { delayMs: 40, maxAttempts: 3, budget: 1 } });
      const pending = dep.call(hedged, (ctx) => after(clock, 200, () => ctx.endpoint));
      await clock.advance(600);
      await pending;
      const at = events.filter((e) => e.type === "attempt-start").map((e) => e.endpoint);
      expect(new Set(at)).toEqual(new Set([A, B, C]));
    }
  });
});

describe("endpoints: the choice among healthy endpoints", () => {
  const pool = (choose: EndpointSettings["choose"], seed = 3) =>
    new EndpointPool(
      [A, B, C],
      { choose, max: 8 },
      null,
      createVirtualClock(),
      createSeededRandom(seed),
      () => () => undefined,
    );

  it("round robin takes each endpoint in turn from a random start", () => {
    const p = pool("round-robin");
    const picks = Array.from({ length: 6 }, () => p.pick(0, 0)?.url);
    expect(new Set(picks.slice(0, 3)).size).toBe(3);
    expect(picks.slice(3)).toEqual(picks.slice(0, 3));
  });

  it("power of two prefers the endpoint with fewer attempts in flight", () => {
    const p = pool("power-of-two");
    const [a, b] = p.endpoints;
    if (a === undefined || b === undefined) throw new Error("no endpoints");
    a.inFlight = 5;
    b.inFlight = 5;
    // C is idle: whenever it is one of the two drawn, it wins; A and B only when drawn together
    const picks = Array.from({ length: 300 }, () => p.pick(0, 0)?.url);
    const c = picks.filter((u) => u === C).length;
    // two of the three pairs hold C: about 2/3 of the picks
    expect(c).toBeGreaterThan(170);
    expect(c).toBeLessThan(230);
  });

  it("is deterministic for a seed", () => {
    const run = () => {
      const p = pool("power-of-two", 42);
      return Array.from({ length: 20 }, () => p.pick(0, 0)?.url);
    };
    expect(run()).toEqual(run());
  });

  it("refuses more endpoints than max, and the same endpoint twice", () => {
    const make = (urls: string[], max: number) => () =>
      new EndpointPool(
        urls,
        { choose: "round-robin", max },
        null,
        createVirtualClock(),
        Math.random,
        () => () => undefined,
      );
    expect(make([A, B, C], 2)).toThrow(/3 endpoints given, at most 2/);
    expect(make([A, A], 4)).toThrow(/twice/);
  });
});

describe("endpoints: in-flight counts and snapshots", () => {
  it("counts a hedged copy that lost as no longer in flight", async () => {
    const { dep, clock } = setup({ breaker: null }, [A, B]);
    const hedged = operation({ retry: null, hedge: { delayMs: 40, maxAttempts: 2, budget: 1 } });
    const pending = dep.call(hedged, (ctx) =>
      after(clock, ctx.attempt === 1 ? 500 : 10, () => ctx.endpoint),
    );
    await clock.advance(45);
    expect(dep.health().endpoints?.map((e) => e.inFlight)).toEqual([1, 1]);
    await clock.advance(10);
    await pending;
    expect(dep.health().endpoints?.map((e) => e.inFlight)).toEqual([0, 0]);
    expect(dep.health().endpoints?.map((e) => e.attempts)).toEqual([1, 1]);
  });

  it("restores a snapshot's budget but not its breaker, and takes one without a breaker", () => {
    const budget = { maxTokens: 10, tokenRatio: 0.1 };
    const single = createDependency(dependencySettings({ breaker: breakerSettings, budget }), {
      clock: createVirtualClock(1_000),
    });
    const saved = single.snapshot();
    const { dep } = setup({ budget }, [A, B]);
    const restored = createDependency(dependencySettings({ breaker: breakerSettings, budget }), {
      clock: createVirtualClock(1_000),
      endpoints: [A, B],
      state: { ...saved, budget: { tokens: 3 } },
    });
    expect(restored.health().endpoints?.map((e) => e.breaker?.state)).toEqual(["closed", "closed"]);
    // a single-endpoint client's snapshot has a breaker part, which the endpoints do not take
    expect(saved.breaker).not.toBeNull();
    expect(restored.health().budget?.tokens).toBe(3);
    expect(dep.snapshot()).toMatchObject({ breaker: null, budget: { tokens: 10 } });
  });
});

describe("endpoints: one endpoint changes nothing", () => {
  it("keeps the dependency's breaker and no endpoint in health, events or the context", async () => {
    for (const endpoints of [A, [A]] as const) {
      const clock = createVirtualClock(1_000);
      const events: ResilienceEvent[] = [];
      const dep = createDependency(dependencySettings({ breaker: breakerSettings }), {
        clock,
        observer: (e) => events.push(e),
        endpoints,
      });
      let seen: string | undefined = "unset";
      await dep.call(once, (ctx) => {
        seen = ctx.endpoint;
        return "ok";
      });
      expect(seen).toBeUndefined();
      expect(dep.health().breaker).not.toBeNull();
      expect(dep.health()).not.toHaveProperty("endpoints");
      expect(events.some((e) => "endpoint" in e)).toBe(false);
    }
  });
});

describe("endpoints: sendHttp", () => {
  it("sends to the attempt's endpoint, while the request's baseUrl stays its identity", async () => {
    const urls: string[] = [];
    const fetch = (url: string | URL | Request): Promise<Response> => {
      urls.push(typeof url === "string" ? url : url instanceof URL ? url.href : url.url);
      return Promise.resolve(new Response("{}", { status: 200 }));
    };
    const identities: string[] = [];
    const ctx = {
      endpoint: `${B}/v1`,
      headers: () => ({}),
      signal: new AbortController().signal,
      awaitHeaders: <R>(p: Promise<R>) => p,
      identify: (id: string) => identities.push(id),
      retryOn: [],
      dependency: "payments",
      operation: "get",
    } as unknown as AttemptContext;
    await sendHttp({ fetch, baseUrl: `${A}/v1`, method: "GET", path: "/x", vary: [] }, ctx);
    expect(urls).toEqual([`${B}/v1/x`]);
    expect(identities[0]).toContain(`${A}/v1/x`);
  });
});
