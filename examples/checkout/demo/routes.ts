/**
 * The checkout's dependencies as the fault server plays them, with the faults of the demo's
 * timeline, and what the demo counts on their side. Runs in the outside thread
 * (outside-thread.ts).
 */
import type { Behaviour, FaultServer, RecordedRequest } from "./fault-server.js";
import type { ScenarioOptions } from "./scenario.js";
import { checkoutOf, seededRandom } from "./shared.js";

export const ROUTES = {
  stock: "GET /items/:sku/stock",
  reserve: "PUT /items/:sku/reservations/:reservationId",
  charge: "POST /charges",
  recommendations: "GET /users/:userId/recommendations",
} as const;

/** Healthy latencies: inventory 15 ms, payments 60 ms, recommendations as the options say. */
export const LATENCY = { inventory: 15, payments: 60 } as const;

/** A charge the card processor made: for `orderId`, under `key` (undefined: sent without one). */
export interface Charge {
  readonly orderId: string;
  readonly key: string | undefined;
}

export interface DemoDependencies {
  /** Starts the timeline; `start` is `performance.now()` when the measured load begins. */
  begin(start: number): void;
  /** Forgets what the warm-up did (records and counters). */
  reset(): void;
  /** Charges made, in order. */
  charges(): readonly Charge[];
  /** Charge responses dropped after the charge was made. */
  lostChargeResponses(): number;
  /** Charge requests answered 503 during the failover. */
  paymentsTurnedAway(): number;
  /** Inventory requests answered 503 while over capacity. */
  inventoryTurnedAway(): number;
}

/** The n-th request (1-based) for one identifier on one route, deterministic for a seed. */
function chance(seed: number, checkout: number, attempt: number): number {
  return seededRandom(Math.imul(seed, 0x9e3779b1) ^ Math.imul(checkout, 0x85ebca6b) ^ attempt)();
}

export function defineDependencies(
  server: FaultServer,
  options: ScenarioOptions,
): DemoDependencies {
  let start = Number.POSITIVE_INFINITY;
  const within = (now: number, window: { fromMs: number; toMs: number }) =>
    now >= start + window.fromMs && now < start + window.toMs;

  // inventory's capacity while overloaded: a token bucket holding 100 ms worth of requests
  const overload = options.inventoryOverload;
  const burst = Math.max(1, overload.capacityPerSecond / 10);
  let tokens = burst;
  let refilledAt = Number.POSITIVE_INFINITY;
  let inventoryTurnedAway = 0;
  const inventory =
    (ok: Behaviour) =>
    (request: RecordedRequest): Behaviour => {
      if (!within(request.arrivedAt, overload)) return ok;
      const elapsed = Math.max(0, request.arrivedAt - refilledAt);
      tokens = Math.min(burst, tokens + (elapsed * overload.capacityPerSecond) / 1_000);
      refilledAt = request.arrivedAt;
      if (tokens >= 1) {
        tokens -= 1;
        return ok;
      }
      inventoryTurnedAway++;
      return { latencyMs: 2, status: 503, body: { title: "over capacity", status: 503 } };
    };
  server.route(
    ROUTES.stock,
    inventory({
      latencyMs: LATENCY.inventory,
      body: (r) => ({ sku: r.params.sku, available: 40 }),
    }),
  );
  server.route(
    ROUTES.reserve,
    inventory({
      latencyMs: LATENCY.inventory,
      body: (r) => ({ reservationId: r.params.reservationId }),
    }),
  );

  let charges: Charge[] = [];
  let chargeAttempts = new Map<string, number>();
  let lost = 0;
  let paymentsTurnedAway = 0;
  const failover = options.paymentsFailover;
  server.route(ROUTES.charge, (request) => {
    const body = request.body as { orderId?: unknown; amountCents?: unknown } | undefined;
    const orderId = typeof body?.orderId === "string" ? body.orderId : "";
    const checkout = checkoutOf(orderId) ?? -1;
    const attempt = (chargeAttempts.get(orderId) ?? 0) + 1;
    chargeAttempts.set(orderId, attempt);
    if (
      within(request.arrivedAt, failover) &&
      chance(options.seed, checkout, attempt) < failover.share
    ) {
      paymentsTurnedAway++;
      return {
        latencyMs: 20,
        status: 503,
        retryAfter: failover.retryAfterS,
        body: { title: "failing over", status: 503 },
      };
    }
    charges.push({ orderId, key: request.idempotencyKey });
    // the card is charged, then the connection drops before the answer: a lost response
    if (
      attempt === 1 &&
      checkout % options.lostChargeResponseEvery === options.lostChargeResponseEvery - 1
    ) {
      lost++;
      return { latencyMs: LATENCY.payments, reset: true };
    }
    return {
      latencyMs: LATENCY.payments,
      status: 201,
      body: { id: `ch_${orderId}`, orderId, amountCents: body?.amountCents, status: "succeeded" },
    };
  });

  const recs = options.recommendations;
  server.route(ROUTES.recommendations, (request) => ({
    latencyMs: request.arrivedAt >= start + recs.slowAtMs ? recs.slowMs : recs.healthyMs,
    body: [
      { id: "socks", score: 0.91 },
      { id: "laces", score: 0.74 },
    ],
  }));

  return {
    begin(at) {
      start = at;
      tokens = burst;
      refilledAt = at + overload.fromMs;
    },
    reset() {
      server.resetRecords();
      charges = [];
      chargeAttempts = new Map();
      lost = 0;
      paymentsTurnedAway = 0;
      inventoryTurnedAway = 0;
    },
    charges: () => charges,
    lostChargeResponses: () => lost,
    paymentsTurnedAway: () => paymentsTurnedAway,
    inventoryTurnedAway: () => inventoryTurnedAway,
  };
}

/** Charges beyond the first per order: charges under one idempotency key are one charge. */
export function countDuplicates(charges: readonly Charge[]): number {
  const byOrder = new Map<string, { keys: Set<string>; keyless: number }>();
  for (const { orderId, key } of charges) {
    let order = byOrder.get(orderId);
    if (order === undefined) byOrder.set(orderId, (order = { keys: new Set(), keyless: 0 }));
    if (key === undefined) order.keyless++;
    else order.keys.add(key);
  }
  let duplicates = 0;
  for (const { keys, keyless } of byOrder.values())
    duplicates += Math.max(0, keys.size + keyless - 1);
  return duplicates;
}

/** The checkout a recorded request to a dependency belongs to. */
export function checkoutOfRequest(request: RecordedRequest): number | undefined {
  switch (request.route) {
    case ROUTES.stock:
      return checkoutOf(request.params.sku);
    case ROUTES.reserve:
      return checkoutOf(request.params.reservationId);
    case ROUTES.charge:
      return checkoutOf((request.body as { orderId?: unknown } | undefined)?.orderId);
    case ROUTES.recommendations:
      return checkoutOf(request.params.userId);
    default:
      return undefined;
  }
}

/**
 * Requests that repeat an earlier one (same route, same checkout) among `requests`: retries and
 * hedged copies. `requests` must be in arrival order, starting before the window counted.
 */
export function repeats(
  requests: readonly RecordedRequest[],
  counted: (request: RecordedRequest) => boolean,
): number {
  const seen = new Set<string>();
  let n = 0;
  for (const request of requests) {
    const key = `${request.route ?? ""} ${checkoutOfRequest(request) ?? ""}`;
    if (seen.has(key)) {
      if (counted(request)) n++;
    } else seen.add(key);
  }
  return n;
}
