/**
 * Everything outside the checkout service, in a thread of its own as it would be in other
 * processes: its dependencies (routes.ts on the fault server), its callers and the sync job
 * (load.ts). The load the service puts on its own event loop does not slow these down, and the
 * reverse. Driven by messages from outside.ts; counts what it sees and reports it at the end.
 */
import { parentPort, workerData } from "node:worker_threads";
import { startFaultServer, type RecordedRequest } from "./fault-server.js";
import { callers, checkoutOnce, syncJob, type CallerOutcome, type SyncCounts } from "./load.js";
import {
  checkoutOfRequest,
  countDuplicates,
  defineDependencies,
  repeats,
  ROUTES,
  type DemoDependencies,
} from "./routes.js";
import type { ScenarioOptions } from "./scenario.js";
import { checkoutOf } from "./shared.js";

export type ToOutside =
  { readonly type: "run"; readonly checkoutUrl: string } | { readonly type: "finish" };

/** What the outside saw of one run. */
export interface OutsideStats {
  readonly checkouts: number;
  /** Checkouts answered 200 within the caller's budget. */
  readonly succeeded: number;
  /** Checkouts whose caller gave up before an answer came. */
  readonly gaveUp: number;
  /** Checkouts answered with an error, by the service's word for it. */
  readonly failures: ReadonlyMap<string, number>;
  /** Latencies in ms as the callers saw them; a given-up checkout counts as the whole budget. */
  readonly latencies: readonly number[];
  /** Pages whose recommendations were a fallback; those that said why, by cause. */
  readonly fallbacks: number;
  readonly fallbackCauses: ReadonlyMap<string, number>;
  /** Requests that reached a dependency after the checkout's caller had given up. */
  readonly requestsAfterCallerLeft: number;
  /** Orders whose card was charged while their caller got no confirmation. */
  readonly chargedWithoutConfirmation: number;
  readonly lostChargeResponses: number;
  readonly duplicateCharges: number;
  /** Charge requests payments answered 503 during its failover. */
  readonly paymentsTurnedAway: number;
  /**
   * Inventory while over capacity: requests, how many repeated an earlier one, how many it turned
   * away; and the checkouts sent meanwhile.
   */
  readonly overload: {
    readonly requests: number;
    readonly repeats: number;
    readonly turnedAway: number;
    readonly checkouts: Sent;
  };
  /** Most requests recommendations held open at once. */
  readonly recommendationsPeakHeldOpen: number;
  /** During the sync burst: the checkouts sent, and what the sync job got. */
  readonly burst: { readonly checkouts: Sent; readonly sync: SyncCounts };
}

/** Checkouts sent in a window of time, and how many of them were answered OK. */
export interface Sent {
  readonly sent: number;
  readonly succeeded: number;
}

export type FromOutside =
  | { readonly type: "ready"; readonly url: string }
  | { readonly type: "started" }
  | { readonly type: "burst"; readonly active: boolean }
  | { readonly type: "callers-done" }
  | { readonly type: "finished"; readonly stats: OutsideStats };

const port = parentPort;
if (port === null) throw new Error("outside-thread.ts runs as a worker thread");
const { options } = workerData as { options: ScenarioOptions };
const send = (message: FromOutside): void => port.postMessage(message);

const server = await startFaultServer();
const dependencies = defineDependencies(server, options);
let peakHeldOpen = 0;
const sampler = setInterval(() => {
  peakHeldOpen = Math.max(peakHeldOpen, server.pending(ROUTES.recommendations));
}, 20);

let measured: { start: number; outcomes: CallerOutcome[]; sync: SyncCounts } | undefined;

async function run(checkoutUrl: string): Promise<void> {
  // warm-up, not measured: a service that just started opens connections and compiles its code
  // paths on the first requests; every variant gets the same few sequential checkouts
  for (let k = 0; k < options.warmupCheckouts; k++)
    await checkoutOnce(checkoutUrl, 1_000_000 + k, options.callerBudgetMs);
  dependencies.reset();
  peakHeldOpen = 0;
  const start = performance.now();
  dependencies.begin(start);
  send({ type: "started" });
  const burstTimers = [
    setTimeout(() => send({ type: "burst", active: true }), options.syncBurst.fromMs),
    setTimeout(() => send({ type: "burst", active: false }), options.syncBurst.toMs),
  ];
  const [outcomes, sync] = await Promise.all([
    callers(checkoutUrl, options, start),
    syncJob(checkoutUrl, options.syncBurst, start),
  ]);
  for (const timer of burstTimers) clearTimeout(timer);
  measured = { start, outcomes, sync };
  send({ type: "callers-done" });
}

function tally(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

function summarize(
  dependencies: DemoDependencies,
  requests: readonly RecordedRequest[],
  { start, outcomes, sync }: NonNullable<typeof measured>,
): OutsideStats {
  const byCheckout = new Map(outcomes.map((o) => [o.i, o]));
  const failures = new Map<string, number>();
  const fallbackCauses = new Map<string, number>();
  let succeeded = 0;
  let gaveUp = 0;
  let fallbacks = 0;
  for (const outcome of outcomes) {
    if (outcome.result === "gave-up") gaveUp++;
    else if (outcome.result === "failed") tally(failures, outcome.error ?? "?");
    else {
      succeeded++;
      if (outcome.fallback != null) {
        fallbacks++;
        if (outcome.fallback.cause !== null) tally(fallbackCauses, outcome.fallback.cause);
      }
    }
  }

  let requestsAfterCallerLeft = 0;
  for (const request of requests) {
    const checkout = checkoutOfRequest(request);
    const caller = checkout === undefined ? undefined : byCheckout.get(checkout);
    if (caller !== undefined && request.arrivedAt > caller.deadlineAt) requestsAfterCallerLeft++;
  }
  const charged = new Set(dependencies.charges().map((c) => checkoutOf(c.orderId)));
  let chargedWithoutConfirmation = 0;
  for (const outcome of outcomes)
    if (outcome.result !== "ok" && charged.has(outcome.i)) chargedWithoutConfirmation++;

  const overload = options.inventoryOverload;
  const inOverload = (r: RecordedRequest) =>
    r.arrivedAt >= start + overload.fromMs && r.arrivedAt < start + overload.toMs;
  const inventory = requests.filter((r) => r.route === ROUTES.stock || r.route === ROUTES.reserve);

  const sentIn = (window: { fromMs: number; toMs: number }): Sent => {
    const sent = outcomes.filter(
      (o) => o.sentAt >= start + window.fromMs && o.sentAt < start + window.toMs,
    );
    return { sent: sent.length, succeeded: sent.filter((o) => o.result === "ok").length };
  };
  return {
    checkouts: outcomes.length,
    succeeded,
    gaveUp,
    failures,
    latencies: outcomes.map((o) => o.ms),
    fallbacks,
    fallbackCauses,
    requestsAfterCallerLeft,
    chargedWithoutConfirmation,
    lostChargeResponses: dependencies.lostChargeResponses(),
    duplicateCharges: countDuplicates(dependencies.charges()),
    paymentsTurnedAway: dependencies.paymentsTurnedAway(),
    overload: {
      requests: inventory.filter(inOverload).length,
      repeats: repeats(inventory, inOverload),
      turnedAway: dependencies.inventoryTurnedAway(),
      checkouts: sentIn(overload),
    },
    recommendationsPeakHeldOpen: Math.max(peakHeldOpen, server.pending(ROUTES.recommendations)),
    burst: { checkouts: sentIn(options.syncBurst), sync },
  };
}

port.on("message", (message: ToOutside) => {
  switch (message.type) {
    case "run":
      void run(message.checkoutUrl);
      break;
    case "finish": {
      clearInterval(sampler);
      if (measured === undefined) throw new Error("finish before the run ended");
      const stats = summarize(dependencies, server.requests(), measured);
      // closing ends every request still waiting on a slow dependency
      void server.close().then(() => {
        send({ type: "finished", stats });
        port.close();
      });
      break;
    }
  }
});

send({ type: "ready", url: server.url });
