/**
 * The checkout's dependencies called through the clients resgen generated from
 * examples/checkout/resilience/*.yaml: every call runs through its policy's stack.
 */
import {
  createInventoryClient,
  createPaymentsClient,
  createRecommendationsClient,
  withDeadline,
  type DependencyHealth,
  type ResilienceEvent,
} from "../src/generated/index.js";
import type { CheckoutClients, Variant } from "./scenario.js";

// the clients of the latest run, so the demo can show their health() at the end
let latest: readonly { health(): DependencyHealth }[] = [];

/** `health()` of each client of the latest run: what a `/health` endpoint of the checkout would serve. */
export function generatedHealth(): DependencyHealth[] {
  return latest.map((client) => client.health());
}

export const generatedVariant: Variant = {
  name: "generated",
  create(baseUrl, onBreakerOpen): CheckoutClients {
    const observer = (event: ResilienceEvent) => {
      if (event.type === "breaker-transition" && event.to === "open")
        onBreakerOpen(event.dependency);
    };
    // one instance per process: the breaker, bulkhead and budgets protect the calls they share
    const inventory = createInventoryClient({ baseUrl, observer });
    const payments = createPaymentsClient({ baseUrl, observer });
    const recommendations = createRecommendationsClient({ baseUrl, observer });
    latest = [inventory, payments, recommendations];
    return {
      getStock: (sku) => inventory.getStock({ sku }),
      reserve: (sku, reservationId, quantity) =>
        inventory.reserve({ sku, reservationId, body: { quantity } }),
      createCharge: (orderId, amountCents) =>
        payments.createCharge({ body: { orderId, amountCents, currency: "EUR" } }),
      async recommendations(userId) {
        const result = await recommendations.getRecommendations({ userId, query: { limit: 5 } });
        // the fallback is labelled in the type: the page can tell "none" from "none available"
        return { items: result.data, fallback: result.degraded ? result.reason : null };
      },
    };
  },
  // the shopper's patience becomes the deadline of every call the checkout makes
  run: (userDeadlineMs, checkout) => withDeadline(userDeadlineMs, checkout),
};
