/**
 * A handler behind the front door that fans out to 20 concurrent calls (docs/runtime.md,
 * "Deadlines"): every call, queue wait and backoff sleep follows the request's abort signal, but
 * the signal gets one listener for all of them, so Node prints no MaxListenersExceededWarning,
 * and none is left on it once the calls have settled. A real node:http front door on 127.0.0.1,
 * the middleware and client generated from policies, a backend on 127.0.0.1.
 */
import { getEventListeners } from "node:events";
import { mkdirSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build } from "../../src/build/build.js";
import { PACKAGE_ROOT } from "../../src/version.js";
import { currentSignal, type InboundMiddleware } from "../../templates/runtime/index.js";

const OUT = join(PACKAGE_ROOT, "test", "runtime", "__out__", "fan-out");
const CALLS = 20;

interface Generated {
  createFrontMiddleware(): InboundMiddleware;
  createBackendClient(config: { baseUrl: string }): {
    getItem(input: { id: string }): Promise<{ id?: string }>;
  };
}

async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let g: Generated;
let backend: Awaited<ReturnType<typeof listen>>;
let front: Awaited<ReturnType<typeof listen>>;
let served = 0;
/** What the handler saw of the request's signal: listeners before, right after launching, after. */
const seen: { before: number; launched: number; settled: number }[] = [];

beforeAll(async () => {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  const result = await build([join(PACKAGE_ROOT, "test/runtime/fixtures/fan-out")], {
    cwd: PACKAGE_ROOT,
    out: join(OUT, "generated"),
    allowOutsideProject: true,
  });
  expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  g = (await import(pathToFileURL(join(OUT, "generated", "index.ts")).href)) as Generated;
  // the first answer to each item is a 503, so every call also sleeps before its retry
  const tried = new Set<string>();
  backend = await listen((req, res) => {
    served++;
    const id = req.url ?? "";
    const first = !tried.has(id);
    tried.add(id);
    setTimeout(() => {
      if (first) res.writeHead(503).end();
      else res.writeHead(200, { "content-type": "application/json" }).end('{"id":"x"}');
    }, 5);
  });
  const client = g.createBackendClient({ baseUrl: backend.url });
  const middleware = g.createFrontMiddleware();
  let request = 0;
  front = await listen(
    middleware.node((_req: IncomingMessage, res: ServerResponse) => {
      const signal = currentSignal();
      if (signal === undefined) throw new Error("the front door gave the handler no signal");
      const before = getEventListeners(signal, "abort").length;
      const n = ++request;
      const calls = Array.from({ length: CALLS }, (_, i) =>
        client.getItem({ id: `${String(n)}-${String(i)}` }),
      );
      const launched = getEventListeners(signal, "abort").length;
      void Promise.all(calls).then(
        (items) => {
          seen.push({ before, launched, settled: getEventListeners(signal, "abort").length });
          res.writeHead(200).end(String(items.length));
        },
        (error: unknown) => {
          res.writeHead(500).end(String(error));
        },
      );
    }),
  );
}, 60_000);
afterAll(async () => {
  await Promise.all([front.close(), backend.close()]);
  rmSync(OUT, { recursive: true, force: true });
});

describe("a front-door handler that fans out to 20 calls", () => {
  it("prints no MaxListenersExceededWarning, and leaves no listener on the request's signal", async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning);
    };
    process.on("warning", onWarning);
    try {
      for (let i = 0; i < 3; i++) {
        const answer = await fetch(`${front.url}/fan-out`);
        expect(answer.status).toBe(200);
        expect(await answer.text()).toBe(String(CALLS));
      }
      // a warning is emitted on the next tick after the listener that exceeds the limit
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("warning", onWarning);
    }
    expect(served).toBe(3 * CALLS * 2);
    expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning")).toEqual([]);
    expect(seen).toHaveLength(3);
    for (const { before, launched, settled } of seen) {
      // one listener for every call, queue wait and sleep of the request, and none once settled
      expect(launched).toBeLessThanOrEqual(before + 1);
      expect(settled).toBe(before);
    }
  });
});
