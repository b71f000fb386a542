/**
 * Redirects through generated clients (docs/policy.md, "Redirects"): a policy without `redirects`
 * follows none, and `redirects: same-origin` follows those to the same origin only. Two servers
 * on 127.0.0.1, on two ports, are two origins: the second must receive nothing, neither the
 * policy's API key header nor the deadline header.
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { build } from "../../src/build/build.js";
import { checkPolicyText } from "../../src/program/check.js";
import { PACKAGE_ROOT } from "../../src/version.js";
import { startOrigin, type Answer, type Origin } from "./origins.js";

const OUT = join(PACKAGE_ROOT, "test", "runtime", "__out__", "redirects");
const KEY = "sk_live_partner_9876543210";

interface Failure {
  readonly kind?: string;
  readonly status?: number;
  readonly message?: string;
}
type Data = { from?: string };
interface Partner {
  getOrder(input: { id: string }): Promise<Data>;
  getQuote(): Promise<{ data: Data; degraded: boolean }>;
}
interface Mirror {
  getOrder(input: { id: string }): Promise<Data>;
  createOrder(input: { body: { item: string } }): Promise<Data>;
  putOrder(input: { body: { item: string } }): Promise<Data>;
}
interface Config {
  baseUrl: string;
  auth: { apiKey: string };
}
interface Generated {
  createPartnerClient(config: Config): Partner;
  createMirrorClient(config: Config): Mirror;
}

let a: Origin;
let b: Origin;
let mod: Generated;

beforeAll(async () => {
  [a, b] = await Promise.all([startOrigin(), startOrigin()]);
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  const result = await build([join(PACKAGE_ROOT, "test/runtime/fixtures/redirects")], {
    cwd: PACKAGE_ROOT,
    out: join(OUT, "generated"),
    allowOutsideProject: true,
  });
  expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  mod = (await import(pathToFileURL(join(OUT, "generated", "index.ts")).href)) as Generated;
}, 60_000);
afterEach(() => {
  a.received.length = 0;
  b.received.length = 0;
});
afterAll(async () => {
  await Promise.all([a.close(), b.close()]);
  rmSync(OUT, { recursive: true, force: true });
});

const moved = (location: string, status = 302): Answer => ({
  status,
  headers: { location },
  body: '{"from":"redirect"}',
});

describe("a policy without redirects", () => {
  it("sends nothing to the origin a 302 points at, and fails the call naming the location", async () => {
    a.answer = () => moved(`${b.url}/collect`);
    const partner = mod.createPartnerClient({ baseUrl: a.url, auth: { apiKey: KEY } });
    const error = (await partner.getOrder({ id: "o-1" }).catch((e: unknown) => e)) as Failure;
    expect(b.received).toEqual([]);
    expect(a.received).toHaveLength(1);
    expect(a.received[0]!.headers["x-partner-key"]).toBe(KEY);
    expect(a.received[0]!.headers["x-request-timeout-ms"]).toBeDefined();
    expect(error).toMatchObject({ kind: "http", status: 302 });
    expect(error.message).toContain(`redirecting to ${b.url}/collect`);
  });

  it("serves the fallback, degraded, instead of the redirect's body", async () => {
    a.answer = () => moved(`${b.url}/collect`);
    const partner = mod.createPartnerClient({ baseUrl: a.url, auth: { apiKey: KEY } });
    expect(await partner.getQuote()).toMatchObject({ data: { from: "fallback" }, degraded: true });
    expect(b.received).toEqual([]);
  });
});

describe("redirects: same-origin", () => {
  it("follows a redirect to the same origin with the API key, and none to another", async () => {
    a.answer = (r) =>
      r.url.startsWith("/v1/")
        ? moved("/v2/orders/o-1", 301)
        : r.url.startsWith("/v2/")
          ? { status: 200, body: '{"from":"v2"}' }
          : moved(`${b.url}/v3`);
    const mirror = mod.createMirrorClient({ baseUrl: a.url, auth: { apiKey: KEY } });
    expect(await mirror.getOrder({ id: "o-1" })).toEqual({ from: "v2" });
    expect(a.received.map((r) => r.headers["x-partner-key"])).toEqual([KEY, KEY]);
    expect(a.received[1]!.headers["x-request-timeout-ms"]).toBeDefined();

    a.received.length = 0;
    a.answer = () => moved(`${b.url}/v3`, 307);
    const error = (await mirror.getOrder({ id: "o-1" }).catch((e: unknown) => e)) as Failure;
    expect(error).toMatchObject({ kind: "http", status: 307 });
    expect(b.received).toEqual([]);
  });

  it("re-sends a POST on a 307 only for an operation with an idempotency key", async () => {
    a.answer = (r) =>
      r.url.endsWith("-v2") ? { status: 200, body: '{"from":"v2"}' } : moved(`${r.url}-v2`, 307);
    const mirror = mod.createMirrorClient({ baseUrl: a.url, auth: { apiKey: KEY } });
    const error = (await mirror
      .createOrder({ body: { item: "book" } })
      .catch((e: unknown) => e)) as Failure;
    expect(error).toMatchObject({ kind: "http", status: 307 });
    expect(a.received.map((r) => r.url)).toEqual(["/orders"]);

    a.received.length = 0;
    expect(await mirror.putOrder({ body: { item: "book" } })).toEqual({ from: "v2" });
    expect(a.received.map((r) => [r.method, r.url, r.body])).toEqual([
      ["POST", "/orders/put", '{"item":"book"}'],
      ["POST", "/orders/put-v2", '{"item":"book"}'],
    ]);
  });
});

describe("the policy's redirects", () => {
  const text = (line: string) => `version: 1
dependency: partner
${line}
operations:
  getOrder: { method: GET, path: /orders }
`;
  it("resolves to same-origin only when the policy says so, and refuses any other value", () => {
    expect(checkPolicyText("p.yaml", text("")).policy?.redirects).toBeUndefined();
    expect(checkPolicyText("p.yaml", text("redirects: none")).policy?.redirects).toBeUndefined();
    expect(checkPolicyText("p.yaml", text("redirects: same-origin")).policy?.redirects).toBe(
      "same-origin",
    );
    const refused = checkPolicyText("p.yaml", text("redirects: any-origin"));
    expect(refused.policy).toBeUndefined();
    expect(refused.diagnostics.map((d) => d.severity)).toContain("error");
  });
});
