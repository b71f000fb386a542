/**
 * The demo's checkout service and the run that measures it. The service runs in this thread
 * behind a real HTTP server; everything outside it (its dependencies, the callers of its
 * checkout, a catalogue sync job) runs in another thread (outside-thread.ts), as other processes
 * would, and counts what it sees.
 *
 * A checkout checks stock, reserves it and charges the card (essential, in turn), while the
 * recommendations for the confirmation page load in parallel (optional). Its caller, the shop's
 * web server, sends the time it will wait in `x-request-timeout-ms` and gives up after it.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { startCheckoutService } from "./checkout-service.js";
import { startOutside, type OutsideStats } from "./outside.js";
import { seededRandom } from "./shared.js";

export interface Item {
  readonly id: string;
  readonly score?: number;
}

/**
 * Recommendations as the page uses them. `fallback` is set when they were replaced: `cause` is
 * the failure that was covered, when the stack says which.
 */
export interface Recommendations {
  readonly items: readonly Item[];
  readonly fallback: { readonly cause: string | null } | null;
}

/** What a checkout needs from its dependencies, whichever way they are called. */
export interface CheckoutClients {
  getStock(sku: string): Promise<{ readonly available: number }>;
  reserve(sku: string, reservationId: string, quantity: number): Promise<unknown>;
  createCharge(orderId: string, amountCents: number): Promise<{ readonly status: string }>;
  recommendations(userId: string): Promise<Recommendations>;
}

export type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

export interface VariantHooks {
  /** Called when a breaker opens, with the dependency's name. */
  readonly onBreakerOpen: (dependency: string) => void;
  /** Seeded randomness for backoff jitter, so two runs draw the same delays. */
  readonly random: () => number;
}

/** One way of calling the dependencies and of receiving requests. */
export interface Variant {
  readonly name: string;
  /** Clients against the dependencies at `baseUrl`. */
  create(baseUrl: string, hooks: VariantHooks): CheckoutClients;
  /** The server's request listener around the service's handler (its front door, if any). */
  serve(handler: Handler): (req: IncomingMessage, res: ServerResponse) => void;
}

/** When, from the start of the measured load, something goes wrong, and how. */
export interface ScenarioOptions {
  readonly ratePerSecond: number;
  readonly durationMs: number;
  /** What each caller sends in `x-request-timeout-ms`, and how long it waits. */
  readonly callerBudgetMs: number;
  /** Sequential checkouts before the measured load, not counted. */
  readonly warmupCheckouts: number;
  /** Seed of every random draw: backoff jitter, which charges payments turns away. */
  readonly seed: number;
  /** Recommendations answers in `healthyMs`, and from `slowAtMs` on in `slowMs`. */
  readonly recommendations: {
    readonly healthyMs: number;
    readonly slowMs: number;
    readonly slowAtMs: number;
  };
  /**
   * Every n-th order, payments records the first charge and then drops the connection before
   * answering (a lost response): the caller cannot tell whether the card was charged.
   */
  readonly lostChargeResponseEvery: number;
  /** Payments fails over: `share` of the charge requests get 503 with `Retry-After`. */
  readonly paymentsFailover: {
    readonly fromMs: number;
    readonly toMs: number;
    readonly share: number;
    readonly retryAfterS: number;
  };
  /** Inventory serves at most `capacityPerSecond` requests and turns the rest away with 503. */
  readonly inventoryOverload: {
    readonly fromMs: number;
    readonly toMs: number;
    readonly capacityPerSecond: number;
  };
  /** The service's own database: a pool of `connections`, each query taking `queryMs`. */
  readonly database: { readonly connections: number; readonly queryMs: number };
  /**
   * A catalogue sync job pushes price pages (`POST /sync/prices`, low priority) from `workers`
   * connections at once, as fast as they are taken; each page is one query of the database,
   * as each order is.
   */
  readonly syncBurst: {
    readonly fromMs: number;
    readonly toMs: number;
    readonly workers: number;
  };
}

export interface ScenarioResult extends OutsideStats {
  /** The first breaker that opened, and when (ms from the start of the load), if any did. */
  readonly breakerOpened: { readonly dependency: string; readonly atMs: number } | null;
  /** 99th percentile of this thread's event-loop delay before the sync burst, in ms. */
  readonly loopDelayP99Ms: number;
  /** Most requests the service's handler was working on at once. */
  readonly peakHandling: number;
}

/**
 * Runs the load once against `variant`: a fresh outside thread (dependencies, callers, sync job)
 * and a fresh checkout service, both closed at the end.
 */
export async function runScenario(
  variant: Variant,
  options: ScenarioOptions,
): Promise<ScenarioResult> {
  const outside = await startOutside(options);
  const calm = monitorEventLoopDelay({ resolution: 10 });
  try {
    let start = Number.NaN;
    let breakerOpened: { readonly dependency: string; readonly atMs: number } | null = null;
    const clients = variant.create(outside.url, {
      onBreakerOpen: (dependency) => {
        if (!Number.isNaN(start)) breakerOpened ??= { dependency, atMs: performance.now() - start };
      },
      random: seededRandom(options.seed),
    });
    const service = await startCheckoutService(variant, clients, options);
    try {
      await outside.run(service.url, {
        started: () => {
          start = performance.now();
          calm.enable();
        },
        // the sync burst loads the service on purpose: only the run before it tells whether
        // the machine had CPU to spare
        burst: () => calm.disable(),
      });
      calm.disable();
      // work still going on for callers who left (retries, slow calls) reaches the dependencies
      // for a while yet: let it, up to a bound, so that it is counted
      await service.settle(500);
      const stats = await outside.finish();
      return {
        ...stats,
        breakerOpened,
        loopDelayP99Ms: calm.percentile(99) / 1e6,
        peakHandling: service.peakHandling(),
      };
    } finally {
      await service.close();
    }
  } finally {
    calm.disable();
    await outside.terminate();
  }
}
