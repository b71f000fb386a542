/**
 * The demo's checkout and the load that drives it. A checkout checks stock, reserves it and
 * charges the card (essential), while the recommendations for the confirmation page load in
 * parallel (optional). A shopper waits `userDeadlineMs`; a checkout that has not answered by
 * then counts as failed.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { setTimeout as delay } from "node:timers/promises";
import { startDemoServer } from "./demo-server.js";

export interface Item {
  readonly id: string;
  readonly score?: number;
}

/** Recommendations as the page uses them; `fallback` names why they were replaced, if they were. */
export interface Recommendations {
  readonly items: readonly Item[];
  readonly fallback: string | null;
}

/** What a checkout needs from its dependencies, whichever way they are called. */
export interface CheckoutClients {
  getStock(sku: string): Promise<{ readonly available: number }>;
  reserve(sku: string, reservationId: string, quantity: number): Promise<unknown>;
  createCharge(orderId: string, amountCents: number): Promise<{ readonly status: string }>;
  recommendations(userId: string): Promise<Recommendations>;
}

/** One way of calling the dependencies: clients for a base URL, and how a checkout is run. */
export interface Variant {
  readonly name: string;
  /** Clients against the fault server; `onBreakerOpen` is called when a breaker opens, if there is one. */
  create(baseUrl: string, onBreakerOpen: (dependency: string) => void): CheckoutClients;
  /** Runs one checkout (e.g. under a deadline). */
  run<T>(userDeadlineMs: number, checkout: () => Promise<T>): Promise<T>;
}

export interface ScenarioOptions {
  readonly ratePerSecond: number;
  readonly durationMs: number;
  /** When, from the start of the run, recommendations slow down. */
  readonly slowAtMs: number;
  readonly healthyLatencyMs: number;
  readonly slowLatencyMs: number;
  readonly userDeadlineMs: number;
  /** Sequential checkouts run before the measured load and not counted. */
  readonly warmupCheckouts: number;
  /**
   * Every n-th checkout, payments records the charge and then drops the connection before
   * answering (a lost response): the caller cannot tell whether the card was charged.
   */
  readonly lostChargeResponseEvery: number;
}

export interface ScenarioResult {
  readonly checkouts: number;
  readonly succeeded: number;
  /** Checkout latencies in ms; a checkout the shopper gave up on counts as `userDeadlineMs`. */
  readonly latencies: readonly number[];
  readonly gaveUp: number;
  /** Failures other than giving up, by message. */
  readonly errors: ReadonlyMap<string, number>;
  readonly recommendationCalls: number;
  readonly recommendationCallsWhileSlow: number;
  /** Most requests the slow dependency held open at once. */
  readonly peakHeldOpen: number;
  /** Fallbacks served for recommendations, by reason. */
  readonly fallbacks: ReadonlyMap<string, number>;
  /** The first breaker that opened, and when (ms from the start of the run), if any did. */
  readonly breakerOpened: { readonly dependency: string; readonly atMs: number } | null;
  /** 99th percentile of the event loop's delay during the run, in ms: high when the machine is busy. */
  readonly loopDelayP99Ms: number;
  /** Charge responses the server dropped after recording the charge. */
  readonly lostChargeResponses: number;
  /** Charges beyond the first for the same order (requests de-duplicated by idempotency key). */
  readonly duplicateCharges: number;
}

type Settled =
  | { readonly ok: true; readonly recs: Recommendations }
  | { readonly ok: false; readonly error: string };

async function checkout(
  clients: CheckoutClients,
  i: number,
  label: string,
): Promise<Recommendations> {
  const sku = `sku-${i % 50}`;
  const orderId = `${label}-order-${i}`;
  const essentials = (async () => {
    const stock = await clients.getStock(sku);
    if (stock.available < 1) throw new Error("out of stock");
    await clients.reserve(sku, `r-${orderId}`, 1);
    const charge = await clients.createCharge(orderId, 1250);
    if (charge.status !== "succeeded") throw new Error(`charge ${charge.status}`);
  })();
  const [, recs] = await Promise.all([essentials, clients.recommendations(`user-${i % 200}`)]);
  return recs;
}

function describe(error: unknown): string {
  if (
    typeof error === "object" &&
    error !== null &&
    "kind" in error &&
    typeof error.kind === "string"
  ) {
    const e = error as { kind: string; dependency?: string; operation?: string };
    return `${e.dependency ?? "?"}.${e.operation ?? "?"}: ${e.kind}`;
  }
  return error instanceof Error ? error.message : String(error);
}

/**
 * Runs the scenario once for `variant` against a fresh fault server in its own thread, then
 * closes it (which also ends any request still waiting on the slow dependency).
 */
export async function runScenario(
  variant: Variant,
  options: ScenarioOptions,
): Promise<ScenarioResult> {
  const server = await startDemoServer(options.healthyLatencyMs);
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  try {
    let start = performance.now();
    let breakerOpened: { readonly dependency: string; readonly atMs: number } | null = null;
    const clients = variant.create(server.url, (dependency) => {
      breakerOpened ??= { dependency, atMs: performance.now() - start };
    });
    // warm-up, not measured: a service that just started opens connections and compiles its
    // code paths on the first requests; both variants get the same few sequential checkouts
    for (let i = 0; i < options.warmupCheckouts; i++)
      await variant.run(options.userDeadlineMs, () =>
        checkout(clients, 1_000_000 + i, variant.name),
      );
    await server.reset();
    loopDelay.enable();
    start = performance.now();

    const interval = 1_000 / options.ratePerSecond;
    const total = Math.round((options.durationMs / 1_000) * options.ratePerSecond);
    const runs: Promise<{ settled: Settled | "gave-up"; ms: number }>[] = [];
    const work: Promise<Settled>[] = [];
    let slowed = false;
    for (let i = 0; i < total; i++) {
      const wait = start + i * interval - performance.now();
      if (wait > 0) await delay(wait);
      if (!slowed && performance.now() - start >= options.slowAtMs) {
        server.slowDown(options.slowLatencyMs);
        slowed = true;
      }
      const started = shopper(variant, clients, i, options.userDeadlineMs);
      work.push(started.work);
      runs.push(started.result);
      if (i % options.lostChargeResponseEvery === options.lostChargeResponseEvery - 1)
        server.loseNextChargeResponse();
    }
    const outcomes = await Promise.all(runs);
    loopDelay.disable();

    const fallbacks = new Map<string, number>();
    const errors = new Map<string, number>();
    let succeeded = 0;
    let gaveUp = 0;
    for (const { settled } of outcomes) {
      if (settled === "gave-up") gaveUp++;
      else if (!settled.ok) errors.set(settled.error, (errors.get(settled.error) ?? 0) + 1);
      else {
        succeeded++;
        const reason = settled.recs.fallback;
        if (reason !== null) fallbacks.set(reason, (fallbacks.get(reason) ?? 0) + 1);
      }
    }
    // checkouts the shoppers gave up on may still be waiting on the slow dependency: closing the
    // server ends their requests; wait for them so nothing of this run leaks into the next
    const stats = await server.finish();
    await Promise.all(work);
    return {
      checkouts: total,
      succeeded,
      latencies: outcomes.map((o) => o.ms),
      gaveUp,
      errors,
      ...stats,
      fallbacks,
      breakerOpened,
      loopDelayP99Ms: loopDelay.percentile(99) / 1e6,
    };
  } finally {
    loopDelay.disable();
    await server.terminate();
  }
}

/**
 * One shopper: starts a checkout and waits for it at most `userDeadlineMs`. `work` is the
 * checkout itself, which may go on after the shopper has left.
 */
function shopper(
  variant: Variant,
  clients: CheckoutClients,
  i: number,
  userDeadlineMs: number,
): { work: Promise<Settled>; result: Promise<{ settled: Settled | "gave-up"; ms: number }> } {
  const began = performance.now();
  const work = variant
    .run(userDeadlineMs, () => checkout(clients, i, variant.name))
    .then(
      (recs): Settled => ({ ok: true, recs }),
      (error: unknown): Settled => ({ ok: false, error: describe(error) }),
    );
  const patience = new AbortController();
  const gaveUp = delay(userDeadlineMs, "gave-up" as const, { signal: patience.signal }).catch(
    () => "gave-up" as const,
  );
  const result = Promise.race([work, gaveUp]).then((settled) => {
    patience.abort();
    return { settled, ms: settled === "gave-up" ? userDeadlineMs : performance.now() - began };
  });
  return { work, result };
}
