// A rate limit the replicas share (docs/store.md, "Global rate limit"), in virtual time over the
// memory store: several dependency stacks in one process stand for replicas, since the memory
// store runs the same GCRA step the Redis one does.
import { describe, expect, it } from "vitest";
import { REFUND, TAKE } from "../../templates/runtime/shared-rate-limit.js";
import {
  createDependency,
  createMemoryStore,
  createVirtualClock,
  isRateLimitedError,
  RateLimiter,
  ResilienceError,
  STORE_RETRY_MS,
  TtlMap,
  type Dependency,
  type RateLimitSettings,
  type ResilienceEvent,
  type SharedStore,
  type VirtualClock,
} from "../../templates/runtime/index.js";
import {
  after,
  breakerSettings,
  CountingStore,
  dependencySettings,
  operation,
  track,
} from "./helpers.js";

const limit = (overrides: Partial<RateLimitSettings> = {}): RateLimitSettings => ({
  rate: 10,
  periodMs: 1_000,
  burst: 2,
  maxWaitMs: 0,
  maxPauseMs: 60_000,
  store: "redis",
  replicas: 2,
  ...overrides,
});
const once = operation({ retry: null, timeout: { attemptMs: 250, totalMs: 1_000 } });
const ok = (): string => "ok";

interface Replica {
  dep: Dependency;
  events: ResilienceEvent[];
}

function replicas(
  n: number,
  store: SharedStore,
  clock: VirtualClock,
  settings: RateLimitSettings,
): Replica[] {
  return Array.from({ length: n }, () => {
    const events: ResilienceEvent[] = [];
    const dep = createDependency(dependencySettings({ rateLimit: settings }), {
      clock,
      random: () => 0.5,
      observer: (e) => events.push(e),
      store,
    });
    return { dep, events };
  });
}

describe("a rate limit the replicas share", () => {
  it("holds the declared rate across four replicas for 10 s, where limits of their own would each take it", async () => {
    const clock = createVirtualClock(1_000);
    const shared = replicas(4, createMemoryStore({ clock }), clock, limit({ replicas: 4 }));
    const own = replicas(4, createMemoryStore({ clock }), clock, limit({ store: "memory" }));
    const served = async (group: Replica[]): Promise<number[]> => {
      const sent: number[] = [];
      // every 5 ms for 10 s, each replica in turn calls
      for (let tick = 0; tick < 2_000; tick++) {
        const r = group[tick % group.length]!;
        const result = await r.dep.call(once, ok).catch((e: unknown) => e);
        if (result === "ok") sent.push(clock.now());
        else expect(isRateLimitedError(result)).toBe(true);
        await clock.advance(5);
      }
      return sent;
    };
    // within every window, at most burst + rate × its length, whichever replicas asked
    const sent = await served(shared);
    for (let i = 0; i < sent.length; i++)
      for (let j = i; j < sent.length; j++)
        expect(j - i + 1).toBeLessThanOrEqual(2 + (10 * (sent[j]! - sent[i]!)) / 1_000);
    // burst 2 at once, then 10/s over the remaining 9995 ms
    expect(sent).toHaveLength(2 + 99);
    // each process with the whole rate: four times the calls reach the dependency
    expect(await served(own)).toHaveLength(4 * (2 + 99));
  });

  it("makes a call wait for the shared permit within maxWait, spacing replicas' attempts", async () => {
    const clock = createVirtualClock(1_000);
    const [a, b] = replicas(
      2,
      createMemoryStore({ clock }),
      clock,
      limit({ burst: 1, maxWaitMs: 300 }),
    );
    const starts: number[] = [];
    const send = (): string => {
      starts.push(clock.now());
      return "ok";
    };
    // a fifth would wait 400 ms, past maxWait: refused, without a permit taken
    const calls = [a!, b!, a!, b!, a!].map((r) => track(r.dep.call(once, send), clock));
    await clock.advance(400);
    expect(calls.map((c) => c.value)).toEqual(["ok", "ok", "ok", "ok", undefined]);
    expect(calls[4]!.error).toMatchObject({ kind: "rate-limited", attempts: 0, retryAfterMs: 400 });
    expect(starts).toEqual([1_000, 1_100, 1_200, 1_300]);
    expect(b!.events.filter((e) => e.type === "rate-limit-waited")).toHaveLength(2);
    expect(b!.dep.health().rateLimit).toMatchObject({
      perSecond: 10,
      burst: 1,
      shared: { store: "memory", replicas: 2, localShare: false },
    });
  });

  it("bounds the wait by the call's deadline, and takes no permit it cannot use", async () => {
    const clock = createVirtualClock(1_000);
    const [a, b] = replicas(
      2,
      createMemoryStore({ clock }),
      clock,
      limit({ burst: 1, maxWaitMs: 5_000 }),
    );
    expect(await a!.dep.call(once, ok)).toBe("ok");
    // the next permit is 100 ms away; a call with 50 ms left cannot wait for it
    const short = await b!.dep.call(once, ok, { deadline: 50 }).catch((e: unknown) => e);
    expect(short).toMatchObject({
      kind: "rate-limited",
      message: expect.stringMatching(/deadline/) as unknown,
    });
    const c = track(b!.dep.call(once, ok), clock);
    await clock.advance(100);
    expect(c).toMatchObject({ value: "ok", at: 1_100 });
  });

  it("takes a retry's permit when its backoff is over", async () => {
    const clock = createVirtualClock(1_000);
    const [a] = replicas(
      1,
      createMemoryStore({ clock }),
      clock,
      limit({ burst: 1, maxWaitMs: 1_000 }),
    );
    const retried = operation({
      retry: {
        maxAttempts: 2,
        backoff: { baseMs: 30, capMs: 30, multiplier: 1, jitter: "none" },
        on: ["network"],
        retryAfter: { maxMs: null },
      },
      timeout: { attemptMs: 250, totalMs: 2_000 },
    });
    const starts: number[] = [];
    let n = 0;
    const call = track(
      a!.dep.call(retried, () => {
        starts.push(clock.now());
        if (n++ === 0)
          throw new ResilienceError({ kind: "network", message: "reset", transient: true });
        return "ok";
      }),
      clock,
    );
    await clock.advance(200);
    // the backoff ends at 1030, and the retry's permit is free at 1100: it waits the difference
    expect(call.value ?? call.error).toBe("ok");
    expect(starts).toEqual([1_000, 1_100]);
  });

  it("gives back the permit of a call the breaker turns away", async () => {
    const clock = createVirtualClock(1_000);
    const store = createMemoryStore({ clock });
    const settings = dependencySettings({
      rateLimit: limit({ burst: 1 }),
      breaker: { ...breakerSettings, minCalls: 1 },
    });
    const [a, b] = [0, 1].map(() => createDependency(settings, { clock, store }));
    // a's breaker opens on a failure; b's has seen nothing
    await a!
      .call(once, () => {
        throw new ResilienceError({ kind: "network", message: "reset", transient: true });
      })
      .catch(() => undefined);
    await clock.advance(100);
    const refused = await a!.call(once, ok).catch((e: unknown) => e);
    expect(refused).toMatchObject({ kind: "circuit-open" });
    // the permit a's refused call took is back: b gets it at once
    expect(await b!.call(once, ok)).toBe("ok");
  });

  it("gives back the permit of a call its caller aborts while it waits", async () => {
    const clock = createVirtualClock(1_000);
    const [a, b] = replicas(
      2,
      createMemoryStore({ clock }),
      clock,
      limit({ burst: 1, maxWaitMs: 500 }),
    );
    expect(await a!.dep.call(once, ok)).toBe("ok");
    const controller = new AbortController();
    const waiting = track(a!.dep.call(once, ok, { signal: controller.signal }), clock);
    await clock.advance(50);
    controller.abort();
    await clock.advance(0);
    expect(waiting.error).toMatchObject({ kind: "aborted" });
    // the aborted call's permit (due at 1100) went back, so b's first free one is at 1100
    const next = track(b!.dep.call(once, ok), clock);
    await clock.advance(50);
    expect(next).toMatchObject({ value: "ok", at: 1_100 });
  });

  it("falls back to this replica's share when the store fails, says so, and asks again later", async () => {
    const clock = createVirtualClock(1_000);
    const store = new CountingStore(createMemoryStore({ clock }));
    store.down = true;
    const [a] = replicas(1, store, clock, limit({ rate: 10, burst: 4, replicas: 2 }));
    // the share is 5/s and a burst of 2: two at once, the third refused
    const results = await Promise.all(
      [0, 1, 2].map(() => a!.dep.call(once, ok).catch((e: unknown) => e)),
    );
    expect(results.slice(0, 2)).toEqual(["ok", "ok"]);
    expect(isRateLimitedError(results[2])).toBe(true);
    const local = a!.events.filter((e) => e.type === "rate-limit-local-share");
    expect(local).toHaveLength(2);
    expect(local[0]).toMatchObject({
      perSecond: 5,
      reason: expect.stringMatching(/connection refused/) as unknown,
    });
    expect(a!.dep.health().rateLimit?.shared?.localShare).toBe(true);
    // the three asked at once; within STORE_RETRY_MS of the failure the store is not asked again
    expect(store.steps.length).toBe(3);
    await clock.advance(400);
    expect(await a!.dep.call(once, ok)).toBe("ok");
    expect(store.steps.length).toBe(3);
    await clock.advance(STORE_RETRY_MS);
    store.down = false;
    expect(await a!.dep.call(once, ok)).toBe("ok");
    expect(store.steps.length).toBe(4);
    expect(a!.dep.health().rateLimit?.shared?.localShare).toBe(false);
  });

  it("sends no hedge under it, where a limit of the process's own would (RG233 refuses the policy)", async () => {
    const hedged = operation({ retry: null, hedge: { delayMs: 10, maxAttempts: 2, budget: 1 } });
    for (const [store, copies] of [
      ["redis", 1],
      ["memory", 2],
    ] as const) {
      const clock = createVirtualClock(1_000);
      const [a] = replicas(1, createMemoryStore({ clock }), clock, limit({ burst: 5, store }));
      let sent = 0;
      const call = track(
        a!.dep.call(hedged, () => {
          sent++;
          return after(clock, 50, () => "ok");
        }),
        clock,
      );
      await clock.advance(100);
      expect(call.value).toBe("ok");
      expect(sent).toBe(copies);
    }
  });

  it("needs a store: without one the client throws at creation, naming what to pass", () => {
    expect(() => createDependency(dependencySettings({ rateLimit: limit() }), {})).toThrow(
      /kept in Redis.*pass store: createRedisStore/,
    );
  });

  it("keeps a server's pause per replica, and waits it out before its permit", async () => {
    const clock = createVirtualClock(1_000);
    const store = new CountingStore(createMemoryStore({ clock }));
    const [a, b] = replicas(2, store, clock, limit({ burst: 5, maxWaitMs: 1_000 }));
    const slowDown = new ResilienceError({
      kind: "http",
      message: "status 429",
      status: 429,
      retryAfterMs: 300,
      transient: true,
    });
    await a!.dep
      .call(once, () => {
        throw slowDown;
      })
      .catch(() => undefined);
    // a call that cannot wait 300 ms is refused as paused, without a step on the store
    const steps = store.steps.length;
    const short = await a!.dep.call(once, ok, { deadline: 100 }).catch((e: unknown) => e);
    expect(short).toMatchObject({
      kind: "rate-limited",
      message: expect.stringMatching(/paused/) as unknown,
    });
    expect(store.steps.length).toBe(steps);
    // the other replica heard nothing from the server: it goes at once
    expect(await b!.dep.call(once, ok)).toBe("ok");
    const waited = track(a!.dep.call(once, ok), clock);
    await clock.advance(300);
    expect(waited).toMatchObject({ value: "ok", at: 1_300 });
  });
});

describe("the take step, against the local limiter's arithmetic", () => {
  it("grants, waits and refuses as RateLimiter does, over a random sequence", () => {
    let seed = 7;
    const random = (): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    for (const settings of [
      limit({ rate: 10, burst: 1, store: "memory" }),
      limit({ rate: 3, burst: 4, store: "memory" }),
      limit({ rate: 600, periodMs: 60_000, burst: 7, store: "memory" }),
    ]) {
      const local = new RateLimiter(settings);
      const map = new TtlMap(10);
      const intervalUs = (settings.periodMs * 1_000) / settings.rate;
      const args = (bound: number): string[] =>
        [intervalUs, (settings.burst - 1) * intervalUs, 0, bound].map(String);
      let now = 1_000;
      for (let i = 0; i < 500; i++) {
        now += Math.floor(random() * 200);
        const bound = Math.floor(random() * 300);
        const taken = TAKE.memory(map, ["k"], args(bound), now);
        const wait = local.delayAt(now);
        expect(taken.granted).toBe(wait <= bound);
        expect(taken.waitMs).toBeCloseTo(wait, 6);
        if (taken.granted) local.take(now + wait);
        if (taken.granted && random() < 0.1) {
          REFUND.memory(map, ["k"], [String(intervalUs)], now);
          local.refund();
        }
      }
    }
  });

  it("lets its key expire once the arrival time has passed", () => {
    const map = new TtlMap(10);
    TAKE.memory(map, ["k"], ["100000", "0", "0", "0"], 1_000);
    expect(map.ttl("k", 1_000)).toBe(100);
    expect(map.get("k", 1_100)).toBeUndefined();
  });
});
