/**
 * Redirects (docs/runtime.md, "Redirects"): sendHttp never lets fetch follow one. Two servers on
 * 127.0.0.1, on two ports, are two origins: the tests assert what the second one received (no
 * credential, no deadline header: nothing at all) and what the caller gets.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createDependency,
  isHttpError,
  MAX_REDIRECTS,
  sendHttp,
  type HttpRequest,
  type OperationSettings,
} from "../../templates/runtime/index.js";
import { operation } from "./helpers.js";
import { startOrigin, type Answer, type Origin } from "./origins.js";

const SECRET = "sk_live_partner_0123456789";
const BEARER = "tok_live_abcdef";
const DEADLINE = "x-request-timeout-ms";

let a: Origin;
let b: Origin;
beforeAll(async () => {
  [a, b] = await Promise.all([startOrigin(), startOrigin()]);
});
afterEach(() => {
  a.received.length = 0;
  b.received.length = 0;
  a.answer = () => ({ status: 200, body: '{"from":"a"}' });
  b.answer = () => ({ status: 200, body: '{"from":"b"}' });
});
afterAll(async () => {
  await Promise.all([a.close(), b.close()]);
});

const dependency = () =>
  createDependency({
    name: "partner",
    deadline: { propagate: true, marginMs: 0, header: DEADLINE, format: "ms" },
    breaker: null,
    bulkhead: null,
    budget: null,
  });

// the credentials a generated client sends: an API key header and a bearer token, and an API
// key in the query
const auth: HttpRequest["auth"] = {
  credentials: { apiKey: { partner: SECRET, query: "q_" + SECRET }, bearer: BEARER },
  require: [
    [
      { type: "apiKey", in: "header", name: "X-Partner-Key", scheme: "partner" },
      { type: "apiKey", in: "query", name: "api_key", scheme: "query" },
      { type: "bearer" },
    ],
  ],
};

const once = operation({
  name: "getOrder",
  retry: null,
  timeout: { attemptMs: 2_000, totalMs: 3_000 },
});

function request(overrides: Partial<HttpRequest> = {}): HttpRequest {
  return {
    baseUrl: a.url,
    method: "GET",
    path: "/v1/orders/o-1",
    headers: { "x-client": "web" },
    auth,
    ...overrides,
  };
}

function call(req: HttpRequest, op: OperationSettings = once): Promise<unknown> {
  return dependency().call(op, (ctx) => sendHttp(req, ctx));
}

const redirectTo = (location: string, status = 302): Answer => ({
  status,
  headers: { location },
  body: '{"moved":true}',
});

describe("redirects: none (the default)", () => {
  it("follows no redirect to another origin: the other origin receives nothing, the caller an http error naming the location", async () => {
    a.answer = () => redirectTo(`${b.url}/landing?token=${SECRET}`);
    const error = await call(request()).catch((e: unknown) => e);
    expect(b.received).toEqual([]);
    expect(a.received).toHaveLength(1);
    expect(isHttpError(error)).toBe(true);
    if (!isHttpError(error)) return;
    expect(error.status).toBe(302);
    expect(error.transient).toBe(false);
    expect(error.message).toContain(`redirecting to ${b.url}/landing?…`);
    expect(error.message).not.toContain(SECRET);
    expect(error.headers.location).toBe(`${b.url}/landing?token=${SECRET}`);
    expect(error.body).toBe('{"moved":true}');
  });

  it("follows no redirect to the same origin either", async () => {
    a.answer = (r) => (r.url.startsWith("/v1/") ? redirectTo("/v2/orders/o-1", 301) : a.answer(r));
    const error = await call(request()).catch((e: unknown) => e);
    expect(a.received.map((r) => r.url)).toEqual([`/v1/orders/o-1?api_key=q_${SECRET}`]);
    expect(isHttpError(error) && error.status).toBe(301);
  });

  it("never takes a redirect's body for the answer: a fallback serves it, degraded", async () => {
    a.answer = () => redirectTo(`${b.url}/phish`);
    const op = operation({
      name: "getOrder",
      retry: null,
      fallback: { kind: "value", value: { from: "fallback" } },
    });
    const dep = dependency();
    const result = await dep.call(op, (ctx) => sendHttp(request(), ctx));
    expect(result).toMatchObject({ data: { from: "fallback" }, degraded: true });
    expect(b.received).toEqual([]);
  });

  it("is not retried by a retry on the usual failures: the same request would be redirected again", async () => {
    a.answer = () => redirectTo(`${b.url}/x`, 307);
    const error = await call(request(), operation({ name: "getOrder" })).catch((e: unknown) => e);
    expect(isHttpError(error) && error.status).toBe(307);
    expect(a.received).toHaveLength(1);
  });
});

describe("redirects: same-origin", () => {
  const follow = (overrides: Partial<HttpRequest> = {}) =>
    request({ redirects: "same-origin", ...overrides });

  it("follows a redirect to the same origin, with the credentials and a fresh deadline header", async () => {
    a.answer = (r) =>
      r.url.startsWith("/v1/")
        ? redirectTo("/v2/orders/o-1", 301)
        : { status: 200, body: '{"from":"v2"}' };
    expect(await call(follow())).toEqual({ from: "v2" });
    expect(a.received.map((r) => r.url)).toEqual([
      `/v1/orders/o-1?api_key=q_${SECRET}`,
      `/v2/orders/o-1?api_key=q_${SECRET}`,
    ]);
    const second = a.received[1]!.headers;
    expect(second["x-partner-key"]).toBe(SECRET);
    expect(second.authorization).toBe(`Bearer ${BEARER}`);
    expect(second["x-client"]).toBe("web");
    expect(Number(second[DEADLINE])).toBeGreaterThan(0);
    expect(Number(second[DEADLINE])).toBeLessThanOrEqual(Number(a.received[0]!.headers[DEADLINE]));
  });

  it("follows none to another origin: it receives nothing, and the caller gets the redirect as an error", async () => {
    a.answer = () => redirectTo(`${b.url}/v1/orders/o-1`);
    const error = await call(follow()).catch((e: unknown) => e);
    expect(b.received).toEqual([]);
    expect(isHttpError(error)).toBe(true);
    if (!isHttpError(error)) return;
    expect(error.status).toBe(302);
    expect(error.message).toContain(`redirecting to ${b.url}/v1/orders/o-1`);
    expect(error.message).toContain(`only redirects to ${a.url}`);
  });

  it("follows none to another origin after a same-origin hop either", async () => {
    a.answer = (r) =>
      r.url.startsWith("/v1/") ? redirectTo("/v2/o") : redirectTo(`${b.url}/v3/o`, 308);
    const error = await call(follow()).catch((e: unknown) => e);
    expect(a.received).toHaveLength(2);
    expect(b.received).toEqual([]);
    expect(isHttpError(error) && error.status).toBe(308);
  });

  it("counts another scheme or port on the same host as another origin", async () => {
    a.answer = () => redirectTo(a.url.replace("http:", "https:") + "/x");
    const error = await call(follow()).catch((e: unknown) => e);
    expect(isHttpError(error) && error.status).toBe(302);
    expect(a.received).toHaveLength(1);
  });

  it(`follows at most ${String(MAX_REDIRECTS)} redirects in a row`, async () => {
    a.answer = (r) => redirectTo(`/hop/${String(Number(r.url.split("/")[2] ?? 0) + 1)}`);
    const error = await call(follow({ path: "/hop/0" })).catch((e: unknown) => e);
    expect(a.received).toHaveLength(MAX_REDIRECTS + 1);
    expect(isHttpError(error) && error.message).toContain(`no more than ${String(MAX_REDIRECTS)}`);
  });

  it("turns a POST into a GET without a body on a 303", async () => {
    a.answer = (r) =>
      r.method === "POST" ? redirectTo("/orders/o-9", 303) : { status: 200, body: '{"id":"o-9"}' };
    const post = follow({
      method: "POST",
      path: "/orders",
      body: { item: "book" },
      repeatable: false,
    });
    const op = operation({ name: "createOrder", repeatable: false, retry: null });
    expect(await call(post, op)).toEqual({ id: "o-9" });
    expect(a.received.map((r) => [r.method, r.body])).toEqual([
      ["POST", '{"item":"book"}'],
      ["GET", ""],
    ]);
    expect(a.received[1]!.headers["content-type"]).toBeUndefined();
    expect(a.received[1]!.headers["x-partner-key"]).toBe(SECRET);
  });

  it("never sends the POST of a call that is not repeatable again on a 307 or 308", async () => {
    for (const status of [307, 308]) {
      a.received.length = 0;
      a.answer = (r) =>
        r.url.startsWith("/orders?")
          ? redirectTo("/orders-v2", status)
          : { status: 201, body: "{}" };
      const post = follow({
        method: "POST",
        path: "/orders",
        body: { item: "book" },
        repeatable: false,
      });
      const op = operation({ name: "createOrder", repeatable: false, retry: null });
      const error = await call(post, op).catch((e: unknown) => e);
      expect(a.received.map((r) => r.method)).toEqual(["POST"]);
      expect(isHttpError(error) && error.status).toBe(status);
      expect(isHttpError(error) && error.message).toContain("not repeatable");
    }
  });

  it("sends the POST of a repeatable call again on a 307, body and idempotency key included", async () => {
    a.answer = (r) =>
      r.url.startsWith("/orders?")
        ? redirectTo("/orders-v2", 307)
        : { status: 201, body: '{"ok":true}' };
    const post = follow({
      method: "POST",
      path: "/orders",
      body: { item: "book" },
      repeatable: true,
    });
    const op = operation({
      name: "createOrder",
      repeatable: false,
      idempotencyKey: { header: "Idempotency-Key" },
      retry: null,
    });
    expect(await call(post, op)).toEqual({ ok: true });
    expect(a.received.map((r) => [r.method, r.url.split("?")[0], r.body])).toEqual([
      ["POST", "/orders", '{"item":"book"}'],
      ["POST", "/orders-v2", '{"item":"book"}'],
    ]);
    const keys = a.received.map((r) => r.headers["idempotency-key"]);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(a.received[1]!.headers["content-type"]).toBe("application/json");
  });

  it("fails on a redirect with no Location", async () => {
    a.answer = () => ({ status: 302, body: "" });
    const error = await call(follow()).catch((e: unknown) => e);
    expect(isHttpError(error) && error.message).toContain("it has no Location");
  });
});

describe("a browser's opaque redirect", () => {
  // with redirect: "manual", a browser gives status 0, type "opaqueredirect" and no headers
  const opaque = (() =>
    Promise.resolve({
      type: "opaqueredirect",
      status: 0,
      ok: false,
      headers: new Headers(),
      body: null,
    } as unknown as Response)) as typeof fetch;

  it("is an http error of status 0, followed under neither setting", async () => {
    for (const redirects of ["none", "same-origin"] as const) {
      const error = await call(request({ fetch: opaque, redirects })).catch((e: unknown) => e);
      expect(isHttpError(error)).toBe(true);
      if (!isHttpError(error)) continue;
      expect(error.status).toBe(0);
      expect(error.message).toContain("answered a redirect");
    }
  });
});

describe("what fetch is asked", () => {
  it("sends every request with redirect: manual", async () => {
    const seen: RequestInit["redirect"][] = [];
    const spy = ((_url: string, init: RequestInit) => {
      seen.push(init.redirect);
      return Promise.resolve(new Response("{}", { status: 200 }));
    }) as typeof fetch;
    await call(request({ fetch: spy }));
    await call(request({ fetch: spy, redirects: "same-origin" }));
    expect(seen).toEqual(["manual", "manual"]);
  });
});
