/**
 * An adaptive bulkhead against a real HTTP server on 127.0.0.1 (docs/runtime.md, "Adaptive
 * concurrency"): while the server answers in 10 ms the limit stays near its start; when it starts
 * taking 200 ms a response (twenty times its baseline) the limit comes down, and the server
 * never sees more requests at once than the limit allowed; when it is fast again the limit goes
 * back up. The latency ratios are wide enough that scheduling noise cannot reverse them.
 * Bounded in time.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createDependency,
  sendHttp,
  type OperationSettings,
  type ResilienceEvent,
} from "../../templates/runtime/index.js";
import { settlesWithin } from "./helpers.js";

let server: Server;
let baseUrl = "";
let delayMs = 0;
let inFlight = 0;
let peak = 0;

beforeAll(async () => {
  server = createServer((_req, res) => {
    inFlight++;
    peak = Math.max(peak, inFlight);
    setTimeout(() => {
      inFlight--;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ ok: true }));
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}/`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const get: OperationSettings<null> = {
  name: "getStock",
  repeatable: true,
  idempotencyKey: null,
  timeout: { attemptMs: 2_000, totalMs: 5_000 },
  retry: null,
  hedge: null,
  fallback: null,
};

describe("adaptive bulkhead against a server that slows down and recovers", () => {
  it("cuts the limit while the server is slow and raises it again after", async () => {
    const events: ResilienceEvent[] = [];
    const dep = createDependency(
      {
        name: "inventory",
        deadline: null,
        breaker: null,
        bulkhead: {
          maxConcurrent: 8,
          maxQueue: 0,
          queueTimeoutMs: 0,
          overflow: "reject",
          adaptive: { minLimit: 1, maxLimit: 8, smoothing: 1, tolerance: 1.5, windowMs: 2 },
        },
        budget: null,
      },
      { observer: (e) => events.push(e) },
    );
    const limit = () => dep.bulkhead?.limit ?? 0;
    // as many callers as the limit allows, each calling again as soon as its call ends
    const phase = async (calls: number) => {
      let left = calls;
      const worker = async () => {
        while (left > 0) {
          left--;
          await dep
            .call(get, (ctx) => sendHttp({ baseUrl, method: "GET", path: "/stock" }, ctx))
            .catch(() => undefined);
        }
      };
      await Promise.all(Array.from({ length: limit() }, worker));
    };

    // enough calls for well over the ten windows the baseline's first average takes; 10 ms a
    // response, so the machine's own jitter (a millisecond or two) stays within the tolerance
    delayMs = 10;
    await settlesWithin(phase(400), 10_000);

    delayMs = 200;
    peak = 0;
    await settlesWithin(phase(60), 10_000);
    const cut = limit();
    expect(cut).toBeLessThan(8);
    expect(peak).toBeLessThanOrEqual(8);
    const down = events.filter((e) => e.type === "bulkhead-limit-changed" && e.limit < e.previous);
    expect(down.length).toBeGreaterThan(0);

    delayMs = 10;
    const before = events.length;
    await settlesWithin(phase(400), 10_000);
    // raised again (a stray slow window on a busy machine may cut it once more, so the highest
    // limit of the phase is what counts)
    const raised = events
      .slice(before)
      .map((e) => (e.type === "bulkhead-limit-changed" ? e.limit : 0));
    expect(Math.max(limit(), ...raised)).toBeGreaterThan(cut);
  }, 30_000);
});
