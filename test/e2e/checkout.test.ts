/**
 * The checkout example's policies, built by `build()` and run over real sockets against a fault
 * server on 127.0.0.1. Every fault is a real one: hung requests, slow answers, 503s with
 * Retry-After, connection resets.
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFaultServer, type FaultServer } from "../../examples/checkout/demo/fault-server.js";
import type { ResilienceEvent } from "../../examples/checkout/src/generated/index.js";
import { buildAndImport, failureOf, settlesWithin } from "./helpers.js";

type Checkout = typeof import("../../examples/checkout/src/generated/index.js");

let gen: Checkout;
let server: FaultServer;

beforeAll(async () => {
  gen = await buildAndImport<Checkout>("checkout", ["examples/checkout"]);
});

beforeEach(async () => {
  server = await startFaultServer();
});

afterEach(async () => {
  await server.close();
});

const stock = {
  body: (r: { params: Readonly<Record<string, string>> }) => ({ sku: r.params.sku, available: 7 }),
};
const charge = {
  status: 201,
  body: (r: { body: unknown }) => ({
    id: "ch_1",
    orderId: (r.body as { orderId: string }).orderId,
    amountCents: 1250,
    status: "succeeded",
  }),
};
const chargeRequest = { orderId: "o-1", amountCents: 1250, currency: "EUR" } as const;

function recorder(): { events: ResilienceEvent[]; observer: (event: ResilienceEvent) => void } {
  const events: ResilienceEvent[] = [];
  return { events, observer: (event) => events.push(event) };
}

describe("checkout clients over real sockets", () => {
  it("cuts a hung request at the attempt timeout and settles by the deadline", async () => {
    // inventory: attempt 180ms (1.5 × p999), total 1s, 3 attempts
    server.route("GET /items/:sku/stock", { hang: true });
    const inventory = gen.createInventoryClient({ baseUrl: server.url });
    const error = await settlesWithin(
      failureOf(inventory.getStock({ sku: "sku-1" })),
      1_000 + 1_000,
    );
    expect(error.kind).toBe("timeout");
    expect(error.attempts).toBe(3);
    expect(server.count("GET /items/:sku/stock")).toBe(3);

    // a caller deadline shorter than payments' attempt timeout (500ms) ends the call as `deadline`
    server.route("GET /charges/:chargeId", { hang: true });
    const payments = gen.createPaymentsClient({ baseUrl: server.url });
    const cut = await settlesWithin(
      failureOf(payments.getCharge({ chargeId: "ch_1" }, { deadline: 300 })),
      300 + 1_000,
    );
    expect(cut.kind).toBe("deadline");
    expect(cut.attempts).toBe(1);
    expect(server.count("GET /charges/:chargeId")).toBe(1);
  });

  it("retries a keyed POST through two timeouts with the same key, producing one effect", async () => {
    // payments: attempt 500ms, total 2s, 3 attempts on timeout
    server.route("POST /charges", charge, [{ hang: true }, { hang: true }]);
    const payments = gen.createPaymentsClient({ baseUrl: server.url });
    const created = await settlesWithin(
      payments.createCharge({ body: chargeRequest }),
      2_000 + 1_000,
    );
    expect(created).toEqual({ id: "ch_1", orderId: "o-1", amountCents: 1250, status: "succeeded" });

    const sent = server.requests("POST /charges");
    expect(sent).toHaveLength(3);
    const key = sent[0]?.idempotencyKey;
    expect(key).toMatch(/\S/);
    expect(sent.map((r) => r.idempotencyKey)).toEqual([key, key, key]);
    expect(sent.map((r) => r.body)).toEqual([chargeRequest, chargeRequest, chargeRequest]);
    expect(server.effects("POST /charges")).toBe(1);

    // a second logical call is a second effect, with a key of its own
    await payments.createCharge({ body: { ...chargeRequest, orderId: "o-2" } });
    expect(server.effects("POST /charges")).toBe(2);
    expect(server.requests("POST /charges")[3]?.idempotencyKey).not.toBe(key);
  });

  it("serves labelled fallbacks: a value for slow recommendations, the last good value for the geocoder", async () => {
    server.route("GET /users/:userId/recommendations", { body: [{ id: "i1", score: 0.9 }] });
    const recs = gen.createRecommendationsClient({ baseUrl: server.url });
    expect(await recs.getRecommendations({ userId: "u1", query: { limit: 5 } })).toEqual({
      data: [{ id: "i1", score: 0.9 }],
      degraded: false,
    });

    server.setLatency("GET /users/:userId/recommendations", 5_000);
    const before = server.count("GET /users/:userId/recommendations");
    const slow = await settlesWithin(recs.getRecommendations({ userId: "u1" }), 600 + 1_000);
    expect(slow.degraded).toBe(true);
    expect(slow.data).toEqual([]);
    if (!slow.degraded) throw new Error("unreachable");
    expect(slow.reason).toBe("timeout");
    expect(slow.error.kind).toBe("timeout");
    // hedged: the original and one copy 45ms later, both cut at the attempt timeout
    expect(server.count("GET /users/:userId/recommendations") - before).toBe(2);

    server.route("GET /users/:userId/recommendations", { status: 503 });
    const failing = await recs.getRecommendations({ userId: "u1" });
    expect(failing).toMatchObject({ data: [], degraded: true, reason: "http" });

    // geocoder: a function transport (the vendor SDK) with a stale fallback keyed by the input
    server.route("POST /geocode", { body: { lat: 48.85, lon: 2.35 } });
    const sdk = async (input: { line1: string; country: string }, ctx: { signal: AbortSignal }) => {
      const response = await fetch(`${server.url}/geocode`, {
        method: "POST",
        body: JSON.stringify(input),
        signal: ctx.signal,
      });
      if (!response.ok) throw gen.networkError(`geocoder answered ${response.status}`);
      return (await response.json()) as { lat: number; lon: number };
    };
    const geocoder = gen.createGeocoderClient();
    const address = { line1: "1 rue de Rivoli", country: "FR" };
    // the policy's next step for a miss is the caller's: here, the centre of Paris
    const centre = { fallback: () => ({ lat: 48.86, lon: 2.34 }) };
    expect(await geocoder.runGeocode(address, sdk, centre)).toEqual({
      data: { lat: 48.85, lon: 2.35 },
      degraded: false,
    });

    server.route("POST /geocode", { status: 503 });
    const stale = await geocoder.runGeocode(address, sdk, centre);
    expect(stale).toMatchObject({
      data: { lat: 48.85, lon: 2.35 },
      degraded: true,
      reason: "network",
    });
    expect(stale.degraded && typeof stale.ageMs === "number" && stale.ageMs >= 0).toBe(true);
    // an address never answered has nothing stale to serve: the declared next step answers
    const unknown = await geocoder.runGeocode(
      { line1: "2 rue de Rivoli", country: "FR" },
      sdk,
      centre,
    );
    expect(unknown).toMatchObject({
      data: { lat: 48.86, lon: 2.34 },
      degraded: true,
      reason: "network",
    });
    expect(unknown.degraded && unknown.ageMs).toBeUndefined();
  });

  it("propagates the remaining time in x-request-timeout-ms, bounded by withDeadline", async () => {
    server.route("GET /items/:sku/stock", stock);
    server.route("GET /charges/:chargeId", {
      body: { id: "ch_1", orderId: "o-1", amountCents: 1, status: "pending" },
    });
    const inventory = gen.createInventoryClient({ baseUrl: server.url });
    const payments = gen.createPaymentsClient({ baseUrl: server.url });

    await inventory.getStock({ sku: "sku-1" });
    await payments.getCharge({ chargeId: "ch_1" });
    await gen.withDeadline(300, () => payments.getCharge({ chargeId: "ch_1" }));

    const [stockHeader] = server
      .requests("GET /items/:sku/stock")
      .map((r) => r.headers["x-request-timeout-ms"]);
    const [plain, scoped] = server
      .requests("GET /charges/:chargeId")
      .map((r) => r.headers["x-request-timeout-ms"]);
    for (const value of [stockHeader, plain, scoped]) expect(value).toMatch(/^[1-9]\d*$/);
    expect(Number(stockHeader)).toBeLessThanOrEqual(180); // inventory's attempt budget
    expect(Number(plain)).toBeLessThanOrEqual(500); // payments' attempt budget
    expect(Number(plain)).toBeGreaterThan(300); // ...which the next call's scope must shrink
    expect(Number(scoped)).toBeLessThanOrEqual(300);
  });

  it("honours Retry-After on a GET only when the wait fits the deadline", async () => {
    // payments: retryAfter max 1s, total 2s
    server.route("GET /charges/:chargeId", { status: 503, retryAfter: 1 });
    const { events, observer } = recorder();
    const payments = gen.createPaymentsClient({ baseUrl: server.url, observer });

    // 1s fits in 2s once (attempt 2); a second 1s wait no longer fits what is left
    const fits = await settlesWithin(
      failureOf(payments.getCharge({ chargeId: "ch_1" })),
      2_000 + 1_000,
    );
    expect(fits).toMatchObject({ kind: "http", status: 503, attempts: 2 });
    expect(server.count("GET /charges/:chargeId")).toBe(2);
    expect(events.filter((e) => e.type === "retry-scheduled")).toMatchObject([
      { delayMs: 1_000, retryAfter: true },
    ]);

    // under a 600ms deadline the 1s wait never fits: one attempt, the 503 is returned at once
    events.length = 0;
    const tight = await settlesWithin(
      failureOf(payments.getCharge({ chargeId: "ch_1" }, { deadline: 600 })),
      600 + 1_000,
    );
    expect(tight).toMatchObject({ kind: "http", status: 503, attempts: 1 });
    expect(server.count("GET /charges/:chargeId")).toBe(3);
    expect(events.some((e) => e.type === "retry-scheduled")).toBe(false);
    expect(events).toContainEqual(
      expect.objectContaining({ type: "deadline-exceeded", stage: "retry" }),
    );

    // a Retry-After over the policy's 1s max gives up at once, with the server's wait on the error
    server.route("GET /charges/:chargeId", { status: 503, retryAfter: 30 });
    events.length = 0;
    const beyond = await settlesWithin(failureOf(payments.getCharge({ chargeId: "ch_2" })), 1_000);
    expect(beyond).toMatchObject({ kind: "http", status: 503, attempts: 1, retryAfterMs: 30_000 });
    expect(server.count("GET /charges/:chargeId")).toBe(4);
    expect(events.some((e) => e.type === "retry-scheduled")).toBe(false);
  });

  it("retries an idempotent GET after a connection reset and succeeds", async () => {
    server.route("GET /items/:sku/stock", stock, [{ reset: true }]);
    const { events, observer } = recorder();
    const inventory = gen.createInventoryClient({ baseUrl: server.url, observer });
    expect(await inventory.getStock({ sku: "sku-9" })).toEqual({ sku: "sku-9", available: 7 });
    expect(server.count("GET /items/:sku/stock")).toBe(2);
    const ends = events.flatMap((e) =>
      e.type === "attempt-end"
        ? [{ attempt: e.attempt, outcome: e.outcome, kind: e.error?.kind }]
        : [],
    );
    expect(ends).toEqual([
      { attempt: 1, outcome: "failure", kind: "network" },
      { attempt: 2, outcome: "success", kind: undefined },
    ]);
  });
});
