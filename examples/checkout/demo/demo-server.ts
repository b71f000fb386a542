/**
 * Starts the demo's dependencies (routes.ts on the fault server) in a worker thread and drives
 * them from the main thread.
 */
import { Worker } from "node:worker_threads";
import type { FromServer, ServerStats, ToServer } from "./server-thread.js";

export type { ServerStats } from "./server-thread.js";

export interface DemoServer {
  readonly url: string;
  /** Forgets what the warm-up sent; resolves once the server has. */
  reset(): Promise<void>;
  /** Recommendations answers in `latencyMs` from now on. */
  slowDown(latencyMs: number): void;
  /** The next charge is recorded, then its connection drops before the answer. */
  loseNextChargeResponse(): void;
  /** Closes the server (ending requests still waiting) and returns what it counted. */
  finish(): Promise<ServerStats>;
  /** Stops the thread (after `finish`, or on failure). */
  terminate(): Promise<void>;
}

export async function startDemoServer(recommendationsMs: number): Promise<DemoServer> {
  // The worker runs TypeScript too: it registers the same loader the demo runs under.
  const loader = import.meta.resolve("tsx/esm/api");
  const entry = new URL("./server-thread.ts", import.meta.url).href;
  const worker = new Worker(
    `import(${JSON.stringify(loader)}).then((api) => { api.register(); return import(${JSON.stringify(entry)}); });`,
    { eval: true, workerData: { recommendationsMs } },
  );
  let nextId = 0;
  const waiting = new Map<number, (message: FromServer) => void>();
  const failed = new Promise<never>((_, reject) => {
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`the server thread exited with code ${code}`)));
  });
  failed.catch(() => undefined);
  const url = await Promise.race([
    new Promise<string>((resolve) => {
      worker.on("message", (message: FromServer) => {
        if (message.type === "ready") resolve(message.url);
        else waiting.get(message.id)?.(message);
      });
    }),
    failed,
  ]);
  const post = (message: ToServer): void => worker.postMessage(message);
  const request = (type: "reset" | "finish"): Promise<FromServer> => {
    const id = ++nextId;
    const answered = new Promise<FromServer>((resolve) => waiting.set(id, resolve));
    post({ type, id });
    return Promise.race([answered, failed]).finally(() => waiting.delete(id));
  };
  return {
    url,
    reset: async () => {
      await request("reset");
    },
    slowDown: (latencyMs) => post({ type: "slow-down", latencyMs }),
    loseNextChargeResponse: () => post({ type: "lose-charge-response" }),
    finish: async () => {
      const answer = await request("finish");
      if (answer.type !== "finished") throw new Error(`unexpected answer ${answer.type}`);
      return answer.stats;
    },
    terminate: async () => {
      await worker.terminate();
    },
  };
}
