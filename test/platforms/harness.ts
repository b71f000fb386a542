/**
 * Shared by the platform smoke tests (docs/platforms.md): the policy they build with
 * `resgen build`, the HTTP server on 127.0.0.1 the generated client calls, the binaries of the
 * other runtimes, a bounded child process, and the assertions every platform's report must pass.
 */
import { spawn, type ChildProcess, type StdioOptions } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import ts from "typescript";
import { expect } from "vitest";
import { main } from "../../src/cli/cli.js";
import { PACKAGE_ROOT } from "../../src/version.js";
import { AMBIENT_DEADLINE_MS, AMBIENT_HEADER_MS, type ProbeReport } from "./probe.js";

/** The policy's attempt timeout; the slow routes answer long after it. */
export const ATTEMPT_MS = 200;
/** How long the slow routes wait before answering (unless the client went away first). */
export const SLOW_MS = 3_000;

/** The smallest policy that has the calls of the smoke test (docs/platforms.md). */
export const POLICY = `version: 1
dependency: catalog
transport: http
timeout: { attempt: ${ATTEMPT_MS}ms, total: 1s }
retry: false
bulkhead: { maxConcurrent: 10 }
operations:
  getItem:
    method: GET
    path: /items/{id}
    response: { $ref: "#/schemas/Item" }
  getSlowItem:
    method: GET
    path: /slow/{id}
    response: { $ref: "#/schemas/Item" }
  getPrice:
    method: GET
    path: /prices/{id}
    response: { $ref: "#/schemas/Price" }
    fallback:
      kind: stale
      maxAge: 5m
      maxEntries: 10
      otherwise: { kind: value, value: { id: none, cents: 0 } }
  getBrokenItem:
    method: GET
    path: /broken/{id}
    response: { $ref: "#/schemas/Item" }
    fallback: { kind: value, value: { id: none } }
schemas:
  Item:
    type: object
    properties: { id: { type: string }, deadlineHeader: { type: string } }
    required: [id]
  Price:
    type: object
    properties: { id: { type: string }, cents: { type: integer } }
    required: [id, cents]
`;

/** A temporary folder holding the policy, the generated output (`out/`) and `probe.ts`. */
/**
 * The entry script of a runtime that runs TypeScript itself (Bun, Deno): runs the probe and
 * prints its report. `platform` and `baseUrl` are expressions in that runtime.
 */
export function probeEntry(platform: string, baseUrl: string): string {
  return `import { createCatalogClient, isResilienceError, withDeadline } from "./out/index.js";
import { runProbe } from "./probe.js";

const report = await runProbe({
  platform: ${platform},
  baseUrl: ${baseUrl},
  createCatalogClient,
  withDeadline,
  isResilienceError,
});
console.log(JSON.stringify(report));
`;
}

/**
 * `resgen build catalog.yaml --out out` in `dir`, through the CLI's own entry; throws with what it
 * printed unless it exits 0, else returns that.
 */
export async function buildCatalog(dir: string): Promise<string> {
  let output = "";
  const code = await main(["node", "resgen", "build", "catalog.yaml", "--out", "out"], {
    stdout: (text) => void (output += text),
    stderr: (text) => void (output += text),
    cwd: dir,
    color: false,
  });
  if (code !== 0) throw new Error(`resgen build failed (exit ${code}):\n${output}`);
  return output;
}

export interface ProbeProject {
  readonly dir: string;
}

/**
 * Writes {@link POLICY} (and `project` as its resgen.config.yaml, when given) into a new
 * temporary folder, builds it there with `resgen build` (the CLI's own entry, run in this process
 * so it uses the checkout's sources and templates) and copies probe.ts beside the output. Entry modules written into the folder import `./out/index.js` and
 * `./probe.js`.
 */
export async function buildProbeProject(project?: string): Promise<ProbeProject> {
  const dir = mkdtempSync(join(tmpdir(), "resgen-platform-"));
  writeFileSync(join(dir, "catalog.yaml"), POLICY);
  if (project !== undefined) writeFileSync(join(dir, "resgen.config.yaml"), project);
  await buildCatalog(dir);
  copyFileSync(join(PACKAGE_ROOT, "test", "platforms", "probe.ts"), join(dir, "probe.ts"));
  return { dir };
}

/**
 * Compiles every TypeScript module of the project (the generated output and probe.ts) to
 * JavaScript beside it with the checkout's `typescript`, one file at a time: the generated code
 * already imports `./x.js`, so no specifier needs rewriting. Returns the `.js` paths, relative to
 * the folder, for a loader that must be told every module (workerd's config).
 */
export function transpileProject(project: ProbeProject): string[] {
  const sources = readdirSync(project.dir, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .sort();
  const modules: string[] = [];
  for (const file of sources) {
    const source = readFileSync(join(project.dir, file), "utf8");
    const { outputText, diagnostics } = ts.transpileModule(source, {
      fileName: file,
      reportDiagnostics: true,
      compilerOptions: {
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.ESNext,
        verbatimModuleSyntax: true,
      },
    });
    if (diagnostics !== undefined && diagnostics.length > 0)
      throw new Error(
        `${file}: ${ts.flattenDiagnosticMessageText(diagnostics[0]!.messageText, "\n")}`,
      );
    const js = file.replace(/\.ts$/, ".js");
    writeFileSync(join(project.dir, js), outputText);
    modules.push(js);
  }
  return modules;
}

/** One request the server saw; times are milliseconds since the server started. */
export interface SeenRequest {
  readonly path: string;
  readonly deadlineHeader: string | undefined;
  readonly arrivedAt: number;
  /** Answered (`answered`), or left by its client before the answer (`abandoned`), at `at`. */
  ended?: { readonly how: "answered" | "abandoned"; readonly at: number };
}

export interface ProbeServer {
  readonly url: string;
  readonly port: number;
  readonly requests: readonly SeenRequest[];
  close(): Promise<void>;
}

/**
 * The dependency: `GET /items/:id` answers at once (echoing the deadline header), `GET /slow/:id`
 * only after {@link SLOW_MS}, and `GET /prices/:id` at once the first time an id is asked for and
 * slowly every later time, as a dependency that was healthy and then degraded. Listens on
 * 127.0.0.1 at a port the system picks.
 */
export async function startProbeServer(): Promise<ProbeServer> {
  const requests: SeenRequest[] = [];
  const pricesSeen = new Set<string>();
  const timers = new Set<NodeJS.Timeout>();
  const origin = performance.now();
  const now = (): number => Math.round(performance.now() - origin);
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? "";
    const header = req.headers["x-request-timeout-ms"];
    const seen: SeenRequest = {
      path,
      deadlineHeader: Array.isArray(header) ? header.join(",") : header,
      arrivedAt: now(),
    };
    requests.push(seen);
    const answer = (status: number, body: unknown): void => {
      if (seen.ended !== undefined) return;
      seen.ended = { how: "answered", at: now() };
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    res.on("close", () => {
      if (seen.ended === undefined) seen.ended = { how: "abandoned", at: now() };
    });
    const slowly = (body: unknown): void => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        answer(200, body);
      }, SLOW_MS);
      timers.add(timer);
    };
    const match = /^\/(items|slow|prices|broken)\/([^/?]+)$/.exec(path);
    if (req.method !== "GET" || match === null) {
      answer(404, { error: "no such route" });
      return;
    }
    const [, route, id] = match as unknown as [string, string, string];
    if (route === "items")
      answer(200, {
        id,
        ...(seen.deadlineHeader === undefined ? {} : { deadlineHeader: seen.deadlineHeader }),
      });
    else if (route === "slow") slowly({ id });
    else if (route === "broken") req.socket.destroy();
    else if (pricesSeen.has(id)) slowly({ id, cents: 999 });
    else {
      pricesSeen.add(id);
      answer(200, { id, cents: 1250 });
    }
  });
  server.listen(0, "127.0.0.1");
  await new Promise<void>((ready, fail) => {
    server.once("listening", ready);
    server.once("error", fail);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((closed) => server.close(() => closed()));
    },
  };
}

/** The runtimes the smoke tests start, the variable that may point at each, and its npm package. */
const BINARIES = {
  bun: { env: "RESGEN_BUN", pkg: "bun" },
  deno: { env: "RESGEN_DENO", pkg: "deno" },
  workerd: { env: "RESGEN_WORKERD", pkg: "workerd" },
} as const;

/**
 * The runtime's binary: `node_modules/.bin/<name>` of the checkout (a devDependency), else the
 * path in `RESGEN_<NAME>`. Throws, failing the test, when neither exists.
 */
export function findBinary(name: keyof typeof BINARIES): string {
  const { env, pkg } = BINARIES[name];
  const local = join(PACKAGE_ROOT, "node_modules", ".bin", name);
  if (existsSync(local)) return local;
  const fromEnv = process.env[env];
  if (fromEnv !== undefined && fromEnv !== "" && existsSync(fromEnv)) return fromEnv;
  throw new Error(
    `${name} not found: neither ${relative(PACKAGE_ROOT, local)} (the devDependency "${pkg}", installed by npm ci) ` +
      `nor ${env}${fromEnv === undefined || fromEnv === "" ? " (unset)" : `=${fromEnv} (no such file)`} exists`,
  );
}

/** What a child process left behind. */
export interface Finished {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** How a child process ended, for messages. */
export function exitOf(done: Finished): string {
  return done.code === null ? `signal ${done.signal ?? "unknown"}` : `code ${String(done.code)}`;
}

/** A started child process: its output so far, its end, and a kill that is safe to repeat. */
export interface Running {
  readonly child: ChildProcess;
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** Settles when the process exits, or rejects once `timeoutMs` has passed (then kills it). */
  readonly finished: Promise<Finished>;
  kill(): void;
}

/**
 * Starts `command` with no shell and no standard input. The process is killed (SIGKILL) once
 * `timeoutMs` has passed; callers also kill it in `finally`.
 */
export function start(
  command: string,
  args: readonly string[],
  options: { readonly cwd: string; readonly timeoutMs: number; readonly stdio?: StdioOptions },
): Running {
  const child = spawn(command, args, {
    cwd: options.cwd,
    stdio: options.stdio ?? ["ignore", "pipe", "pipe"],
    env: { ...process.env, NO_COLOR: "1" },
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (text: string) => (stdout += text));
  child.stderr?.setEncoding("utf8").on("data", (text: string) => (stderr += text));
  const kill = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  };
  let timer: NodeJS.Timeout | undefined;
  const finished = new Promise<Finished>((resolve, reject) => {
    timer = setTimeout(() => {
      kill();
      reject(
        new Error(
          `${command} ${args.join(" ")} still running after ${options.timeoutMs} ms; killed.\nstdout: ${stdout}\nstderr: ${stderr}`,
        ),
      );
    }, options.timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
  // A rejection nobody awaited yet (the caller is waiting on something else) is not unhandled.
  finished.catch(() => undefined);
  return { child, stdout: () => stdout, stderr: () => stderr, finished, kill };
}

/** Runs a script that prints one JSON report as its last line of output, and parses it. */
export async function runScript(
  command: string,
  args: readonly string[],
  options: { readonly cwd: string; readonly timeoutMs: number },
): Promise<ProbeReport> {
  const running = start(command, args, options);
  try {
    const done = await running.finished;
    const lastLine = done.stdout.trimEnd().split("\n").at(-1) ?? "";
    if (done.code !== 0 || !lastLine.startsWith("{"))
      throw new Error(
        `${command} ${args.join(" ")} exited with ${exitOf(done)}\nstdout: ${done.stdout}\nstderr: ${done.stderr}`,
      );
    return JSON.parse(lastLine) as ProbeReport;
  } finally {
    running.kill();
  }
}

/** The deadline margin of the policy (docs/policy.md's default). */
const MARGIN_MS = 10;

/** How much later than its timer a call may settle on a loaded two-core machine. */
const SLACK_MS = 1_000;

/**
 * What every platform's report must show (docs/platforms.md, "What the smoke tests check"), and
 * what the server must have seen.
 */
export function expectProbeReport(report: ProbeReport, server: ProbeServer): void {
  const text = JSON.stringify(report, null, 2);
  // (a) a call that succeeds
  expect(report.success, text).toMatchObject({
    value: { id: "a1", deadlineHeader: String(ATTEMPT_MS) },
  });
  expect(report.success.error, text).toBeUndefined();

  // (b) the attempt timeout ends a call the server does not answer in time
  expect(report.timeout, text).toMatchObject({
    error: { kind: "timeout", tier: "attempt", attempts: 1 },
  });
  expect(report.timeout.elapsedMs, text).toBeGreaterThanOrEqual(ATTEMPT_MS - 1);
  expect(report.timeout.elapsedMs, text).toBeLessThan(ATTEMPT_MS + SLACK_MS);

  // (c) the stale fallback serves the last good answer to the same request, and `otherwise`
  // the policy's value when nothing is stored for the request
  expect(report.primed, text).toMatchObject({ value: { id: "p1", cents: 1250 }, degraded: false });
  expect(report.stale, text).toMatchObject({
    value: { id: "p1", cents: 1250 },
    degraded: true,
    reason: "timeout",
  });
  expect(report.stale.ageMs, text).toBeGreaterThanOrEqual(ATTEMPT_MS - 1);
  expect(report.stale.ageMs, text).toBeLessThan(60_000);
  expect(report.stale.elapsedMs, text).toBeGreaterThanOrEqual(ATTEMPT_MS - 1);
  expect(report.stale.elapsedMs, text).toBeLessThan(ATTEMPT_MS + SLACK_MS);
  expect(report.otherwise, text).toMatchObject({
    value: { id: "none", cents: 0 },
    degraded: true,
    reason: "timeout",
  });
  expect(report.otherwise.ageMs, text).toBeUndefined();
  // a connection the server drops is a network failure (not a programming error, though some
  // runtimes' fetch rejects with a TypeError), which the value fallback answers for
  expect(report.network, text).toMatchObject({
    value: { id: "none" },
    degraded: true,
    reason: "network",
  });

  // Deadline propagation through AsyncLocalStorage: the ambient deadline reaches a call made
  // after a timer (the header is below the 200 ms the attempt timeout alone would send) ...
  const header = Number(
    (report.ambientHeader.value as { deadlineHeader?: string } | undefined)?.deadlineHeader,
  );
  expect(header, text).toBeGreaterThan(0);
  expect(header, text).toBeLessThanOrEqual(AMBIENT_HEADER_MS);
  // ... and ends a slow call before the attempt timeout would have.
  expect(report.ambientDeadline, text).toMatchObject({
    error: { kind: "deadline", tier: "deadline", attempts: 1 },
  });
  expect(report.ambientDeadline.elapsedMs, text).toBeGreaterThanOrEqual(
    AMBIENT_DEADLINE_MS - MARGIN_MS - 1,
  );

  // without ambient scopes (`platform: web`) withDeadline throws before the call is made: the
  // server sees no request for it
  if (report.scope !== undefined)
    expect(report.scope.thrown, text).toMatch(/ambient deadlines need AsyncLocalStorage/);

  // and the client still answers after the failures
  expect(report.after, text).toMatchObject({
    value: { id: "z1", deadlineHeader: String(ATTEMPT_MS) },
  });

  // The server saw one request per call, and the client hung up on each slow one: the attempt's
  // abort reached the socket instead of leaving the request to run on. The first slow request
  // ends before the fifth call starts (two calls and a 200 ms timeout later), long before the
  // end of the process (or, on workerd, of the request) would have closed its connection.
  expect(server.requests.map((r) => r.path)).toEqual([
    "/items/a1",
    "/slow/b1",
    "/prices/p1",
    "/prices/p1",
    "/prices/p1",
    "/broken/n1",
    "/items/d1",
    "/slow/d2",
    "/items/z1",
  ]);
  const seen = JSON.stringify(server.requests);
  const [, b1, , p1Stale, p1Otherwise, , , d2] = server.requests;
  for (const slow of [b1, p1Stale, p1Otherwise, d2])
    expect(slow?.ended?.how, seen).toBe("abandoned");
  expect(b1!.ended!.at, seen).toBeLessThan(p1Otherwise!.arrivedAt);
}
