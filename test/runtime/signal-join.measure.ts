// Run by signal-join.test.ts in a child `node --expose-gc` process (vitest's workers have no
// `gc`): makes calls inside a request scope with a signal of their own, all against one
// long-lived signal (a shutdown signal), and prints the heap growth per call after GC as JSON.
import {
  createDependency,
  Deadline,
  withRequestScope,
  type AttemptContext,
  type OperationSettings,
} from "../../templates/runtime/index.js";

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("run with node --expose-gc");

const calls = Number(process.argv[2] ?? 100_000);
const dep = createDependency({
  name: "store",
  deadline: null,
  breaker: null,
  bulkhead: null,
  budget: null,
});
const op: OperationSettings<null> = {
  name: "get",
  repeatable: true,
  idempotencyKey: null,
  timeout: { attemptMs: 1_000, totalMs: 5_000 },
  retry: null,
  hedge: null,
  fallback: null,
};
const shutdown = new AbortController();
const far = new Deadline(Number.POSITIVE_INFINITY);
const transport = (ctx: AttemptContext): number => {
  ctx.signal.addEventListener("abort", () => undefined);
  return 1;
};

async function run(n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const request = new AbortController();
    await withRequestScope(far, request.signal, () =>
      dep.call(op, transport, { signal: shutdown.signal }),
    );
  }
}

function heap(): number {
  for (let i = 0; i < 4; i++) gc!();
  return process.memoryUsage().heapUsed;
}

await run(10_000);
await new Promise((resolve) => setImmediate(resolve));
const before = heap();
await run(calls);
await new Promise((resolve) => setImmediate(resolve));
const after = heap();
process.stdout.write(JSON.stringify({ calls, bytesPerCall: (after - before) / calls }) + "\n");
