/**
 * A stale entry is never served to a request whose identity differs (docs/runtime.md,
 * "Fallback"): method, full URL, the values as sent of Authorization, Cookie, every per-call
 * header and the policy's vary headers (the client's headers with the call's over them, names
 * case-insensitive), and cacheKey.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ALWAYS_VARY, mergeHeaders, requestIdentity } from "../../templates/runtime/index.js";
import { harness, httpFailure, operation } from "./helpers.js";

const VARY = ["X-Tenant-Id"];
const names = fc.constantFrom(
  "Authorization",
  "authorization",
  "Cookie",
  "X-Tenant-Id",
  "x-tenant-id",
  "X-Trace",
  "Accept",
);
const headers = fc.option(
  fc.dictionary(names, fc.constantFrom("a", "b", "", " a", "a, b"), { maxKeys: 3 }),
  { nil: undefined },
);
const request = fc.record({
  method: fc.constantFrom("GET", "HEAD"),
  url: fc.constantFrom("http://s/me", "http://s/me?x=1", "http://s/me?x=2", "http://t/me"),
  headers,
  callHeaders: headers,
  cacheKey: fc.option(fc.constantFrom("k1", "k2", ""), { nil: undefined }),
});
interface Request {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>> | undefined;
  readonly callHeaders: Readonly<Record<string, string>> | undefined;
  readonly cacheKey: string | undefined;
}

/**
 * Whether two requests are the same to the dependency, computed independently of
 * requestIdentity: same method, URL and cacheKey, and the same value sent for every vary header
 * of either (Authorization, Cookie, the policy's, and each header either call sets), where the
 * value sent is the last one set for the name, in any case, by the client and then the call.
 */
function sameIdentity(a: Request, b: Request): boolean {
  const values = (r: Request, n: string) => {
    let sent: string[] = [];
    for (const h of [r.headers, r.callHeaders])
      for (const [k, v] of Object.entries(h ?? {})) if (k.toLowerCase() === n) sent = [v];
    return sent;
  };
  const vary = new Set([
    ...ALWAYS_VARY,
    ...VARY.map((v) => v.toLowerCase()),
    ...[a, b].flatMap((r) => Object.keys(r.callHeaders ?? {}).map((k) => k.toLowerCase())),
  ]);
  return (
    a.method === b.method &&
    a.url === b.url &&
    a.cacheKey === b.cacheKey &&
    [...vary].every((n) => JSON.stringify(values(a, n)) === JSON.stringify(values(b, n)))
  );
}

const key = (r: Request) =>
  requestIdentity({
    method: r.method,
    url: r.url,
    headers: mergeHeaders(r.headers, r.callHeaders),
    vary: [...VARY, ...Object.keys(r.callHeaders ?? {})],
  });

describe("stale cache identity", () => {
  it("serves an entry exactly to requests of the same identity", async () => {
    await fc.assert(
      fc.asyncProperty(request, request, async (a, b) => {
        const h = harness();
        const op = operation({
          retry: null,
          fallback: { kind: "stale", maxAgeMs: 60_000, maxEntries: 10, vary: VARY },
        });
        await h.dep.call(op, () => "a's data", { cacheKey: a.cacheKey }, key(a));
        const served = await h.dep
          .call(
            op,
            () => Promise.reject<string>(httpFailure(503, true)),
            { cacheKey: b.cacheKey },
            key(b),
          )
          .then(
            (r) => r.data,
            () => undefined,
          );
        // never to another identity; always to the same request made the same way
        if (served !== undefined) expect(sameIdentity(a, b)).toBe(true);
        if (JSON.stringify(a) === JSON.stringify(b)) expect(served).toBe("a's data");
      }),
      { numRuns: 500 },
    );
  });

  it("keys never collide across distinct identities", () => {
    fc.assert(
      fc.property(request, request, (a, b) => {
        if (key(a) === key(b))
          expect(sameIdentity({ ...a, cacheKey: undefined }, { ...b, cacheKey: undefined })).toBe(
            true,
          );
      }),
      { numRuns: 2_000 },
    );
  });

  it("a miss serves otherwise, labelled degraded without an age", async () => {
    const h = harness();
    const op = operation({
      retry: null,
      fallback: {
        kind: "stale",
        maxAgeMs: 1_000,
        maxEntries: 10,
        otherwise: { kind: "value", value: "empty" },
      },
    });
    const served = await h.dep.call(op, () => Promise.reject(httpFailure(503, true)), {}, "alice");
    expect(served).toMatchObject({ data: "empty", degraded: true, reason: "http" });
    expect((served as { ageMs?: number }).ageMs).toBeUndefined();
    expect(h.events.find((e) => e.type === "fallback-served")).toMatchObject({ fallback: "value" });
  });
});
