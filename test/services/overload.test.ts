/**
 * Overload on a real socket: 50 clients (5× the concurrency limit of 10) send orders in a closed
 * loop, half of them high priority (checkout) and half low (background sync). High priority keeps
 * its success rate; low priority is shed with 503 and Retry-After, and a shed request costs a
 * small fraction of a served one. The cost ratio is printed, not asserted: it is a measurement.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InboundMiddleware, InboundOptions } from "../../templates/runtime/index.js";
import { buildAndImport, listen, within, type Running } from "./helpers.js";

interface Generated {
  createShopMiddleware(options?: InboundOptions): InboundMiddleware;
  createInventoryClient(config: { baseUrl: string }): {
    getStock(input: { sku: string }): Promise<{ available: number }>;
  };
}

const LIMIT = 10;
const CLIENTS = 5 * LIMIT;
const REQUESTS_PER_CLIENT = 20;
const WORK_MS = 20; // latency of the served request's downstream call (inventory)

const order = JSON.stringify({
  orderId: "o-1",
  items: Array.from({ length: 30 }, (_, i) => ({
    sku: `sku-${i}`,
    quantity: 1 + (i % 3),
    priceCents: 1_000 + i * 7,
  })),
});

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : sorted[Math.floor(sorted.length / 2)]!;
}

describe("overload: 5× the concurrency limit, mixed priorities", () => {
  let server: Running;
  let inventoryServer: Running;
  // every server started so far: afterAll closes these, also when beforeAll stopped half-way
  const started: Running[] = [];
  const start = async (handler: Parameters<typeof listen>[0]) => {
    const running = await listen(handler);
    started.push(running);
    return running;
  };
  let mw: InboundMiddleware;
  // time spent in our code per request, in ms: the middleware's entry (all of a shed request) plus the handler's own work
  const served = new Map<ServerResponse, number>();
  const shed: number[] = [];

  beforeAll(async () => {
    const g = await buildAndImport<Generated>("overload", ["test/services/fixtures/overload"]);
    mw = g.createShopMiddleware();
    inventoryServer = await start((_req, res) => {
      setTimeout(() => {
        res.writeHead(200, { "content-type": "application/json", "content-length": "15" });
        res.end('{"available":9}');
      }, WORK_MS);
    });
    const inventory = g.createInventoryClient({ baseUrl: inventoryServer.url });
    const handle = mw.node(async (req: IncomingMessage, res: ServerResponse) => {
      const add = (ms: number) => served.set(res, (served.get(res) ?? 0) + ms);
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      let began = performance.now();
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        orderId: string;
        items: { quantity: number; priceCents: number }[];
      };
      const totalCents = body.items.reduce((n, item) => n + item.quantity * item.priceCents, 0);
      const stock = inventory.getStock({ sku: "sku-1" });
      let spent = performance.now() - began;
      const { available } = await stock;
      began = performance.now();
      const text = JSON.stringify({
        orderId: body.orderId,
        totalCents,
        status: available > 0 ? "accepted" : "backordered",
      });
      res.writeHead(200, {
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(text)),
      });
      res.end(text);
      spent += performance.now() - began;
      add(spent);
    });
    server = await start((req, res) => {
      const began = performance.now();
      handle(req, res);
      const entry = performance.now() - began;
      if (res.statusCode === 503) shed.push(entry);
      else served.set(res, (served.get(res) ?? 0) + entry);
    });
  });

  afterAll(async () => {
    for (const s of started.reverse()) await s.close();
  });

  it("keeps high priority at ≥ 99 % success while low priority is shed with 503 and Retry-After", async () => {
    const results = { high: { ok: 0, shed: 0, other: 0 }, low: { ok: 0, shed: 0, other: 0 } };
    const retryAfter = new Set<string | null>();
    const client = async (priority: "high" | "low") => {
      for (let i = 0; i < REQUESTS_PER_CLIENT; i++) {
        const response = await fetch(
          `${server.url}${priority === "high" ? "/orders" : "/sync/orders"}`,
          {
            method: "POST",
            headers: {
              "content-type": "application/json",
              ...(priority === "high" ? { "x-priority": "checkout" } : {}),
            },
            body: order,
          },
        );
        await response.arrayBuffer();
        if (response.status === 200) results[priority].ok++;
        else if (response.status === 503) {
          results[priority].shed++;
          retryAfter.add(response.headers.get("retry-after"));
        } else results[priority].other++;
      }
    };
    await within(
      Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i % 2 === 0 ? "high" : "low"))),
      25_000,
    );

    const total = (CLIENTS / 2) * REQUESTS_PER_CLIENT;
    const servedUs = 1_000 * median([...served.values()]);
    const shedUs = 1_000 * median(shed);
    console.log(
      `overload (${CLIENTS} clients, limit ${LIMIT}, queue 20): high ${results.high.ok}/${total} served, ${results.high.shed} shed; ` +
        `low ${results.low.ok}/${total} served, ${results.low.shed} shed. ` +
        `Median time in our code per request: served ${servedUs.toFixed(1)} µs, shed ${shedUs.toFixed(1)} µs (shed/served = ${(shedUs / servedUs).toFixed(2)}); health ${JSON.stringify(mw.health())}`,
    );
    expect(results.high.ok / total).toBeGreaterThanOrEqual(0.99);
    expect(results.high.other + results.low.other).toBe(0);
    expect(results.low.shed).toBeGreaterThan(0);
    expect([...retryAfter]).toEqual(["1"]);
    expect(mw.health().admission).toEqual({ inFlight: 0, queued: 0, maxConcurrent: LIMIT });
  });

  it("still answers health checks (critical) while saturated", async () => {
    // saturate with low-priority work that waits, then ask for /healthz
    const low = Array.from({ length: CLIENTS }, () =>
      fetch(`${server.url}/sync/orders`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: order,
      }).then((r) => r.arrayBuffer().then(() => r.status)),
    );
    await sleep(5);
    const health = await fetch(`${server.url}/healthz`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: order,
    });
    expect(health.status).toBe(200);
    await health.arrayBuffer();
    const statuses = await within(Promise.all(low), 10_000);
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThan(0);
  });
});
