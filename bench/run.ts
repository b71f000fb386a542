// Side-by-side benchmark of the runtime stack, cockatiel and opossum: `npm run bench`.
//
// Every library wraps the same async function, in one process and one run, so the figures are
// comparable as ratios (absolute nanoseconds drift from run to run and machine to machine).
// Each sample awaits BATCH calls in a row, so the harness's own per-sample cost is amortised,
// and each row is the median of ROUNDS rounds.
//
//   --save            also writes the raw results as JSON to bench/results/
//   --quick           shorter sampling (for a smoke run; figures are noisier)
//   --only <group>    runs one group and its summary lines: baseline, happy, coalescing,
//                     rejection, validation, endpoints, adaptive, store or heap
//   --baseline <rev>  the revision the baseline group compares the runtime with (default
//                     68262f1, the last commit before the features that must not cost an
//                     unconfigured call anything; see bench/baseline.ts)
//
// Heap figures need `global.gc`: run with `node --expose-gc --import tsx bench/run.ts`.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  bulkhead as cockatielBulkhead,
  circuitBreaker as cockatielBreaker,
  ExponentialBackoff,
  handleAll,
  retry as cockatielRetry,
  SamplingBreaker,
  timeout as cockatielTimeout,
  TimeoutStrategy,
  wrap,
} from "cockatiel";
import OpossumBreaker from "opossum";
import { Bench } from "tinybench";
import { build } from "../src/build/build.js";
import {
  DEFAULT_BASELINE,
  loadBaseline,
  type Baseline,
  type ComparableRuntime,
} from "./baseline.js";
import { randomUUID } from "node:crypto";
import { createClient } from "redis";
import {
  createDependency,
  createInboundMiddleware,
  createMemoryStore,
  createRedisStore,
  type Dependency,
  type DependencySettings,
  type InboundRequest,
  type InboundResponse,
  type OperationSettings,
  type RouteSettings,
  type RuntimeEnvironment,
  type ServiceSettings,
  type SharedStore,
} from "../templates/runtime/index.js";

const argv = process.argv.slice(2);
const args = new Set(argv);
function usage(message: string): never {
  console.error(`bench/run.ts: ${message}`);
  process.exit(2);
}
/** The value after `--name`, or `fallback` when the flag is absent. */
function option(name: string, fallback: string): string {
  const at = argv.indexOf(name);
  if (at === -1) return fallback;
  const value = argv[at + 1];
  if (value === undefined || value.startsWith("--")) usage(`${name} needs a value`);
  return value;
}
const quick = args.has("--quick");
const GROUPS = [
  "baseline",
  "happy",
  "coalescing",
  "rejection",
  "validation",
  "endpoints",
  "adaptive",
  "store",
  "heap",
] as const;
type Group = (typeof GROUPS)[number];
const only = option("--only", "");
if (only !== "" && !(GROUPS as readonly string[]).includes(only))
  usage(`--only ${only}: the groups are ${GROUPS.join(", ")}`);
const runs = (group: Group): boolean => only === "" || only === group;
const baselineRev = option("--baseline", DEFAULT_BASELINE);
const BATCH = 100;
const here = dirname(fileURLToPath(import.meta.url));

// ---------------------------------------------------------------------------------------------
// The work being protected.

/** Resolves at once (measures pure overhead). */
const noop = (): Promise<number> => Promise.resolve(1);
/** Yields to the event loop once, like the smallest real I/O would. */
const yieldOnce = async (): Promise<number> => {
  await new Promise<void>((resolve) => setImmediate(resolve));
  return 1;
};
/** Never settles (holds a bulkhead slot). */
const forever = (): Promise<number> => new Promise<number>(() => undefined);

// ---------------------------------------------------------------------------------------------
// A minimal wrapper that can time a call out: it reads the clock once, races the function's
// promise against a timer entry (linked into a list and unlinked, as a shared timer is), counts
// the outcome and resolves a fresh `{ data, degraded }`. No breaker, bulkhead, retry or events:
// a floor for the full stack's overhead on this machine, not a usable policy.

interface TimerEntry {
  due: number;
  prev: TimerEntry | undefined;
  next: TimerEntry | undefined;
}
const pending: { head: TimerEntry | undefined; tail: TimerEntry | undefined } = {
  head: undefined,
  tail: undefined,
};
let minimumSuccesses = 0;

function link(entry: TimerEntry): void {
  entry.prev = pending.tail;
  if (pending.tail === undefined) pending.head = entry;
  else pending.tail.next = entry;
  pending.tail = entry;
}

function unlink(entry: TimerEntry): void {
  if (entry.prev === undefined) pending.head = entry.next;
  else entry.prev.next = entry.next;
  if (entry.next === undefined) pending.tail = entry.prev;
  else entry.next.prev = entry.prev;
}

function minimumWrapper<T>(
  fn: () => Promise<T>,
  timeoutMs: number,
): Promise<{ data: T; degraded: boolean }> {
  const now = performance.now();
  return new Promise((resolve, reject) => {
    const entry: TimerEntry = { due: now + timeoutMs, prev: undefined, next: undefined };
    link(entry);
    fn().then(
      (data) => {
        unlink(entry);
        minimumSuccesses++;
        resolve({ data, degraded: false });
      },
      (error: unknown) => {
        unlink(entry);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

// ---------------------------------------------------------------------------------------------
// resgen: settings as the generator emits them for a typical policy (see examples/checkout).

const BREAKER: NonNullable<DependencySettings["breaker"]> = {
  failureRate: 0.5,
  slowCall: null,
  window: { kind: "time", durationMs: 10_000, buckets: 10 },
  minCalls: 20,
  openForMs: 30_000,
  halfOpen: { maxCalls: 3, successes: 3 },
};
const BULKHEAD: NonNullable<DependencySettings["bulkhead"]> = {
  maxConcurrent: 25,
  maxQueue: 0,
  queueTimeoutMs: 0,
  overflow: "reject",
};
const FULL_DEPENDENCY: DependencySettings = {
  name: "bench",
  deadline: { propagate: true, marginMs: 10, header: "x-request-timeout-ms", format: "ms" },
  breaker: BREAKER,
  bulkhead: BULKHEAD,
  budget: { maxTokens: 100, tokenRatio: 0.1 },
};
const RETRY: NonNullable<OperationSettings["retry"]> = {
  maxAttempts: 3,
  backoff: { baseMs: 50, capMs: 1_000, multiplier: 2, jitter: "full" },
  on: ["timeout", "network", 408, 425, 429, 500, 502, 503, 504],
  retryAfter: { maxMs: null },
};
const fullOperation = {
  name: "get",
  repeatable: true,
  idempotencyKey: null,
  timeout: { attemptMs: 500, totalMs: 2_000 },
  retry: RETRY,
  hedge: null,
  fallback: { kind: "value", value: 0 },
} as const satisfies OperationSettings;
const plainOperation = (patch: Partial<OperationSettings<null>>): OperationSettings<null> => ({
  name: "get",
  repeatable: true,
  idempotencyKey: null,
  timeout: { attemptMs: null, totalMs: null },
  retry: null,
  hedge: null,
  fallback: null,
  ...patch,
});
const onlyDependency = (
  patch: Partial<DependencySettings>,
  env: RuntimeEnvironment = {},
): Dependency =>
  createDependency(
    {
      name: "bench",
      deadline: null,
      breaker: null,
      bulkhead: null,
      budget: null,
      ...patch,
    },
    env,
  );

// ---------------------------------------------------------------------------------------------
// cockatiel and opossum, in the configuration their documentation leads with.

const cockatielSampling = (): SamplingBreaker =>
  new SamplingBreaker({ threshold: 0.5, duration: 10_000, minimumRps: 2 });
const makeCockatielBreaker = () =>
  cockatielBreaker(handleAll, { halfOpenAfter: 30_000, breaker: cockatielSampling() });
const makeCockatielRetry = () =>
  cockatielRetry(handleAll, {
    maxAttempts: 2,
    backoff: new ExponentialBackoff({ initialDelay: 50, maxDelay: 1_000 }),
  });
const makeCockatielTimeout = () => cockatielTimeout(500, TimeoutStrategy.Aggressive);
const makeCockatielFull = () =>
  wrap(
    cockatielBulkhead(25, 0),
    makeCockatielRetry(),
    makeCockatielBreaker(),
    makeCockatielTimeout(),
  );
// opossum's defaults: 10 s window in 10 buckets, 50 % errors, 30 s reset, snapshots on.
const opossum = (
  fn: () => Promise<number>,
  options: OpossumBreaker.Options = {},
): OpossumBreaker<[], number> =>
  new OpossumBreaker(fn, { errorThresholdPercentage: 50, resetTimeout: 30_000, ...options });
const opossumBreakers: OpossumBreaker[] = [];
function keep<B extends OpossumBreaker<[], number>>(b: B): B {
  opossumBreakers.push(b);
  return b;
}

// ---------------------------------------------------------------------------------------------
// Timing.

interface Row {
  readonly group: string;
  readonly name: string;
  /** The median of the rounds' means. */
  readonly nsPerCall: number;
  /** The relative margin of error of the median round, in percent. */
  readonly rme: number;
  readonly samples: number;
  /** Mean ns per call of each round. */
  readonly rounds: readonly number[];
  /**
   * This process's CPU time (user and system, all its threads) per call of each round's sampling
   * phase: unlike the wall time, it leaves out what other processes on the machine take.
   */
  readonly cpuRounds: readonly number[];
}

// A shared VM's speed drifts by up to 2× within a minute, so each group runs in rounds (the task
// order rotated each time) and every task keeps its median round: one slow stretch moves one
// round of a few tasks, not a whole row.
const ROUNDS = quick ? 1 : 3;
const benchOptions = {
  time: quick ? 150 : 400,
  warmupTime: quick ? 50 : 150,
  warmupIterations: 20,
  iterations: 10,
};

interface MeasureOptions {
  /** Rounds (default {@link ROUNDS}). */
  readonly rounds?: number;
  /** The tasks' indices in the order round `round` runs them (default: rotated by the round). */
  readonly order?: (round: number) => readonly number[];
  /** Sampling and warm-up per task and round, in ms (default {@link benchOptions}'). */
  readonly time?: number;
  readonly warmupTime?: number;
}

/** Times `calls` (each returns the awaited call) per call, in nanoseconds. */
async function measure(
  group: string,
  tasks: Array<[string, () => Promise<unknown>]>,
  options: MeasureOptions = {},
): Promise<Row[]> {
  const results = new Map<
    string,
    Array<{ ns: number; rme: number; samples: number; cpuNs: number }>
  >(tasks.map(([name]) => [name, []]));
  const cpu = new Map<string, () => number>();
  const rotated = (round: number) => tasks.map((_, i) => (i + round) % tasks.length);
  const order = options.order ?? rotated;
  for (let round = 0; round < (options.rounds ?? ROUNDS); round++) {
    const bench = new Bench({
      name: group,
      ...benchOptions,
      time: options.time ?? benchOptions.time,
      warmupTime: options.warmupTime ?? benchOptions.warmupTime,
    });
    const indices = order(round);
    if ([...indices].sort((a, b) => a - b).join() !== tasks.map((_, i) => i).join())
      throw new Error(`${group}: round ${String(round)} does not run every task once`);
    for (const index of indices) {
      const [name, call] = tasks[index]!;
      // the CPU clock is read outside the timed samples, once before and once after the phase
      let iterations = 0;
      let cpuStart = process.cpuUsage();
      let cpuUs = 0;
      bench.add(
        name,
        async () => {
          iterations++;
          for (let j = 0; j < BATCH; j++) await call();
        },
        {
          beforeAll: (mode) => {
            if (mode !== "run") return;
            iterations = 0;
            cpuStart = process.cpuUsage();
          },
          afterAll: (mode) => {
            if (mode !== "run") return;
            const used = process.cpuUsage(cpuStart);
            cpuUs = used.user + used.system;
          },
        },
      );
      cpu.set(name, () => (cpuUs * 1e3) / (iterations * BATCH));
    }
    await bench.run();
    for (const task of bench.tasks) {
      const result = task.result;
      if (result.state !== "completed") throw new Error(`${group} / ${task.name}: ${result.state}`);
      results.get(task.name)!.push({
        ns: (result.latency.mean * 1e6) / BATCH,
        rme: result.latency.rme,
        samples: result.latency.samplesCount,
        cpuNs: cpu.get(task.name)!(),
      });
    }
  }
  return tasks.map(([name]) => {
    const rounds = results.get(name)!;
    const median = [...rounds].sort((a, b) => a.ns - b.ns)[Math.floor(rounds.length / 2)]!;
    return {
      group,
      name,
      nsPerCall: median.ns,
      rme: median.rme,
      samples: rounds.reduce((n, r) => n + r.samples, 0),
      rounds: rounds.map((r) => r.ns),
      cpuRounds: rounds.map((r) => r.cpuNs),
    };
  });
}

/** Same, for calls expected to reject. */
const rejecting =
  (call: () => Promise<unknown>): (() => Promise<unknown>) =>
  () =>
    call().then(fail, () => undefined);
function fail(): never {
  throw new Error("expected a rejection");
}

// ---------------------------------------------------------------------------------------------
// Happy path and primitives.

async function happyPath(kind: "no-op" | "yield", fn: () => Promise<number>): Promise<Row[]> {
  const full = createDependency(FULL_DEPENDENCY);
  // the same stack with a classify hook that looks at every answer and keeps the built-in verdict
  const classified = createDependency(FULL_DEPENDENCY, {
    classify: (result) => (result.type === "value" && result.value === -1 ? "failure" : undefined),
  });
  const cockFull = makeCockatielFull();
  const opFull = keep(opossum(fn, { timeout: 500, capacity: 25 }));
  const breaker = onlyDependency({ breaker: BREAKER });
  // the same breaker with open-duration backoff, and one isolated and released before the run:
  // neither may cost more on the closed path (docs/runtime.md, "Open-duration backoff")
  const backoffBreaker = onlyDependency({
    breaker: { ...BREAKER, openBackoff: { capMs: 300_000, multiplier: 2 } },
  });
  const released = onlyDependency({ breaker: BREAKER });
  released.breakerControl?.isolate().dispose();
  const cockBreaker = makeCockatielBreaker();
  const opBreaker = keep(opossum(fn, { timeout: false }));
  const retry = onlyDependency({ budget: null });
  const cockRetry = makeCockatielRetry();
  const timeout = onlyDependency({});
  const cockTimeout = makeCockatielTimeout();
  const bulkhead = onlyDependency({ bulkhead: BULKHEAD });
  const bare = onlyDependency({});
  // a limit no run reaches, so every call takes a permit and none waits or is refused
  const limited = onlyDependency({
    rateLimit: { rate: 1e12, periodMs: 1_000, burst: 1e12, maxWaitMs: 0, maxPauseMs: 0 },
  });
  // the chaos option (docs/runtime.md, "Chaos"): killed, it costs a check per call; on, a draw
  // per fault per attempt (a rate of 0 draws and injects nothing)
  const chaos = (rate: number) => ({ seed: 1, faults: [{ kind: "network" as const, rate }] });
  const chaosOff = onlyDependency({}, { chaos: chaos(1) });
  chaosOff.chaos.disable();
  const chaosDrawing = onlyDependency({}, { chaos: chaos(0) });
  const cockBulkhead = cockatielBulkhead(25, 0);
  const retryOp = plainOperation({ retry: { ...RETRY, maxAttempts: 2 } });
  const timeoutOp = plainOperation({ timeout: { attemptMs: 500, totalMs: null } });
  const plainOp = plainOperation({});
  // Generated clients pass a fresh closure per call (it binds the call's input), so do we.
  const group = `happy path, ${kind}`;
  return measure(group, [
    ["bare await fn()", () => fn()],
    ["minimum wrapper (clock, race, outcome)", () => minimumWrapper(() => fn(), 500)],
    ["resgen full stack", () => full.call(fullOperation, () => fn())],
    ["resgen full stack, classify hook", () => classified.call(fullOperation, () => fn())],
    ["cockatiel wrap(bulkhead, retry, breaker, timeout)", () => cockFull.execute(() => fn())],
    ["opossum fire() (timeout, capacity)", () => opFull.fire()],
    ["resgen breaker", () => breaker.call(plainOp, () => fn())],
    ["resgen breaker, openFor backoff", () => backoffBreaker.call(plainOp, () => fn())],
    ["resgen breaker, isolated then released", () => released.call(plainOp, () => fn())],
    ["cockatiel breaker", () => cockBreaker.execute(() => fn())],
    ["opossum breaker (timeout off)", () => opBreaker.fire()],
    ["resgen retry", () => retry.call(retryOp, () => fn())],
    ["cockatiel retry", () => cockRetry.execute(() => fn())],
    ["resgen timeout", () => timeout.call(timeoutOp, () => fn())],
    ["cockatiel timeout", () => cockTimeout.execute(() => fn())],
    ["resgen bulkhead", () => bulkhead.call(plainOp, () => fn())],
    ["cockatiel bulkhead", () => cockBulkhead.execute(() => fn())],
    ["resgen, nothing configured", () => bare.call(plainOp, () => fn())],
    ["resgen rate limit", () => limited.call(plainOp, () => fn())],
    ["resgen, chaos disabled", () => chaosOff.call(plainOp, () => fn())],
    ["resgen, chaos drawing at rate 0", () => chaosDrawing.call(plainOp, () => fn())],
  ]);
}

// ---------------------------------------------------------------------------------------------
// The runtime against itself before the features (bench/baseline.ts): the same two stacks, from
// the same settings (valid in both versions), through the current runtime and the baseline's,
// in one run. Each runtime gets its own copy of the settings, so neither sees an object the
// other has touched; the protected function is the same. Each pair of rows runs back to back,
// which of the two goes first alternating from round to round, and the ratio of a pair is the
// median of its rounds' ratios: the load of a shared machine moves both rows of a round alike.

// Many short rounds rather than a few long ones: the two rows of a pair then run within a
// fraction of a second of each other, and a burst of load elsewhere on the machine lands on a
// few rounds' ratios, which the median leaves out.
const BASELINE_ROUNDS = quick ? 4 : 16;
const BASELINE_TIMING = { time: quick ? 100 : 200, warmupTime: quick ? 30 : 50 };

/** Current ÷ baseline, round by round. */
interface Ratios {
  /** The median of the rounds' ratios. */
  readonly median: number;
  /** The smallest and largest round's ratio. */
  readonly low: number;
  readonly high: number;
}

interface Comparison {
  readonly stack: string;
  readonly current: Row;
  readonly baseline: Row;
  /** From wall time (tinybench's means). */
  readonly wall: Ratios;
  /** From this process's CPU time. */
  readonly cpu: Ratios;
}

function pairedRatios(current: readonly number[], baseline: readonly number[]): Ratios {
  const ratios = current.map((ns, i) => ns / baseline[i]!).sort((a, b) => a - b);
  const mid = ratios.length / 2;
  return {
    median: (ratios[Math.ceil(mid) - 1]! + ratios[Math.floor(mid)]!) / 2,
    low: ratios[0]!,
    high: ratios[ratios.length - 1]!,
  };
}

const currentRuntime: ComparableRuntime = { createDependency };
const NOTHING_CONFIGURED: DependencySettings = {
  name: "bench",
  deadline: null,
  breaker: null,
  bulkhead: null,
  budget: null,
};

async function againstBaseline(
  kind: "no-op" | "yield",
  fn: () => Promise<number>,
  baseline: Extract<Baseline, { ok: true }>,
): Promise<{ rows: Row[]; comparisons: Comparison[] }> {
  const stacks = (runtime: ComparableRuntime) => {
    const full = runtime.createDependency(structuredClone(FULL_DEPENDENCY));
    const fullOp = structuredClone(fullOperation);
    const plain = runtime.createDependency(structuredClone(NOTHING_CONFIGURED));
    const plainOp = structuredClone(plainOperation({}));
    return {
      full: () => full.call(fullOp, () => fn()),
      plain: () => plain.call(plainOp, () => fn()),
    };
  };
  const now = stacks(currentRuntime);
  const then = stacks(baseline.runtime);
  const pairs = [
    ["full stack", "current full stack", "baseline full stack"],
    ["nothing configured", "current, nothing configured", "baseline, nothing configured"],
  ] as const;
  const rows = await measure(
    `against ${baseline.commit.slice(0, 7)}, ${kind}`,
    [
      ["bare await fn()", () => fn()],
      [pairs[0][1], now.full],
      [pairs[0][2], then.full],
      [pairs[1][1], now.plain],
      [pairs[1][2], then.plain],
    ],
    {
      rounds: BASELINE_ROUNDS,
      ...BASELINE_TIMING,
      // bare first; the pairs in turn first, and within each pair current or baseline first,
      // so that over four rounds each row has run in each position of its pair
      order: (round) => {
        const ordered =
          Math.floor(round / 2) % 2 === 0
            ? [
                [1, 2],
                [3, 4],
              ]
            : [
                [3, 4],
                [1, 2],
              ];
        return [0, ...ordered.flatMap((pair) => (round % 2 === 0 ? pair : [...pair].reverse()))];
      },
    },
  );
  const row = (name: string) => rows.find((r) => r.name === name)!;
  const comparisons = pairs.map(([stack, currentName, baselineName]) => {
    const current = row(currentName);
    const before = row(baselineName);
    const wall = pairedRatios(current.rounds, before.rounds);
    const cpu = pairedRatios(current.cpuRounds, before.cpuRounds);
    return { stack, current, baseline: before, wall, cpu };
  });
  return { rows, comparisons };
}

// ---------------------------------------------------------------------------------------------
// Response validation (`validate: response`): one generated client, two operations with the
// same response schema, one validated and one cast, over an in-memory fetch answering with the
// same JSON text, so the difference is the validator.

const VALIDATED_POLICY = `version: 1
dependency: shop
latency: { p50: 10ms, p99: 50ms, p999: 100ms, rps: 20 }
bulkhead: false
operations:
  listChecked: { method: GET, path: /items, response: { $ref: "#/schemas/Page" }, validate: response }
  listCast: { method: GET, path: /items, response: { $ref: "#/schemas/Page" } }
schemas:
  Page:
    type: object
    properties:
      items: { type: array, items: { $ref: "#/schemas/Item" } }
      next: { type: string, nullable: true }
    required: [items]
  Item:
    type: object
    properties:
      sku: { type: string }
      name: { type: string }
      price: { type: number }
      stock: { type: integer }
      status: { enum: [active, retired] }
      tags: { type: array, items: { type: string } }
    required: [sku, price, status]
`;

interface ShopClient {
  listChecked(): Promise<unknown>;
  listCast(): Promise<unknown>;
}

/**
 * The validator against the JSON.parse before it, each timed alone on the same body (the
 * validator on the parsed value): nanoseconds per body, the median of 7 rounds.
 */
interface ValidatorCost {
  readonly items: number;
  readonly bytes: number;
  readonly parseNs: number;
  readonly validateNs: number;
}

function validatorCost(
  check: (value: unknown) => string | undefined,
  text: string,
  items: number,
): ValidatorCost {
  const iterations = Math.max(200, Math.floor((quick ? 2e6 : 2e7) / text.length));
  const parsed: unknown = JSON.parse(text);
  if (check(parsed) !== undefined) throw new Error("the bench's body does not match its schema");
  let sink = 0;
  const time = (validate: boolean): number => {
    const started = process.hrtime.bigint();
    if (validate) for (let i = 0; i < iterations; i++) sink += check(parsed) === undefined ? 1 : 0;
    else for (let i = 0; i < iterations; i++) sink += JSON.parse(text) === null ? 0 : 1;
    return Number(process.hrtime.bigint() - started) / iterations;
  };
  const parse: number[] = [];
  const validate: number[] = [];
  for (let round = 0; round < 7; round++) {
    // alternate the order, so that a slow stretch of the machine falls on both
    if (round % 2 === 0) {
      parse.push(time(false));
      validate.push(time(true));
    } else {
      validate.push(time(true));
      parse.push(time(false));
    }
  }
  if (sink !== 14 * iterations) throw new Error("a timed loop did not run");
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[3]!;
  return { items, bytes: text.length, parseNs: median(parse), validateNs: median(validate) };
}

async function validation(): Promise<{ rows: Row[]; costs: ValidatorCost[] }> {
  const dir = mkdtempSync(join(tmpdir(), "resgen-bench-"));
  try {
    writeFileSync(join(dir, "shop.yaml"), VALIDATED_POLICY);
    const result = await build([join(dir, "shop.yaml")], {
      cwd: dir,
      out: join(dir, "out"),
      allowOutsideProject: true,
    });
    if (!result.written) throw new Error("the validation bench's client was not built");
    const mod = (await import(pathToFileURL(join(dir, "out", "shop.ts")).href)) as {
      createShopClient(config: { baseUrl: string; fetch: typeof fetch }): ShopClient;
    };
    // the same module with its validator exported, to time the validator by itself
    const source = readFileSync(join(dir, "out", "shop.ts"), "utf8");
    if (!source.includes("\nfunction checkPage(")) throw new Error("no checkPage in the client");
    writeFileSync(
      join(dir, "out", "shop-validator.ts"),
      source.replace("\nfunction checkPage(", "\nexport function checkPage("),
    );
    const { checkPage } = (await import(
      pathToFileURL(join(dir, "out", "shop-validator.ts")).href
    )) as { checkPage: (value: unknown) => string | undefined };
    const rows: Row[] = [];
    const costs: ValidatorCost[] = [];
    for (const count of [1, 20, 200]) {
      const page = {
        items: Array.from({ length: count }, (_, i) => ({
          sku: `sku-${i}`,
          name: `Item ${i}`,
          price: 9.99 + i,
          stock: i,
          status: i % 7 === 0 ? "retired" : "active",
          tags: ["a", "b"],
        })),
        next: null,
      };
      const text = JSON.stringify(page);
      costs.push(validatorCost(checkPage, text, count));
      const inMemory = (() =>
        Promise.resolve(
          new Response(text, { status: 200, headers: { "content-type": "application/json" } }),
        )) as unknown as typeof fetch;
      const client = mod.createShopClient({ baseUrl: "http://shop.internal", fetch: inMemory });
      const parsed = (): Promise<unknown> => Promise.resolve(JSON.parse(text) as unknown);
      rows.push(
        ...(await measure(
          `response validation, ${count} item${count === 1 ? "" : "s"} (${text.length} bytes)`,
          [
            ["bare await JSON.parse(body)", parsed],
            ["call, cast (default)", () => client.listCast()],
            ["call, validate: response", () => client.listChecked()],
          ],
        )),
      );
    }
    return { rows, costs };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Coalescing (`coalesce: true`): bursts of BURST identical calls in flight at once, each burst one
// timed call. The transport yields once, so the burst's calls really overlap; the rows count
// what reached the transport per burst.

const BURST = 10;
const coalescedOperation = { ...fullOperation, coalesce: true } as const;
const IDENTITY = '["GET","https://bench.internal/items/1",[["authorization",[]],["cookie",[]]]]';

interface Sent {
  /** Transport calls. */
  requests: number;
  /** Bursts timed, warm-up included. */
  bursts: number;
}

async function coalescing(): Promise<{ rows: Row[]; sent: Record<string, Sent> }> {
  const sent: Record<string, Sent> = {};
  const counted = (name: string) => {
    const s = (sent[name] = { requests: 0, bursts: 0 });
    return () => {
      s.requests++;
      return yieldOnce();
    };
  };
  const plainDep = createDependency(FULL_DEPENDENCY);
  const coalescedDep = createDependency(FULL_DEPENDENCY);
  const bare = counted("bare");
  const plain = counted("plain");
  const shared = counted("coalesced");
  const op = counted("opossum");
  // coalesceResetOn every outcome: in flight only, as resgen does (by default opossum keeps the
  // promise for coalesceTTL after it settled, which is a cache)
  const opCoalesced = keep(
    opossum(op, {
      timeout: 500,
      capacity: 25,
      coalesce: true,
      coalesceResetOn: ["error", "success", "timeout"],
    }),
  );
  const burst = (name: string, call: () => Promise<unknown>) => () => {
    sent[name]!.bursts++;
    return Promise.all(Array.from({ length: BURST }, call));
  };
  const rows = await measure(`coalescing, bursts of ${BURST} identical calls (yield)`, [
    ["bare: 10 × await fn() at once", burst("bare", bare)],
    ["resgen full stack, no coalesce", burst("plain", () => plainDep.call(fullOperation, plain))],
    [
      "resgen full stack, coalesce: true",
      burst("coalesced", () => coalescedDep.call(coalescedOperation, shared, {}, IDENTITY)),
    ],
    ["opossum fire(), coalesce (reset on settle)", burst("opossum", () => opCoalesced.fire())],
  ]);
  return { rows, sent };
}

// ---------------------------------------------------------------------------------------------
// Several endpoints (docs/runtime.md, "Endpoints"): the full stack given two base URLs, so every
// attempt chooses one (power of two choices) and takes its breaker's permit, against the same
// stack with one.

async function endpoints(): Promise<Row[]> {
  const single = createDependency(FULL_DEPENDENCY);
  const listOfOne = createDependency(FULL_DEPENDENCY, { endpoints: ["https://a.bench.internal"] });
  const two = createDependency(
    { ...FULL_DEPENDENCY, endpoints: { choose: "power-of-two", max: 2 } },
    { endpoints: ["https://a.bench.internal", "https://b.bench.internal"] },
  );
  const robin = createDependency(
    { ...FULL_DEPENDENCY, endpoints: { choose: "round-robin", max: 2 } },
    { endpoints: ["https://a.bench.internal", "https://b.bench.internal"] },
  );
  return measure("endpoints, yield", [
    ["bare await fn()", () => yieldOnce()],
    ["resgen full stack", () => single.call(fullOperation, () => yieldOnce())],
    [
      "resgen full stack, a list of one endpoint",
      () => listOfOne.call(fullOperation, () => yieldOnce()),
    ],
    ["resgen full stack, two endpoints", () => two.call(fullOperation, () => yieldOnce())],
    [
      "resgen full stack, two endpoints, round-robin",
      () => robin.call(fullOperation, () => yieldOnce()),
    ],
  ]);
}

// ---------------------------------------------------------------------------------------------
// Adaptive concurrency: the full stack with its bulkhead's limit following latency
// (docs/runtime.md, "Adaptive concurrency"), against the same stack with the static bulkhead.

async function adaptiveConcurrency(): Promise<Row[]> {
  const adaptive = createDependency({
    ...FULL_DEPENDENCY,
    bulkhead: {
      ...BULKHEAD,
      adaptive: { minLimit: 1, maxLimit: 50, smoothing: 0.2, tolerance: 1.5, windowMs: 1_000 },
    },
  });
  const fixed = createDependency(FULL_DEPENDENCY);
  return measure("adaptive concurrency (full stack)", [
    ["bare await fn() (no-op)", () => noop()],
    ["resgen full stack, static bulkhead (no-op)", () => fixed.call(fullOperation, noop)],
    ["resgen full stack, adaptive bulkhead (no-op)", () => adaptive.call(fullOperation, noop)],
    ["resgen full stack, static bulkhead (yield)", () => fixed.call(fullOperation, yieldOnce)],
    ["resgen full stack, adaptive bulkhead (yield)", () => adaptive.call(fullOperation, yieldOnce)],
  ]);
}

// ---------------------------------------------------------------------------------------------
// The store: a request of an idempotent route through the inbound middleware (docs/services.md,
// "Idempotent routes"), against the same middleware without one, with the memory store and with
// Redis on loopback (REDIS_URL). A first request takes two store steps (begin, complete), a
// repeat one (begin). Requests and responses are plain objects, so no socket is measured.

const SERVICE: ServiceSettings = {
  name: "bench",
  deadline: {
    edgeMs: 5_000,
    maxMs: 5_000,
    header: "x-request-timeout-ms",
    format: "ms",
    grpcTimeout: true,
    expiredStatus: 504,
  },
  admission: null,
  rejection: { status: 503, retryAfterS: 1 },
  defaultPriority: "normal",
  priorities: [],
};
const IDEMPOTENT_ORDERS: RouteSettings = {
  method: "POST",
  path: "/orders",
  essential: false,
  idempotency: {
    header: "idempotency-key",
    ttlMs: 60_000,
    store: "memory",
    required: false,
    maxBytes: 65_536,
    scope: ["authorization"],
  },
};

/** One request through `handle`, resolved when the response has ended. */
function inbound(
  handle: (req: InboundRequest, res: InboundResponse) => void,
  key: string,
): Promise<void> {
  return new Promise<void>((done) => {
    const closed: Array<() => void> = [];
    const res = {
      headersSent: false,
      writableFinished: false,
      statusCode: 200,
      getHeaders: () => ({}),
      writeHead(status: number) {
        this.statusCode = status;
        this.headersSent = true;
        return this;
      },
      end() {
        this.writableFinished = true;
        done();
        for (const close of closed.splice(0)) close();
        return this;
      },
      once(_event: "close", listener: () => void) {
        closed.push(listener);
        return this;
      },
      destroy() {
        return this;
      },
    };
    handle(
      { method: "POST", url: "/orders", headers: { "idempotency-key": key, authorization: "b" } },
      res,
    );
  });
}

async function storeCosts(): Promise<Row[][] | string> {
  const url = process.env["REDIS_URL"] ?? "redis://127.0.0.1:6379";
  const client = createClient({ url, disableOfflineQueue: true });
  client.on("error", () => undefined);
  try {
    await client.connect();
  } catch (error) {
    return `no Redis server answers at ${url} (${String(error)})`;
  }
  const prefix = `resgen-bench:${randomUUID()}`;
  const handler = (_req: InboundRequest, res: InboundResponse) => {
    res.writeHead(201, {});
    res.end();
  };
  const door = (store?: SharedStore) =>
    createInboundMiddleware(
      { ...SERVICE, routes: store === undefined ? [] : [IDEMPOTENT_ORDERS] },
      store === undefined ? {} : { store },
    ).node(handler);
  const plain = door();
  const memory = door(createMemoryStore({ prefix }));
  const redis = door(createRedisStore(client, { prefix, timeoutMs: 1_000 }));
  // the repeats' keys, stored once before timing
  await inbound(memory, "repeat");
  await inbound(redis, "repeat");
  // a limit no run reaches, so every call takes a permit and none waits or is refused
  const limit = { rate: 1e12, periodMs: 1_000, burst: 1e12, maxWaitMs: 0, maxPauseMs: 0 };
  // the schema's highest rate, for the limits kept in a store: still more than any run reaches
  const shared = { ...limit, rate: 1e6, burst: 1e6, store: "redis", replicas: 4 } as const;
  const limited = (rateLimit: DependencySettings["rateLimit"], store?: SharedStore) =>
    createDependency(
      { name: "bench", deadline: null, breaker: null, bulkhead: null, budget: null, rateLimit },
      { store },
    );
  const op = plainOperation({});
  const unlimited = limited(null);
  const local = limited(limit);
  const sharedMemory = limited(shared, createMemoryStore({ prefix }));
  const sharedRedis = limited(shared, createRedisStore(client, { prefix, timeoutMs: 1_000 }));
  let n = 0;
  try {
    const idempotent = await measure("store: a request of an idempotent route", [
      ["bare middleware, no idempotent route", () => inbound(plain, "k")],
      ["idempotent, memory store, first request", () => inbound(memory, `m${String(n++)}`)],
      ["idempotent, memory store, repeat (replayed)", () => inbound(memory, "repeat")],
      ["idempotent, Redis loopback, first request", () => inbound(redis, `r${String(n++)}`)],
      ["idempotent, Redis loopback, repeat (replayed)", () => inbound(redis, "repeat")],
    ]);
    const rated = await measure("store: a rate-limited call (one permit per call)", [
      ["bare call, no rate limit", () => unlimited.call(op, noop)],
      ["rate limit of this process", () => local.call(op, noop)],
      ["rate limit shared, memory store", () => sharedMemory.call(op, noop)],
      ["rate limit shared, Redis loopback", () => sharedRedis.call(op, noop)],
    ]);
    return [idempotent, rated];
  } finally {
    for await (const keys of client.scanIterator({ MATCH: `${prefix}:*`, COUNT: 1_000 }))
      if (keys.length > 0) await client.del(keys);
    await client.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Rejections: open breaker, full bulkhead.

async function rejections(): Promise<Row[]> {
  const plainOp = plainOperation({});
  const openDep = onlyDependency({ breaker: BREAKER });
  openDep.breaker?.isolate();
  const cockOpen = makeCockatielBreaker();
  cockOpen.isolate();
  const opOpen = keep(opossum(noop, { timeout: false }));
  opOpen.open();

  const fullDep = onlyDependency({ bulkhead: { ...BULKHEAD, maxConcurrent: 1 } });
  void fullDep.call(plainOp, forever);
  const cockFull = cockatielBulkhead(1, 0);
  void cockFull.execute(forever);
  // The held slot never settles; a locked semaphore must not count as a failure of the
  // dependency (else the breaker opens and the row would measure the open breaker).
  const opFull = keep(opossum(forever, { timeout: false, capacity: 1, errorFilter: () => true }));
  void opFull.fire();

  return measure("rejection", [
    ["bare await fn()", () => noop()],
    ["resgen, breaker open", rejecting(() => openDep.call(plainOp, noop))],
    ["cockatiel, breaker open", rejecting(() => cockOpen.execute(noop))],
    ["opossum, breaker open", rejecting(() => opOpen.fire())],
    ["resgen, bulkhead full", rejecting(() => fullDep.call(plainOp, noop))],
    ["cockatiel, bulkhead full", rejecting(() => cockFull.execute(noop))],
    ["opossum, capacity full", rejecting(() => opFull.fire())],
  ]);
}

// ---------------------------------------------------------------------------------------------
// Memory.

interface HeapRow {
  readonly name: string;
  /** Bytes per breaker, over 1,000 instances. */
  readonly bytesPerBreaker: number;
  /** Heap growth of one breaker after 10^6 calls, in bytes per call. */
  readonly bytesPerCall: number;
}

const gc = (globalThis as { gc?: () => void }).gc;

function heapUsed(): number {
  for (let i = 0; i < 4; i++) gc!();
  return process.memoryUsage().heapUsed;
}

function perInstance(make: () => unknown): number {
  const N = 1_000;
  const keepAlive: unknown[] = new Array(N);
  const before = heapUsed();
  for (let i = 0; i < N; i++) keepAlive[i] = make();
  const after = heapUsed();
  const bytes = (after - before) / N;
  keepAlive.length = 0;
  return bytes;
}

async function growth(call: () => Promise<unknown>): Promise<number> {
  const CALLS = 1_000_000;
  for (let i = 0; i < 10_000; i++) await call();
  const before = heapUsed();
  for (let i = 0; i < CALLS; i++) await call();
  const after = heapUsed();
  return (after - before) / CALLS;
}

async function memory(): Promise<HeapRow[] | null> {
  if (gc === undefined) return null;
  const plainOp = plainOperation({});
  const resgen = perInstance(() => onlyDependency({ breaker: BREAKER }));
  const cock = perInstance(() => makeCockatielBreaker());
  const ops: OpossumBreaker[] = [];
  const opos = perInstance(() => {
    const b = opossum(noop, { timeout: false });
    ops.push(b);
    return b;
  });
  for (const b of ops) b.shutdown();
  ops.length = 0;

  const dep = onlyDependency({ breaker: BREAKER });
  const resgenGrowth = await growth(() => dep.call(plainOp, noop));
  const cockBreaker = makeCockatielBreaker();
  const cockGrowth = await growth(() => cockBreaker.execute(noop));
  const opBreaker = keep(opossum(noop, { timeout: false }));
  const opGrowth = await growth(() => opBreaker.fire());
  return [
    {
      name: "resgen (createDependency with a breaker)",
      bytesPerBreaker: resgen,
      bytesPerCall: resgenGrowth,
    },
    {
      name: "cockatiel circuitBreaker(SamplingBreaker)",
      bytesPerBreaker: cock,
      bytesPerCall: cockGrowth,
    },
    { name: "opossum CircuitBreaker", bytesPerBreaker: opos, bytesPerCall: opGrowth },
  ];
}

// ---------------------------------------------------------------------------------------------
// Report.

function versionOf(pkg: string): string {
  const path = join(here, "..", "node_modules", pkg, "package.json");
  return (JSON.parse(readFileSync(path, "utf8")) as { version: string }).version;
}

function formatNs(ns: number): string {
  return ns >= 10_000 ? `${(ns / 1_000).toFixed(1)} µs` : `${Math.round(ns)} ns`;
}

function printGroup(rows: readonly Row[]): void {
  const bare = rows.find((r) => r.name.startsWith("bare"))!.nsPerCall;
  const width = Math.max(...rows.map((r) => r.name.length));
  console.log(`\n${rows[0]!.group} (ns per call; ratio to a bare await)`);
  for (const r of rows) {
    const ratio = r.nsPerCall / bare;
    console.log(
      `  ${r.name.padEnd(width)}  ${formatNs(r.nsPerCall).padStart(9)}  ${ratio.toFixed(1).padStart(6)}×  ±${r.rme.toFixed(1)}%`,
    );
  }
}

/**
 * Nanoseconds per `performance.now()`: the runtime reads the clock once per call, and what a
 * read costs depends on the machine (a few tens of ns where the clock source is read in user
 * space, several times that on some VMs). The median of five runs of 10^6 reads.
 */
function clockReadNs(): number {
  const runs: number[] = [];
  let sink = 0;
  for (let run = 0; run < 5; run++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < 1_000_000; i++) sink += performance.now();
    runs.push(Number(process.hrtime.bigint() - started) / 1_000_000);
  }
  if (sink === 0) throw new Error("the clock did not move");
  return runs.sort((a, b) => a - b)[2]!;
}

const machine = {
  cpu: cpus()[0]?.model.trim() ?? "unknown",
  cores: cpus().length,
  node: process.version,
  platform: `${process.platform} ${process.arch}`,
  clockReadNs: clockReadNs(),
};
const versions = {
  tinybench: versionOf("tinybench"),
  cockatiel: versionOf("cockatiel"),
  opossum: versionOf("opossum"),
};
console.log(
  `machine: ${machine.cpu}, ${machine.cores} cores, Node ${machine.node} (${machine.platform}); performance.now() ${machine.clockReadNs.toFixed(0)} ns per read`,
);
console.log(
  `packages: tinybench ${versions.tinybench}, cockatiel ${versions.cockatiel}, opossum ${versions.opossum}`,
);
console.log(
  `${BATCH} sequential awaited calls per sample; each row the median of ${ROUNDS} round${ROUNDS === 1 ? "" : "s"} (the baseline group's of ${BASELINE_ROUNDS} shorter ones)${quick ? " (quick run)" : ""}`,
);

const started = performance.now();
const groups: Row[][] = [];
const ns = (group: Row[], name: string): number => group.find((r) => r.name === name)!.nsPerCall;

// First, while neither runtime has run: the happy path below takes the current one through
// settings the baseline has never seen (a rate limit, a classify hook, open-duration backoff),
// which would leave the current runtime's code shaped by more kinds of call than the baseline's.
let baseline: Baseline | undefined;
const comparisons: Array<{ kind: string; comparisons: Comparison[] }> = [];
if (runs("baseline")) {
  baseline = await loadBaseline(join(here, ".."), baselineRev);
  if (!baseline.ok) {
    console.log(`
baseline group skipped: ${baseline.reason}`);
  } else {
    for (const [kind, fn] of [
      ["no-op", noop],
      ["yield", yieldOnce],
    ] as const) {
      const result = await againstBaseline(kind, fn, baseline);
      groups.push(result.rows);
      printGroup(result.rows);
      comparisons.push({ kind, comparisons: result.comparisons });
    }
  }
}
const happy: Row[][] = [];
if (runs("happy")) {
  for (const [kind, fn] of [
    ["no-op", noop],
    ["yield", yieldOnce],
  ] as const) {
    const rows = await happyPath(kind, fn);
    happy.push(rows);
    groups.push(rows);
    printGroup(rows);
  }
  if (minimumSuccesses === 0) throw new Error("the minimum wrapper never ran");
}
let coalesced: Awaited<ReturnType<typeof coalescing>> | undefined;
if (runs("coalescing")) {
  coalesced = await coalescing();
  groups.push(coalesced.rows);
  printGroup(coalesced.rows);
}
let rejected: Row[] | undefined;
if (runs("rejection")) {
  rejected = await rejections();
  groups.push(rejected);
  printGroup(rejected);
}
let validated: Awaited<ReturnType<typeof validation>> | undefined;
let validationGroups: Row[][] = [];
if (runs("validation")) {
  validated = await validation();
  const rows = validated.rows;
  validationGroups = [...new Set(rows.map((row) => row.group))].map((group) =>
    rows.filter((row) => row.group === group),
  );
  for (const group of validationGroups) {
    groups.push(group);
    printGroup(group);
  }
}
let endpointRows: Row[] | undefined;
if (runs("endpoints")) {
  endpointRows = await endpoints();
  groups.push(endpointRows);
  printGroup(endpointRows);
}
let adaptiveRows: Row[] | undefined;
if (runs("adaptive")) {
  adaptiveRows = await adaptiveConcurrency();
  groups.push(adaptiveRows);
  printGroup(adaptiveRows);
}
if (runs("store")) {
  const stored = await storeCosts();
  if (typeof stored === "string") console.log(`\nstore group skipped: ${stored}`);
  else
    for (const group of stored) {
      groups.push(group);
      printGroup(group);
    }
}

// The comparisons the runtime is held to, as ratios within this run.
if (baseline?.ok === true) {
  const b = baseline;
  const median = (values: readonly number[]): number => {
    const sorted = [...values].sort((x, y) => x - y);
    const mid = sorted.length / 2;
    return (sorted[Math.ceil(mid) - 1]! + sorted[Math.floor(mid)]!) / 2;
  };
  const ratio = (r: Ratios): string =>
    `${r.median.toFixed(2)}× (${r.low.toFixed(2)}–${r.high.toFixed(2)})`;
  console.log(
    `\nthe runtime against ${b.commit.slice(0, 7)} (${b.subject.length > 60 ? `${b.subject.slice(0, 59)}…` : b.subject}), read into ${b.dir}${b.reused ? " earlier" : ""}`,
  );
  console.log(
    `  current ÷ baseline, the median of ${BASELINE_ROUNDS} rounds' ratios (lowest–highest round): 1.00 is the same cost, < 1 cheaper; wall time, then this process's CPU time`,
  );
  for (const { kind, comparisons: pairs } of comparisons) {
    for (const c of pairs) {
      const cpu = `${formatNs(median(c.current.cpuRounds))} ÷ ${formatNs(median(c.baseline.cpuRounds))}`;
      console.log(
        `  ${`${kind}, ${c.stack}`.padEnd(26)}  wall ${`${formatNs(c.current.nsPerCall)} ÷ ${formatNs(c.baseline.nsPerCall)}`.padEnd(17)} ${ratio(c.wall).padEnd(20)}  CPU ${cpu.padEnd(17)} ${ratio(c.cpu)}`,
      );
    }
  }
}
if (["happy", "coalescing", "rejection", "endpoints", "adaptive"].some((g) => runs(g as Group))) {
  console.log("\nresgen against the libraries (how many times cheaper resgen is; > 1 is better)");
}
for (const [index, kind] of [
  [0, "no-op"],
  [1, "yield"],
] as const) {
  const g = happy[index];
  if (g === undefined) continue;
  const full = ns(g, "resgen full stack");
  const overhead = (full - ns(g, "bare await fn()")) / ns(g, "bare await fn()");
  console.log(
    `  ${kind}: full stack against the minimum wrapper ${(full / ns(g, "minimum wrapper (clock, race, outcome)")).toFixed(1)}× its cost (the minimum's own overhead over a bare await: ${((ns(g, "minimum wrapper (clock, race, outcome)") - ns(g, "bare await fn()")) / ns(g, "bare await fn()")).toFixed(1)}×)`,
  );
  console.log(
    `  ${kind}: full stack vs cockatiel full stack ${(ns(g, "cockatiel wrap(bulkhead, retry, breaker, timeout)") / full).toFixed(1)}×, vs opossum fire() ${(ns(g, "opossum fire() (timeout, capacity)") / full).toFixed(1)}×, vs opossum breaker alone ${(ns(g, "opossum breaker (timeout off)") / full).toFixed(1)}×; overhead over a bare await ${overhead.toFixed(1)}× its cost`,
  );
}
for (const [index, kind] of [
  [0, "no-op"],
  [1, "yield"],
] as const) {
  const g = happy[index];
  if (g === undefined) continue;
  console.log(
    `  ${kind}: full stack with a classify hook ${(ns(g, "resgen full stack, classify hook") / ns(g, "resgen full stack")).toFixed(2)}× the full stack without one`,
  );
  const plain = ns(g, "resgen breaker");
  console.log(
    `  ${kind}: breaker with openFor backoff ${(ns(g, "resgen breaker, openFor backoff") / plain).toFixed(2)}× the plain breaker's cost, isolated then released ${(ns(g, "resgen breaker, isolated then released") / plain).toFixed(2)}×`,
  );
  console.log(
    `  ${kind}: a rate limit costs ${(ns(g, "resgen rate limit") / ns(g, "resgen, nothing configured")).toFixed(2)}× a call with nothing configured`,
  );
  const nothing = ns(g, "resgen, nothing configured");
  console.log(
    `  ${kind}: chaos disabled costs ${(ns(g, "resgen, chaos disabled") / nothing).toFixed(2)}× a call with nothing configured, drawing at rate 0 ${(ns(g, "resgen, chaos drawing at rate 0") / nothing).toFixed(2)}×`,
  );
}
if (coalesced !== undefined) {
  const c = coalesced.rows;
  const sent = coalesced.sent;
  const perBurst = (name: string): string => {
    const s = sent[name]!;
    return (s.requests / s.bursts).toFixed(2);
  };
  console.log(
    `  coalescing: a burst of ${BURST} identical calls costs ${(ns(c, "resgen full stack, coalesce: true") / ns(c, "resgen full stack, no coalesce")).toFixed(2)}× the same burst uncoalesced, sending ${perBurst("coalesced")} request per burst instead of ${perBurst("plain")}; opossum's coalesced burst costs ${(ns(c, "opossum fire(), coalesce (reset on settle)") / ns(c, "resgen full stack, coalesce: true")).toFixed(1)}× resgen's (${perBurst("opossum")} requests per burst)`,
  );
}
if (rejected !== undefined) {
  const r = rejected;
  console.log(
    `  breaker open: vs cockatiel ${(ns(r, "cockatiel, breaker open") / ns(r, "resgen, breaker open")).toFixed(1)}×, vs opossum ${(ns(r, "opossum, breaker open") / ns(r, "resgen, breaker open")).toFixed(1)}×`,
  );
  console.log(
    `  bulkhead full: vs cockatiel ${(ns(r, "cockatiel, bulkhead full") / ns(r, "resgen, bulkhead full")).toFixed(1)}×, vs opossum ${(ns(r, "opossum, capacity full") / ns(r, "resgen, bulkhead full")).toFixed(1)}×`,
  );
}

if (adaptiveRows !== undefined) {
  for (const kind of ["no-op", "yield"] as const) {
    const a = adaptiveRows;
    console.log(
      `  ${kind}: full stack with an adaptive bulkhead ${(ns(a, `resgen full stack, adaptive bulkhead (${kind})`) / ns(a, `resgen full stack, static bulkhead (${kind})`)).toFixed(2)}× the full stack with the static one`,
    );
  }
}
if (endpointRows !== undefined) {
  const e = endpointRows;
  const single = ns(e, "resgen full stack");
  console.log(
    `  endpoints: two endpoints cost ${(ns(e, "resgen full stack, two endpoints") / single).toFixed(2)}× the single-endpoint full stack (round-robin ${(ns(e, "resgen full stack, two endpoints, round-robin") / single).toFixed(2)}×); a list of one ${(ns(e, "resgen full stack, a list of one endpoint") / single).toFixed(2)}×`,
  );
}

if (validated !== undefined) {
  const costs = validated.costs;
  console.log(
    "\nresponse validation: a call with validate: response against the same call cast (in-memory fetch), and the validator alone against the JSON.parse before it",
  );
  validationGroups.forEach((rows, i) => {
    const cast = ns(rows, "call, cast (default)");
    const checked = ns(rows, "call, validate: response");
    const cost = costs[i]!;
    console.log(
      `  ${cost.items} item${cost.items === 1 ? "" : "s"} (${cost.bytes} bytes): call ${(checked / cast).toFixed(2)}×; the validator ${formatNs(cost.validateNs)} against JSON.parse ${formatNs(cost.parseNs)}, so parse + validate ${((cost.parseNs + cost.validateNs) / cost.parseNs).toFixed(2)}× parse alone`,
    );
  });
}

const heap = runs("heap") ? await memory() : undefined;
if (heap === null) {
  console.log("\nheap: skipped (run with node --expose-gc --import tsx bench/run.ts)");
} else if (heap !== undefined) {
  console.log("\nheap (1,000 breakers; one breaker after 10^6 no-op calls)");
  for (const h of heap) {
    console.log(
      `  ${h.name.padEnd(42)}  ${Math.round(h.bytesPerBreaker).toString().padStart(6)} B per breaker  ${h.bytesPerCall.toFixed(2).padStart(6)} B per call`,
    );
  }
}
for (const b of opossumBreakers) b.shutdown();
const seconds = (performance.now() - started) / 1_000;
console.log(`\n${seconds.toFixed(0)} s`);

if (args.has("--save")) {
  const dir = join(here, "results");
  mkdirSync(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const file = join(dir, `bench-${stamp}.json`);
  writeFileSync(
    file,
    `${JSON.stringify({ date: new Date().toISOString(), machine, versions, batch: BATCH, quick, only: only || null, baseline: baseline === undefined ? null : baseline.ok ? { rev: baseline.rev, commit: baseline.commit, comparisons } : { rev: baseline.rev, skipped: baseline.reason }, rows: groups.flat(), validatorCosts: validated?.costs ?? null, heap: heap ?? null, seconds }, null, 2)}\n`,
  );
  console.log(`saved ${file}`);
}
process.exit(0);
