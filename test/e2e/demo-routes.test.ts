/**
 * The faults of the checkout demo's timeline (examples/checkout/demo/routes.ts), on a real fault
 * server: they must fall where docs/demo.md says, and on the same orders in every run, or the
 * three columns of the demo's table would not face the same faults.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startFaultServer, type FaultServer } from "../../examples/checkout/demo/fault-server.js";
import { defineDependencies, ROUTES } from "../../examples/checkout/demo/routes.js";
import type { ScenarioOptions } from "../../examples/checkout/demo/scenario.js";

const options = {
  seed: 7,
  lostChargeResponseEvery: 25,
  recommendations: { healthyMs: 1, slowMs: 1, slowAtMs: 60_000 },
  // from the start of the timeline on, for a minute: every request below falls inside
  paymentsFailover: { fromMs: 0, toMs: 60_000, share: 0.3, retryAfterS: 1 },
  inventoryOverload: { fromMs: 60_000, toMs: 60_001, capacityPerSecond: 1 },
} as const satisfies Partial<ScenarioOptions>;

const servers: FaultServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(overrides: Partial<ScenarioOptions> = {}) {
  const server = await startFaultServer();
  servers.push(server);
  const dependencies = defineDependencies(server, { ...options, ...overrides } as ScenarioOptions);
  dependencies.begin(performance.now());
  return { server, dependencies };
}

async function charge(server: FaultServer, order: number): Promise<number> {
  try {
    const response = await fetch(`${server.url}/charges`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ orderId: `order-${order}`, amountCents: 1250, currency: "EUR" }),
      signal: AbortSignal.timeout(1_000),
    });
    await response.body?.cancel();
    return response.status;
  } catch {
    return 0; // the connection dropped: a lost response
  }
}

describe("the checkout demo's dependencies", () => {
  it("turn away the same charge attempts, and lose the same responses, in every run", async () => {
    const outcomes: number[][] = [];
    for (let run = 0; run < 2; run++) {
      const { server, dependencies } = await start();
      const statuses: number[] = [];
      // two attempts for each of 50 orders, in a different order each run
      const orders = Array.from({ length: 50 }, (_, k) => (run === 0 ? k : 49 - k));
      // all first attempts at once, then all second ones: arrival order differs from run to run
      await Promise.all(
        orders.map(async (order) => (statuses[order] = await charge(server, order))),
      );
      await Promise.all(
        orders.map(async (order) => (statuses[50 + order] = await charge(server, order))),
      );
      outcomes.push(statuses);
      const refused = statuses.filter((s) => s === 503).length;
      // about 30 % of 100 attempts
      expect(refused).toBeGreaterThan(15);
      expect(refused).toBeLessThan(45);
      expect(dependencies.paymentsTurnedAway()).toBe(refused);
      // orders 24 and 49 lose the response of their first charge, unless it was turned away
      expect(dependencies.lostChargeResponses()).toBe(
        [24, 49].filter((order) => statuses[order] === 0).length,
      );
      // what payments charged: every attempt it did not turn away
      expect(dependencies.charges()).toHaveLength(100 - refused);
    }
    expect(outcomes[1]).toEqual(outcomes[0]);
  });

  it("serve inventory at its capacity while overloaded and turn the rest away at once", async () => {
    const { server, dependencies } = await start({
      paymentsFailover: { fromMs: 0, toMs: 0, share: 0, retryAfterS: 1 },
      inventoryOverload: { fromMs: 0, toMs: 60_000, capacityPerSecond: 20 },
    });
    const statuses = await Promise.all(
      Array.from({ length: 30 }, async (_, k) => {
        const response = await fetch(`${server.url}/items/sku-${k}/stock`, {
          signal: AbortSignal.timeout(1_000),
        });
        await response.body?.cancel();
        return response.status;
      }),
    );
    // a bucket of 100 ms worth (2 requests), refilled at 20 a second: the rest is refused
    const served = statuses.filter((s) => s === 200).length;
    expect(served).toBeGreaterThanOrEqual(2);
    expect(served).toBeLessThan(10);
    expect(dependencies.inventoryTurnedAway()).toBe(30 - served);
    expect(server.count(ROUTES.stock)).toBe(30);
  });
});
