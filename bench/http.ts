// What the runtime stack costs on a real call: `npm run bench:http`.
//
// A tiny node:http server runs in a child process (this file, forked with --serve) on 127.0.0.1
// with an OS-chosen port, answers a bounded number of requests and then exits by itself (it
// also exits when this process goes away, or after a minute without requests). This process
// calls it two ways over the same keep-alive connection pool (Node's global fetch):
//
//   raw fetch   fetch(url, { signal: AbortSignal.timeout(2_000) }), then res.json()
//   generated   createDependency + dependency.call + sendHttp, as a generated client does, with
//               the full stack of examples/checkout's payments policy (deadline propagation,
//               breaker, bulkhead, retry budget, 3 attempts, attempt timeout 500 ms, total 2 s)
//
// sequentially (one call at a time) and with 32 calls in flight, in alternating rounds, each
// row the median round. The overhead is the generated path's time per call over raw fetch's:
// wall time (what a caller waits, or the throughput at 32 in flight) and this process's CPU
// time (what the call costs the client; steadier on a shared machine, whose load moves wall
// time from round to round).
//
//   --quick  fewer calls (for a smoke run; figures are noisier)
import { fork, type ChildProcess } from "node:child_process";
import { createServer } from "node:http";
import { cpus } from "node:os";
import { fileURLToPath } from "node:url";
import {
  createDependency,
  sendHttp,
  type DependencySettings,
  type OperationSettings,
} from "../templates/runtime/index.js";

const BODY = JSON.stringify({ id: "ch_1", orderId: "o-1", amountCents: 1250, status: "succeeded" });

if (process.argv.includes("--serve"))
  serve(Number(process.argv[process.argv.indexOf("--serve") + 1]));
else await main();

/** The child: answers `limit` requests, then closes; tells the parent its port over IPC. */
function serve(limit: number): void {
  let served = 0;
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(BODY),
    });
    res.end(BODY);
    if (++served >= limit) stop();
    else idle.refresh();
  });
  let stopped = false;
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    clearTimeout(idle);
    server.close();
    server.closeAllConnections();
    if (process.connected) process.disconnect();
  };
  const idle = setTimeout(stop, 60_000);
  process.on("disconnect", stop);
  server.listen(0, "127.0.0.1", () => {
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("no TCP address");
    process.send?.({ port: address.port });
  });
}

async function main(): Promise<void> {
  const quick = process.argv.includes("--quick");
  const ROUNDS = quick ? 3 : 9;
  const SEQUENTIAL = quick ? 300 : 1_000;
  const CONCURRENT = quick ? 1_600 : 6_000;
  const WIDTH = 32;
  const WARMUP = 2_000;
  const total = 2 * (WARMUP + ROUNDS * (SEQUENTIAL + CONCURRENT));

  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ["--serve", String(total)], {
    stdio: "inherit",
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once("message", (m: { port: number }) => resolve(m.port));
    child.once("exit", (code) => reject(new Error(`server exited (${String(code)})`)));
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  const url = `${baseUrl}/charges/ch_1`;

  // examples/checkout's payments policy, as its generated module passes it (bulkhead widened to
  // the benchmark's 32 calls in flight, so no call is turned away)
  const settings: DependencySettings = {
    name: "payments",
    deadline: { propagate: true, marginMs: 10, header: "x-request-timeout-ms", format: "ms" },
    breaker: {
      failureRate: 0.5,
      slowCall: { durationMs: 400, rate: 0.5 },
      window: { kind: "time", durationMs: 10_000, buckets: 10 },
      minCalls: 20,
      openForMs: 30_000,
      halfOpen: { maxCalls: 3, successes: 3 },
    },
    bulkhead: { maxConcurrent: 64, maxQueue: 10, queueTimeoutMs: 100, overflow: "reject" },
    budget: { maxTokens: 100, tokenRatio: 0.1 },
  };
  const getCharge = {
    name: "getCharge",
    repeatable: true,
    idempotencyKey: null,
    timeout: { attemptMs: 500, totalMs: 2_000, minAttemptMs: 80 },
    retry: {
      maxAttempts: 3,
      backoff: { baseMs: 50, capMs: 1_000, multiplier: 2, jitter: "full" },
      on: ["timeout", "network", 429, 502, 503, 504],
      retryAfter: { maxMs: 1_000 },
    },
    hedge: null,
    fallback: null,
  } as const satisfies OperationSettings;
  const dependency = createDependency(settings);

  const raw = async (): Promise<unknown> => {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    if (!res.ok) throw new Error(`status ${res.status}`);
    return res.json();
  };
  const generated = (): Promise<unknown> =>
    dependency.call(getCharge, (ctx) =>
      sendHttp<unknown>(
        {
          fetch: undefined,
          dispatcher: undefined,
          baseUrl,
          method: "GET",
          path: "/charges/ch_1",
          headers: undefined,
          responseType: "json",
          maxResponseBytes: 8_388_608,
        },
        ctx,
      ),
    );

  /** Microseconds of wall time and of this process's CPU time per call, for `count` calls `width` at a time. */
  const timed = async (
    call: () => Promise<unknown>,
    count: number,
    width: number,
  ): Promise<{ wall: number; cpu: number }> => {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next++ < count) await call();
    };
    const cpu = process.cpuUsage();
    const started = performance.now();
    await Promise.all(Array.from({ length: width }, worker));
    const wall = ((performance.now() - started) * 1_000) / count;
    const used = process.cpuUsage(cpu);
    return { wall, cpu: (used.user + used.system) / count };
  };

  await timed(raw, WARMUP, WIDTH);
  await timed(generated, WARMUP, WIDTH);
  const rows: Record<string, { wall: number; cpu: number }[]> = {
    "raw sequential": [],
    "generated sequential": [],
    "raw 32": [],
    "generated 32": [],
  };
  for (let round = 0; round < ROUNDS; round++) {
    // the order alternates, so neither path always runs on a warmer pool or a quieter machine
    const order =
      round % 2 === 0 ? (["raw", "generated"] as const) : (["generated", "raw"] as const);
    for (const path of order)
      rows[`${path} sequential`]!.push(
        await timed(path === "raw" ? raw : generated, SEQUENTIAL, 1),
      );
    for (const path of order)
      rows[`${path} 32`]!.push(await timed(path === "raw" ? raw : generated, CONCURRENT, WIDTH));
  }
  child.disconnect();

  const median = (xs: readonly number[]): number =>
    [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(
    `machine: ${cpus()[0]?.model.trim() ?? "unknown"}, ${cpus().length} cores, Node ${process.version}; server in a child process on 127.0.0.1`,
  );
  console.log(
    `${ROUNDS} rounds, alternating; each: ${SEQUENTIAL} sequential calls, ${CONCURRENT} calls ${WIDTH} at a time; median round${quick ? " (quick run)" : ""}\n`,
  );
  for (const [label, n] of [
    ["sequential", "sequential"],
    [`${WIDTH} concurrent`, "32"],
  ] as const) {
    for (const measure of ["wall", "cpu"] as const) {
      const r = median(rows[`raw ${n}`]!.map((row) => row[measure]));
      const g = median(rows[`generated ${n}`]!.map((row) => row[measure]));
      const overhead = (g - r) / r;
      console.log(
        `${label.padEnd(14)} ${measure.padEnd(4)}  raw fetch ${r.toFixed(1).padStart(7)} µs/call   generated ${g.toFixed(1).padStart(7)} µs/call   ${(g / r).toFixed(3)}× (${overhead >= 0 ? "+" : ""}${(overhead * 100).toFixed(1)} %)`,
      );
    }
  }
  process.exit(0);
}
