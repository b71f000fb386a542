/**
 * The demo's careful hand-written stack (examples/checkout/demo/hand-written.ts, on cockatiel)
 * over real sockets against the fault server: it must do what docs/demo.md says it does, or the
 * demo's third column compares resgen with a straw man. Each test bounds its wait; none sleeps.
 */
import { BrokenCircuitError, BulkheadRejectedError } from "cockatiel";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startCheckoutService } from "../../examples/checkout/demo/checkout-service.js";
import { startFaultServer, type FaultServer } from "../../examples/checkout/demo/fault-server.js";
import {
  createHandWrittenClients,
  HttpStatusError,
  handWrittenVariant,
  isRetryable,
  OPERATIONS,
} from "../../examples/checkout/demo/hand-written.js";
import { checkoutOnce } from "../../examples/checkout/demo/load.js";
import { countDuplicates, defineDependencies } from "../../examples/checkout/demo/routes.js";
import type { ScenarioOptions } from "../../examples/checkout/demo/scenario.js";
import { seededRandom } from "../../examples/checkout/demo/shared.js";
import { settlesWithin } from "./helpers.js";

let server: FaultServer;
let opened: string[];

beforeEach(async () => {
  server = await startFaultServer();
  opened = [];
});

afterEach(async () => {
  await server.close();
});

const clients = () =>
  createHandWrittenClients(server.url, (name) => opened.push(name), seededRandom(1));

async function rejection(call: Promise<unknown>): Promise<unknown> {
  try {
    await call;
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to fail");
}

const charge = {
  status: 201,
  body: (r: { body: unknown }) => ({
    orderId: (r.body as { orderId: string }).orderId,
    status: "succeeded",
  }),
};

describe("the demo's hand-written stack", () => {
  it("cuts each attempt at its own timeout, retries up to the policy's attempts, and stays within the total", async () => {
    server.route("GET /items/:sku/stock", { hang: true });
    const started = performance.now();
    const error = await settlesWithin(rejection(clients().getStock("sku-1")), 1_000 + 1_000);
    const ms = performance.now() - started;
    const sent = server.requests("GET /items/:sku/stock");
    // three attempts of 180 ms and two jittered waits under 50 and 100 ms: about 0.6 s, within
    // the total of 1 s
    expect(error).toMatchObject({ name: "TimeoutError" });
    expect(sent).toHaveLength(OPERATIONS.inventory.maxAttempts);
    expect(ms).toBeGreaterThanOrEqual(3 * OPERATIONS.inventory.attemptMs - 5);
    expect(ms).toBeLessThan(OPERATIONS.inventory.totalMs + 500);
    // nothing in the request says how long the caller waits
    expect(sent.map((r) => r.timeoutMs).every((t) => t === undefined)).toBe(true);
  });

  it("retries a charge whose response was lost with a new POST: the card is charged twice", async () => {
    server.route("POST /charges", charge, [{ latencyMs: 20, reset: true }]);
    const answer = await settlesWithin(clients().createCharge("order-1", 1250), 2_000);
    expect(answer.status).toBe("succeeded");
    // two requests (more only if an attempt outlived its 500 ms on a busy machine)
    const sent = server.requests("POST /charges");
    expect(sent.length).toBeGreaterThanOrEqual(2);
    expect(sent.every((r) => r.idempotencyKey === undefined)).toBe(true);
    // every request reached payments and each is an effect of its own
    expect(server.effects("POST /charges")).toBe(sent.length);
    expect(countDuplicates(sent.map((r) => ({ orderId: "order-1", key: r.idempotencyKey })))).toBe(
      sent.length - 1,
    );
  });

  it("waits out a Retry-After within the policy's cap, and gives up at once on a longer one", async () => {
    server.route("POST /charges", charge, [{ status: 503, retryAfter: 1 }]);
    const answer = await settlesWithin(clients().createCharge("order-1", 1250), 3_000);
    expect(answer.status).toBe("succeeded");
    const [first, second] = server.requests("POST /charges");
    expect(second!.arrivedAt - first!.arrivedAt).toBeGreaterThanOrEqual(990);

    server.resetRecords();
    server.route("POST /charges", charge, [{ status: 503, retryAfter: 2 }]);
    const error = await settlesWithin(rejection(clients().createCharge("order-2", 1250)), 1_000);
    expect(error).toBeInstanceOf(HttpStatusError);
    expect(error).toMatchObject({ status: 503, retryAfterMs: 2_000 });
    expect(server.count("POST /charges")).toBe(1);
  });

  it("opens the dependency's breaker on failing attempts, then rejects without a request and without retrying", async () => {
    server.route("GET /items/:sku/stock", { status: 500 });
    const stack = clients();
    // 7 calls × 3 attempts: past the 20 calls the breaker needs, all of them failures
    const failures = await settlesWithin(
      Promise.all(Array.from({ length: 7 }, (_, k) => rejection(stack.getStock(`sku-${k}`)))),
      2_000,
    );
    expect(
      failures.every((e) => e instanceof HttpStatusError || e instanceof BrokenCircuitError),
    ).toBe(true);
    expect(opened).toEqual(["inventory"]);
    const before = server.count();
    // the breaker is shared by inventory's operations
    const rejected = await settlesWithin(rejection(stack.reserve("sku-1", "r-1", 1)), 500);
    expect(rejected).toBeInstanceOf(BrokenCircuitError);
    expect(server.count()).toBe(before);
  });

  it("turns a call away when the dependency's bulkhead and its queue are full, without retrying it", async () => {
    // payments: 25 calls at once and 10 waiting; each attempt may take 500 ms
    server.route("POST /charges", { hang: true });
    const stack = clients();
    const held = Array.from({ length: 35 }, (_, k) =>
      rejection(stack.createCharge(`order-${k}`, 1250)),
    );
    await settlesWithin(server.waitForRequests("POST /charges", 25), 1_000);
    const error = await settlesWithin(rejection(stack.createCharge("order-35", 1250)), 400);
    expect(error).toBeInstanceOf(BulkheadRejectedError);
    expect(
      server.requests().filter((r) => (r.body as { orderId: string }).orderId === "order-35"),
    ).toHaveLength(0);
    await settlesWithin(Promise.all(held), 5_000);
  });

  it("serves the recommendations fallback after one attempt of 250 ms, without saying why", async () => {
    server.route("GET /users/:userId/recommendations", { latencyMs: 5_000, body: [] });
    const started = performance.now();
    const recs = await settlesWithin(clients().recommendations("user-1"), 1_000);
    expect(recs).toEqual({ items: [], fallback: { cause: null } });
    expect(performance.now() - started).toBeGreaterThanOrEqual(
      OPERATIONS.recommendations.attemptMs - 5,
    );
    expect(server.count("GET /users/:userId/recommendations")).toBe(1);
  });

  it("retries only what the policy retries", () => {
    const payments = OPERATIONS.payments;
    expect(isRetryable(payments, new HttpStatusError(503, undefined, ""))).toBe(true);
    expect(isRetryable(payments, new HttpStatusError(503, 1_000, ""))).toBe(true);
    expect(isRetryable(payments, new HttpStatusError(503, 1_001, ""))).toBe(false);
    expect(isRetryable(payments, new HttpStatusError(500, undefined, ""))).toBe(false);
    expect(isRetryable(payments, new HttpStatusError(422, undefined, ""))).toBe(false);
    expect(isRetryable(payments, new BrokenCircuitError())).toBe(false);
    expect(isRetryable(OPERATIONS.inventory, new HttpStatusError(500, undefined, ""))).toBe(true);
    expect(isRetryable(OPERATIONS.inventory, new DOMException("", "TimeoutError"))).toBe(true);
  });

  it("runs a checkout of the demo's service end to end, as its caller sees it", async () => {
    const options = {
      recommendations: { healthyMs: 5, slowMs: 5, slowAtMs: 60_000 },
      lostChargeResponseEvery: 25,
      seed: 1,
      paymentsFailover: { fromMs: 0, toMs: 0, share: 0, retryAfterS: 1 },
      inventoryOverload: { fromMs: 0, toMs: 0, capacityPerSecond: 1 },
      syncBurst: { fromMs: 0, toMs: 0, workers: 0 },
      database: { connections: 1, queryMs: 1 },
    } as const satisfies Partial<ScenarioOptions>;
    const dependencies = defineDependencies(server, options as ScenarioOptions);
    dependencies.begin(performance.now());
    const service = await startCheckoutService(
      handWrittenVariant,
      clients(),
      options as ScenarioOptions,
    );
    try {
      const ok = await settlesWithin(checkoutOnce(service.url, 3, 5_000), 6_000);
      expect(ok).toMatchObject({ i: 3, result: "ok", fallback: null });
      // order 24 is one whose first charge response payments drops: retried, charged twice
      const lost = await settlesWithin(checkoutOnce(service.url, 24, 5_000), 6_000);
      expect(lost.result).toBe("ok");
      expect(dependencies.lostChargeResponses()).toBe(1);
      expect(countDuplicates(dependencies.charges())).toBeGreaterThanOrEqual(1);
    } finally {
      await service.close();
    }
  });
});
