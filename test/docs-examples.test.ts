/**
 * The TypeScript examples of the docs marked `<!-- runs: name -->` compile under tsc --strict
 * against a generated output and run: each is wrapped in a function, with what it leaves
 * undeclared (a token source, a request id) given by its harness below, over a fetch that
 * records what it is sent; the harness then checks what the example did. A marked `console`
 * block (`$ npx resgen …` and its output) is run through the CLI on the committed files, and
 * prints exactly what the docs show.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build } from "../src/build/build.js";
import { main } from "../src/cli/cli.js";
import { PACKAGE_ROOT } from "../src/version.js";
import { compile } from "./helpers/tsc.js";

const OUT = join(PACKAGE_ROOT, "test", "__out__", "docs-examples");

/** A request the examples' fetch received. */
export interface Sent {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
}

interface Harness {
  /** Policies the generated output is built from. */
  readonly build: readonly string[];
  /** Declarations the example uses without declaring them, put before its body. */
  readonly prelude: string;
  /** Statements after the example's body, inside the function (to return what it made). */
  readonly epilogue: string;
  /** The body's answer to each request, by method and path (and host, for several endpoints). */
  readonly answer: (
    method: string,
    path: string,
    host: string,
  ) => { status: number; body?: unknown };
  /** Checks what the example sent and returned. */
  readonly check: (sent: readonly Sent[], result: unknown) => void;
  /** The example talks to a real server on 127.0.0.1 it starts: fetch is left as it is. */
  readonly realFetch?: boolean;
}

const CHARGE = { id: "ch_1", orderId: "o-1", amountCents: 1_250, status: "succeeded" };

// the jobs dependency answers pending once per job, then the job; /jobs/gone is a 404
const asked = new Map<string, number>();

const HARNESSES: Readonly<Record<string, Harness>> = {
  classify: {
    build: ["test/e2e/fixtures/jobs.yaml"],
    prelude: "",
    epilogue: "return { job, missing, accepted };",
    answer: (_method, path) => {
      if (path === "/jobs/gone") return { status: 404, body: { error: "no such job" } };
      const n = (asked.get(path) ?? 0) + 1;
      asked.set(path, n);
      return { status: 200, body: n === 1 ? { status: "pending" } : { status: "done", total: 3 } };
    },
    check: (sent, result) => {
      expect(sent.map((s) => s.url)).toEqual([
        "https://jobs.internal/jobs/j-1",
        "https://jobs.internal/jobs/j-1",
        "https://jobs.internal/jobs/gone",
        "https://jobs.internal/jobs/j-2",
      ]);
      expect(result).toMatchObject({
        job: { status: "done", total: 3 },
        missing: { kind: "http", status: 404, attempts: 1 },
        accepted: { status: "pending" },
      });
    },
  },
  "validate-response": {
    build: ["test/emit/fixtures/validate/shop.yaml"],
    prelude: `const rendered: unknown[] = [];
const warned: string[] = [];
const render = (items: readonly unknown[]): void => void rendered.push(...items);
const log = { warn: (message: string): void => void warned.push(message) };`,
    epilogue: "return { rendered, warned };",
    answer: () => ({
      status: 200,
      body: { items: [0, 1, 2, 3].map((i) => ({ sku: `s${i}`, price: i === 3 ? "9.99" : i })) },
    }),
    check: (sent, result) => {
      expect(sent).toHaveLength(1);
      expect(result).toEqual({
        rendered: [],
        warned: [
          "shop.listItems: GET /items returned a body that does not match its schema: $.items[3].price: expected number, got string",
        ],
      });
    },
  },
  "openapi-auth": {
    build: ["test/openapi/fixtures/security/vault.yaml"],
    prelude: `const tokens = { issued: 0, current: (): Promise<string> => Promise.resolve(\`jwt-\${++tokens.issued}\`) };`,
    epilogue: "return { secret, exports };",
    answer: (_method, path) =>
      path === "/v1/health"
        ? { status: 204 }
        : { status: 200, body: path === "/v1/exports" ? ["e-1"] : { value: "s3cret" } },
    check: (sent, result) => {
      expect(result).toEqual({ secret: { value: "s3cret" }, exports: ["e-1"] });
      expect(
        sent.map((s) => [s.url, s.headers["authorization"], s.headers["x-tenant-key"]]),
      ).toEqual([
        ["https://vault.example/v1/secrets/db", "Bearer jwt-1", undefined],
        ["https://vault.example/v1/exports", "Bearer jwt-2", "acme"],
        ["https://vault.example/v1/health", undefined, undefined],
      ]);
    },
  },
  "breaker-control": {
    build: ["examples/checkout"],
    prelude: "",
    epilogue: "return { failedFast, charge, state: next.breaker.state, saved: JSON.parse(saved) };",
    answer: () => ({ status: 200, body: CHARGE }),
    check: (sent, result) => {
      // the isolated call never reached the server
      expect(sent).toHaveLength(1);
      expect(result).toMatchObject({
        failedFast: true,
        charge: CHARGE,
        state: "closed",
        saved: {
          format: "resgen.dependency-state",
          version: 1,
          dependency: "payments",
          breaker: { state: "closed", remainingMs: null },
          budget: { tokens: 100 },
        },
      });
    },
  },
  chaos: {
    build: ["examples/checkout"],
    prelude: "",
    epilogue:
      "return { answers, injected, after, later: inventory.chaos.injected(), enabled: inventory.chaos.enabled };",
    answer: (_method, path) => ({
      status: 200,
      body: { sku: path.split("/")[2], available: 3 },
    }),
    check: (sent, result) => {
      const { answers, injected, after, later, enabled } = result as {
        answers: string[];
        injected: Record<string, number>;
        after: unknown;
        later: Record<string, number>;
        enabled: boolean;
      };
      const skus = ["a", "b", "c", "d", "e", "f"];
      // a call the faults let through reached the server exactly once; one they failed, never
      for (const [i, sku] of skus.entries()) {
        const reached = sent.filter((s) => s.url.endsWith(`/items/${sku}/stock`)).length;
        expect(answers[i]).toMatch(reached === 1 ? `${sku}: 3` : /: (http|network)$/);
        expect(reached).toBeLessThanOrEqual(1);
      }
      expect(injected.status).toBeGreaterThan(0);
      expect([injected.latency, injected.hang]).toEqual([0, 0]);
      // after the kill switch: the call went through, and nothing more was injected
      expect(after).toEqual({ sku: "g", available: 3 });
      expect(sent.at(-1)?.url).toBe("https://inventory.internal/items/g/stock");
      expect(later).toEqual(injected);
      expect(enabled).toBe(false);
    },
  },
  reconfigure: {
    build: ["examples/checkout"],
    prelude: "",
    epilogue: "return { applied, refused, health, charge };",
    answer: () => ({ status: 200, body: CHARGE }),
    check: (sent, result) => {
      expect(sent).toHaveLength(1);
      expect(result).toEqual({
        applied: {
          applied: true,
          changed: [
            "operations.getCharge.timeout.attemptMs",
            "operations.getCharge.retry.maxAttempts",
            "bulkhead.maxConcurrent",
          ],
        },
        refused: {
          applied: false,
          problems: [
            "operations.getCharge.timeout: attempt timeout 5000ms (timeout.attempt) must be below the total 2000ms (timeout.total): one slow attempt would use the whole deadline, so the other attempt could never run",
            "breaker.failureRate (breaker.failureRate): must be more than 0 and at most 1, got 0",
          ],
        },
        // the refused change left the bulkhead as the applied one made it
        health: expect.objectContaining({
          bulkhead: expect.objectContaining({ maxConcurrent: 10 }) as unknown,
        }) as unknown,
        charge: CHARGE,
      });
    },
  },
  coalesce: {
    build: ["test/e2e/coalesce/catalog.yaml"],
    prelude: "",
    epilogue: "return { answers, mine, bobs };",
    answer: () => ({ status: 200, body: { id: "p1" } }),
    check: (sent, result) => {
      const { answers, mine, bobs } = result as {
        answers: { id: string }[];
        mine: { id: string };
        bobs: { id: string };
      };
      // ten callers, one request; another user, another request
      expect(sent.map((s) => [s.url, s.headers["authorization"]])).toEqual([
        ["https://catalog.internal/products/p1", undefined],
        ["https://catalog.internal/products/p1", "Bearer bob"],
      ]);
      expect(answers).toHaveLength(10);
      for (const a of answers) expect(a).toBe(answers[0]);
      expect(answers[0]).toEqual({ id: "p1" });
      expect(mine).toEqual({ id: "edited" });
      expect(bobs).not.toBe(answers[0]);
    },
  },
  endpoints: {
    build: ["test/e2e/fixtures/replicas.yaml"],
    prelude: "",
    epilogue: "return { items, health };",
    answer: (_method, path, host) =>
      host === "b.replicas.internal"
        ? { status: 503 }
        : { status: 200, body: { sku: path.slice("/items/".length) } },
    check: (sent, result) => {
      const { items, health } = result as { items: string[]; health: unknown[] };
      expect(items).toEqual(Array.from({ length: 20 }, (_, i) => `s${i}`));
      const toB = sent.filter((s) => s.url.startsWith("https://b.")).length;
      // b's breaker opened at minCalls (4) failures of its own: it was sent nothing more
      expect(toB).toBe(4);
      expect(sent).toHaveLength(24);
      expect(health).toEqual([
        ["https://a.replicas.internal", "closed", 20],
        ["https://b.replicas.internal", "open", 4],
      ]);
    },
  },
  adaptive: {
    build: ["test/fixtures/adaptive/inventory.yaml"],
    prelude: "",
    epilogue: "return { start, bulkhead, changes };",
    answer: (_method, path) => ({ status: 200, body: { sku: path.split("/").pop(), count: 3 } }),
    check: (sent, result) => {
      const { start, bulkhead, changes } = result as {
        start: number;
        bulkhead: { maxConcurrent: number; adaptive: { limit: number; maxLimit: number } };
        changes: { previous: number; limit: number }[];
      };
      expect(sent).toHaveLength(6 * 16);
      expect(start).toBe(16);
      // the first completion of each next round closes the window before: five windows, each
      // estimate × 0.8 + (estimate + √estimate) × 0.2: 16.8, 17.62, 18.46, 19.32, 20.2
      expect(bulkhead.maxConcurrent).toBe(bulkhead.adaptive.limit);
      expect(bulkhead.adaptive.limit).toBe(20);
      expect(changes.map((c) => c.limit)).toEqual([17, 18, 19, 20]);
      expect(bulkhead.adaptive.maxLimit).toBe(40);
      expect(changes.length).toBeGreaterThan(0);
      for (const c of changes) expect(c.limit).toBeGreaterThan(c.previous);
    },
  },
  "idempotent-route": {
    build: ["test/services/fixtures/orders"],
    prelude: "",
    // the example's keys are deleted, its server and client closed
    epilogue: `const answers = [];
for (const r of [first, retry, misuse])
  answers.push({ status: r.status, replayed: r.headers.get("idempotent-replayed"), body: await r.text() });
for await (const keys of redis.scanIterator({ MATCH: \`shop:orders:idempotency:*:\${key}\` }))
  if (keys.length > 0) await redis.del(keys);
server.closeAllConnections();
server.close();
await redis.close();
return { answers, orders };`,
    answer: () => ({ status: 500 }),
    realFetch: true,
    check: (sent, result) => {
      expect(sent).toEqual([]);
      const { answers, orders } = result as {
        answers: { status: number; replayed: string | null; body: string }[];
        orders: number;
      };
      expect(orders).toBe(1);
      const stored = JSON.stringify({ order: 1, body: '{"sku":"a"}' });
      expect(answers.slice(0, 2)).toEqual([
        { status: 201, replayed: null, body: stored },
        { status: 201, replayed: "true", body: stored },
      ]);
      expect(answers[2]!.status).toBe(422);
      expect(answers[2]!.replayed).toBeNull();
      expect(JSON.parse(answers[2]!.body)).toMatchObject({
        type: expect.stringMatching(/#problem-idempotency-key-reused$/) as unknown,
        status: 422,
      });
    },
  },
  "global-rate-limit": {
    build: ["test/store/fixtures/quota"],
    prelude: "",
    // the example's key is deleted and its client closed
    epilogue: `await redis.del("shop:quota:rate-limit");
await redis.close();
return { statuses: calls.map((c) => c.status), limited: limited.length };`,
    answer: () => ({ status: 200, body: { items: [] } }),
    check: (sent, result) => {
      expect(result).toEqual({ statuses: ["fulfilled", "fulfilled", "rejected"], limited: 1 });
      expect(sent.map((s) => `${s.method} ${s.url}`)).toEqual([
        "GET https://quota.example/items",
        "GET https://quota.example/items",
      ]);
    },
  },
  "shared-stale": {
    build: ["test/store/fixtures/profiles"],
    prelude: "",
    // the example's entries are deleted and its client closed
    epilogue: `for await (const keys of redis.scanIterator({ MATCH: "shop:profiles:stale:*" }))
  if (keys.length > 0) await redis.del(keys);
await redis.close();
return { fresh, served };`,
    // the profile once, then the dependency is down
    answer: () => {
      const n = (asked.get("profiles") ?? 0) + 1;
      asked.set("profiles", n);
      return n === 1 ? { status: 200, body: { name: "Ada" } } : { status: 503 };
    },
    check: (sent, result) => {
      expect(sent.map((s) => `${s.method} ${s.url}`)).toEqual([
        "GET https://profiles.example/profiles/u1",
        "GET https://profiles.example/profiles/u1",
      ]);
      const { fresh, served } = result as {
        fresh: { data: unknown; degraded: boolean };
        served: { data: unknown; degraded: boolean; ageMs: number };
      };
      expect(fresh).toEqual({ data: { name: "Ada" }, degraded: false });
      expect(served).toMatchObject({ data: { name: "Ada" }, degraded: true });
      expect(served.ageMs).toBeGreaterThanOrEqual(0);
    },
  },
  "call-headers": {
    build: ["examples/checkout"],
    prelude: `const tokens = { issued: 0, current: (): Promise<string> => Promise.resolve(\`t\${++tokens.issued}\`) };
const requestId = "req-7";`,
    epilogue: "return { charge, tokens: tokens.issued };",
    answer: () => ({ status: 200, body: CHARGE }),
    check: (sent, result) => {
      expect(result).toEqual({ charge: CHARGE, tokens: 2 });
      expect(sent.map((s) => `${s.method} ${s.url}`)).toEqual([
        "GET https://payments.internal/charges/ch_1",
        "POST https://payments.internal/charges",
      ]);
      expect(sent[0]!.headers).toMatchObject({
        authorization: "Bearer t1",
        "x-request-id": "req-7",
      });
      expect(sent[1]!.headers).toMatchObject({
        authorization: "Bearer t2",
        "idempotency-key": "order-o-1",
      });
    },
  },
};

interface Example {
  readonly doc: string;
  readonly name: string;
  readonly code: string;
}

/** Every `<!-- runs: name -->` block of the docs. */
function examples(): Example[] {
  const out: Example[] = [];
  for (const doc of [
    "docs/runtime.md",
    "docs/openapi.md",
    "docs/policy.md",
    "docs/services.md",
    "docs/store.md",
  ]) {
    const text = readFileSync(join(PACKAGE_ROOT, doc), "utf8");
    for (const m of text.matchAll(/<!-- runs: ([\w-]+) -->\n```ts\n([\s\S]*?)```/g))
      out.push({ doc, name: m[1]!, code: m[2]! });
  }
  return out;
}

/** The example as a module: its imports first, its statements in `run()`, between the harness's. */
function moduleOf(example: Example, harness: Harness): string {
  const lines = example.code.split("\n");
  const imports = lines.filter((l) => l.startsWith("import "));
  const body = lines.filter((l) => !l.startsWith("import "));
  return [
    ...imports,
    "",
    "export async function run(): Promise<unknown> {",
    harness.prelude,
    ...body,
    harness.epilogue,
    "}",
    "",
  ].join("\n");
}

const found = examples();

describe("examples in the docs that run", () => {
  beforeAll(() => {
    rmSync(OUT, { recursive: true, force: true });
    mkdirSync(OUT, { recursive: true });
  });
  afterAll(() => rmSync(OUT, { recursive: true, force: true }));

  it("each has a harness, and each harness an example", () => {
    expect(found.map((e) => e.name).sort()).toEqual(Object.keys(HARNESSES).sort());
  });

  for (const example of found) {
    it(`${example.doc}: ${example.name} compiles under tsc --strict and runs`, async () => {
      const harness = HARNESSES[example.name]!;
      const dir = join(OUT, example.name);
      const result = await build(harness.build, {
        cwd: PACKAGE_ROOT,
        out: join(dir, "generated"),
        allowOutsideProject: true,
      });
      expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
      const file = join(dir, "example.ts");
      writeFileSync(file, moduleOf(example, harness));
      expect(await compile([file], "NodeNext")).toBe("");

      const sent: Sent[] = [];
      const real = globalThis.fetch;
      if (harness.realFetch !== true)
        globalThis.fetch = ((url: string, init: RequestInit) => {
          const parsed = new URL(url);
          const headers: Record<string, string> = {};
          new Headers(init.headers).forEach((value, name) => (headers[name] = value));
          const method = init.method ?? "GET";
          sent.push({ method, url, headers });
          const { status, body } = harness.answer(method, parsed.pathname, parsed.host);
          return Promise.resolve(
            new Response(body === undefined ? null : JSON.stringify(body), {
              status,
              headers: { "content-type": "application/json" },
            }),
          );
        }) as typeof fetch;
      try {
        const mod = (await import(pathToFileURL(file).href)) as { run(): Promise<unknown> };
        harness.check(sent, await mod.run());
      } finally {
        globalThis.fetch = real;
      }
    }, 60_000);
  }
});

/** The command examples: what each checks besides its output, by name. */
const COMMANDS: Readonly<
  Record<string, { readonly exit: number; readonly unchanged: readonly string[] }>
> = {
  // tune on the committed export: shows, writes nothing
  tune: { exit: 0, unchanged: ["examples/checkout/resilience/inventory.yaml"] },
  // the drills of one operation: every promise holds
  chaos: { exit: 0, unchanged: [] },
  // the README's run over the example's four dependencies: every promise holds
  "chaos-checkout": { exit: 0, unchanged: [] },
};

/** Every `<!-- runs: name -->` console block of the docs: the command and what it prints. */
function commandExamples(): { doc: string; name: string; args: string[]; output: string }[] {
  const out: { doc: string; name: string; args: string[]; output: string }[] = [];
  for (const doc of ["docs/tune.md", "docs/chaos.md", "README.md"]) {
    const text = readFileSync(join(PACKAGE_ROOT, doc), "utf8");
    for (const m of text.matchAll(
      /<!-- runs: ([\w-]+) -->\n```console\n\$ npx resgen ([^\n]*)\n([\s\S]*?)```/g,
    ))
      out.push({ doc, name: m[1]!, args: m[2]!.split(" "), output: m[3]! });
  }
  return out;
}

describe("commands in the docs that run", () => {
  const commands = commandExamples();

  it("each has a harness, and each harness an example", () => {
    expect(commands.map((c) => c.name).sort()).toEqual(Object.keys(COMMANDS).sort());
  });

  for (const example of commands) {
    it(`${example.doc}: ${example.name} prints what the docs show`, async () => {
      const harness = COMMANDS[example.name]!;
      const before = harness.unchanged.map((f) => readFileSync(join(PACKAGE_ROOT, f), "utf8"));
      let stdout = "";
      let stderr = "";
      const code = await main(["node", "resgen", ...example.args], {
        stdout: (t) => void (stdout += t),
        stderr: (t) => void (stderr += t),
        cwd: PACKAGE_ROOT,
        color: false,
      });
      expect(stderr).toBe("");
      expect(stdout).toBe(example.output);
      expect(code).toBe(harness.exit);
      expect(harness.unchanged.map((f) => readFileSync(join(PACKAGE_ROOT, f), "utf8"))).toEqual(
        before,
      );
      // the drills take seconds of real time: the README's run covers seven operations
    }, 180_000);
  }
});
