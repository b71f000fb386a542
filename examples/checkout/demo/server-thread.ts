/**
 * The demo's dependencies in a thread of their own, as they would be in another process: the
 * load the clients put on their own event loop does not slow the dependencies down, and the
 * reverse. Driven by messages from demo-server.ts.
 */
import { parentPort, workerData } from "node:worker_threads";
import { startFaultServer } from "./fault-server.js";
import { countDuplicates, defineRoutes, LOST_CHARGE_RESPONSE, ROUTES } from "./routes.js";

export type ToServer =
  | { readonly type: "reset"; readonly id: number }
  | { readonly type: "slow-down"; readonly latencyMs: number }
  | { readonly type: "lose-charge-response" }
  | { readonly type: "finish"; readonly id: number };

export interface ServerStats {
  readonly recommendationCalls: number;
  readonly recommendationCallsWhileSlow: number;
  readonly peakHeldOpen: number;
  readonly lostChargeResponses: number;
  readonly duplicateCharges: number;
}

export type FromServer =
  | { readonly type: "ready"; readonly url: string }
  | { readonly type: "done"; readonly id: number }
  | { readonly type: "finished"; readonly id: number; readonly stats: ServerStats };

const port = parentPort;
if (port === null) throw new Error("server-thread.ts runs as a worker thread");
const { recommendationsMs } = workerData as { recommendationsMs: number };

const server = await startFaultServer();
defineRoutes(server, recommendationsMs);
let slowSince = Number.POSITIVE_INFINITY;
let lostEnqueued = 0;
let peakHeldOpen = 0;
const sampler = setInterval(() => {
  peakHeldOpen = Math.max(peakHeldOpen, server.pending(ROUTES.recommendations));
}, 20);

const send = (message: FromServer): void => port.postMessage(message);

port.on("message", (message: ToServer) => {
  switch (message.type) {
    case "reset":
      server.resetRecords();
      peakHeldOpen = 0;
      send({ type: "done", id: message.id });
      break;
    case "slow-down":
      server.setLatency(ROUTES.recommendations, message.latencyMs);
      slowSince = performance.now();
      break;
    case "lose-charge-response":
      server.enqueue(ROUTES.charge, LOST_CHARGE_RESPONSE);
      lostEnqueued++;
      break;
    case "finish": {
      clearInterval(sampler);
      peakHeldOpen = Math.max(peakHeldOpen, server.pending(ROUTES.recommendations));
      const recommendations = server.requests(ROUTES.recommendations);
      const stats: ServerStats = {
        recommendationCalls: recommendations.length,
        recommendationCallsWhileSlow: recommendations.filter((r) => r.arrivedAt >= slowSince)
          .length,
        peakHeldOpen,
        lostChargeResponses: lostEnqueued - server.queued(ROUTES.charge),
        duplicateCharges: countDuplicates(server.requests(ROUTES.charge)),
      };
      // closing ends every request still waiting on the slow dependency
      void server.close().then(() => {
        send({ type: "finished", id: message.id, stats });
        port.close();
      });
      break;
    }
  }
});

send({ type: "ready", url: server.url });
