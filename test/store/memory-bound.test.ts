// The memory store at its bound (docs/store.md, "The memory store's bound"): at 100,000 keys, in
// virtual time, an idempotent request still running keeps its lock, a retried order never runs
// twice, and a new key the store has no room for is refused with 503 rather than forgetting one.
import { describe, expect, it } from "vitest";
import {
  createInboundMiddleware,
  createMemoryStore,
  createVirtualClock,
  type IdempotencyEvent,
  type InboundRequest,
  type InboundResponse,
  type ServiceSettings,
} from "../../templates/runtime/index.js";

const BOUND = 100_000;
/** The status `send` reports for a request whose handler has not answered. */
const RUNNING = -1;
const DAY_MS = 24 * 60 * 60 * 1_000;

const service = (essential: boolean): ServiceSettings => ({
  name: "orders",
  deadline: {
    edgeMs: 5_000,
    maxMs: 5_000,
    header: "x-request-timeout-ms",
    format: "ms",
    grpcTimeout: true,
    expiredStatus: 504,
  },
  admission: null,
  rejection: { status: 503, retryAfterS: 7 },
  defaultPriority: "normal",
  priorities: [],
  routes: [
    {
      method: "POST",
      path: "/orders",
      essential,
      idempotency: {
        header: "idempotency-key",
        ttlMs: DAY_MS,
        store: "memory",
        required: true,
        maxBytes: 65_536,
        scope: ["authorization"],
      },
    },
  ],
});

interface Answer {
  status: number;
  headers: Record<string, unknown>;
}

/** A plain request and response (no socket), and a promise of the answer once it has ended. */
function exchange(key: string): {
  req: InboundRequest;
  res: InboundResponse;
  answer: Promise<Answer>;
} {
  let done!: (answer: Answer) => void;
  const answer = new Promise<Answer>((resolve) => (done = resolve));
  const closed: (() => void)[] = [];
  let headers: Record<string, unknown> = {};
  const res = {
    headersSent: false,
    writableFinished: false,
    statusCode: 200,
    getHeaders: () => ({}),
    writeHead(status: number, given?: Record<string, unknown>) {
      this.statusCode = status;
      this.headersSent = true;
      headers = { ...given };
      return this;
    },
    end() {
      this.writableFinished = true;
      done({ status: this.statusCode, headers });
      for (const close of closed.splice(0)) close();
      return this;
    },
    once(_event: "close", listener: () => void) {
      closed.push(listener);
      return this;
    },
    destroy() {
      return this;
    },
  };
  const req = {
    method: "POST",
    url: "/orders",
    headers: { "idempotency-key": key, authorization: "Bearer alice" },
  };
  return { req, res, answer };
}

/** Lets the store's steps (promises) and what follows them run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

/** A service on the default memory store, in virtual time, whose handler the test controls. */
function orders(essential: boolean) {
  const clock = createVirtualClock(0);
  const events: IdempotencyEvent[] = [];
  const door = createInboundMiddleware(service(essential), {
    clock,
    store: createMemoryStore({ clock }),
    observer: (e) => {
      if (e.type === "request-idempotency") events.push(e);
    },
  });
  const runs = new Map<string, number>();
  // the responses of the orders the test holds open, by key
  const held = new Map<string, () => void>();
  const handle = door.node((req: InboundRequest, res: InboundResponse) => {
    const key = String(req.headers["idempotency-key"]);
    runs.set(key, (runs.get(key) ?? 0) + 1);
    const finish = () => {
      res.writeHead(201, {});
      res.end();
    };
    if (key.startsWith("slow")) held.set(key, finish);
    else finish();
  });
  const send = async (key: string): Promise<Answer> => {
    const { req, res, answer } = exchange(key);
    handle(req, res);
    // the store's steps are promises: let them settle
    await settle();
    // a request whose handler is still running has no answer yet
    return res.writableFinished ? answer : { status: RUNNING, headers: {} };
  };
  return { clock, events, runs, held, send };
}

describe("the memory store at 100,000 keys", () => {
  it("never evicts a running lock: a retry of an order still running gets 409, and the order runs once", async () => {
    const o = orders(false);
    // an order whose handler is still running: its lock (5 s + 1 s) is the key nearest expiry
    expect((await o.send("slow-1")).status).toBe(RUNNING);
    expect(o.runs.get("slow-1")).toBe(1);
    // the store fills with orders that completed: each keeps its response for a day
    for (let i = 1; i < BOUND; i++) expect((await o.send(`order-${i}`)).status).toBe(201);
    await o.clock.advance(1_000);

    // one more new key, then the retry of the order still running
    const seen = o.events.length;
    const refused = await o.send("order-new");
    const retry = await o.send("slow-1");
    // the retry finds its lock: the order does not run a second time
    expect(o.runs.get("slow-1")).toBe(1);
    expect(retry.status).toBe(409);
    // nothing could go to make room for the new key, so it is refused, and does not run
    expect(refused.status).toBe(503);
    expect(refused.headers["retry-after"]).toBe("7");
    expect(o.runs.get("order-new")).toBeUndefined();
    expect(o.events[seen]).toEqual(
      expect.objectContaining({ outcome: "store-unavailable", failOpen: false, step: "begin" }),
    );

    // it completes, with the store full: its response is kept, and its retry replayed
    o.held.get("slow-1")!();
    await settle();
    const replay = await o.send("slow-1");
    expect(replay.status).toBe(201);
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    // and no completed order was forgotten: retries of the first, the last and every 1,000th
    for (const i of [1, BOUND - 1, ...Array.from({ length: 99 }, (_, j) => (j + 1) * 1_000)]) {
      const again = await o.send(`order-${i}`);
      expect(again.headers["idempotent-replayed"]).toBe("true");
    }
    for (const n of o.runs.values()) expect(n).toBe(1);
  }, 120_000);

  it("refuses a new key on a route that is not essential too, then takes new keys once the responses expire", async () => {
    const o = orders(false);
    for (let i = 0; i < BOUND; i++) await o.send(`order-${i}`);
    expect((await o.send("late")).status).toBe(503);
    expect((await o.send("late")).status).toBe(503);
    expect(o.runs.get("late")).toBeUndefined();
    // a day later the stored responses have expired: room again, and the route works
    await o.clock.advance(DAY_MS);
    expect((await o.send("late")).status).toBe(201);
    expect((await o.send("late")).headers["idempotent-replayed"]).toBe("true");
    expect(o.runs.get("late")).toBe(1);
  }, 120_000);
});
