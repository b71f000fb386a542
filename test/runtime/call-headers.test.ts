/**
 * Request headers of HTTP calls (docs/runtime.md, "HTTP"): the client's headers, a record or a
 * function called once per attempt, the call's own over them (names case-insensitive), and the
 * runtime's deadline and idempotency headers over both; a stale fallback keys on the headers
 * as sent. Run in virtual time against a fake fetch.
 */
import { describe, expect, it } from "vitest";
import {
  createDependency,
  createVirtualClock,
  httpIdentity,
  mergeHeaders,
  sendHttp,
  type HeaderSource,
  type HttpRequest,
  type VirtualClock,
} from "../../templates/runtime/index.js";
import { breakerSettings, dependencySettings, harness, operation } from "./helpers.js";

interface Sent {
  readonly url: string;
  readonly headers: Record<string, string>;
}

/** A fetch that records what it is sent and answers from `answers` (then 200 with `[]`). */
function fakeFetch(answers: (() => Response)[] = []): { fetch: typeof fetch; sent: Sent[] } {
  const sent: Sent[] = [];
  const fetch = ((url: string, init: RequestInit) => {
    sent.push({ url, headers: { ...(init.headers as Record<string, string>) } });
    const next = answers.shift();
    return Promise.resolve(next === undefined ? new Response("[]", { status: 200 }) : next());
  }) as unknown as typeof globalThis.fetch;
  return { fetch, sent };
}

const busy = (): Response => new Response("busy", { status: 503 });
const ok =
  (body: unknown): (() => Response) =>
  () =>
    new Response(JSON.stringify(body), { status: 200 });

/** Runs `call` to the end, moving virtual time through its backoff sleeps. */
async function settle<T>(clock: VirtualClock, call: Promise<T>): Promise<T> {
  const done = call.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  await clock.runAll();
  const result = await done;
  if ("error" in result) throw result.error;
  return result.value;
}

function request(
  fetch: typeof globalThis.fetch,
  overrides: Partial<HttpRequest> = {},
): HttpRequest {
  return { fetch, baseUrl: "http://profiles.internal", method: "GET", path: "/me", ...overrides };
}

describe("mergeHeaders", () => {
  it("lets a later record replace a name in any case, keeping the later spelling", () => {
    expect(
      mergeHeaders({ Authorization: "client", Accept: "application/json" }, undefined, {
        authorization: "call",
        "X-Trace": "1",
      }),
    ).toEqual({ Accept: "application/json", authorization: "call", "X-Trace": "1" });
  });
});

describe("the client's headers", () => {
  it("a function is called once per attempt, so a retry sends the rotated token", async () => {
    const h = harness();
    const { fetch, sent } = fakeFetch([busy, ok({ user: "a" })]);
    let token = 0;
    const headers: HeaderSource = () => ({ Authorization: `Bearer t${++token}` });
    const data = await settle(
      h.clock,
      h.dep.call(operation(), (ctx) =>
        sendHttp<{ user: string }>(request(fetch, { headers }), ctx),
      ),
    );
    expect(data).toEqual({ user: "a" });
    expect(sent.map((s) => s.headers["Authorization"])).toEqual(["Bearer t1", "Bearer t2"]);
    expect(token).toBe(2);
  });

  it("an async function is awaited within the attempt, and counts against its timeout", async () => {
    const h = harness();
    const { fetch, sent } = fakeFetch();
    const slow: HeaderSource = () =>
      new Promise((resolve) => h.clock.setTimer(() => resolve({ authorization: "late" }), 300));
    const fast: HeaderSource = () => Promise.resolve({ authorization: "Bearer fresh" });
    await h.dep.call(operation(), (ctx) => sendHttp(request(fetch, { headers: fast }), ctx));
    expect(sent[0]!.headers).toEqual({ authorization: "Bearer fresh" });
    // the token source takes longer than the 250 ms attempt: the attempt times out, nothing is sent
    const call = h.dep
      .call(operation({ retry: null }), (ctx) => sendHttp(request(fetch, { headers: slow }), ctx))
      .catch((e: unknown) => e);
    await h.clock.advance(250);
    expect(await call).toMatchObject({ kind: "timeout", tier: "attempt" });
    expect(sent).toHaveLength(1);
  });

  it("a function that throws fails the attempt, like a transport that throws", async () => {
    const h = harness();
    const { fetch, sent } = fakeFetch();
    const broken: HeaderSource = () => {
      throw new Error("token store unavailable");
    };
    const failure = await h.dep
      .call(operation({ retry: null }), (ctx) => sendHttp(request(fetch, { headers: broken }), ctx))
      .catch((e: unknown) => e);
    expect(failure).toMatchObject({ kind: "network", transient: false });
    expect((failure as Error).message).toContain("token store unavailable");
    expect(sent).toHaveLength(0);
  });
});

describe("the call's headers", () => {
  it("go over the client's, one value per name whatever its case", async () => {
    const h = harness();
    const { fetch, sent } = fakeFetch();
    await h.dep.call(operation(), (ctx) =>
      sendHttp(
        request(fetch, {
          headers: () => ({ Authorization: "Bearer service", "X-Client": "c" }),
          callHeaders: { authorization: "Bearer end-user", "X-Trace": "t" },
        }),
        ctx,
      ),
    );
    expect(sent[0]!.headers).toEqual({
      "X-Client": "c",
      authorization: "Bearer end-user",
      "X-Trace": "t",
    });
  });

  it("cannot replace the runtime's idempotency key or deadline, in any case: only idempotencyKey chooses the key", async () => {
    const h = harness({
      deadline: { propagate: true, marginMs: 10, header: "x-request-timeout-ms", format: "ms" },
    });
    const { fetch, sent } = fakeFetch([busy, ok({ id: "c1" })]);
    const op = operation({ repeatable: false, idempotencyKey: { header: "Idempotency-Key" } });
    const send = (callHeaders: Record<string, string>, key?: string) =>
      h.dep.call(
        op,
        (ctx) =>
          sendHttp(
            request(fetch, {
              method: "POST",
              headers: { "Idempotency-Key": "client-wide", "X-Request-Timeout-Ms": "999999" },
              callHeaders,
            }),
            ctx,
          ),
        key === undefined ? {} : { idempotencyKey: key },
      );
    await settle(h.clock, send({ "idempotency-key": "forwarded" }));
    const keys = sent.map((s) => s.headers["Idempotency-Key"]);
    // one generated key, the same on both attempts; neither the client's nor the call's, nor joined to them
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    for (const s of sent) {
      expect(Object.keys(s.headers).filter((n) => n.toLowerCase() === "idempotency-key")).toEqual([
        "Idempotency-Key",
      ]);
      expect(s.headers["x-request-timeout-ms"]).toMatch(/^\d{1,3}$/);
      expect(s.headers["X-Request-Timeout-Ms"]).toBeUndefined();
    }
    await settle(h.clock, send({}, "order-42"));
    expect(sent[2]!.headers["Idempotency-Key"]).toBe("order-42");
  });

  it("an operation without an idempotency key sends the caller's Idempotency-Key as it is", async () => {
    const h = harness();
    const { fetch, sent } = fakeFetch();
    await h.dep.call(operation(), (ctx) =>
      sendHttp(request(fetch, { callHeaders: { "Idempotency-Key": "mine" } }), ctx),
    );
    expect(sent[0]!.headers).toEqual({ "Idempotency-Key": "mine" });
  });
});

describe("a stale fallback keys on the headers as sent", () => {
  const stale = operation({
    retry: null,
    fallback: { kind: "stale", maxAgeMs: 60_000, maxEntries: 10, vary: ["X-Tenant-Id"] },
  });

  function profiles() {
    const clock = createVirtualClock();
    const dep = createDependency(dependencySettings({ breaker: breakerSettings }), { clock });
    const state = { down: false, user: "alice", next: "", headerCalls: 0 };
    const fetch = ((_url: string, init: RequestInit) => {
      if (state.down) return Promise.resolve(busy());
      const sent = new Headers(init.headers);
      return Promise.resolve(
        new Response(JSON.stringify({ user: sent.get("authorization") }), { status: 200 }),
      );
    }) as unknown as typeof globalThis.fetch;
    // the client's token comes from a function: the user it stands for changes between calls
    const headers: HeaderSource = () => {
      state.headerCalls++;
      const user = state.user;
      // a token that rotates once it has been handed out
      if (state.next !== "") [state.user, state.next] = [state.next, ""];
      return Promise.resolve({ Authorization: user });
    };
    const get = (callHeaders?: Record<string, string>) => {
      const req = request(fetch, { headers, callHeaders, vary: ["X-Tenant-Id"] });
      return dep.call(
        stale,
        (ctx) => sendHttp<{ user: string }>(req, ctx),
        {},
        () => httpIdentity(req),
      );
    };
    return { dep, state, get };
  }

  it("stores under the identity the attempt sent, and serves it only to the same one", async () => {
    const { state, get, dep } = profiles();
    expect(await get()).toEqual({ data: { user: "alice" }, degraded: false });
    state.user = "bob";
    expect(await get()).toEqual({ data: { user: "bob" }, degraded: false });
    expect(await get({ "X-Tenant-Id": "t1" })).toMatchObject({ degraded: false });
    state.down = true;
    state.user = "alice";
    state.next = "mallory";
    // the attempt fails: the lookup uses the identity it sent, Alice's, not a token read later
    expect(await get()).toMatchObject({ data: { user: "alice" }, degraded: true });
    expect(state.user).toBe("mallory");
    dep.breaker!.isolate();
    // no attempt now (the breaker is open): the headers function is called once for the lookup
    state.headerCalls = 0;
    state.user = "bob";
    expect(await get()).toMatchObject({
      data: { user: "bob" },
      degraded: true,
      reason: "circuit-open",
    });
    expect(state.headerCalls).toBe(1);
    // a per-call header partitions: its value, and that it was set at all
    const tenant = await get({ "X-Tenant-Id": "t2" }).catch((e: unknown) => e);
    expect(tenant).toMatchObject({ kind: "circuit-open" });
    expect(await get({ "x-tenant-id": "t1" })).toMatchObject({ degraded: true });
    // a user the cache never saw gets nothing
    state.user = "carol";
    expect(await get().catch((e: unknown) => e)).toMatchObject({ kind: "circuit-open" });
  });

  it("a lookup whose headers cannot be resolved serves nothing from the cache", async () => {
    const failing = createDependency(dependencySettings(), { clock: createVirtualClock() });
    const req = request(fakeFetch().fetch, {
      headers: () => {
        throw new Error("no token");
      },
      vary: [],
    });
    const result = await failing
      .call(
        stale,
        () => Promise.reject(new Error("boom")),
        {},
        () => httpIdentity(req),
      )
      .catch((e: unknown) => e);
    expect(result).toMatchObject({ kind: "network" });
  });
});
