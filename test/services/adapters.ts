/**
 * One small shop behind the front door on each adapter, on 127.0.0.1: node:http with a router on
 * `new URL()`, Express 5 and Fastify 5 with their default routing. `POST /orders` counts its runs
 * and holds while `x-hold` is sent; `/sync/*` (any method) records the priority its request was
 * admitted with. Raw requests (any request target, bytes as given) and raw sockets reach them.
 */
import { once } from "node:events";
import { request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { connect, type AddressInfo } from "node:net";
import express from "express";
import Fastify from "fastify";
import {
  createInboundMiddleware,
  type InboundEvent,
  type InboundMiddleware,
  type Priority,
  type ServiceSettings,
} from "../../templates/runtime/index.js";
import { listen } from "./helpers.js";

export type AdapterName = "node" | "express" | "fastify";
export const ADAPTERS: readonly AdapterName[] = ["node", "express", "fastify"];

/** `POST /orders` requires a key; `/sync/*` is low; 2 slots, no queue, no reserve. */
export const shopSettings: ServiceSettings = {
  name: "shop",
  deadline: {
    edgeMs: 2_000,
    maxMs: 5_000,
    header: "x-request-timeout-ms",
    format: "ms",
    grpcTimeout: true,
    expiredStatus: 504,
  },
  admission: { maxConcurrent: 2, maxQueue: 0, queueTimeoutMs: 0, reserve: {} },
  rejection: { status: 503, retryAfterS: 2 },
  defaultPriority: "normal",
  priorities: [{ priority: "low", method: null, path: "/sync/*", header: null, value: null }],
  routes: [
    {
      method: "POST",
      path: "/orders",
      essential: false,
      idempotency: {
        header: "idempotency-key",
        ttlMs: 60_000,
        store: "memory",
        required: true,
        maxBytes: 65_536,
        scope: ["authorization"],
      },
    },
  ],
};

export interface Shop {
  readonly adapter: AdapterName;
  readonly door: InboundMiddleware;
  readonly port: number;
  /** Runs of the `POST /orders` handler. */
  orders: number;
  /** Runs of the `/sync/*` handler, with the priority each was admitted with. */
  readonly synced: Priority[];
  /** Requests now held by `x-hold`. */
  held: number;
  /** Lets every held request answer. */
  release(): void;
  close(): Promise<void>;
}

/** Starts the shop on one adapter. */
export async function startShop(
  adapter: AdapterName,
  settings: ServiceSettings = shopSettings,
): Promise<Shop> {
  let lastPriority: Priority = "normal";
  const door = createInboundMiddleware(settings, {
    observer: (event: InboundEvent) => {
      if (event.type === "request-admitted") lastPriority = event.priority;
    },
  });
  let waiting: (() => void)[] = [];
  const shop: Shop = {
    adapter,
    door,
    port: 0,
    orders: 0,
    synced: [],
    held: 0,
    release: () => {
      for (const go of waiting.splice(0)) go();
    },
    close: () => Promise.resolve(),
  };
  const hold = async (headers: IncomingMessage["headers"]) => {
    if (headers["x-hold"] === undefined) return;
    shop.held++;
    await new Promise<void>((go) => waiting.push(go));
    shop.held--;
  };
  // admission happens just before the handler, and the tests send one request at a time
  const order = async (req: IncomingMessage) => {
    shop.orders++;
    await hold(req.headers);
    return { order: shop.orders };
  };
  const sync = () => {
    shop.synced.push(lastPriority);
    return { priority: lastPriority };
  };
  const mutable = shop as { port: number; close: () => Promise<void> };
  if (adapter === "node") {
    const running = await listen(
      door.node(async (req: IncomingMessage, res: ServerResponse) => {
        // the application's router: WHATWG URL parsing, as many hand-written routers do
        const path = new URL(req.url ?? "/", "http://localhost").pathname;
        const send = (status: number, body: unknown) => {
          res.writeHead(status, { "content-type": "application/json" });
          res.end(JSON.stringify(body));
        };
        await drain(req);
        if (req.method === "POST" && path === "/orders") send(201, await order(req));
        else if (path.startsWith("/sync/")) send(200, sync());
        else send(404, { path });
      }),
    );
    mutable.port = Number(new URL(running.url).port);
    mutable.close = () => running.close();
  } else if (adapter === "express") {
    const app = express();
    app.use(door.express());
    app.post("/orders", async (req, res) => {
      await drain(req);
      res.status(201).json(await order(req));
    });
    app.all("/sync/*rest", (_req, res) => {
      res.json(sync());
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise<void>((ready) => server.once("listening", () => ready()));
    mutable.port = (server.address() as AddressInfo).port;
    mutable.close = () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      });
  } else {
    const app = Fastify();
    door.fastify(app);
    app.post("/orders", async (request, reply) => {
      reply.code(201);
      return order(request.raw);
    });
    app.all("/sync/*", () => Promise.resolve(sync()));
    await app.listen({ port: 0, host: "127.0.0.1" });
    mutable.port = (app.server.address() as AddressInfo).port;
    mutable.close = () => app.close();
  }
  const close = mutable.close;
  mutable.close = async () => {
    shop.release();
    waiting = [];
    await close();
  };
  return shop;
}

// reads a request body to its end (what the idempotency step fingerprints)
async function drain(req: IncomingMessage): Promise<void> {
  req.resume();
  if (!req.readableEnded) await once(req, "end");
}

export interface RawAnswer {
  readonly status: number;
  readonly headers: IncomingMessage["headers"];
  readonly body: string;
}

/** One request with the request target exactly as given (no normalisation), on a fresh connection. */
export function send(
  port: number,
  method: string,
  target: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: "127.0.0.1",
        port,
        method,
        path: target,
        headers: body === undefined ? headers : { "content-type": "text/plain", ...headers },
        agent: false,
        timeout: 5_000,
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }),
        );
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`${method} ${target}: no answer in 5 s`)));
    req.on("error", reject);
    req.end(body);
  });
}

/** Everything the server writes back to `text`, until it closes the connection. */
export function sendRaw(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let out = "";
    socket.setEncoding("latin1");
    socket.setTimeout(5_000, () => socket.destroy(new Error("no answer in 5 s")));
    socket.on("data", (chunk: string) => (out += chunk));
    socket.on("end", () => resolve(out));
    socket.on("error", reject);
    socket.write(text);
  });
}
