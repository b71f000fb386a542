/**
 * Request coalescing (docs/runtime.md, "Coalescing"): identical calls of a retry-safe read in
 * flight at once share one attempt chain; each caller keeps its own deadline and signal. All in
 * virtual time.
 */
import { describe, expect, it } from "vitest";
import {
  httpIdentity,
  requestIdentity,
  ResilienceError,
  sendHttp,
  staleKey,
  type AttemptContext,
  type HttpRequest,
  type ResilienceEvent,
} from "../../templates/runtime/index.js";
import {
  after,
  harness,
  httpFailure,
  never,
  operation,
  track,
  breakerSettings,
} from "./helpers.js";

const coalesced = operation({ coalesce: true, retry: null });
const identity = (url: string, headers?: Record<string, string>) =>
  requestIdentity({ method: "GET", url, headers, vary: Object.keys(headers ?? {}) });
const ME = identity("http://s/me");

function countingTransport(h: ReturnType<typeof harness>, ms = 100, value: unknown = { id: 1 }) {
  const sent = { count: 0 };
  const transport = () => {
    sent.count++;
    return after(h.clock, ms, () => value);
  };
  return { sent, transport };
}

const ofType = <K extends ResilienceEvent["type"]>(events: ResilienceEvent[], type: K) =>
  events.filter((e): e is Extract<ResilienceEvent, { type: K }> => e.type === type);

describe("coalescing", () => {
  it("N concurrent identical calls send one request and share the same value", async () => {
    const h = harness();
    const { sent, transport } = countingTransport(h);
    const calls = Array.from({ length: 10 }, () => h.dep.call(coalesced, transport, {}, ME));
    await h.clock.advance(100);
    const values = await Promise.all(calls);
    expect(sent.count).toBe(1);
    // one value, shared as it is (docs/runtime.md, "Coalescing": callers must not mutate it)
    for (const v of values) expect(v).toBe(values[0]);
  });

  it("calls of different identities, or different cacheKeys, run apart", async () => {
    const h = harness();
    const { sent, transport } = countingTransport(h);
    const calls = [
      h.dep.call(coalesced, transport, {}, identity("http://s/me")),
      h.dep.call(coalesced, transport, {}, identity("http://s/me?x=1")),
      h.dep.call(coalesced, transport, { cacheKey: "tenant-a" }, ME),
      h.dep.call(coalesced, transport, { cacheKey: "tenant-b" }, ME),
    ];
    await h.clock.advance(100);
    await Promise.all(calls);
    expect(sent.count).toBe(4);
  });

  it("two operations never share a chain, even with one identity", async () => {
    const h = harness();
    const { sent, transport } = countingTransport(h);
    const other = operation({ name: "getRefund", coalesce: true, retry: null });
    const calls = [h.dep.call(coalesced, transport, {}, ME), h.dep.call(other, transport, {}, ME)];
    await h.clock.advance(100);
    await Promise.all(calls);
    expect(sent.count).toBe(2);
  });

  it("an operation without coalesce, or a call without identity, runs alone", async () => {
    const h = harness();
    const { sent, transport } = countingTransport(h);
    const plain = operation({ retry: null });
    const calls = [
      h.dep.call(plain, transport, {}, ME),
      h.dep.call(plain, transport, {}, ME),
      h.dep.call(coalesced, transport),
      h.dep.call(coalesced, transport),
    ];
    await h.clock.advance(100);
    await Promise.all(calls);
    expect(sent.count).toBe(4);
  });

  it("retries, breaker and bulkhead admission happen once for the chain", async () => {
    const h = harness({
      breaker: breakerSettings,
      bulkhead: { maxConcurrent: 1, maxQueue: 0, queueTimeoutMs: 0, overflow: "reject" },
    });
    let attempts = 0;
    const op = operation({ coalesce: true });
    const transport = () => {
      attempts++;
      return after(h.clock, 10, () => {
        if (attempts < 3) throw httpFailure(503);
        return "ok";
      });
    };
    // with a bulkhead of one, five calls of their own would see four rejected
    const calls = Array.from({ length: 5 }, () =>
      track(h.dep.call(op, transport, {}, ME), h.clock),
    );
    await h.clock.runAll();
    expect(calls.map((c) => c.value)).toEqual(["ok", "ok", "ok", "ok", "ok"]);
    expect(attempts).toBe(3);
    expect(ofType(h.events, "retry-scheduled")).toHaveLength(2);
    expect(ofType(h.events, "bulkhead-rejected")).toHaveLength(0);
    expect(h.dep.health().breaker?.calls).toBe(3);
  });

  it("one caller's abort rejects that caller alone; the others complete", async () => {
    const h = harness();
    const { sent, transport } = countingTransport(h);
    const gone = new AbortController();
    const a = track(h.dep.call(coalesced, transport, { signal: gone.signal }, ME), h.clock);
    const b = track(h.dep.call(coalesced, transport, {}, ME), h.clock);
    await h.clock.advance(30);
    gone.abort(new Error("user left"));
    await h.clock.flush();
    expect(a.error).toMatchObject({ kind: "aborted" });
    expect(b.settled).toBe(false);
    await h.clock.advance(70);
    expect(b.value).toEqual({ id: 1 });
    expect(sent.count).toBe(1);
    // the leader's abort did not end the request
    expect(ofType(h.events, "attempt-end")[0]).toMatchObject({ outcome: "success" });
  });

  it("when every caller has gone, the request is aborted and forgotten", async () => {
    const h = harness();
    let signal: AbortSignal | undefined;
    const transport = (ctx: AttemptContext) => {
      signal = ctx.signal;
      return never<string>();
    };
    const one = new AbortController();
    const two = new AbortController();
    const a = track(h.dep.call(coalesced, transport, { signal: one.signal }, ME), h.clock);
    const b = track(h.dep.call(coalesced, transport, { signal: two.signal }, ME), h.clock);
    await h.clock.advance(10);
    one.abort();
    await h.clock.flush();
    expect(signal?.aborted).toBe(false);
    two.abort();
    await h.clock.flush();
    expect(signal?.aborted).toBe(true);
    expect([a.error, b.error]).toMatchObject([{ kind: "aborted" }, { kind: "aborted" }]);
    expect(ofType(h.events, "attempt-end")[0]).toMatchObject({ outcome: "cancelled" });
  });

  it("a caller with a shorter deadline gets its own deadline error; the chain goes on", async () => {
    const h = harness();
    const { sent, transport } = countingTransport(h, 300);
    const op = operation({
      coalesce: true,
      retry: null,
      timeout: { attemptMs: 500, totalMs: 1_000 },
    });
    const short = track(h.dep.call(op, transport, { deadline: 100 }, ME), h.clock);
    const long = track(h.dep.call(op, transport, { deadline: 800 }, ME), h.clock);
    await h.clock.advance(100);
    expect(short.error).toMatchObject({ kind: "deadline", tier: "deadline" });
    expect(long.settled).toBe(false);
    await h.clock.advance(200);
    expect(long.value).toEqual({ id: 1 });
    expect(sent.count).toBe(1);
  });

  it("the chain is bounded by the policy's total, whatever the callers' deadlines", async () => {
    const h = harness();
    const transport = () => never<string>();
    const op = operation({
      coalesce: true,
      retry: null,
      timeout: { attemptMs: null, totalMs: 400 },
    });
    const a = track(h.dep.call(op, transport, {}, ME), h.clock);
    await h.clock.advance(400);
    expect(a.error).toMatchObject({ kind: "deadline" });
  });

  it("an already aborted caller or an expired deadline never joins", async () => {
    const h = harness();
    const { sent, transport } = countingTransport(h);
    const done = new AbortController();
    done.abort();
    await expect(
      h.dep.call(coalesced, transport, { signal: done.signal }, ME),
    ).rejects.toMatchObject({ kind: "aborted" });
    await expect(h.dep.call(coalesced, transport, { deadline: 0 }, ME)).rejects.toMatchObject({
      kind: "deadline",
    });
    expect(sent.count).toBe(0);
  });

  it("a caller that brings its own fallback function runs alone", async () => {
    const h = harness();
    const { sent, transport } = countingTransport(h);
    const op = operation({ coalesce: true, retry: null, fallback: { kind: "provided" } as const });
    const calls = [
      h.dep.call(op, transport, { fallback: () => ({ id: 0 }) }, ME),
      h.dep.call(op, transport, { fallback: () => ({ id: 0 }) }, ME),
    ];
    await h.clock.advance(100);
    await Promise.all(calls);
    expect(sent.count).toBe(2);
  });

  it("two users with different Authorization never share (HTTP identity)", async () => {
    const h = harness();
    const seen: string[] = [];
    const fetch = ((_url: string, init: RequestInit) => {
      const auth = (init.headers as Record<string, string>).Authorization ?? "";
      seen.push(auth);
      return after(h.clock, 50, () => new Response(JSON.stringify({ user: auth })));
    }) as unknown as typeof globalThis.fetch;
    const request = (token: string): HttpRequest => ({
      fetch,
      baseUrl: "http://s",
      method: "GET",
      path: "/me",
      headers: { Authorization: `Bearer ${token}` },
    });
    const call = (token: string) => {
      const r = request(token);
      return h.dep.call(
        coalesced,
        (ctx) => sendHttp<{ user: string }>(r, ctx),
        {},
        () => httpIdentity(r),
      );
    };
    const calls = [call("alice"), call("bob"), call("alice"), call("bob")];
    await h.clock.advance(50);
    const values = await Promise.all(calls);
    expect(seen.sort()).toEqual(["Bearer alice", "Bearer bob"]);
    expect(values.map((v) => v.user)).toEqual([
      "Bearer alice",
      "Bearer bob",
      "Bearer alice",
      "Bearer bob",
    ]);
  });

  it("a per-call header partitions, as it does the stale cache", async () => {
    const h = harness();
    let count = 0;
    const fetch = (() => {
      count++;
      return after(h.clock, 50, () => new Response("{}"));
    }) as unknown as typeof globalThis.fetch;
    const call = (callHeaders?: Record<string, string>) => {
      const r: HttpRequest = {
        fetch,
        baseUrl: "http://s",
        method: "GET",
        path: "/me",
        callHeaders,
      };
      return h.dep.call(
        coalesced,
        (ctx) => sendHttp(r, ctx),
        {},
        () => httpIdentity(r),
      );
    };
    const calls = [call(), call({ "X-Tenant": "a" }), call({ "X-Tenant": "b" }), call()];
    await h.clock.advance(50);
    await Promise.all(calls);
    expect(count).toBe(3);
  });

  it("the coalescing key is the stale fallback's key: identity, then cacheKey", () => {
    expect(staleKey(ME, "k")).not.toBe(staleKey(ME, undefined));
    expect(staleKey(ME, undefined)).toBe(staleKey(identity("http://s/me"), undefined));
  });

  it("telemetry: joined calls are counted by call-coalesced, the chain by call-start/end", async () => {
    const h = harness();
    const { transport } = countingTransport(h);
    const calls = Array.from({ length: 4 }, () => h.dep.call(coalesced, transport, {}, ME));
    await h.clock.advance(100);
    await Promise.all(calls);
    const joined = ofType(h.events, "call-coalesced");
    expect(joined.map((e) => e.waiting)).toEqual([2, 3, 4]);
    expect(new Set(joined.map((e) => e.call))).toEqual(new Set([1]));
    expect(ofType(h.events, "call-start")).toHaveLength(1);
    expect(ofType(h.events, "call-end")).toMatchObject([{ call: 1, outcome: "success" }]);
  });
});

describe("coalescing, peer cases", () => {
  // Go singleflight, TestDoDupSuppress: concurrent Do calls on one key run fn fewer times than
  // callers and every caller gets its value. Here: exactly once, in virtual time.
  it("duplicate suppression: one transport call for many waiting callers", async () => {
    const h = harness();
    const { sent, transport } = countingTransport(h, 10, "bar");
    const calls = Array.from({ length: 10 }, () =>
      track(h.dep.call(coalesced, transport, {}, ME), h.clock),
    );
    await h.clock.advance(10);
    expect(calls.every((c) => c.value === "bar")).toBe(true);
    expect(sent.count).toBe(1);
  });

  // Go singleflight, TestDoErr: the error fn returns reaches the caller. Here it reaches every
  // joined caller, the same error object.
  it("errors are shared: every caller gets the chain's failure", async () => {
    const h = harness();
    const failure = httpFailure(503);
    const transport = () =>
      after(h.clock, 10, (): string => {
        throw failure;
      });
    const calls = Array.from({ length: 3 }, () =>
      track(h.dep.call(coalesced, transport, {}, ME), h.clock),
    );
    await h.clock.advance(10);
    for (const c of calls) expect(c.error).toBe(failure);
  });

  // Go singleflight, TestForget: once a key is forgotten, a new Do starts a new flight and later
  // callers get its result, not the old one's. Here a chain is forgotten when it settles or
  // every caller has gone.
  it("after a chain settles, or is abandoned, the next call starts a new chain", async () => {
    const h = harness();
    let n = 0;
    const transport = () => {
      const mine = ++n;
      return after(h.clock, 10, () => mine);
    };
    const first = h.dep.call(coalesced, transport, {}, ME);
    await h.clock.advance(10);
    expect(await first).toBe(1);
    const second = track(h.dep.call(coalesced, transport, {}, ME), h.clock);
    await h.clock.advance(10);
    expect(second.value).toBe(2);
    const gone = new AbortController();
    const abandoned = track(h.dep.call(coalesced, transport, { signal: gone.signal }, ME), h.clock);
    gone.abort();
    await h.clock.flush();
    expect(abandoned.error).toMatchObject({ kind: "aborted" });
    const fresh = track(h.dep.call(coalesced, transport, {}, ME), h.clock);
    await h.clock.advance(10);
    expect(fresh.value).toBe(4); // the abandoned chain was the third
  });

  // Go singleflight, TestPanicDo: a panicking fn makes every caller panic rather than hang. Here
  // a programming error in the transport reaches every caller as it is, and the key is freed.
  it("a bug in the transport reaches every joined caller as it is; none hangs", async () => {
    const h = harness();
    const bug = new TypeError("undefined is not a function");
    const transport = () =>
      after(h.clock, 10, (): string => {
        throw bug;
      });
    const calls = Array.from({ length: 5 }, () =>
      track(h.dep.call(coalesced, transport, {}, ME), h.clock),
    );
    await h.clock.advance(10);
    for (const c of calls) expect(c.error).toBe(bug);
    const { sent, transport: ok } = countingTransport(h, 10, "fine");
    const next = track(h.dep.call(coalesced, ok, {}, ME), h.clock);
    await h.clock.advance(10);
    expect(next.value).toBe("fine");
    expect(sent.count).toBe(1);
  });

  // opossum, test/cache.js "Using coalesce cache only": calls fired together with one key run
  // the action once and count the others as coalesce hits.
  it("hits are counted: N callers, N-1 coalesced", async () => {
    const h = harness();
    const { transport } = countingTransport(h);
    const calls = Array.from({ length: 3 }, () => h.dep.call(coalesced, transport, {}, ME));
    await h.clock.advance(100);
    await Promise.all(calls);
    expect(ofType(h.events, "call-coalesced")).toHaveLength(2);
  });

  // opossum, test/cache.js "coalesceResetOn: expect no hit after success / error": with
  // coalesceResetOn the entry goes when the action settles. resgen always behaves so (it keeps
  // no result after settling; a TTL cache is the stale fallback's business).
  it("no hit after success or after an error", async () => {
    const h = harness();
    let fail = false;
    const transport = () =>
      after(h.clock, 10, () => {
        if (fail)
          throw new ResilienceError({ kind: "network", message: "reset", transient: false });
        return "ok";
      });
    const a = h.dep.call(coalesced, transport, {}, ME);
    await h.clock.advance(10);
    await a;
    fail = true;
    const b = h.dep.call(coalesced, transport, {}, ME).catch(() => "failed");
    await h.clock.advance(10);
    expect(await b).toBe("failed");
    fail = false;
    const c = h.dep.call(coalesced, transport, {}, ME);
    await h.clock.advance(10);
    expect(await c).toBe("ok");
    expect(ofType(h.events, "call-coalesced")).toHaveLength(0);
  });

  // opossum, test/cache.js "No coalesce cache": without the option nothing is coalesced.
  it("without coalesce: no hits, a request per call", async () => {
    const h = harness();
    const { sent, transport } = countingTransport(h);
    const plain = operation({ retry: null });
    const calls = Array.from({ length: 3 }, () => h.dep.call(plain, transport, {}, ME));
    await h.clock.advance(100);
    await Promise.all(calls);
    expect(sent.count).toBe(3);
    expect(ofType(h.events, "call-coalesced")).toHaveLength(0);
  });
});
