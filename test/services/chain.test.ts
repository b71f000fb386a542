/**
 * Three real services on 127.0.0.1 — edge → A → B — each with the middleware generated from
 * its service policy and the clients generated for the next hop. The remaining budget shrinks
 * hop by hop, B refuses work whose budget is spent, the edge answers within its deadline, and a
 * client that goes away at the edge aborts the calls A and B make for it.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type {
  CallOptions,
  InboundMiddleware,
  InboundOptions,
} from "../../templates/runtime/index.js";
import { currentSignal, isResilienceError } from "../../templates/runtime/index.js";
import { buildAndImport, listen, signal, within, type Running } from "./helpers.js";

interface Hop {
  work(options?: CallOptions<Record<string, unknown>>): Promise<Record<string, unknown>>;
}
interface Generated {
  createEdgeMiddleware(options?: InboundOptions): InboundMiddleware;
  createServiceAMiddleware(options?: InboundOptions): InboundMiddleware;
  createServiceBMiddleware(options?: InboundOptions): InboundMiddleware;
  createHopAClient(config: { baseUrl: string }): Hop;
  createHopBClient(config: { baseUrl: string }): Hop;
}

const HEADER = "x-request-timeout-ms";

/** How a handler answers a failed downstream call: deadline and timeout become 504, an HTTP error its status. */
function statusOf(error: unknown): number {
  if (isResilienceError(error)) {
    if (error.kind === "deadline" || error.kind === "timeout") return 504;
    if (error.kind === "http") return (error as { status: number }).status;
    if (error.kind === "aborted") return 499;
  }
  return 502;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(text)),
  });
  res.end(text);
}

describe("edge → A → B with the generated middleware and clients", () => {
  let edge: Running;
  let a: Running;
  let b: Running;
  // every server started so far: afterAll closes these, also when beforeAll stopped half-way
  const started: Running[] = [];
  const start = async (handler: Parameters<typeof listen>[0]) => {
    const running = await listen(handler);
    started.push(running);
    return running;
  };
  let bMiddleware: InboundMiddleware;
  const seen = { a: [] as (string | undefined)[], b: [] as (string | undefined)[] };
  let bArrivals = 0;
  let bHandled = 0;
  let aDelayMs = 0;
  let bMode: "answer" | "hang" = "answer";
  let bStarted = signal();
  let bAborted = signal<string>();
  let aOutcome = signal<string>();

  beforeAll(async () => {
    const g = await buildAndImport<Generated>("chain", ["test/services/fixtures/chain"]);
    bMiddleware = g.createServiceBMiddleware();
    b = await start((req, res) => {
      bArrivals++;
      bMiddleware.node((inner: IncomingMessage, out: ServerResponse) => {
        bHandled++;
        seen.b.push(inner.headers[HEADER] as string | undefined);
        if (bMode === "answer") {
          send(out, 200, { from: "b" });
          return;
        }
        bStarted.resolve();
        // a hanging handler: it only learns the request is no longer wanted through its signal
        const s = currentSignal();
        s?.addEventListener("abort", () => bAborted.resolve("aborted"), { once: true });
        if (inner.url === "/block") return;
      })(req, res);
    });
    const toB = g.createHopBClient({ baseUrl: b.url });
    const aMiddleware = g.createServiceAMiddleware();
    a = await start(
      aMiddleware.node(async (req: IncomingMessage, res: ServerResponse) => {
        seen.a.push(req.headers[HEADER] as string | undefined);
        if (aDelayMs > 0) await sleep(aDelayMs);
        try {
          const answer = await toB.work();
          aOutcome.resolve("ok");
          send(res, 200, { from: "a", b: answer });
        } catch (error) {
          aOutcome.resolve(isResilienceError(error) ? error.kind : String(error));
          if (!res.destroyed)
            send(res, statusOf(error), { error: isResilienceError(error) ? error.kind : "?" });
        }
      }),
    );
    const toA = g.createHopAClient({ baseUrl: a.url });
    const edgeMiddleware = g.createEdgeMiddleware();
    edge = await start(
      edgeMiddleware.node(async (_req: IncomingMessage, res: ServerResponse) => {
        try {
          send(res, 200, { from: "edge", a: await toA.work() });
        } catch (error) {
          if (!res.destroyed)
            send(res, statusOf(error), { error: isResilienceError(error) ? error.kind : "?" });
        }
      }),
    );
  });

  afterAll(async () => {
    await Promise.all(started.map((s) => s.close()));
  });

  const reset = () => {
    seen.a.length = 0;
    seen.b.length = 0;
    aDelayMs = 0;
    bMode = "answer";
    bStarted = signal();
    bAborted = signal<string>();
    aOutcome = signal<string>();
  };

  it("shrinks the remaining budget hop by hop, from the caller's header or from the edge deadline", async () => {
    reset();
    const given = await fetch(`${edge.url}/`, { headers: { [HEADER]: "800" } });
    expect(given.status).toBe(200);
    const stamped = await fetch(`${edge.url}/`);
    expect(stamped.status).toBe(200);
    const [aGiven, aStamped] = seen.a.map(Number);
    const [bGiven, bStamped] = seen.b.map(Number);
    console.log(
      `budget seen per hop: caller 800 → A ${String(aGiven)} → B ${String(bGiven)}; no header (edge deadline 1000) → A ${String(aStamped)} → B ${String(bStamped)}`,
    );
    // each hop keeps back its margin (10 ms) and the time it spent, never adds any
    expect(aGiven).toBeLessThanOrEqual(790);
    expect(bGiven).toBeLessThanOrEqual(aGiven! - 10);
    expect(bGiven).toBeGreaterThan(0);
    expect(aStamped).toBeLessThanOrEqual(990);
    expect(bStamped).toBeLessThanOrEqual(aStamped! - 10);
    expect(bStamped).toBeGreaterThan(0);
  });

  it("clamps a budget above the maximum, and refuses a spent one with 504 without running the handler", async () => {
    reset();
    await fetch(`${edge.url}/`, { headers: { [HEADER]: "60000" } });
    expect(Number(seen.a[0])).toBeLessThanOrEqual(1_490); // edge max 1.5s, minus the margin
    const handled = bHandled;
    const spent = await fetch(`${b.url}/work`, { headers: { [HEADER]: "0" } });
    expect(spent.status).toBe(504);
    expect(bHandled).toBe(handled);
  });

  it("B refuses work whose budget is spent: in its queue, and A does not even send what cannot finish", async () => {
    reset();
    bMode = "hang";
    // one request occupies B's only slot; a request with 100 ms left waits behind it and expires
    const blocker = new AbortController();
    const blocked = fetch(`${b.url}/block`, {
      headers: { [HEADER]: "2000" },
      signal: blocker.signal,
    }).catch(() => undefined);
    await within(bStarted.promise, 2_000);
    const handled = bHandled;
    const queued = await fetch(`${b.url}/work`, { headers: { [HEADER]: "100" } });
    expect(queued.status).toBe(504);
    expect(bHandled).toBe(handled);
    expect(bMiddleware.health().expired).toBeGreaterThanOrEqual(1);
    blocker.abort();
    await blocked;
    await within(bAborted.promise, 2_000);

    // A spends its whole budget before calling B: its client fails at once, B sees nothing
    reset();
    aDelayMs = 150;
    const arrivals = bArrivals;
    const late = await fetch(`${edge.url}/`, { headers: { [HEADER]: "160" } });
    // A's own deadline has passed ("deadline"), or the edge gave up on A at the same moment ("aborted")
    expect(["deadline", "aborted"]).toContain(await within(aOutcome.promise, 2_000));
    expect(late.status).toBe(504);
    expect(bArrivals).toBe(arrivals);
  });

  it("answers at the edge within its deadline (+50 ms on real sockets) while B hangs", async () => {
    reset();
    await fetch(`${edge.url}/`); // warm: connections open, code paths compiled
    bMode = "hang";
    const started = performance.now();
    const answer = await within(fetch(`${edge.url}/`, { headers: { [HEADER]: "400" } }), 5_000);
    const elapsed = performance.now() - started;
    console.log(
      `deadline 400 ms at the edge, B hanging: the edge answered ${answer.status} after ${Math.round(elapsed)} ms`,
    );
    expect(answer.status).toBe(504);
    expect(elapsed).toBeLessThanOrEqual(400 + 50);
    await within(bAborted.promise, 2_000); // A's attempt timed out and closed its request to B
  });

  it("aborts the calls A and B make when the client at the edge goes away", async () => {
    reset();
    bMode = "hang";
    const client = new AbortController();
    const request = fetch(`${edge.url}/`, {
      headers: { [HEADER]: "1000" },
      signal: client.signal,
    }).catch((e: unknown) => e);
    await within(bStarted.promise, 2_000);
    const cancelledAt = performance.now();
    client.abort();
    await request;
    expect(await within(bAborted.promise, 2_000)).toBe("aborted");
    expect(await within(aOutcome.promise, 2_000)).toBe("aborted");
    console.log(
      `client went away at the edge: B's handler saw its signal abort ${Math.round(performance.now() - cancelledAt)} ms later`,
    );
  });
});
