/**
 * The checkout service itself, the same for every variant: `POST /checkout` runs one checkout
 * through the variant's clients and saves the order, `POST /sync/prices` saves a page of the
 * catalogue sync job. Both use the service's own database, a small pool of connections.
 * The variant decides what stands in front of the handler (generated.ts puts the front door of
 * resilience/checkout-service.yaml there).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as delay } from "node:timers/promises";
import type {
  CheckoutClients,
  Handler,
  Recommendations,
  ScenarioOptions,
  Variant,
} from "./scenario.js";
import { ids } from "./shared.js";

/** The page a caller gets back for a checkout that went through. */
export interface CheckoutPage {
  readonly orderId: string;
  readonly recommendations: number;
  readonly fallback: { readonly cause: string | null } | null;
}

async function checkout(
  clients: CheckoutClients,
  database: { query(): Promise<void> },
  i: number,
): Promise<Recommendations> {
  const { sku, reservationId, orderId, userId } = ids(i);
  const essentials = (async () => {
    const stock = await clients.getStock(sku);
    if (stock.available < 1) throw new Error("out of stock");
    await clients.reserve(sku, reservationId, 1);
    const charge = await clients.createCharge(orderId, 1250);
    if (charge.status !== "succeeded") throw new Error(`charge ${charge.status}`);
    await database.query(); // the order is saved
  })();
  const [, recs] = await Promise.all([essentials, clients.recommendations(userId)]);
  return recs;
}

/** A failure in a few words: `dependency.operation: kind` for the generated clients' errors. */
export function describe(error: unknown): string {
  if (
    typeof error === "object" &&
    error !== null &&
    "kind" in error &&
    typeof error.kind === "string"
  ) {
    const e = error as { kind: string; dependency?: string; operation?: string };
    return `${e.dependency ?? "?"}.${e.operation ?? "?"}: ${e.kind}`;
  }
  // identifiers of the checkout (sku-17, r-17) would make every message different
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/-\d+/g, "-…");
}

/**
 * The service's own database, as far as the demo needs it: `connections` queries at a time, each
 * taking `queryMs`, the rest waiting their turn in arrival order, as a connection pool makes
 * them wait.
 */
export function createDatabase(connections: number, queryMs: number): { query(): Promise<void> } {
  let busy = 0;
  const waiting: (() => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next === undefined) busy--;
    else next();
  };
  return {
    async query() {
      if (busy < connections) busy++;
      else await new Promise<void>((turn) => waiting.push(turn));
      try {
        await delay(queryMs);
      } finally {
        release();
      }
    },
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function reply(res: ServerResponse, status: number, body?: unknown): void {
  // a caller that gave up has closed the connection: there is nobody to answer
  if (res.destroyed) return;
  if (body === undefined) {
    res.writeHead(status, { "content-length": "0" }).end();
    return;
  }
  const text = JSON.stringify(body);
  res
    .writeHead(status, {
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(text)),
    })
    .end(text);
}

export interface CheckoutService {
  readonly url: string;
  /** Most requests the handler was working on at once. */
  peakHandling(): number;
  /** Resolves once no request is being handled, or after `boundMs`. */
  settle(boundMs: number): Promise<void>;
  /** Closes the server and its connections, then waits for the handlers still running. */
  close(): Promise<void>;
}

export async function startCheckoutService(
  variant: Variant,
  clients: CheckoutClients,
  options: ScenarioOptions,
): Promise<CheckoutService> {
  const database = createDatabase(options.database.connections, options.database.queryMs);
  const handling = new Set<Promise<void>>();
  let peak = 0;
  const handler: Handler = async (req, res) => {
    if (req.method === "POST" && req.url === "/checkout") {
      const { i } = JSON.parse(await readBody(req)) as { i: number };
      try {
        const recs = await checkout(clients, database, i);
        const page: CheckoutPage = {
          orderId: ids(i).orderId,
          recommendations: recs.items.length,
          fallback: recs.fallback,
        };
        reply(res, 200, page);
      } catch (error) {
        reply(res, 502, { error: describe(error) });
      }
      return;
    }
    if (req.method === "POST" && req.url === "/sync/prices") {
      await readBody(req);
      await database.query(); // the page is saved
      reply(res, 204);
      return;
    }
    reply(res, 404);
  };
  const tracked: Handler = (req, res) => {
    const work = handler(req, res).catch(() => reply(res, 500));
    handling.add(work);
    peak = Math.max(peak, handling.size);
    void work.finally(() => handling.delete(work));
    return work;
  };
  const server = createServer(variant.serve(tracked));
  // a request whose caller went away may still be answered late: that is not an error here
  server.on("clientError", (_error, socket) => socket.destroy());
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    peakHandling: () => peak,
    async settle(boundMs) {
      const deadline = performance.now() + boundMs;
      while (handling.size > 0 && performance.now() < deadline) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          Promise.allSettled([...handling]),
          new Promise<void>((done) => (timer = setTimeout(done, deadline - performance.now()))),
        ]);
        clearTimeout(timer);
      }
    },
    async close() {
      const closed = new Promise<void>((done) => server.close(() => done()));
      server.closeAllConnections();
      await closed;
      await Promise.allSettled([...handling]);
    },
  };
}
