/**
 * The checkout's dependencies as the fault server plays them, and what the demo counts on the
 * server side. Runs in the server's thread (see server-thread.ts).
 */
import type { FaultServer, RecordedRequest } from "./fault-server.js";

export const ROUTES = {
  stock: "GET /items/:sku/stock",
  reserve: "PUT /items/:sku/reservations/:reservationId",
  charge: "POST /charges",
  recommendations: "GET /users/:userId/recommendations",
} as const;

/** Healthy latencies: inventory 15 ms, payments 60 ms, recommendations `recommendationsMs`. */
export function defineRoutes(server: FaultServer, recommendationsMs: number): void {
  server.route(ROUTES.stock, {
    latencyMs: 15,
    body: (r) => ({ sku: r.params.sku, available: 40 }),
  });
  server.route(ROUTES.reserve, {
    latencyMs: 15,
    body: (r) => ({ reservationId: r.params.reservationId }),
  });
  server.route(ROUTES.charge, {
    latencyMs: 60,
    status: 201,
    body: (r) => {
      const request = r.body as { orderId: string; amountCents: number };
      return {
        id: `ch_${request.orderId}`,
        orderId: request.orderId,
        amountCents: request.amountCents,
        status: "succeeded",
      };
    },
  });
  server.route(ROUTES.recommendations, {
    latencyMs: recommendationsMs,
    body: [
      { id: "socks", score: 0.91 },
      { id: "laces", score: 0.74 },
    ],
  });
}

/** The charge is recorded, then the connection drops before the answer: a lost response. */
export const LOST_CHARGE_RESPONSE = { latencyMs: 60, reset: true } as const;

/** Effects beyond the first per order: requests with one idempotency key are one effect. */
export function countDuplicates(requests: readonly RecordedRequest[]): number {
  const byOrder = new Map<string, { keys: Set<string>; keyless: number }>();
  for (const request of requests) {
    const orderId = (request.body as { orderId?: unknown } | undefined)?.orderId;
    if (typeof orderId !== "string") continue;
    let order = byOrder.get(orderId);
    if (order === undefined) byOrder.set(orderId, (order = { keys: new Set(), keyless: 0 }));
    if (request.idempotencyKey === undefined) order.keyless++;
    else order.keys.add(request.idempotencyKey);
  }
  let duplicates = 0;
  for (const { keys, keyless } of byOrder.values())
    duplicates += Math.max(0, keys.size + keyless - 1);
  return duplicates;
}
