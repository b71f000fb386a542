/**
 * Reserved capacity per priority (admission.reserve): slow low-priority work saturates real
 * node:http, Express and Fastify servers on 127.0.0.1, and every critical health check is still
 * answered within its deadline, because lower priorities cannot take the slot kept for it (the
 * default reserve). The gate's rules are checked in virtual time first.
 */
import type { AddressInfo } from "node:net";
import express from "express";
import Fastify from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import {
  AdmissionGate,
  createInboundMiddleware,
  createVirtualClock,
  type InboundMiddleware,
  type ServiceSettings,
} from "../../templates/runtime/index.js";
import { listen, signal, within } from "./helpers.js";

const LIMIT = 4;
const settings: ServiceSettings = {
  name: "shop",
  deadline: {
    edgeMs: 5_000,
    maxMs: 10_000,
    header: "x-request-timeout-ms",
    format: "ms",
    grpcTimeout: true,
    expiredStatus: 504,
  },
  // no reserve given: the default keeps one slot for critical
  admission: { maxConcurrent: LIMIT, maxQueue: 8, queueTimeoutMs: 5_000 },
  rejection: { status: 503, retryAfterS: 1 },
  defaultPriority: "normal",
  priorities: [
    { priority: "critical", method: "GET", path: "/healthz", header: null, value: null },
    { priority: "low", method: null, path: "/sync*", header: null, value: null },
  ],
};

describe("AdmissionGate reserve, in virtual time", () => {
  const none = () => undefined;

  it("keeps the reserved slots from lower priorities and admits critical at once whatever the queue holds", () => {
    const clock = createVirtualClock();
    const gate = new AdmissionGate(
      { maxConcurrent: 6, maxQueue: 10, queueTimeoutMs: 1_000, reserve: { critical: 1, high: 2 } },
      clock,
    );
    const events: string[] = [];
    const enter = (priority: "critical" | "high" | "normal" | "low", id: string) =>
      gate.enter(
        priority,
        10_000,
        () => events.push(`${id} admitted`),
        (reason, cause) => events.push(`${id} shed ${reason} ${cause}`),
      );
    // low and normal may fill 6 − 1 − 2 = 3 slots
    for (let i = 0; i < 3; i++) expect(enter("low", `low${i}`)).toBe(true);
    expect(typeof enter("normal", "normal")).toBe("function");
    // high may fill 6 − 1 = 5
    expect(enter("high", "high0")).toBe(true);
    expect(enter("high", "high1")).toBe(true);
    expect(typeof enter("high", "high2")).toBe("function");
    // critical takes the last slot at once, with high and normal waiting
    expect(enter("critical", "crit0")).toBe(true);
    expect(gate.health()).toEqual({ inFlight: 6, queued: 2, maxConcurrent: 6 });
    // 5 in flight after one release: high's share is full, the slot stays free for critical
    gate.release();
    expect(events).toEqual([]);
    // 4 in flight: the waiting high request gets the slot
    gate.release();
    expect(events).toEqual(["high2 admitted"]);
    // the slots above the normal share (3) stay free for high and critical
    gate.release();
    gate.release();
    expect(events).toEqual(["high2 admitted"]);
    expect(gate.health()).toEqual({ inFlight: 3, queued: 1, maxConcurrent: 6 });
    gate.release();
    expect(events).toEqual(["high2 admitted", "normal admitted"]);
    expect(gate.health()).toEqual({ inFlight: 3, queued: 0, maxConcurrent: 6 });
  });

  it("reserves one slot for critical by default when there are two slots or more, none with one", () => {
    const clock = createVirtualClock();
    const two = new AdmissionGate({ maxConcurrent: 2, maxQueue: 0, queueTimeoutMs: 0 }, clock);
    expect(two.enter("high", 1_000, none, none)).toBe(true);
    expect(two.enter("high", 1_000, none, none)).toBe(false);
    expect(two.enter("critical", 1_000, none, none)).toBe(true);
    const one = new AdmissionGate({ maxConcurrent: 1, maxQueue: 0, queueTimeoutMs: 0 }, clock);
    expect(one.enter("low", 1_000, none, none)).toBe(true);
    const open = new AdmissionGate(
      { maxConcurrent: 2, maxQueue: 0, queueTimeoutMs: 0, reserve: {} },
      clock,
    );
    expect(open.enter("low", 1_000, none, none)).toBe(true);
    expect(open.enter("low", 1_000, none, none)).toBe(true);
  });
});

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A server under test: /sync/* holds its slot until `release`, /healthz answers at once. */
interface Subject {
  readonly url: string;
  readonly mw: InboundMiddleware;
  readonly started: () => number;
  readonly release: () => void;
}

async function until(condition: () => boolean, boundMs = 3_000): Promise<void> {
  const end = Date.now() + boundMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error("condition not reached");
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Saturates the server with slow low-priority work, then checks 15 critical health checks (5 at a time) each finish in time. */
async function saturateAndProbe(s: Subject): Promise<void> {
  const slow = Array.from({ length: 12 }, (_, i) =>
    fetch(`${s.url}/sync/${i}`).then((r) => r.status),
  );
  // 3 slots (4 minus the critical reserve) held by slow work, 8 waiting, 1 shed
  await until(() => s.started() === LIMIT - 1 && s.mw.health().admission?.queued === 8);
  const deadlineMs = 500;
  for (let round = 0; round < 3; round++) {
    const probes = Array.from({ length: 5 }, async () => {
      const began = performance.now();
      const res = await fetch(`${s.url}/healthz`, {
        headers: { "x-request-timeout-ms": String(deadlineMs) },
      });
      await res.text();
      return { status: res.status, ms: performance.now() - began };
    });
    for (const probe of await within(Promise.all(probes), 2_000)) {
      expect(probe.status).toBe(200);
      expect(probe.ms).toBeLessThan(deadlineMs);
    }
  }
  // the probes never took a slot from the slow work, nor the slow work the probes' reserve
  expect(s.started()).toBe(LIMIT - 1);
  s.release();
  // probes that found the reserve busy may have displaced queued slow requests (shed with 503)
  const statuses = await within(Promise.all(slow), 5_000);
  expect(statuses.every((x) => x === 200 || x === 503)).toBe(true);
  expect(statuses.filter((x) => x === 200).length).toBeGreaterThanOrEqual(LIMIT - 1);
}

function holder() {
  let started = 0;
  const released = signal();
  return {
    started: () => started,
    release: () => released.resolve(),
    hold: async () => {
      started++;
      await released.promise;
    },
  };
}

describe("critical requests keep answering while slow low-priority work saturates the server", () => {
  it("node:http", async () => {
    const mw = createInboundMiddleware(settings);
    const h = holder();
    const server = await listen(
      mw.node(async (req, res) => {
        if (req.url?.startsWith("/sync")) await h.hold();
        res.writeHead(200, { "content-length": "2" }).end("ok");
      }),
    );
    closers.push(() => server.close());
    await saturateAndProbe({ url: server.url, mw, started: h.started, release: h.release });
  });

  it("Express", async () => {
    const mw = createInboundMiddleware(settings);
    const h = holder();
    const app = express();
    app.use(mw.express());
    app.get("/sync/:id", async (_req, res) => {
      await h.hold();
      res.send("ok");
    });
    app.get("/healthz", (_req, res) => void res.send("ok"));
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
    await saturateAndProbe({
      url: `http://127.0.0.1:${port}`,
      mw,
      started: h.started,
      release: h.release,
    });
  });

  it("Fastify", async () => {
    const mw = createInboundMiddleware(settings);
    const h = holder();
    const app = Fastify();
    mw.fastify(app);
    app.get("/sync/:id", async () => {
      await h.hold();
      return "ok";
    });
    app.get("/healthz", () => Promise.resolve("ok"));
    await app.listen({ port: 0, host: "127.0.0.1" });
    closers.push(() => app.close());
    const { port } = app.server.address() as AddressInfo;
    await saturateAndProbe({
      url: `http://127.0.0.1:${port}`,
      mw,
      started: h.started,
      release: h.release,
    });
  });
});
