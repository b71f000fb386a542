/**
 * Credentials of HTTP calls (docs/runtime.md, "Credentials"): the first requirement whose
 * credentials are all given is sent, a credential function is called once per attempt, and a
 * stale fallback tells callers apart by the credentials they send. Virtual time, fake fetch.
 */
import { describe, expect, it } from "vitest";
import {
  applyAuth,
  httpIdentity,
  sendHttp,
  type AuthRequirement,
  type HttpRequest,
} from "../../templates/runtime/index.js";
import { harness, operation } from "./helpers.js";

const BEARER = { type: "bearer" } as const;
const HEADER_KEY = { type: "apiKey", in: "header", name: "X-API-Key" } as const;
const QUERY_KEY = { type: "apiKey", in: "query", name: "api_key", scheme: "legacy" } as const;

interface Sent {
  readonly url: string;
  readonly headers: Record<string, string>;
}

function fakeFetch(statuses: number[] = []): { fetch: typeof fetch; sent: Sent[] } {
  const sent: Sent[] = [];
  const fetch = ((url: string, init: RequestInit) => {
    sent.push({ url, headers: { ...(init.headers as Record<string, string>) } });
    return Promise.resolve(new Response("{}", { status: statuses.shift() ?? 200 }));
  }) as unknown as typeof globalThis.fetch;
  return { fetch, sent };
}

describe("applyAuth", () => {
  const require: AuthRequirement = [[QUERY_KEY], [BEARER, HEADER_KEY]];

  it("sends the first alternative whose credentials are all given", () => {
    expect(applyAuth({ credentials: { apiKey: { legacy: "old" } }, require })).toEqual({
      headers: {},
      query: { api_key: "old" },
    });
    expect(applyAuth({ credentials: { bearer: "t", apiKey: "k" }, require })).toEqual({
      headers: { authorization: "Bearer t", "X-API-Key": "k" },
      query: {},
    });
  });

  it("sends nothing when no alternative is complete, or nothing is required", () => {
    const none = { headers: {}, query: {} };
    expect(applyAuth({ credentials: { bearer: "t" }, require })).toEqual(none);
    expect(applyAuth({ credentials: undefined, require })).toEqual(none);
    expect(applyAuth({ credentials: { bearer: "t" }, require: [] })).toEqual(none);
  });

  it("encodes basic credentials as base64 of UTF-8 (RFC 7617)", () => {
    const parts = applyAuth({
      credentials: { basic: { username: "zoë", password: "p:ss" } },
      require: [[{ type: "basic" }]],
    });
    expect(parts).toEqual({
      headers: { authorization: `Basic ${Buffer.from("zoë:p:ss").toString("base64")}` },
      query: {},
    });
  });

  it("is synchronous for values, and awaits functions that return promises", async () => {
    const sync = applyAuth({ credentials: { bearer: () => "now" }, require: [[BEARER]] });
    expect(sync).toEqual({ headers: { authorization: "Bearer now" }, query: {} });
    const later = applyAuth({
      credentials: { bearer: () => Promise.resolve("later") },
      require: [[BEARER]],
    });
    expect(later).toBeInstanceOf(Promise);
    expect(await later).toEqual({ headers: { authorization: "Bearer later" }, query: {} });
  });
});

describe("credentials in sendHttp", () => {
  it("calls a credential function once per attempt: a retry sends the refreshed token", async () => {
    const h = harness();
    const { fetch, sent } = fakeFetch([503]);
    let issued = 0;
    const request: HttpRequest = {
      fetch,
      baseUrl: "http://vault",
      method: "GET",
      path: "/secrets",
      query: { page: 2 },
      auth: {
        credentials: { bearer: () => Promise.resolve(`t${++issued}`), apiKey: { legacy: "k" } },
        require: [[BEARER], [QUERY_KEY]],
      },
    };
    const call = h.dep.call(operation(), (ctx) => sendHttp(request, ctx));
    await h.clock.runAll();
    await call;
    expect(sent.map((s) => s.headers["authorization"])).toEqual(["Bearer t1", "Bearer t2"]);
    expect(sent.map((s) => s.url)).toEqual([
      "http://vault/secrets?page=2",
      "http://vault/secrets?page=2",
    ]);
  });

  it("puts an API key in the query over a parameter of the same name", async () => {
    const h = harness();
    const { fetch, sent } = fakeFetch();
    await h.dep.call(operation(), (ctx) =>
      sendHttp(
        {
          fetch,
          baseUrl: "http://vault",
          method: "GET",
          path: "/secrets",
          query: { api_key: "from-input", page: 1 },
          auth: { credentials: { apiKey: { legacy: "real" } }, require: [[QUERY_KEY]] },
        },
        ctx,
      ),
    );
    expect(sent[0]!.url).toBe("http://vault/secrets?api_key=real&page=1");
  });

  it("goes over the client's headers and under the call's", async () => {
    const h = harness();
    const { fetch, sent } = fakeFetch();
    const send = (callHeaders?: Record<string, string>) =>
      h.dep.call(operation(), (ctx) =>
        sendHttp(
          {
            fetch,
            baseUrl: "http://vault",
            method: "GET",
            path: "/me",
            headers: { Authorization: "Bearer client-wide", "X-API-Key": "client-wide" },
            callHeaders,
            auth: {
              credentials: { bearer: "scheme", apiKey: "scheme" },
              require: [[BEARER, HEADER_KEY]],
            },
          },
          ctx,
        ),
      );
    await send();
    expect(sent[0]!.headers).toEqual({ authorization: "Bearer scheme", "X-API-Key": "scheme" });
    await send({ authorization: "Bearer end-user" });
    expect(sent[1]!.headers).toEqual({ authorization: "Bearer end-user", "X-API-Key": "scheme" });
  });

  it("gives a stale fallback the credentials as part of the identity: key header and query key", async () => {
    const identity = (
      credentials: { apiKey?: string | { legacy: string } },
      require: AuthRequirement,
    ) =>
      httpIdentity({
        baseUrl: "http://vault",
        method: "GET",
        path: "/me",
        vary: [],
        auth: { credentials, require },
      });
    const a = await identity({ apiKey: "alice" }, [[HEADER_KEY]]);
    expect(await identity({ apiKey: "alice" }, [[HEADER_KEY]])).toBe(a);
    expect(await identity({ apiKey: "bob" }, [[HEADER_KEY]])).not.toBe(a);
    const q = await identity({ apiKey: { legacy: "alice" } }, [[QUERY_KEY]]);
    expect(q).toContain("api_key=alice");
    expect(await identity({ apiKey: { legacy: "bob" } }, [[QUERY_KEY]])).not.toBe(q);
  });
});
