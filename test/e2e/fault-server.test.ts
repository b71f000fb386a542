/**
 * The fault server the end-to-end tests and the demo measure with: its counts, its
 * de-duplication of writes and its clean shutdown must be right for their assertions to mean
 * anything.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFaultServer, type FaultServer } from "../../examples/checkout/demo/fault-server.js";

let server: FaultServer;

beforeEach(async () => {
  server = await startFaultServer();
});

afterEach(async () => {
  await server.close();
});

describe("fault server", () => {
  it("listens on 127.0.0.1 and answers one-shot steps first, then the default", async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    server.route(
      "GET /items/:sku/stock",
      { body: (r: { params: Readonly<Record<string, string>> }) => ({ sku: r.params.sku }) },
      [{ status: 503, retryAfter: 1 }],
    );
    const first = await fetch(`${server.url}/items/a%20b/stock`);
    expect(first.status).toBe(503);
    expect(first.headers.get("retry-after")).toBe("1");
    await first.body?.cancel();
    const second = await fetch(`${server.url}/items/a%20b/stock?x=1`, {
      headers: { "x-request-timeout-ms": "250" },
    });
    expect(await second.json()).toEqual({ sku: "a b" });
    const missing = await fetch(`${server.url}/nowhere`);
    expect(missing.status).toBe(404);
    await missing.body?.cancel();

    expect(server.count("GET /items/:sku/stock")).toBe(2);
    expect(server.count()).toBe(3);
    expect(
      server
        .requests("GET /items/:sku/stock")
        .map((r) => [r.seq, r.params.sku, r.query.x, r.timeoutMs]),
    ).toEqual([
      [1, "a b", undefined, undefined],
      [2, "a b", "1", 250],
    ]);
  });

  it("chooses a route's behaviour per request when it is a function, after its one-shot steps", async () => {
    server.route(
      "GET /items/:sku/stock",
      (r) =>
        r.params.sku === "gone" ? { status: 503 } : { body: { sku: r.params.sku, seq: r.seq } },
      [{ status: 429 }],
    );
    const statuses: number[] = [];
    for (const sku of ["a", "gone", "b"]) {
      const response = await fetch(`${server.url}/items/${sku}/stock`);
      statuses.push(response.status);
      await response.body?.cancel();
    }
    expect(statuses).toEqual([429, 503, 200]);
    const last = await fetch(`${server.url}/items/c/stock`);
    expect(await last.json()).toEqual({ sku: "c", seq: 4 });

    // setLatency applies to a computed behaviour too
    server.setLatency("GET /items/:sku/stock", 60_000);
    const slow = fetch(`${server.url}/items/d/stock`);
    await server.waitForRequests("GET /items/:sku/stock", 5);
    expect(server.pending("GET /items/:sku/stock")).toBe(1);
    await server.close();
    await expect(slow).rejects.toThrow();
  });

  it("counts writes once per idempotency key and once per keyless request", async () => {
    server.route("POST /charges", { status: 201, body: {} });
    const post = async (key?: string) => {
      const response = await fetch(`${server.url}/charges`, {
        method: "POST",
        body: "{}",
        headers: key === undefined ? {} : { "Idempotency-Key": key },
      });
      await response.body?.cancel();
    };
    await post("k1");
    await post("k1");
    await post("k2");
    await post();
    await post();
    expect(server.count("POST /charges")).toBe(5);
    expect(server.effects("POST /charges")).toBe(4);
    expect(server.requests("POST /charges").map((r) => r.idempotencyKey)).toEqual([
      "k1",
      "k1",
      "k2",
      undefined,
      undefined,
    ]);
  });

  it("resets connections, holds slow and hanging requests open, and ends them all on close", async () => {
    server.route("GET /reset", {}, [{ reset: true }]);
    await expect(fetch(`${server.url}/reset`)).rejects.toThrow();

    server.route("GET /slow", { latencyMs: 20 });
    server.setLatency("GET /slow", 60_000);
    server.route("GET /hang", { hang: true });
    const slow = fetch(`${server.url}/slow`);
    const hang = fetch(`${server.url}/hang`);
    await server.waitForRequests("GET /slow", 1);
    await server.waitForRequests("GET /hang", 1);
    expect(server.pending("GET /slow")).toBe(1);
    expect(server.pending()).toBe(2);

    const settled = Promise.allSettled([slow, hang, server.waitForRequests("GET /hang", 2)]);
    await server.close();
    const [slowOutcome, hangOutcome, waitOutcome] = await settled;
    expect(slowOutcome.status).toBe("rejected");
    expect(hangOutcome.status).toBe("rejected");
    expect(waitOutcome).toMatchObject({
      status: "rejected",
      reason: expect.objectContaining({
        message: expect.stringMatching(/closed/) as unknown,
      }) as unknown,
    });
    expect(server.pending()).toBe(0);
  });
});
