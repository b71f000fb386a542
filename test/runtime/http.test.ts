import { describe, expect, it } from "vitest";
import {
  buildUrl,
  createDependency,
  createVirtualClock,
  isResilienceError,
  sendHttp,
} from "../../templates/runtime/index.js";
import { harness, operation } from "./helpers.js";

interface Sent {
  url: string;
  init: RequestInit;
}

function fakeFetch(responses: Array<Response | Error>): { fetch: typeof fetch; sent: Sent[] } {
  const sent: Sent[] = [];
  const fetch = ((url: string, init: RequestInit) => {
    sent.push({ url, init });
    const next = responses.shift() ?? new Response("[]", { status: 200 });
    return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
  }) as unknown as typeof globalThis.fetch;
  return { fetch, sent };
}

const request = {
  baseUrl: "https://api.example/v1/",
  method: "POST",
  path: "/charges/c%201",
  query: { expand: ["a", "b"], limit: 5, skip: undefined },
  body: { amount: 3 },
};

describe("http transport", () => {
  it("builds the URL with encoded query parameters", () => {
    expect(buildUrl(request.baseUrl, request.path, request.query)).toBe(
      "https://api.example/v1/charges/c%201?expand=a&expand=b&limit=5",
    );
  });

  it("sends JSON with the deadline and idempotency headers and the attempt's signal", async () => {
    const h = harness({
      deadline: { propagate: true, marginMs: 10, header: "x-request-timeout-ms", format: "ms" },
    });
    const { fetch, sent } = fakeFetch([new Response('{"id":"c1"}', { status: 201 })]);
    const op = operation({ repeatable: false, idempotencyKey: { header: "Idempotency-Key" } });
    const data = await h.dep.call(
      op,
      (ctx) => sendHttp<{ id: string }>({ ...request, fetch, headers: { "x-trace": "t" } }, ctx),
      {
        idempotencyKey: "k-1",
      },
    );
    expect(data).toEqual({ id: "c1" });
    const headers = sent[0]!.init.headers as Record<string, string>;
    expect(headers).toEqual({
      "x-trace": "t",
      "x-request-timeout-ms": "250",
      "Idempotency-Key": "k-1",
      "content-type": "application/json",
    });
    expect(sent[0]!.init.body).toBe('{"amount":3}');
    expect(sent[0]!.init.signal).toBeInstanceOf(AbortSignal);
  });

  it("turns a non-2xx response into an http error keeping status, headers and body, and retries it", async () => {
    const clock = createVirtualClock();
    const dep = createDependency(
      { name: "payments", deadline: null, breaker: null, bulkhead: null, budget: null },
      { clock },
    );
    const busy = () =>
      new Response("slow down", { status: 503, headers: { "retry-after": "0", "x-id": "1" } });
    const { fetch, sent } = fakeFetch([busy(), busy(), new Response("nope", { status: 404 })]);
    const error = await dep
      .call(operation(), (ctx) => sendHttp({ ...request, fetch }, ctx))
      .catch((e: unknown) => e);
    expect(sent).toHaveLength(3);
    expect(error).toMatchObject({
      kind: "http",
      status: 404,
      body: "nope",
      transient: false,
      attempts: 3,
    });
    const first = fakeFetch([busy()]);
    const exhausted = await dep
      .call(operation({ retry: null }), (ctx) => sendHttp({ ...request, fetch: first.fetch }, ctx))
      .catch((e: unknown) => e);
    expect(exhausted).toMatchObject({
      kind: "http",
      status: 503,
      transient: true,
      body: "slow down",
      retryAfterMs: 0,
      headers: { "retry-after": "0", "x-id": "1" },
    });
  });

  it("reports network failures and invalid JSON", async () => {
    const h = harness();
    const { fetch } = fakeFetch([
      new TypeError("fetch failed"),
      new Response("{oops", { status: 200 }),
    ]);
    const op = operation({ retry: null });
    const network = await h.dep
      .call(op, (ctx) => sendHttp({ ...request, fetch }, ctx))
      .catch((e: unknown) => e);
    expect(network).toMatchObject({ kind: "network", transient: true });
    const parse = await h.dep
      .call(op, (ctx) => sendHttp({ ...request, fetch }, ctx))
      .catch((e: unknown) => e);
    expect(isResilienceError(parse, "parse")).toBe(true);
  });

  it("reads text, empty and ignored bodies", async () => {
    const h = harness();
    const { fetch } = fakeFetch([
      new Response("plain"),
      new Response(null, { status: 204 }),
      new Response("x"),
    ]);
    const op = operation({ retry: null });
    expect(
      await h.dep.call(op, (ctx) => sendHttp({ ...request, fetch, responseType: "text" }, ctx)),
    ).toBe("plain");
    expect(await h.dep.call(op, (ctx) => sendHttp({ ...request, fetch }, ctx))).toBeUndefined();
    expect(
      await h.dep.call(op, (ctx) => sendHttp({ ...request, fetch, responseType: "none" }, ctx)),
    ).toBeUndefined();
  });
});
