/**
 * The front door's metrics against the real OpenTelemetry SDK: a real node:http server with a
 * concurrency limit of 2 and a queue of 1 admits, queues and sheds requests, and the counters,
 * queue-wait histogram and occupancy gauges say which priority was refused and why.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createInboundMiddleware,
  type InboundMiddleware,
  type ServiceSettings,
} from "../../templates/runtime/index.js";
import {
  ATTR,
  installInboundOpenTelemetry,
  METRIC,
} from "../../templates/telemetry/opentelemetry.js";
import { listen, signal, within, type Running } from "../services/helpers.js";
import { createSdk, recordingLogger, type Metrics } from "./sdk.js";

const settings: ServiceSettings = {
  name: "shop",
  deadline: {
    edgeMs: 2_000,
    maxMs: 5_000,
    header: "x-request-timeout-ms",
    format: "ms",
    grpcTimeout: true,
    expiredStatus: 504,
  },
  admission: { maxConcurrent: 2, maxQueue: 1, queueTimeoutMs: 2_000, reserve: {} },
  rejection: { status: 503, retryAfterS: 1 },
  defaultPriority: "normal",
  priorities: [
    { priority: "critical", method: "GET", path: "/healthz", header: null, value: null },
    { priority: "low", method: null, path: "/sync*", header: null, value: null },
  ],
};
const SHOP = { [ATTR.service]: "shop" };

async function until(condition: () => boolean): Promise<void> {
  const end = Date.now() + 3_000;
  while (!condition()) {
    if (Date.now() > end) throw new Error("condition not reached");
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe("OpenTelemetry adapter: the front door", () => {
  const sdk = createSdk();
  const logger = recordingLogger();
  let server: Running;
  let mw: InboundMiddleware;
  let during: Metrics;
  let m: Metrics;

  beforeAll(async () => {
    mw = createInboundMiddleware(settings, { logger });
    installInboundOpenTelemetry(mw, { meter: sdk.meterProvider.getMeter("test") });
    const released = signal();
    let held = 0;
    server = await listen(
      mw.node(async (req, res) => {
        if (req.url === "/hold") {
          held++;
          await released.promise;
        }
        res.writeHead(200, { "content-length": "2" }).end("ok");
      }),
    );
    const get = (path: string, headers: Record<string, string> = {}) =>
      fetch(`${server.url}${path}`, { headers }).then(async (r) => (await r.text(), r.status));
    const holds = [get("/hold"), get("/hold")];
    await until(() => held === 2);
    const queuedLow = get("/sync/1"); // waits for a slot
    await until(() => mw.health().admission?.queued === 1);
    expect(await get("/sync/2")).toBe(503); // queue full, nobody below low to displace
    const critical = get("/healthz"); // displaces the queued low request
    expect(await within(queuedLow, 2_000)).toBe(503);
    await new Promise((r) => setTimeout(r, 20));
    during = await sdk.collect();
    released.resolve();
    expect(await within(Promise.all(holds), 2_000)).toEqual([200, 200]);
    expect(await within(critical, 2_000)).toBe(200);
    expect(await get("/", { "x-request-timeout-ms": "0" })).toBe(504);
    expect(await get("/", { "x-request-timeout-ms": "soon" })).toBe(200);
    m = await sdk.collect();
  });

  afterAll(async () => {
    await server.close();
  });

  it("counts admitted requests by priority and whether they waited", () => {
    expect(
      m.sum(METRIC.serverAdmitted, { ...SHOP, [ATTR.priority]: "normal", [ATTR.queued]: false }),
    ).toBe(3);
    expect(
      m.sum(METRIC.serverAdmitted, { ...SHOP, [ATTR.priority]: "critical", [ATTR.queued]: true }),
    ).toBe(1);
    expect(m.sum(METRIC.serverAdmitted, { [ATTR.priority]: "low" })).toBe(0);
    expect(m.sum(METRIC.serverQueued, { ...SHOP, [ATTR.priority]: "low" })).toBe(1);
    expect(m.sum(METRIC.serverQueued, { ...SHOP, [ATTR.priority]: "critical" })).toBe(1);
  });

  it("counts shed requests by priority, reason and status", () => {
    expect(
      m.sum(METRIC.serverShed, {
        ...SHOP,
        [ATTR.priority]: "low",
        [ATTR.shedReason]: "queue-full",
        [ATTR.statusCode]: 503,
      }),
    ).toBe(1);
    expect(
      m.sum(METRIC.serverShed, {
        ...SHOP,
        [ATTR.priority]: "low",
        [ATTR.shedReason]: "evicted",
        [ATTR.statusCode]: 503,
      }),
    ).toBe(1);
    expect(
      m.sum(METRIC.serverShed, {
        ...SHOP,
        [ATTR.priority]: "normal",
        [ATTR.shedReason]: "expired",
        [ATTR.statusCode]: 504,
      }),
    ).toBe(1);
    expect(m.sum(METRIC.serverShed)).toBe(3);
  });

  it("records the queue wait of requests that waited, admitted or shed", () => {
    const admitted = m.histogram(METRIC.serverQueueWait, {
      ...SHOP,
      [ATTR.priority]: "critical",
      [ATTR.outcome]: "admitted",
    });
    expect(admitted.count).toBe(1);
    expect(admitted.sum).toBeGreaterThan(0.015);
    expect(
      m.histogram(METRIC.serverQueueWait, {
        ...SHOP,
        [ATTR.priority]: "low",
        [ATTR.outcome]: "shed",
      }).count,
    ).toBe(1);
    expect(m.histogram(METRIC.serverQueueWait).count).toBe(2);
  });

  it("counts unreadable deadline headers, and the middleware logs them", () => {
    expect(
      m.sum(METRIC.serverDeadlineMalformed, {
        ...SHOP,
        [ATTR.deadlineHeader]: "x-request-timeout-ms",
      }),
    ).toBe(1);
    expect(logger.lines.map((l) => l.fields["event"])).toEqual([
      "resilience.inbound.deadline_malformed",
    ]);
  });

  it("observes the gate's occupancy", () => {
    expect(during.sum(METRIC.serverInFlight, SHOP)).toBe(2);
    expect(during.sum(METRIC.serverWaiting, SHOP)).toBe(1);
    expect(during.sum(METRIC.serverLimit, SHOP)).toBe(2);
    expect(m.sum(METRIC.serverInFlight, SHOP)).toBe(0);
  });

  it("uses only bounded attributes", () => {
    const allowed = new Set<string>(Object.values(ATTR));
    for (const name of m.names.filter((n) => n.startsWith("resilience.server."))) {
      for (const point of m.points(name))
        for (const key of Object.keys(point.attributes))
          expect(allowed.has(key), `${name} ${key}`).toBe(true);
    }
  });
});
