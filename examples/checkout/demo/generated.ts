/**
 * The checkout's dependencies called through the clients resgen generated from
 * examples/checkout/resilience/*.yaml, behind the front door generated from its service policy
 * (resilience/checkout-service.yaml): every call runs through its policy's stack, inside the
 * deadline and abort signal of the request that made it.
 */
import {
  createCheckoutMiddleware,
  createInventoryClient,
  createPaymentsClient,
  createRecommendationsClient,
  silentLogger,
  type DependencyHealth,
  type InboundHealth,
  type ResilienceEvent,
} from "../src/generated/index.js";
import type { CheckoutClients, Variant } from "./scenario.js";

// the clients and front door of the latest run, so the demo can show their health() at the end
let latest: readonly { health(): DependencyHealth }[] = [];
let latestDoor: { health(): InboundHealth } | undefined;

/** `health()` of each client of the latest run: what a `/health` endpoint of the checkout would serve. */
export function generatedHealth(): DependencyHealth[] {
  return latest.map((client) => client.health());
}

/** `health()` of the latest run's front door: requests admitted, shed and expired. */
export function doorHealth(): InboundHealth | undefined {
  return latestDoor?.health();
}

export const generatedVariant: Variant = {
  name: "resgen",
  create(baseUrl, { onBreakerOpen, random }): CheckoutClients {
    const observer = (event: ResilienceEvent) => {
      if (event.type === "breaker-transition" && event.to === "open")
        onBreakerOpen(event.dependency);
    };
    // one instance per process: the breaker, bulkhead and budgets protect the calls they share
    const inventory = createInventoryClient({ baseUrl, observer, random });
    const payments = createPaymentsClient({ baseUrl, observer, random });
    const recommendations = createRecommendationsClient({ baseUrl, observer, random });
    latest = [inventory, payments, recommendations];
    return {
      getStock: (sku) => inventory.getStock({ sku }),
      reserve: (sku, reservationId, quantity) =>
        inventory.reserve({ sku, reservationId, body: { quantity } }),
      createCharge: (orderId, amountCents) =>
        payments.createCharge({ body: { orderId, amountCents, currency: "EUR" } }),
      async recommendations(userId) {
        const result = await recommendations.getRecommendations({ userId, query: { limit: 5 } });
        // the fallback is labelled in the type: the page can tell "none" from "none available", and why
        return {
          items: result.data,
          fallback: result.degraded ? { cause: result.reason } : null,
        };
      },
    };
  },
  // the front door reads the caller's x-request-timeout-ms, and sheds the sync job's pages
  // (priority low) before checkouts (high) when more arrive than it runs at once
  serve(handler) {
    const door = createCheckoutMiddleware({ logger: silentLogger });
    latestDoor = door;
    return door.node(handler);
  },
};
