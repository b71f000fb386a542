/**
 * Idempotent routes of the inbound middleware, over real HTTP on 127.0.0.1 with the memory store:
 * the first request runs and is stored, a repeat is answered from the store, a different request
 * under the same key gets 422, one that arrives while the first runs gets 409, and a store that
 * cannot answer fails open or closed as the route says; through node:http, Express (with
 * express.json() after the middleware) and Fastify. Time is the virtual clock's.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import Fastify from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import {
  createInboundMiddleware,
  createMemoryStore,
  createVirtualClock,
  StoreUnavailableError,
  type IdempotencyEvent,
  type InboundEvent,
  type RouteSettings,
  type ServiceSettings,
  type SharedStore,
} from "../../templates/runtime/index.js";
import { listen, signal, within } from "./helpers.js";

const orders = (over: Partial<RouteSettings["idempotency"] & object> = {}): RouteSettings => ({
  method: "POST",
  path: "/orders",
  essential: false,
  idempotency: {
    header: "idempotency-key",
    ttlMs: 86_400_000,
    store: "memory",
    required: false,
    maxBytes: 1_048_576,
    scope: ["authorization", "cookie"],
    ...over,
  },
});

function settings(routes: readonly RouteSettings[]): ServiceSettings {
  return {
    name: "shop",
    deadline: {
      edgeMs: 2_000,
      maxMs: 5_000,
      header: "x-request-timeout-ms",
      format: "ms",
      grpcTimeout: true,
      expiredStatus: 504,
    },
    admission: null,
    rejection: { status: 503, retryAfterS: 2 },
    defaultPriority: "normal",
    priorities: [],
    routes,
  };
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => unknown;

/** A node:http server behind the middleware; the handler gets the body it read itself. */
async function serve(routes: readonly RouteSettings[], handler: Handler, store?: SharedStore) {
  const clock = createVirtualClock(1_000_000);
  const events: IdempotencyEvent[] = [];
  const door = createInboundMiddleware(settings(routes), {
    clock,
    store: store ?? createMemoryStore({ clock }),
    observer: (e: InboundEvent) => {
      if (e.type === "request-idempotency") events.push(e);
    },
  });
  let runs = 0;
  const server = await listen(
    door.node(async (req: IncomingMessage, res: ServerResponse) => {
      runs++;
      let body = "";
      for await (const chunk of req) body += String(chunk);
      await handler(req, res, body);
    }),
  );
  closers.push(() => server.close());
  return { url: server.url, clock, events, runs: () => runs };
}

const created: Handler = (_req, res, body) => {
  res.setHeader("x-order", "o-1");
  res.writeHead(201, { "content-type": "application/json" });
  res.end(JSON.stringify({ id: "o-1", echo: body }));
};

const post = (url: string, key: string | undefined, body: string, headers = {}) =>
  fetch(`${url}/orders`, {
    method: "POST",
    headers: { ...(key === undefined ? {} : { "idempotency-key": key }), ...headers },
    body,
  });

/** Waits until the event with `outcome` has been emitted: completion is stored after the response. */
async function outcome(events: readonly IdempotencyEvent[], wanted: string): Promise<void> {
  await within(
    (async () => {
      while (!events.some((e) => e.outcome === wanted)) await new Promise((r) => setTimeout(r, 2));
    })(),
    2_000,
  );
}

describe("an idempotent route", () => {
  it("runs the first request, then answers a repeat from the store without running the handler", async () => {
    const s = await serve([orders()], created);
    const first = await post(s.url, "k-1", '{"sku":"a"}');
    expect(first.status).toBe(201);
    const firstBody = await first.text();
    expect(first.headers.get("idempotent-replayed")).toBeNull();

    const again = await post(s.url, "k-1", '{"sku":"a"}');
    expect(again.status).toBe(201);
    expect(await again.text()).toBe(firstBody);
    expect(again.headers.get("x-order")).toBe("o-1");
    expect(again.headers.get("content-type")).toBe("application/json");
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(s.runs()).toBe(1);
    expect(s.events.map((e) => e.outcome)).toEqual(["executed", "replayed"]);
  });

  it("answers 422 to the same key with another body, and runs nothing", async () => {
    const s = await serve([orders()], created);
    await (await post(s.url, "k-1", '{"sku":"a"}')).text();
    const other = await post(s.url, "k-1", '{"sku":"b"}');
    expect(other.status).toBe(422);
    expect(s.runs()).toBe(1);
  });

  it("answers 422 to the same key on another URL of the route's prefix", async () => {
    const s = await serve([{ ...orders(), path: "/orders/*" }], created);
    const ok = await fetch(`${s.url}/orders/1/pay`, {
      method: "POST",
      headers: { "idempotency-key": "k" },
      body: "x",
    });
    expect(ok.status).toBe(201);
    await ok.text();
    const elsewhere = await fetch(`${s.url}/orders/2/pay`, {
      method: "POST",
      headers: { "idempotency-key": "k" },
      body: "x",
    });
    expect(elsewhere.status).toBe(422);
  });

  it("answers 409 with Retry-After while the key's first request is running, then replays it", async () => {
    const gate = signal();
    const s = await serve([orders()], async (req, res, body) => {
      await gate.promise;
      created(req, res, body);
    });
    const first = post(s.url, "k-1", "a");
    await within(
      (async () => {
        while (s.runs() === 0) await new Promise((r) => setTimeout(r, 2));
      })(),
      2_000,
    );
    const during = await post(s.url, "k-1", "a");
    expect(during.status).toBe(409);
    expect(Number(during.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    gate.resolve();
    expect((await first).status).toBe(201);
    expect((await post(s.url, "k-1", "a")).headers.get("idempotent-replayed")).toBe("true");
    expect(s.runs()).toBe(1);
  });

  it("frees the key when the handler answers 5xx, so a retry runs it again", async () => {
    let fail = true;
    const s = await serve([orders()], (req, res, body) => {
      if (fail) {
        fail = false;
        res.writeHead(503).end();
      } else created(req, res, body);
    });
    expect((await post(s.url, "k-1", "a")).status).toBe(503);
    await outcome(s.events, "not-stored");
    expect((await post(s.url, "k-1", "a")).status).toBe(201);
    expect(s.runs()).toBe(2);
  });

  it("frees the key when the handler throws (500), so a retry runs it again", async () => {
    let fail = true;
    const s = await serve([orders()], (req, res, body) => {
      if (fail) {
        fail = false;
        throw new Error("the database went away");
      }
      created(req, res, body);
    });
    expect((await post(s.url, "k-1", "a")).status).toBe(500);
    await outcome(s.events, "not-stored");
    expect((await post(s.url, "k-1", "a")).status).toBe(201);
    expect(s.runs()).toBe(2);
  });

  it("does not store a response larger than maxBytes", async () => {
    const s = await serve([orders({ maxBytes: 8 })], (_req, res) => {
      res.writeHead(200).end("more than eight bytes");
    });
    await (await post(s.url, "k-1", "a")).text();
    await outcome(s.events, "not-stored");
    await (await post(s.url, "k-1", "a")).text();
    expect(s.runs()).toBe(2);
  });

  it("keeps keys apart per caller: another Authorization never gets the first caller's response", async () => {
    const s = await serve([orders()], created);
    await (await post(s.url, "k-1", "a", { authorization: "Bearer alice" })).text();
    const bob = await post(s.url, "k-1", "a", { authorization: "Bearer bob" });
    expect(bob.headers.get("idempotent-replayed")).toBeNull();
    expect(s.runs()).toBe(2);
  });

  it.each([
    ["too long", "k".repeat(256)],
    ["with a control character", "a\tb"],
    ["empty", '""'],
  ])("answers 400 to a key %s", async (_what, key) => {
    const s = await serve([orders()], created);
    expect((await post(s.url, key, "a")).status).toBe(400);
    expect(s.runs()).toBe(0);
    expect(s.events.map((e) => e.outcome)).toEqual(["invalid-key"]);
  });

  it("runs a request without a key every time, unless the route requires one (400)", async () => {
    const open = await serve([orders()], created);
    await (await post(open.url, undefined, "a")).text();
    await (await post(open.url, undefined, "a")).text();
    expect(open.runs()).toBe(2);
    const strict = await serve([orders({ required: true })], created);
    expect((await post(strict.url, undefined, "a")).status).toBe(400);
    expect(strict.runs()).toBe(0);
  });

  it("leaves safe methods and other routes alone", async () => {
    const s = await serve([{ ...orders(), method: null }], created);
    for (const method of ["GET", "POST"])
      await (
        await fetch(`${s.url}/${method === "GET" ? "orders" : "carts"}`, {
          method,
          headers: { "idempotency-key": "k" },
          ...(method === "GET" ? {} : { body: "a" }),
        })
      ).text();
    expect(s.events).toEqual([]);
    expect(s.runs()).toBe(2);
  });

  it("frees a key whose request outlives its lock, and does not store the late response", async () => {
    const gate = signal();
    const s = await serve([orders()], async (req, res, body) => {
      await gate.promise;
      created(req, res, body);
    });
    const first = post(s.url, "k-1", "a", { "x-request-timeout-ms": "500" });
    await within(
      (async () => {
        while (s.runs() === 0) await new Promise((r) => setTimeout(r, 2));
      })(),
      2_000,
    );
    // the lock lasts the request's budget plus a second
    await s.clock.advance(1_501);
    const second = post(s.url, "k-1", "a");
    await within(
      (async () => {
        while (s.runs() < 2) await new Promise((r) => setTimeout(r, 2));
      })(),
      2_000,
    );
    gate.resolve();
    await (await first).text();
    await (await second).text();
    await outcome(s.events, "lost");
    expect(s.events.filter((e) => e.outcome === "executed")).toHaveLength(1);
  });
});

describe("an idempotent route whose store cannot answer", () => {
  const down: SharedStore = {
    kind: "memory",
    key: (...parts) => parts.join(":"),
    run: () => Promise.reject(new StoreUnavailableError("store step idempotency-begin failed")),
  };

  it("fails open when the route is not essential: the handler runs, and the event says so", async () => {
    const s = await serve([orders()], created, down);
    expect((await post(s.url, "k-1", "a")).status).toBe(201);
    expect(s.runs()).toBe(1);
    expect(s.events).toEqual([
      expect.objectContaining({ outcome: "store-unavailable", failOpen: true, step: "begin" }),
    ]);
  });

  it("fails closed when the route is essential: 503 with Retry-After, and the handler never runs", async () => {
    const s = await serve([{ ...orders(), essential: true }], created, down);
    const answer = await post(s.url, "k-1", "a");
    expect(answer.status).toBe(503);
    expect(answer.headers.get("retry-after")).toBe("2");
    expect(s.runs()).toBe(0);
    expect(s.events).toEqual([
      expect.objectContaining({ outcome: "store-unavailable", failOpen: false }),
    ]);
  });

  it("refuses to start without a store when a route keeps its keys in Redis; a memory store is allowed", () => {
    expect(() => createInboundMiddleware(settings([orders({ store: "redis" })]))).toThrow(
      /POST \/orders keeps idempotency keys in Redis \(store: redis\), but no store was given/,
    );
    expect(() =>
      createInboundMiddleware(settings([orders({ store: "redis" })]), {
        store: createMemoryStore(),
      }),
    ).not.toThrow();
  });
});

describe("an idempotent route in the frameworks", () => {
  /** Posts the same order twice, then the same key with another body. */
  async function exercise(url: string, runs: () => number) {
    const send = (sku: string) =>
      fetch(`${url}/orders`, {
        method: "POST",
        headers: { "idempotency-key": "k-1", "content-type": "application/json" },
        body: JSON.stringify({ sku }),
      });
    const first = await send("a");
    expect(first.status).toBe(201);
    expect(await first.json()).toEqual({ id: "o-1", sku: "a" });
    const again = await send("a");
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await again.json()).toEqual({ id: "o-1", sku: "a" });
    expect((await send("b")).status).toBe(422);
    expect(runs()).toBe(1);
  }

  const door = () => createInboundMiddleware(settings([orders()]));

  it("Express: the first mount watches the body express.json() reads; a repeat never reaches the parser", async () => {
    const mw = door();
    const app = express();
    let runs = 0;
    app.use(mw.express());
    app.use(express.json());
    app.use(mw.express());
    app.post("/orders", (req, res) => {
      runs++;
      res.status(201).json({ id: "o-1", sku: (req.body as { sku: string }).sku });
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
    await exercise(`http://127.0.0.1:${port}`, () => runs);
  });

  it("Fastify: onRequest watches the body Fastify parses; a repeat is answered before parsing", async () => {
    const mw = door();
    const app = Fastify();
    let runs = 0;
    mw.fastify(app);
    app.post("/orders", async (request, reply) => {
      runs++;
      return reply.code(201).send({ id: "o-1", sku: (request.body as { sku: string }).sku });
    });
    await app.listen({ port: 0, host: "127.0.0.1" });
    closers.push(() => app.close());
    const { port } = app.server.address() as AddressInfo;
    await exercise(`http://127.0.0.1:${port}`, () => runs);
  });
});
