/**
 * The checkout's dependencies called the way they are often written by hand: plain `fetch`, no
 * timeout, up to three immediate retries on any failure, and a catch-all fallback for the
 * optional recommendations. Every line looks reasonable; the demo shows what it does when a
 * dependency becomes slow instead of failing.
 */
import type { CheckoutClients, Item, Recommendations, Variant } from "./scenario.js";

async function request<T>(
  baseUrl: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  let lastError: unknown;
  // "retry a couple of times, it's probably a blip" — with no delay, and for the POST too
  for (let attempt = 1; attempt <= 3; attempt++) {
    try {
      const init: RequestInit = { method };
      if (body !== undefined) {
        init.headers = { "content-type": "application/json" };
        init.body = JSON.stringify(body);
      }
      const response = await fetch(baseUrl + path, init); // no signal: waits as long as the server does
      if (response.ok) return (await response.json()) as T;
      lastError = new Error(`${method} ${path} answered ${response.status}`);
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

function createNaiveClients(baseUrl: string): CheckoutClients {
  return {
    getStock: (sku) => request(baseUrl, "GET", `/items/${encodeURIComponent(sku)}/stock`),
    reserve: (sku, reservationId, quantity) =>
      request(
        baseUrl,
        "PUT",
        `/items/${encodeURIComponent(sku)}/reservations/${encodeURIComponent(reservationId)}`,
        { quantity },
      ),
    createCharge: (orderId, amountCents) =>
      request(baseUrl, "POST", "/charges", { orderId, amountCents, currency: "EUR" }),
    async recommendations(userId): Promise<Recommendations> {
      try {
        const items = await request<Item[]>(
          baseUrl,
          "GET",
          `/users/${encodeURIComponent(userId)}/recommendations?limit=5`,
        );
        return { items, fallback: null };
      } catch {
        return { items: [], fallback: { cause: null } }; // recommendations are optional: show none
      }
    },
  };
}

export const naiveVariant: Variant = {
  name: "naive",
  create: (baseUrl) => createNaiveClients(baseUrl),
  // a plain node:http server: nothing knows how long the caller waits
  serve: (handler) => (req, res) => void handler(req, res),
};
