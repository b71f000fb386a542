// Compile scaling: `resgen build` (the programmatic `build()`) on 10, 100 and 500 generated
// policies in a temporary folder: `npm run bench:build`. Three builds each: cold (nothing
// generated), a no-op rebuild (every module emitted again, nothing written), and a rebuild after
// one policy changed. The last column is the share of the no-op rebuild spent emitting.
//
// The policies are three of the kinds in examples/checkout, repeated under new dependency names,
// with a project file like the example's. `--profile` also writes a CPU profile of the cold
// 500-policy build.
//
// Then reporting on large inputs: `resgen check` in pretty and in JSON output on a generated
// one-line (minified) JSON OpenAPI document of about 500 KB with one finding near its end, and
// on 500 KB of nested `[`. Pretty output prints a code frame; its time should stay close to
// JSON's (the ratio printed), since a frame shows a window of the line, not the whole line.
// `--reporting` runs only these.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { cpus, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { build, type BuildResult } from "../src/build/build.js";
import { emitOutputFolder } from "../src/emit/index.js";
import { check } from "../src/program/check.js";
import { main, type Io } from "../src/cli/cli.js";

const profile = process.argv.includes("--profile");
/** `--reporting`: only the reporting benchmark on large inputs, not the builds. */
const reportingOnly = process.argv.includes("--reporting");

// Three policies in the style of examples/checkout (two HTTP dependencies with schemas, one
// function transport with a stale fallback), kept here so the benchmark does not move when the
// example does.
const templates = [
  `version: 1
dependency: inventory
description: Stock levels and reservations.
essential: true
transport: http
latency: { p50: 15ms, p95: 30ms, p99: 60ms, p999: 120ms, rps: 100 }
timeout: { total: 1s }
retry: { maxAttempts: 3 }
bulkhead: { maxConcurrent: 20 }
operations:
  getStock:
    method: GET
    path: /items/{sku}/stock
    response:
      type: object
      properties: { sku: { type: string }, available: { type: integer } }
      required: [sku, available]
  reserve:
    description: Reserves stock for an order. PUT to a caller-chosen id is idempotent.
    method: PUT
    path: /items/{sku}/reservations/{reservationId}
    body:
      type: object
      properties: { quantity: { type: integer } }
      required: [quantity]
    response:
      type: object
      properties: { reservationId: { type: string }, expiresAt: { type: string, format: date-time } }
      required: [reservationId]
`,
  `version: 1
dependency: recommendations
description: Upsell module on the checkout page. Checkout works without it.
essential: false
transport: http
latency: { p50: 20ms, p95: 45ms, p99: 80ms, p999: 200ms, rps: 200 }
timeout: { attempt: 250ms, total: 600ms }
retry: { maxAttempts: 2 }
bulkhead: { maxConcurrent: 30 }
fallback: { kind: stale, maxAge: 5m, maxEntries: 1000 }
operations:
  getRecommendations:
    method: GET
    path: /users/{userId}/recommendations
    query: { limit: { type: integer } }
    response: { type: array, items: { $ref: "#/schemas/Item" } }
    retry: false
    hedge: { delay: 45ms, maxAttempts: 2, budget: 5% }
    fallback: { kind: value, value: [] }
  recordClick:
    method: POST
    path: /clicks
    idempotency: { header: Idempotency-Key }
    body: { $ref: "#/schemas/Click" }
    fallback: { kind: none }
schemas:
  Item:
    type: object
    properties: { id: { type: string }, score: { type: number } }
    required: [id]
  Click:
    type: object
    properties: { itemId: { type: string } }
    required: [itemId]
`,
  `version: 1
dependency: geocoder
description: Address to coordinates, through the vendor's SDK.
essential: false
transport: function
latency: { p50: 40ms, p95: 90ms, p99: 150ms, p999: 300ms, rps: 20 }
timeout: { attempt: 450ms, total: 1.5s }
retry: { maxAttempts: 2 }
fallback: { kind: stale, maxAge: 1h, maxEntries: 5000 }
operations:
  geocode:
    idempotent: true
    body:
      type: object
      properties: { line1: { type: string }, postcode: { type: string }, country: { type: string } }
      required: [line1, country]
    response:
      type: object
      properties: { lat: { type: number }, lon: { type: number } }
      required: [lat, lon]
`,
];
const config = `version: 1
policies: resilience/*.yaml
out: src/generated
deadline: { header: x-request-timeout-ms, format: ms }
defaults:
  deadline: { propagate: true, margin: 10ms }
  retry:
    backoff: { base: 50ms, cap: 1s, multiplier: 2, jitter: full }
    budget: { maxTokens: 100, tokenRatio: 0.1 }
  breaker:
    failureRate: 50%
    window: { duration: 10s, buckets: 10 }
    minCalls: 20
    openFor: 30s
    halfOpen: { maxCalls: 3, successes: 3 }
`;

/** Writes `count` policies and the project file into a new temporary folder. */
function project(count: number): string {
  const root = mkdtempSync(join(tmpdir(), `resgen-bench-${count}-`));
  mkdirSync(join(root, "resilience"));
  writeFileSync(join(root, "resgen.config.yaml"), config);
  for (let i = 0; i < count; i++) {
    const template = templates[i % templates.length]!;
    const text = template.replace(
      /^dependency: (\S+)$/m,
      (_line, name: string) => `dependency: ${name}${i}`,
    );
    writeFileSync(join(root, "resilience", `policy-${String(i).padStart(3, "0")}.yaml`), text);
  }
  return root;
}

interface Timing {
  readonly seconds: number;
  readonly files: number;
  readonly written: number;
}

async function timeBuild(root: string): Promise<Timing> {
  const started = performance.now();
  const result: BuildResult = await build([], { cwd: root });
  const seconds = (performance.now() - started) / 1_000;
  const errors = result.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0) throw new Error(`build failed: ${errors[0]!.message}`);
  const files = result.plans.reduce((n, plan) => n + plan.changes.length + plan.unchanged, 0);
  const written = result.plans.reduce((n, plan) => n + plan.changes.length, 0);
  return { seconds, files, written };
}

/** Seconds to emit the output folder of the project at `root` again, fastest of three. */
async function timeEmission(root: string): Promise<number> {
  const checked = await check([], { cwd: root });
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    const started = performance.now();
    emitOutputFolder(checked.policies, { services: [], sourcePath: (p) => p.file });
    best = Math.min(best, (performance.now() - started) / 1_000);
  }
  return best;
}

console.log(
  `machine: ${cpus()[0]?.model.trim() ?? "unknown"}, ${cpus().length} cores, Node ${process.version}`,
);
if (!reportingOnly) {
  // Warm the module graph (zod, yaml, the emitter) so the first row does not pay for loading it.
  {
    const root = project(4);
    await timeBuild(root);
    rmSync(root, { recursive: true, force: true });
  }

  const rows: Array<{
    policies: number;
    cold: Timing;
    noop: Timing;
    one: Timing;
    emission: number;
  }> = [];
  for (const count of [10, 100, 500]) {
    const root = project(count);
    let session: Session | undefined;
    if (profile && count === 500) {
      session = new Session();
      session.connect();
      await session.post("Profiler.enable");
      await session.post("Profiler.start");
    }
    const cold = await timeBuild(root);
    if (session !== undefined) {
      const { profile: cpu } = await session.post("Profiler.stop");
      const file = join(tmpdir(), "resgen-build-500.cpuprofile");
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify(cpu));
      console.log(`profile of the cold 500-policy build: ${file}`);
      session.disconnect();
    }
    const noop = await timeBuild(root);
    if (noop.written !== 0)
      throw new Error(`a rebuild with nothing changed wrote ${noop.written} files`);
    const emission = await timeEmission(root);
    const first = join(root, "resilience", "policy-000.yaml");
    writeFileSync(
      first,
      readFileSync(first, "utf8").replace("timeout: { total: 1s }", "timeout: { total: 900ms }"),
    );
    const one = await timeBuild(root);
    if (one.written !== 1)
      throw new Error(`a rebuild after one policy changed wrote ${one.written} files`);
    rows.push({ policies: count, cold, noop, one, emission });
    rmSync(root, { recursive: true, force: true });
  }

  console.log(
    "\npolicies   files   cold build          no-op rebuild       one policy changed   emission / no-op",
  );
  for (const { policies, cold, noop, one, emission } of rows) {
    const rate = (t: Timing): string =>
      `${t.seconds.toFixed(2)} s (${Math.round(t.files / t.seconds)} files/s)`;
    const share = `${emission.toFixed(3)} s / ${noop.seconds.toFixed(2)} s = ${((emission / noop.seconds) * 100).toFixed(0)} %`;
    console.log(
      `${String(policies).padStart(8)}   ${String(cold.files).padStart(5)}   ${rate(cold).padEnd(18)}  ${rate(noop).padEnd(18)}  ${`${one.seconds.toFixed(2)} s`.padEnd(19)}  ${share}`,
    );
  }
}

/** A minified OpenAPI document of about `size` bytes on one line; its last operation has no operationId (RG605). */
function minifiedDocument(size: number): string {
  const operation = (id: string | undefined) => ({
    ...(id === undefined ? {} : { operationId: id }),
    responses: {
      "200": {
        description: "OK.",
        content: {
          "application/json": {
            schema: {
              type: "object",
              properties: { id: { type: "string" }, n: { type: "integer" } },
            },
          },
        },
      },
    },
  });
  const paths: Record<string, unknown> = {};
  let length = 0;
  for (let i = 0; length < size - 300; i++) {
    const item = { get: operation(`getItem${i}`) };
    paths[`/items${i}/{id}`] = item;
    length += JSON.stringify(item).length + 20;
  }
  paths["/last/{id}"] = { get: operation(undefined) };
  return JSON.stringify({ openapi: "3.1.0", info: { title: "Large", version: "1.0.0" }, paths });
}

/** Seconds of the fastest of three `resgen check` runs, in process, and the output's length. */
async function timeCheck(
  root: string,
  file: string,
  fmt: "pretty" | "json",
): Promise<{ seconds: number; chars: number; code: number }> {
  let best = Infinity;
  let chars = 0;
  let code = 0;
  for (let round = 0; round < 3; round++) {
    let out = "";
    const io: Io = {
      stdout: (t) => void (out += t),
      stderr: (t) => void (out += t),
      cwd: root,
      color: false,
    };
    const started = performance.now();
    code = await main(["node", "resgen", "check", file, "--format", fmt], io);
    best = Math.min(best, (performance.now() - started) / 1_000);
    chars = out.length;
  }
  return { seconds: best, chars, code };
}

{
  const root = mkdtempSync(join(tmpdir(), "resgen-bench-large-"));
  const doc = minifiedDocument(500 * 1024);
  writeFileSync(join(root, "doc.json"), doc);
  writeFileSync(
    join(root, "minified.yaml"),
    "version: 1\ndependency: large\nopenapi: ./doc.json\ntimeout: { attempt: 500ms, total: 2s }\n",
  );
  const nested = "[".repeat(500 * 1024);
  writeFileSync(join(root, "nested.yaml"), nested);
  const cases = [
    {
      name: `minified OpenAPI, one line of ${Math.round(doc.length / 1024)} KB`,
      file: "minified.yaml",
      expect: 0,
    },
    { name: `nested [, ${Math.round(nested.length / 1024)} KB`, file: "nested.yaml", expect: 1 },
  ];
  console.log(
    "\nreporting on large inputs (resgen check, fastest of 3)   pretty              json                pretty / json",
  );
  for (const c of cases) {
    const pretty = await timeCheck(root, c.file, "pretty");
    const json = await timeCheck(root, c.file, "json");
    if (pretty.code !== c.expect || json.code !== c.expect)
      throw new Error(
        `${c.name}: exit codes ${pretty.code} (pretty), ${json.code} (json), expected ${c.expect}`,
      );
    const cell = (t: { seconds: number; chars: number }) =>
      `${t.seconds.toFixed(3)} s (${t.chars} chars)`.padEnd(18);
    console.log(
      `${c.name.padEnd(56)} ${cell(pretty)}  ${cell(json)}  ${(pretty.seconds / json.seconds).toFixed(2)}`,
    );
  }
  rmSync(root, { recursive: true, force: true });
}
