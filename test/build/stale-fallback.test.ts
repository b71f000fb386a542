/**
 * Stale fallbacks in generated clients (docs/runtime.md, "Fallback"): an entry is served only to
 * a request of the same identity (method, URL, vary headers, cacheKey), a miss goes to the
 * declared `otherwise`, and the `fallback` call option exists only where a provided fallback runs.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { build } from "../../src/build/build.js";
import { PACKAGE_ROOT } from "../../src/version.js";
import { compile } from "../helpers/tsc.js";

const OUT = join(PACKAGE_ROOT, "test", "build", "__out__", "stale-fallback");
const FIXTURES = join(PACKAGE_ROOT, "test", "fixtures", "stale");

beforeAll(async () => {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  const result = await build([FIXTURES], { cwd: PACKAGE_ROOT, out: join(OUT, "generated") });
  expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  expect(result.written).toBe(true);
}, 60_000);

describe("the fallback call option", () => {
  it("type-checks only on operations whose caller provides the fallback", async () => {
    const usage = join(OUT, "usage.ts");
    writeFileSync(
      usage,
      `import { createGeoClient, createLoyaltyClient } from "./generated/index.js";

const loyalty = createLoyaltyClient({ baseUrl: "http://loyalty.internal" });
const geo = createGeoClient();

export async function uses(): Promise<void> {
  await loyalty.getMe({ headers: { authorization: "Bearer alice" } });
  // @ts-expect-error getMe's stale fallback serves a value on a miss: no caller fallback runs
  await loyalty.getMe({ fallback: () => ({ user: "x" }) });
  // @ts-expect-error a value fallback never calls the caller's function
  await loyalty.getPoints({ fallback: () => 1 });
  await loyalty.redeem({ body: { points: 5 } }, { fallback: () => ({ id: "later" }) });
  // @ts-expect-error a provided fallback is required
  await loyalty.redeem({ body: { points: 5 } });
  await loyalty.getOffers({ query: { page: 1 } }, { fallback: () => [] });
  await geo.runLookup({ q: "x" }, (_input, ctx) => Promise.resolve(ctx.attempt), { fallback: () => 0 });
  // @ts-expect-error no fallback without kind: provided
  await geo.runPlain((ctx) => Promise.resolve(ctx.attempt), { fallback: () => 0 });
  await geo.runPlain((ctx) => Promise.resolve(ctx.attempt));
  await geo.runPing((ctx) => Promise.resolve(ctx.attempt), { cacheKey: "tenant-1" });
  // @ts-expect-error a function operation without input must name what it asks for in cacheKey
  await geo.runPing((ctx) => Promise.resolve(ctx.attempt));
}
`,
    );
    expect(await compile([usage], "NodeNext")).toBe("");
  }, 60_000);
});

interface Loyalty {
  getMe(options?: {
    headers?: Record<string, string>;
    cacheKey?: string;
  }): Promise<{ data: { user: string }; degraded: boolean; ageMs?: number }>;
}

/** A loyalty client over a fetch that answers with the caller's Authorization, until `down`. */
async function loyaltyClient(headers?: Record<string, string>) {
  const mod = (await import(pathToFileURL(join(OUT, "generated", "loyalty.ts")).href)) as {
    createLoyaltyClient(config: {
      baseUrl: string;
      fetch: typeof fetch;
      headers?: Record<string, string>;
    }): Loyalty;
  };
  const state = { down: false, calls: 0 };
  const fetchImpl = ((_url: string | URL | Request, init?: RequestInit) => {
    state.calls++;
    if (state.down) return Promise.resolve(new Response("down", { status: 503 }));
    const sent = new Headers(init?.headers);
    return Promise.resolve(
      new Response(JSON.stringify({ user: sent.get("authorization") ?? "anonymous" }), {
        status: 200,
        headers: { "content-type": "application/json" },
      }),
    );
  }) as typeof fetch;
  return {
    client: mod.createLoyaltyClient({
      baseUrl: "http://loyalty.internal",
      fetch: fetchImpl,
      ...(headers ? { headers } : {}),
    }),
    state,
  };
}

describe("a stale entry is served only to the same identity", () => {
  it("never gives Bob Alice's answer; a miss serves the declared value", async () => {
    const { client, state } = await loyaltyClient();
    expect(await client.getMe({ headers: { Authorization: "alice" } })).toEqual({
      data: { user: "alice" },
      degraded: false,
    });
    state.down = true;
    expect(await client.getMe({ headers: { Authorization: "alice" } })).toMatchObject({
      data: { user: "alice" },
      degraded: true,
    });
    const bob = await client.getMe({ headers: { Authorization: "bob" } });
    expect(bob).toMatchObject({ data: { user: "nobody" }, degraded: true });
    expect(bob.ageMs).toBeUndefined();
    // no Authorization at all, another tenant, another per-call header, another cacheKey: all misses
    expect((await client.getMe()).data.user).toBe("nobody");
    expect(
      (await client.getMe({ headers: { Authorization: "alice", "X-Tenant-Id": "t2" } })).data.user,
    ).toBe("nobody");
    expect(
      (await client.getMe({ headers: { Authorization: "alice", "X-Trace": "1" } })).data.user,
    ).toBe("nobody");
    expect(
      (await client.getMe({ headers: { Authorization: "alice" }, cacheKey: "k" })).data.user,
    ).toBe("nobody");
    // the header name's case does not matter
    expect((await client.getMe({ headers: { authorization: "alice" } })).data.user).toBe("alice");
  });

  it("counts the client's own headers: a service-wide authorization partitions by its value", async () => {
    const a = await loyaltyClient({ Authorization: "service-a" });
    await a.client.getMe();
    a.state.down = true;
    expect((await a.client.getMe()).data.user).toBe("service-a");
    // the same client with a per-call authorization sends both values: another identity
    expect((await a.client.getMe({ headers: { authorization: "alice" } })).data.user).toBe(
      "nobody",
    );
  });
});
