/**
 * Per-call headers in a generated client (docs/runtime.md, "HTTP"): the config's `headers` is a
 * record or a function (sync or async) called once per attempt, `options.headers` is a typed
 * record of strings merged over it, and the idempotency key cannot be replaced through either.
 * The types are compiled under tsc --strict; the client is called against a server on 127.0.0.1.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build } from "../../src/build/build.js";
import { PACKAGE_ROOT } from "../../src/version.js";
import { compile } from "../helpers/tsc.js";

const OUT = join(PACKAGE_ROOT, "test", "runtime", "__out__", "call-headers");

type Headers = Readonly<Record<string, string>>;
interface Profiles {
  getMe(options?: { headers?: Headers }): Promise<{ data: { user: string }; degraded: boolean }>;
  rename(
    input: { body: { name: string } },
    options?: { headers?: Headers; idempotencyKey?: string },
  ): Promise<void>;
  health(): { breaker: { state: string } | null };
}
interface Module {
  createProfilesClient(config: {
    baseUrl: string;
    headers?: Headers | (() => Headers | Promise<Headers>);
  }): Profiles;
}

/** A server on 127.0.0.1 that records each request's headers and answers with `answer`. */
interface Local {
  readonly url: string;
  readonly requests: IncomingHttpHeaders[];
  answer: (n: number) => { status: number; body?: unknown };
  close(): Promise<void>;
}

async function startLocal(): Promise<Local> {
  const local = {
    url: "",
    requests: [] as IncomingHttpHeaders[],
    answer: (n: number): { status: number; body?: unknown } => ({ status: n > 0 ? 204 : 500 }),
    close: () => Promise.resolve(),
  };
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      local.requests.push(req.headers);
      const { status, body } = local.answer(local.requests.length);
      if (body === undefined) res.writeHead(status).end();
      else res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  local.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  local.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return local;
}

let server: Local;
let mod: Module;

beforeAll(async () => {
  server = await startLocal();
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  const result = await build([join(PACKAGE_ROOT, "test/runtime/fixtures/headers")], {
    cwd: PACKAGE_ROOT,
    out: join(OUT, "generated"),
    allowOutsideProject: true,
  });
  expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  mod = (await import(pathToFileURL(join(OUT, "generated", "profiles.ts")).href)) as Module;
}, 60_000);
afterAll(async () => {
  await server.close();
  rmSync(OUT, { recursive: true, force: true });
});

describe("the generated types", () => {
  it("take a record or a sync or async function for the client, and records of strings per call", async () => {
    const usage = join(OUT, "usage.ts");
    writeFileSync(
      usage,
      `import { createProfilesClient, type HeaderSource } from "./generated/index.js";

declare function token(): Promise<string>;
const baseUrl = "http://profiles.internal";

export async function uses(): Promise<void> {
  createProfilesClient({ baseUrl, headers: { authorization: "Bearer static" } });
  createProfilesClient({ baseUrl, headers: () => ({ authorization: "Bearer sync" }) });
  const rotating: HeaderSource = async () => ({ authorization: \`Bearer \${await token()}\` });
  const client = createProfilesClient({ baseUrl, headers: rotating });
  // @ts-expect-error header values are strings
  createProfilesClient({ baseUrl, headers: { "x-retries": 3 } });
  // @ts-expect-error the function returns a record of headers, not a value
  createProfilesClient({ baseUrl, headers: () => "Bearer x" });
  // @ts-expect-error the function takes no arguments
  createProfilesClient({ baseUrl, headers: (attempt: number) => ({ "x-attempt": String(attempt) }) });
  const me = await client.getMe({ headers: { "X-Tenant-Id": "t1" } });
  const user: string = me.data.user;
  // @ts-expect-error per-call header values are strings
  await client.getMe({ headers: { "X-Tenant-Id": 1 } });
  // @ts-expect-error per-call headers are a record, not a function
  await client.getMe({ headers: () => ({ "X-Tenant-Id": "t1" }) });
  await client.rename({ body: { name: "Ada" } }, { idempotencyKey: "rename-1", headers: { "x-trace": "1" } });
  void user;
}
`,
    );
    expect(await compile([usage], "NodeNext")).toBe("");
  }, 60_000);
});

describe("the generated client over HTTP", () => {
  it("calls an async headers function once per attempt and sends the call's headers over it", async () => {
    let issued = 0;
    const client = mod.createProfilesClient({
      baseUrl: server.url,
      headers: () => Promise.resolve({ Authorization: `Bearer t${++issued}`, "X-Client": "web" }),
    });
    // the first attempt is answered 503 and retried; the retry succeeds
    const start = server.requests.length;
    server.answer = (n) =>
      n === start + 1 ? { status: 503 } : { status: 200, body: { user: "ada" } };
    const me = await client.getMe({ headers: { "x-trace": "a" } });
    expect(me).toMatchObject({ data: { user: "ada" }, degraded: false });
    const sent = server.requests.slice(start);
    expect(sent.map((h) => h["authorization"])).toEqual(["Bearer t1", "Bearer t2"]);
    expect(sent.map((h) => h["x-trace"])).toEqual(["a", "a"]);
    expect(issued).toBe(2);

    await client.getMe({ headers: { authorization: "Bearer end-user" } });
    const last = server.requests.at(-1)!;
    expect(last["authorization"]).toBe("Bearer end-user");
    expect(last["x-client"]).toBe("web");
  });

  it("sends its own idempotency key whatever header of that name the client or the call gives", async () => {
    const client = mod.createProfilesClient({
      baseUrl: server.url,
      headers: { "Idempotency-Key": "client-wide" },
    });
    server.answer = () => ({ status: 204 });
    await client.rename({ body: { name: "Ada" } }, { headers: { "idempotency-key": "forwarded" } });
    expect(server.requests.at(-1)!["idempotency-key"]).toMatch(/^[0-9a-f-]{36}$/);
    await client.rename({ body: { name: "Ada" } }, { idempotencyKey: "rename-1" });
    expect(server.requests.at(-1)!["idempotency-key"]).toBe("rename-1");
  });
});
