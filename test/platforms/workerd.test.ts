/**
 * Generated clients on Cloudflare's workerd (docs/platforms.md): the generated TypeScript is
 * compiled to JavaScript modules, every one listed in a workerd config, and a worker runs the
 * calls on each request and answers with what they returned.
 */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  ATTEMPT_MS,
  buildProbeProject,
  exitOf,
  expectProbeReport,
  findBinary,
  start,
  startProbeServer,
  transpileProject,
  type ProbeProject,
  type ProbeServer,
  type Running,
} from "./harness.js";
import type { CallReport, ProbeReport } from "./probe.js";

// `GET /probe` runs every call of the smoke test; `GET /getItem?id=` and `GET /getSlowItem?id=`
// make one call. `?clock=host` gives the client the probe's clock on the host's own timers. A
// `platform: web` build passes its deadlines to each call (`explicitDeadlines`).
function worker(explicitDeadlines: boolean): string {
  return `import { createCatalogClient, isResilienceError, withDeadline } from "./out/index.js";
import { hostClock, probeCall, runProbe } from "./probe.js";

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const runtime = {
      platform: "workerd",
      baseUrl: env.BASE_URL,
      clock: url.searchParams.get("clock") === "host" ? hostClock : undefined,
      createCatalogClient,
      withDeadline,
      isResilienceError,
      explicitDeadlines: ${String(explicitDeadlines)},
    };
    if (url.pathname === "/probe") return Response.json(await runProbe(runtime));
    if (url.pathname === "/getItem" || url.pathname === "/getSlowItem")
      return Response.json(await probeCall(runtime, url.pathname.slice(1), url.searchParams.get("id")));
    return new Response("no such route", { status: 404 });
  },
};
`;
}

/** The worker's compatibility settings in the config (docs/platforms.md, "workerd"). */
interface Compatibility {
  readonly date: string;
  readonly flags: readonly string[];
}

/** Node's APIs, with Node's timers (`setTimeout` returns a Timeout) from this date on. */
const NODE_COMPAT: Compatibility = { date: "2026-02-10", flags: ["nodejs_compat"] };
/** Only `node:async_hooks`'s AsyncLocalStorage; `setTimeout` returns a number. */
const ALS_ONLY: Compatibility = { date: "2025-06-01", flags: ["nodejs_als"] };
/** No Node API at all, as in a browser: what `platform: web` builds for. */
const NO_FLAGS: Compatibility = { date: "2026-02-10", flags: [] };

/**
 * A workerd config serving the worker on 127.0.0.1 at a port the system picks, whose fetches
 * may reach loopback addresses only (the "local" network), with the test server's URL bound as
 * `env.BASE_URL`. Modules are named by their paths, so relative imports resolve between them;
 * the first is the worker's main module.
 */
function config(modules: readonly string[], baseUrl: string, compat: Compatibility): string {
  const list = ["worker.js", ...modules]
    .map(
      (name) => `    (name = ${JSON.stringify(name)}, esModule = embed ${JSON.stringify(name)}),`,
    )
    .join("\n");
  return `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "loopback", network = (allow = ["local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:0", http = (), service = "main")],
);

const worker :Workerd.Worker = (
  modules = [
${list}
  ],
  compatibilityDate = ${JSON.stringify(compat.date)},
  compatibilityFlags = [${compat.flags.map((f) => JSON.stringify(f)).join(", ")}],
  globalOutbound = "loopback",
  bindings = [(name = "BASE_URL", text = ${JSON.stringify(baseUrl)})],
);
`;
}

/**
 * The port workerd reports on its control descriptor (fd 3) once its socket listens; rejects
 * when workerd exits first.
 */
function listeningPort(workerd: Running): Promise<number> {
  const control = workerd.child.stdio[3] as Readable;
  return new Promise<number>((resolve, reject) => {
    let text = "";
    control.setEncoding("utf8").on("data", (chunk: string) => {
      text += chunk;
      for (const line of text.split("\n")) {
        if (!line.startsWith("{") || !line.endsWith("}")) continue;
        const message = JSON.parse(line) as { event?: string; socket?: string; port?: number };
        if (message.event === "listen" && message.socket === "http" && message.port !== undefined)
          resolve(message.port);
      }
    });
    workerd.finished.then(
      (done) =>
        reject(new Error(`workerd exited (${exitOf(done)}) before listening:\n${done.stderr}`)),
      reject,
    );
  });
}

/** A workerd process serving the worker, and how to ask it. */
interface Served {
  /** Fetches `path` from the worker: its status, body, and what workerd wrote to stderr. */
  get(path: string): Promise<{ status: number; body: string; stderr: string }>;
}

/** A built project, compiled to the JavaScript modules workerd is told of. */
interface Worker {
  readonly project: ProbeProject;
  readonly modules: readonly string[];
}

let node: Worker;
let web: Worker;
let server: ProbeServer;
const running: Running[] = [];

async function buildWorker(projectFile: string | undefined, explicit: boolean): Promise<Worker> {
  const project = await buildProbeProject(projectFile);
  const modules = transpileProject(project);
  writeFileSync(join(project.dir, "worker.js"), worker(explicit));
  return { project, modules };
}

// building and compiling 29 modules takes seconds on a busy two-core machine
beforeAll(async () => {
  node = await buildWorker(undefined, false);
  web = await buildWorker("version: 1\nplatform: web\n", true);
}, 90_000);

afterAll(() => {
  for (const built of [node, web]) rmSync(built.project.dir, { recursive: true, force: true });
});

beforeEach(async () => {
  server = await startProbeServer();
});

afterEach(async () => {
  for (const workerd of running.splice(0)) workerd.kill();
  await server.close();
});

/** Starts workerd on the worker `built` (the default build) with `compat`; killed after the test. */
async function serve(compat: Compatibility, built: Worker = node): Promise<Served> {
  const workerd = findBinary("workerd");
  const file = `config-${String(server.port)}.capnp`;
  writeFileSync(join(built.project.dir, file), config(built.modules, server.url, compat));
  const child = start(workerd, ["serve", file, "--control-fd=3"], {
    cwd: built.project.dir,
    timeoutMs: 30_000,
    stdio: ["ignore", "pipe", "pipe", "pipe"],
  });
  running.push(child);
  const port = await listeningPort(child);
  return {
    get: async (path) => {
      const response = await fetch(`http://127.0.0.1:${port}${path}`, {
        signal: AbortSignal.timeout(15_000),
      });
      return { status: response.status, body: await response.text(), stderr: child.stderr() };
    },
  };
}

async function report<T>(served: Served, path: string): Promise<T> {
  const answer = await served.get(path);
  expect(answer.status, `${answer.body}\n${answer.stderr}`).toBe(200);
  return JSON.parse(answer.body) as T;
}

describe("workerd", () => {
  it("runs a generated client with nodejs_compat: a success, an attempt timeout, stale, static and network fallbacks, ambient deadlines", async () => {
    const served = await serve(NODE_COMPAT);
    const probe = await report<ProbeReport>(served, "/probe");
    expect(probe.platform).toBe("workerd");
    expectProbeReport(probe, server);
  });

  it("runs it with nodejs_als alone, with the default clock and with one on the host's timers", async () => {
    const served = await serve(ALS_ONLY);
    expectProbeReport(await report<ProbeReport>(served, "/probe?clock=host"), server);
    // without Node's timers setTimeout returns a number; the default clock gives every timer its
    // own host timer on workerd, so it never needs unref()
    expect(await report<CallReport>(served, "/getItem?id=a2")).toMatchObject({
      value: { id: "a2" },
    });
  });

  it("enforces attempt timeouts on every request, with the default clock and the host's timers", async () => {
    const served = await serve(NODE_COMPAT);
    // a success arms the default clock's 200 ms timer in this request, which then ends; workerd
    // drops that request's timers, so a timer shared with the next request would never fire
    expect(await report<CallReport>(served, "/getItem?id=a1")).toMatchObject({
      value: { id: "a1" },
    });
    const next = await report<CallReport>(served, "/getSlowItem?id=b1");
    expect(next).toMatchObject({ error: { kind: "timeout", tier: "attempt", attempts: 1 } });

    // with one host timer per runtime timer, each request's timeouts are its own
    expect(await report<CallReport>(served, "/getItem?id=a3&clock=host")).toMatchObject({
      value: { id: "a3" },
    });
    const bounded = await report<CallReport>(served, "/getSlowItem?id=b3&clock=host");
    expect(bounded).toMatchObject({ error: { kind: "timeout", tier: "attempt", attempts: 1 } });
    expect(bounded.elapsedMs).toBeLessThan(ATTEMPT_MS + 1_000);
  });

  it("runs a platform: web build with no compatibility flags, its deadlines passed per call", async () => {
    const served = await serve(NO_FLAGS, web);
    const probe = await report<ProbeReport>(served, "/probe");
    expect(probe.scope).toBeDefined();
    expectProbeReport(probe, server);
  });

  it("does not load the default build with no compatibility flags: it imports node:async_hooks", async () => {
    await expect(serve(NO_FLAGS)).rejects.toThrow(/node:async_hooks/);
  });
});
