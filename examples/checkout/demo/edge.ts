/**
 * The checkout's front door: its service policy (resilience/checkout-service.yaml) compiled into
 * createCheckoutMiddleware. A few requests show the edge deadline at work: stamped when none
 * arrives, clamped when a caller asks too much, refused when spent, and inherited by the
 * checkout's own calls, so a hanging dependency cannot hold the request past it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  createCheckoutMiddleware,
  createInventoryClient,
  currentDeadline,
  isResilienceError,
} from "../src/generated/index.js";

async function listen(server: Server): Promise<string> {
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function stop(server: Server): Promise<void> {
  return new Promise((done) => {
    server.close(() => done());
    server.closeAllConnections();
  });
}

/** Runs the requests and returns one line per request, for the demo's output. */
export async function edgeDeadlineScenario(): Promise<string[]> {
  // inventory answers at once, except for the sku "hang", which it never answers
  const inventoryServer = createServer((req, res) => {
    if (req.url?.includes("/hang/")) return;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ sku: "a", available: 3 }));
  });
  const inventory = createInventoryClient({ baseUrl: await listen(inventoryServer) });
  let handled = 0;
  const checkout = createServer(
    createCheckoutMiddleware().node(async (req: IncomingMessage, res: ServerResponse) => {
      handled++;
      const budget = Math.round(currentDeadline()?.remaining() ?? 0);
      let status = 200;
      try {
        await inventory.getStock({ sku: req.url === "/checkout/hang" ? "hang" : "a" });
      } catch (error) {
        status =
          isResilienceError(error) && (error.kind === "deadline" || error.kind === "timeout")
            ? 504
            : 502;
      }
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify({ budget }));
    }),
  );
  const url = await listen(checkout);
  const lines: string[] = [];
  try {
    const ask = async (
      label: string,
      path: string,
      header: string | undefined,
      explain: (status: number, budget: number | undefined, ms: number) => string,
    ) => {
      const before = handled;
      const started = performance.now();
      const response = await fetch(
        `${url}${path}`,
        header === undefined ? {} : { headers: { "x-request-timeout-ms": header } },
      );
      const text = await response.text();
      const ms = Math.round(performance.now() - started);
      const budget =
        handled > before && text !== ""
          ? (JSON.parse(text) as { budget: number }).budget
          : undefined;
      lines.push(`  ${label.padEnd(40)} → ${explain(response.status, budget, ms)}`);
    };
    await ask(
      "no deadline header",
      "/checkout",
      undefined,
      (s, b) => `${s}, the checkout had ${b} ms (the edge deadline)`,
    );
    await ask(
      "x-request-timeout-ms: 60000",
      "/checkout",
      "60000",
      (s, b) => `${s}, the checkout had ${b} ms (clamped to deadline.max)`,
    );
    await ask(
      "x-request-timeout-ms: 300, stock hangs",
      "/checkout/hang",
      "300",
      (s, _b, ms) => `${s} after ${ms} ms: the call to inventory ended at the caller's deadline`,
    );
    await ask(
      "x-request-timeout-ms: 0",
      "/checkout",
      "0",
      (s, b, ms) =>
        `${s} after ${ms} ms, ${b === undefined ? "the checkout never ran" : "the checkout ran"}`,
    );
  } finally {
    await Promise.all([stop(checkout), stop(inventoryServer)]);
  }
  return lines;
}
