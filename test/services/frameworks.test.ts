/**
 * The Express and Fastify adapters against the real frameworks on 127.0.0.1: the handler runs
 * inside the request's deadline and signal (after body parsing too), a spent budget is refused
 * without running it, and overload is shed with the configured status and Retry-After.
 */
import type { AddressInfo } from "node:net";
import express from "express";
import Fastify from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import {
  createInboundMiddleware,
  currentDeadline,
  inheritSignal,
  type ServiceSettings,
} from "../../templates/runtime/index.js";
import { signal, within } from "./helpers.js";

const settings: ServiceSettings = {
  name: "shop",
  deadline: {
    edgeMs: 1_000,
    maxMs: 5_000,
    header: "x-request-timeout-ms",
    format: "ms",
    grpcTimeout: true,
    expiredStatus: 504,
  },
  admission: { maxConcurrent: 1, maxQueue: 0, queueTimeoutMs: 0 },
  rejection: { status: 429, retryAfterS: 3 },
  defaultPriority: "normal",
  priorities: [],
};

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** Runs the same three checks against a server whose /orders echoes its budget and /hold waits for `release`. */
async function exercise(
  url: string,
  held: { started: Promise<void>; release: () => void },
  handled: () => number,
) {
  const answer = await fetch(`${url}/orders`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-request-timeout-ms": "300" },
    body: JSON.stringify({ sku: "a" }),
  });
  expect(answer.status).toBe(200);
  const body = (await answer.json()) as { budget: number; signal: boolean; sku: string };
  expect(body.sku).toBe("a");
  expect(body.budget).toBeGreaterThan(0);
  expect(body.budget).toBeLessThanOrEqual(300);
  expect(body.signal).toBe(true);

  const before = handled();
  const spent = await fetch(`${url}/orders`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-request-timeout-ms": "0" },
    body: "{}",
  });
  expect(spent.status).toBe(504);
  expect(handled()).toBe(before);

  const hold = fetch(`${url}/hold`);
  await within(held.started, 2_000);
  const shed = await fetch(`${url}/orders`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
  expect(shed.status).toBe(429);
  expect(shed.headers.get("retry-after")).toBe("3");
  expect(handled()).toBe(before);
  held.release();
  expect((await within(hold, 2_000)).status).toBe(200);
}

describe("Express adapter", () => {
  it("scopes the handler (across express.json()), refuses spent budgets and sheds overload", async () => {
    const mw = createInboundMiddleware(settings);
    const app = express();
    let handled = 0;
    const started = signal();
    const released = signal();
    app.use(mw.express());
    app.use(express.json());
    app.use(mw.express()); // after the body parser: re-enters the request's scope
    app.post("/orders", (req, res) => {
      handled++;
      res.json({
        budget: currentDeadline()?.remaining(),
        signal: inheritSignal(undefined) !== undefined,
        sku: (req.body as { sku?: string }).sku,
      });
    });
    app.get("/hold", async (_req, res) => {
      started.resolve();
      await released.promise;
      res.json({ ok: true });
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise<void>((ready) => server.once("listening", () => ready()));
    closers.push(
      () =>
        new Promise<void>((done) => {
          server.close(() => done());
          server.closeAllConnections();
        }),
    );
    const { port } = server.address() as AddressInfo;
    await exercise(
      `http://127.0.0.1:${port}`,
      { started: started.promise, release: () => released.resolve() },
      () => handled,
    );
  });
});

describe("Fastify adapter", () => {
  it("scopes the handler (after body parsing), refuses spent budgets and sheds overload", async () => {
    const mw = createInboundMiddleware(settings);
    const app = Fastify();
    let handled = 0;
    const started = signal();
    const released = signal();
    mw.fastify(app);
    app.post("/orders", (request) => {
      handled++;
      return Promise.resolve({
        budget: currentDeadline()?.remaining(),
        signal: inheritSignal(undefined) !== undefined,
        sku: (request.body as { sku?: string }).sku,
      });
    });
    app.get("/hold", async () => {
      started.resolve();
      await released.promise;
      return { ok: true };
    });
    await app.listen({ port: 0, host: "127.0.0.1" });
    closers.push(() => app.close());
    const { port } = app.server.address() as AddressInfo;
    await exercise(
      `http://127.0.0.1:${port}`,
      { started: started.promise, release: () => released.resolve() },
      () => handled,
    );
  });
});
