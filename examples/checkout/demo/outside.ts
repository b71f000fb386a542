/**
 * Starts the outside of the checkout service (outside-thread.ts: its dependencies, its callers,
 * the sync job) in a worker thread and drives it from the service's thread.
 */
import { Worker } from "node:worker_threads";
import type { FromOutside, OutsideStats, ToOutside } from "./outside-thread.js";
import type { ScenarioOptions } from "./scenario.js";

export type { OutsideStats } from "./outside-thread.js";

export interface Outside {
  /** Base URL of the dependencies. */
  readonly url: string;
  /**
   * Warms the service up, then runs the measured load against it; resolves once every caller
   * has its answer or has given up. `started` is called when the measured load begins, `burst`
   * when the sync burst starts and ends.
   */
  run(checkoutUrl: string, on: { started(): void; burst(active: boolean): void }): Promise<void>;
  /** Counts what the outside saw, then closes the dependencies (ending requests still waiting). */
  finish(): Promise<OutsideStats>;
  /** Stops the thread (after `finish`, or on failure). */
  terminate(): Promise<void>;
}

export async function startOutside(options: ScenarioOptions): Promise<Outside> {
  // The worker runs TypeScript too: it registers the same loader the demo runs under.
  const loader = import.meta.resolve("tsx/esm/api");
  const entry = new URL("./outside-thread.ts", import.meta.url).href;
  const worker = new Worker(
    `import(${JSON.stringify(loader)}).then((api) => { api.register(); return import(${JSON.stringify(entry)}); });`,
    { eval: true, workerData: { options } },
  );
  const failed = new Promise<never>((_, reject) => {
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`the outside thread exited with code ${code}`)));
  });
  failed.catch(() => undefined);
  let listener: (message: FromOutside) => void = () => undefined;
  worker.on("message", (message: FromOutside) => listener(message));
  const next = <T extends FromOutside["type"]>(
    type: T,
    on: (message: FromOutside) => void = () => undefined,
  ): Promise<Extract<FromOutside, { type: T }>> =>
    Promise.race([
      new Promise<Extract<FromOutside, { type: T }>>((resolve) => {
        listener = (message) => {
          if (message.type === type) resolve(message as Extract<FromOutside, { type: T }>);
          else on(message);
        };
      }),
      failed,
    ]);
  const post = (message: ToOutside): void => worker.postMessage(message);
  const { url } = await next("ready");
  return {
    url,
    async run(checkoutUrl, on) {
      const done = next("callers-done", (message) => {
        if (message.type === "started") on.started();
        else if (message.type === "burst") on.burst(message.active);
      });
      post({ type: "run", checkoutUrl });
      await done;
    },
    async finish() {
      const finished = next("finished");
      post({ type: "finish" });
      return (await finished).stats;
    },
    terminate: async () => {
      await worker.terminate();
    },
  };
}
