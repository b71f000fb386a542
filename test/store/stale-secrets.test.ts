// Nothing secret reaches Redis in clear (docs/store.md, "Shared stale cache"): a request's
// credentials (bearer token, API key header, cookie, query key, a path segment) are part of its
// stale-cache identity, and the store keeps only a SHA-256 of that identity. Every key and every
// value under the test's prefix is read back from the server and searched for each credential.
import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createDependency,
  createRedisStore,
  httpIdentity,
  requestIdentity,
  sendHttp,
  staleKey,
  StaleCache,
  StoreStale,
  systemClock,
  type HttpRequest,
  type IdempotencyEvent,
  type RouteSettings,
} from "../../templates/runtime/index.js";
import { IdempotentRoutes } from "../../templates/runtime/idempotent-route.js";
import { connectRedis, deletePrefix, testPrefix, type TestRedis } from "../helpers/redis.js";
import { dependencySettings, operation } from "../runtime/helpers.js";

let redis: TestRedis;
const prefixes: string[] = [];

beforeAll(async () => {
  redis = await connectRedis();
});
afterAll(async () => {
  for (const prefix of prefixes) await deletePrefix(redis, prefix);
  await redis.close();
});

function newPrefix(): string {
  const prefix = testPrefix();
  prefixes.push(prefix);
  return prefix;
}

/** Every key under `prefix`, each with everything it holds, as the server has them. */
async function contents(prefix: string): Promise<{ key: string; text: string }[]> {
  const out: { key: string; text: string }[] = [];
  for await (const keys of redis.scanIterator({ MATCH: `${prefix}:*`, COUNT: 500 }))
    for (const key of keys) {
      const type = await redis.type(key);
      const parts: unknown =
        type === "hash"
          ? await redis.hGetAll(key)
          : type === "zset"
            ? await redis.zRangeWithScores(key, 0, -1)
            : type === "string"
              ? await redis.get(key)
              : type === "set"
                ? await redis.sMembers(key)
                : type === "list"
                  ? await redis.lRange(key, 0, -1)
                  : `unexpected type ${type}`;
      out.push({ key, text: JSON.stringify(parts) });
    }
  return out;
}

/** The credentials found in clear in a key name or a value, with where. */
function leaks(found: { key: string; text: string }[], secrets: readonly string[]): string[] {
  const out: string[] = [];
  for (const { key, text } of found)
    for (const secret of secrets) {
      if (key.includes(secret)) out.push(`key ${key} holds ${secret}`);
      if (text.includes(secret)) out.push(`value of ${key} holds ${secret}`);
    }
  return out;
}

const until = async (done: () => Promise<boolean>): Promise<void> => {
  for (let i = 0; i < 400; i++) {
    if (await done()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error("the store never got the write");
};

describe("the shared stale cache keeps no credential in clear", () => {
  it("scans the server after an HTTP call that carried a bearer token, key header, cookie, query key and path secret", async () => {
    const prefix = newPrefix();
    const secret = (name: string) => `${name}_${randomUUID().replaceAll("-", "")}`;
    const bearer = secret("sk_live");
    const partner = secret("partner");
    const apiKey = secret("apikey");
    const cookie = secret("session");
    const query = secret("query");
    const inPath = secret("path");
    const op = operation({
      name: "getAccount",
      retry: null,
      fallback: {
        kind: "stale",
        maxAgeMs: 60_000,
        maxEntries: 10,
        vary: ["x-partner-key"],
        store: "redis",
      },
    });
    let up = true;
    const fetch = (() =>
      Promise.resolve(
        up
          ? new Response(JSON.stringify({ account: "a-1", plan: "pro" }))
          : new Response("down", { status: 503 }),
      )) as unknown as typeof globalThis.fetch;
    const request: HttpRequest = {
      fetch,
      baseUrl: "http://partner.invalid/v1",
      method: "GET",
      path: `/accounts/${inPath}`,
      query: { api_key: query },
      headers: { Authorization: `Bearer ${bearer}`, "X-Partner-Key": partner },
      callHeaders: { cookie: `sid=${cookie}` },
      auth: {
        credentials: { apiKey },
        require: [[{ type: "apiKey", in: "header", name: "x-api-key" }]],
      },
      vary: ["x-partner-key"],
    };
    const [a, b] = [0, 1].map(() =>
      createDependency(dependencySettings({ name: "partner" }), {
        store: createRedisStore(redis, { prefix, timeoutMs: 2_000 }),
      }),
    );
    const call = (dep: typeof a) =>
      dep!.call(
        op,
        (ctx) => sendHttp<unknown>(request, ctx),
        {},
        () => httpIdentity(request),
      );
    expect(await call(a)).toEqual({ data: { account: "a-1", plan: "pro" }, degraded: false });
    await until(async () => (await contents(prefix)).length > 0);
    // the other replica serves it from the store: the entry is usable, not just unreadable
    up = false;
    expect(await call(b)).toMatchObject({ data: { account: "a-1", plan: "pro" }, degraded: true });
    const found = await contents(prefix);
    expect(found.length).toBeGreaterThan(0);
    const secrets = [bearer, partner, apiKey, cookie, query, inPath, "sk_live", "Bearer"];
    expect(leaks(found, secrets)).toEqual([]);
    // nor does the identity's URL reach the store
    expect(leaks(found, ["partner.invalid", "/accounts/"])).toEqual([]);
  });
});

// --- property: random identities carrying random credentials ------------------------------

/** A credential: 16 to 40 characters, never only hex digits (a digest is hex). */
const credential = fc
  .string({
    unit: fc.constantFrom(
      ..."ABCDEFGHIJKLMNOPQRSTUVWXYZghijklmnopqrstuvwxyz0123456789_-".split(""),
    ),
    minLength: 15,
    maxLength: 39,
  })
  .map((s) => `Q${s}`);

const identityShape = fc.record({
  bearer: fc.option(credential, { nil: undefined }),
  apiKeyHeader: fc.option(credential, { nil: undefined }),
  cookie: fc.option(credential, { nil: undefined }),
  queryName: fc.constantFrom("api_key", "token", "access_token", "sig"),
  queryValue: fc.option(credential, { nil: undefined }),
  pathSecret: fc.option(credential, { nil: undefined }),
  cacheKey: fc.option(credential, { nil: undefined }),
  method: fc.constantFrom("GET", "HEAD"),
});
type Shape = typeof identityShape extends fc.Arbitrary<infer T> ? T : never;

function identityOf(shape: Shape): { key: string; secrets: string[] } {
  const headers: Record<string, string> = {};
  const secrets: string[] = [];
  if (shape.bearer !== undefined) {
    headers.Authorization = `Bearer ${shape.bearer}`;
    secrets.push(shape.bearer);
  }
  if (shape.apiKeyHeader !== undefined) {
    headers["x-api-key"] = shape.apiKeyHeader;
    secrets.push(shape.apiKeyHeader);
  }
  if (shape.cookie !== undefined) {
    headers.Cookie = `session=${shape.cookie}`;
    secrets.push(shape.cookie);
  }
  let url = "https://api.example/v2/items";
  if (shape.pathSecret !== undefined) {
    url += `/${encodeURIComponent(shape.pathSecret)}/detail`;
    secrets.push(shape.pathSecret);
  }
  if (shape.queryValue !== undefined) {
    url += `?${shape.queryName}=${encodeURIComponent(shape.queryValue)}`;
    secrets.push(shape.queryValue);
  }
  if (shape.cacheKey !== undefined) secrets.push(shape.cacheKey);
  const identity = requestIdentity({ method: shape.method, url, headers, vary: ["x-api-key"] });
  return { key: staleKey(identity, shape.cacheKey), secrets };
}

describe("property: no credential byte string reaches a Redis key or value", () => {
  it("after stale puts and gets of random identities", async () => {
    const prefix = newPrefix();
    const store = createRedisStore(redis, { prefix, timeoutMs: 2_000 });
    const cache = () =>
      new StaleCache(
        500,
        60_000,
        new StoreStale(store, {
          dependency: "vault",
          operation: "getItem",
          maxAgeMs: 60_000,
          maxEntries: 500,
        }),
      );
    const [a, b] = [cache(), cache()];
    const all: string[] = [];
    let served = 0;
    await fc.assert(
      fc.asyncProperty(identityShape, fc.integer(), async (shape, n) => {
        const { key, secrets } = identityOf(shape);
        all.push(...secrets);
        a.set(key, { n }, systemClock.now());
        // the write is fire-and-forget: the other replica reads it once it lands
        let hit: unknown;
        for (let i = 0; i < 200 && hit === undefined; i++) {
          hit = await b.lookup(key, systemClock.now());
          if (hit === undefined) await new Promise((r) => setTimeout(r, 2));
        }
        expect(hit).toMatchObject({ data: { n } });
        served++;
        expect(leaks(await contents(prefix), secrets)).toEqual([]);
      }),
      { numRuns: 60 },
    );
    expect(served).toBe(60);
    expect(leaks(await contents(prefix), all)).toEqual([]);
  });

  it("after idempotent requests of callers whose scope headers and URL carry credentials, answered with a session cookie", async () => {
    const prefix = newPrefix();
    const store = createRedisStore(redis, { prefix, timeoutMs: 2_000 });
    const route: RouteSettings = {
      method: "POST",
      path: "/orders",
      essential: true,
      idempotency: {
        header: "idempotency-key",
        ttlMs: 60_000,
        store: "redis",
        required: true,
        maxBytes: 65_536,
        scope: ["authorization", "x-api-key"],
      },
    };
    const all: string[] = [];
    await fc.assert(
      fc.asyncProperty(credential, credential, credential, credential, async (...secrets) => {
        const [bearer, apiKey, query, session] = secrets;
        all.push(...secrets);
        const events: IdempotencyEvent[] = [];
        const routes = new IdempotentRoutes("orders", [route], store, systemClock, 1, (e) =>
          events.push(e),
        );
        // a response as node:http's has it, enough for the middleware to record one
        interface FakeResponse {
          statusCode: number;
          getHeaders(): Record<string, string>;
          writeHead(): FakeResponse;
          write(): boolean;
          end(body?: unknown): FakeResponse;
          once(): FakeResponse;
        }
        const res: FakeResponse = {
          statusCode: 201,
          // a session the handler hands out is the caller's secret too: it is never stored
          getHeaders: () => ({ "content-type": "text/plain", "set-cookie": `sid=${session}` }),
          writeHead: () => res,
          write: () => true,
          end: () => res,
          once: () => res,
        };
        routes.handle(route, {
          req: {
            method: "POST",
            url: `/orders?api_key=${query}`,
            headers: {
              authorization: `Bearer ${bearer}`,
              "x-api-key": apiKey,
              "idempotency-key": randomUUID(),
            },
          },
          res,
          budgetMs: 2_000,
          run: () => res.end("order placed"),
          respond: () => undefined,
        });
        for (let i = 0; i < 400 && events.length === 0; i++)
          await new Promise((r) => setTimeout(r, 2));
        expect(events.map((e) => e.outcome)).toEqual(["executed"]);
        expect(leaks(await contents(prefix), secrets)).toEqual([]);
      }),
      { numRuns: 30 },
    );
    expect((await contents(prefix)).length).toBe(30);
    expect(leaks(await contents(prefix), all)).toEqual([]);
  });
});
