// Simulations of the runtime in virtual time. Each function drives the real runtime primitives
// (backoff, retry budget, circuit breaker, composed stack) with a virtual clock and a seeded
// random source, so every figure is reproducible. `bench/simulate.ts` prints them; the tests in
// test/runtime/simulations.test.ts assert them within tolerances.
import {
  backoffDelay,
  createDependency,
  createSeededRandom,
  createVirtualClock,
  ResilienceError,
  type BackoffSettings,
  type BreakerStateName,
  type Jitter,
  type OperationSettings,
} from "../templates/runtime/index.js";

/** Options of {@link retryStorm}. */
export interface RetryStormOptions {
  /** Clients that fail at the same instant. */
  readonly clients: number;
  /** Which retry to look at (1-based). */
  readonly retry: number;
  /** Backoff base, in milliseconds. */
  readonly baseMs: number;
  /** Backoff cap, in milliseconds. */
  readonly capMs: number;
  /** Width of the window, in milliseconds. */
  readonly windowMs: number;
  /** Seed of the random source. */
  readonly seed: number;
}

/** Busiest window per jitter kind. */
export type RetryStormResult = Record<Jitter, number>;

/** Largest number of instants falling in any half-open window [t, t + windowMs). */
export function busiestWindow(instants: readonly number[], windowMs: number): number {
  const sorted = [...instants].sort((a, b) => a - b);
  let best = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while (sorted[end]! - sorted[start]! >= windowMs) start++;
    best = Math.max(best, end - start + 1);
  }
  return best;
}

/**
 * Many clients fail together and schedule the same retry: how many of them land in the busiest
 * window? Without jitter they all do; jitter spreads them out.
 */
export function retryStorm(options: RetryStormOptions): RetryStormResult {
  const result = {} as Record<Jitter, number>;
  for (const jitter of ["none", "full", "equal", "decorrelated"] as const) {
    const random = createSeededRandom(options.seed);
    const settings: BackoffSettings = {
      baseMs: options.baseMs,
      capMs: options.capMs,
      multiplier: 2,
      jitter,
    };
    const delays: number[] = [];
    for (let client = 0; client < options.clients; client++) {
      let previous = options.baseMs;
      let delay = 0;
      for (let n = 1; n <= options.retry; n++) {
        delay = backoffDelay(settings, n, previous, random);
        previous = delay;
      }
      delays.push(delay);
    }
    result[jitter] = busiestWindow(delays, options.windowMs);
  }
  return result;
}

/** Options of {@link outageAmplification}. */
export interface OutageOptions {
  readonly calls: number;
  readonly maxAttempts: number;
  /** Retry budget; `null` for none. */
  readonly budget: { readonly maxTokens: number; readonly tokenRatio: number } | null;
  readonly seed: number;
}

/** Attempts made during a total outage. */
export interface OutageResult {
  readonly calls: number;
  readonly attempts: number;
  /** attempts ÷ calls. */
  readonly amplification: number;
}

/** Sends `calls` calls, one after another, to a dependency that always fails, through the composed stack. */
export async function outageAmplification(options: OutageOptions): Promise<OutageResult> {
  const clock = createVirtualClock();
  const dep = createDependency(
    { name: "outage", deadline: null, breaker: null, bulkhead: null, budget: options.budget },
    { clock, random: createSeededRandom(options.seed) },
  );
  const op: OperationSettings<null> = {
    name: "get",
    repeatable: true,
    idempotencyKey: null,
    timeout: { attemptMs: 100, totalMs: 10_000 },
    retry: {
      maxAttempts: options.maxAttempts,
      backoff: { baseMs: 10, capMs: 200, multiplier: 2, jitter: "full" },
      on: ["timeout", "network", 503],
      retryAfter: null,
    },
    hedge: null,
    fallback: null,
  };
  let attempts = 0;
  const down = (): never => {
    attempts++;
    throw new ResilienceError({ kind: "http", message: "503", status: 503, headers: {}, body: "" });
  };
  for (let i = 0; i < options.calls; i++) {
    const call = dep.call(op, down).catch(() => undefined);
    await clock.runAll();
    await call;
  }
  return { calls: options.calls, attempts, amplification: attempts / options.calls };
}

/** Options of {@link breakerTrace}. */
export interface BreakerTraceOptions {
  /** Calls per second. */
  readonly rate: number;
  /** Simulated time, in milliseconds. */
  readonly durationMs: number;
  /** The dependency fails from this time on (milliseconds)… */
  readonly failFromMs: number;
  /** …until this time. */
  readonly recoverAtMs: number;
  /** Latency of every response, in milliseconds. */
  readonly latencyMs: number;
}

/** One breaker transition in the trace. */
export interface TraceEntry {
  /** Virtual time of the transition, in milliseconds. */
  readonly atMs: number;
  readonly from: BreakerStateName;
  readonly to: BreakerStateName;
  /** Window counts just before the transition. */
  readonly calls: number;
  readonly failures: number;
}

/** What happened to the calls and the breaker. */
export interface BreakerTraceResult {
  readonly transitions: readonly TraceEntry[];
  /** Calls that reached the dependency. */
  readonly attempts: number;
  /** Calls rejected by the open breaker. */
  readonly rejected: number;
  /** Calls that succeeded. */
  readonly succeeded: number;
}

/**
 * A steady stream of calls through the composed stack to a dependency that fails for a while:
 * failure rate ≥ 50 % over 10 s in 10 buckets, at least 20 calls, open for 30 s, 3 trials.
 */
export async function breakerTrace(options: BreakerTraceOptions): Promise<BreakerTraceResult> {
  const clock = createVirtualClock(0);
  const transitions: TraceEntry[] = [];
  const dep = createDependency(
    {
      name: "flaky",
      deadline: null,
      breaker: {
        failureRate: 0.5,
        slowCall: null,
        window: { kind: "time", durationMs: 10_000, buckets: 10 },
        minCalls: 20,
        openForMs: 30_000,
        halfOpen: { maxCalls: 3, successes: 3 },
      },
      bulkhead: null,
      budget: null,
    },
    {
      clock,
      observer: (event) => {
        if (event.type === "breaker-transition") {
          transitions.push({
            atMs: clock.now(),
            from: event.from,
            to: event.to,
            calls: event.window.calls,
            failures: event.window.failures,
          });
        }
      },
    },
  );
  const op: OperationSettings<null> = {
    name: "get",
    repeatable: true,
    idempotencyKey: null,
    timeout: { attemptMs: 1_000, totalMs: 2_000 },
    retry: null,
    hedge: null,
    fallback: null,
  };
  let attempts = 0;
  let rejected = 0;
  let succeeded = 0;
  const respond = (): Promise<string> => {
    attempts++;
    return new Promise<string>((resolve, reject) => {
      clock.setTimer(() => {
        const now = clock.now();
        if (now >= options.failFromMs && now < options.recoverAtMs) {
          reject(
            new ResilienceError({
              kind: "http",
              message: "500",
              status: 500,
              headers: {},
              body: "",
            }),
          );
        } else {
          resolve("ok");
        }
      }, options.latencyMs);
    });
  };
  const gapMs = 1_000 / options.rate;
  const pending: Promise<void>[] = [];
  for (let t = 0; t < options.durationMs; t += gapMs) {
    pending.push(
      dep.call(op, respond).then(
        () => {
          succeeded++;
        },
        (error: unknown) => {
          if (error instanceof ResilienceError && error.kind === "circuit-open") rejected++;
        },
      ),
    );
    await clock.advance(gapMs);
  }
  await clock.runAll();
  await Promise.all(pending);
  return { transitions, attempts, rejected, succeeded };
}

/** Options of {@link cascade}. */
export interface CascadeOptions {
  /** `naive`: the checkout awaits the dependency with no protection; `stack`: through the generated stack. */
  readonly mode: "naive" | "stack";
  /** Checkout requests per second. */
  readonly rate: number;
  /** Checkout requests served at once; a request finding the pool full is turned away (a failure). */
  readonly pool: number;
  /** Simulated time during which requests arrive, in milliseconds. */
  readonly durationMs: number;
  /** The dependency slows down from this time on (milliseconds). */
  readonly slowFromMs: number;
  /** Its latency while healthy (milliseconds; each response varies ±50 %). */
  readonly healthyMs: number;
  /** Its latency once slow (milliseconds; each response varies ±10 %). */
  readonly slowMs: number;
  /** The checkout's own work besides the dependency (milliseconds). */
  readonly workMs: number;
  readonly seed: number;
}

/** What the checkout service went through. */
export interface CascadeResult {
  readonly requests: number;
  /** Requests answered (with fresh or fallback recommendations). */
  readonly succeeded: number;
  /** succeeded ÷ requests. */
  readonly successRate: number;
  /** Requests turned away because the pool was full. */
  readonly rejected: number;
  /** Most checkout requests in flight at once. */
  readonly peakInFlight: number;
  /** Calls that reached the dependency once it was slow. */
  readonly slowCalls: number;
  /** Requests answered with the fallback instead of the dependency's data. */
  readonly degraded: number;
}

/**
 * The recommendations dependency of examples/checkout, as the generator resolves it (an
 * optional upsell: 250 ms attempt timeout, 600 ms in total, 30 concurrent calls, breaker at 50 %
 * over 10 s, empty list as fallback). Its read is hedged in the example; here it is a plain
 * call, so the figures show the timeout, bulkhead, breaker and fallback alone.
 */
export const cascadeDependency = {
  name: "recommendations",
  deadline: { propagate: true, marginMs: 10, header: "x-request-timeout-ms", format: "ms" },
  breaker: {
    failureRate: 0.5,
    slowCall: null,
    window: { kind: "time", durationMs: 10_000, buckets: 10 },
    minCalls: 20,
    openForMs: 30_000,
    halfOpen: { maxCalls: 3, successes: 3 },
  },
  bulkhead: { maxConcurrent: 30, maxQueue: 0, queueTimeoutMs: 0, overflow: "reject" },
  budget: { maxTokens: 100, tokenRatio: 0.1 },
} as const satisfies Parameters<typeof createDependency>[0];

const cascadeOperation = {
  name: "getRecommendations",
  repeatable: true,
  idempotencyKey: null,
  timeout: { attemptMs: 250, totalMs: 600 },
  retry: null,
  hedge: null,
  fallback: { kind: "value", value: [] },
} as const satisfies OperationSettings;

/**
 * A checkout service (a pool of `pool` concurrent requests, `rate` requests per second) calls an
 * optional dependency that slows from `healthyMs` to `slowMs` at `slowFromMs`. Naive calls hold a
 * pool slot for as long as the dependency takes, so the pool fills and checkout fails with it;
 * through the stack the attempt timeout, bulkhead and breaker bound the wait and the fallback
 * answers instead.
 */
export async function cascade(options: CascadeOptions): Promise<CascadeResult> {
  const clock = createVirtualClock(0);
  const random = createSeededRandom(options.seed);
  let slowCalls = 0;
  const recommendations = (): Promise<string[]> => {
    const slow = clock.now() >= options.slowFromMs;
    if (slow) slowCalls++;
    const latency = slow
      ? options.slowMs * (0.9 + 0.2 * random())
      : options.healthyMs * (0.5 + random());
    return new Promise((resolve) => clock.setTimer(() => resolve(["item"]), latency));
  };
  const dep = createDependency(cascadeDependency, { clock, random });
  const fetchRecommendations =
    options.mode === "naive"
      ? async (): Promise<boolean> => {
          await recommendations();
          return false;
        }
      : async (): Promise<boolean> =>
          (await dep.call(cascadeOperation, () => recommendations())).degraded;
  const work = (): Promise<void> =>
    new Promise((resolve) => clock.setTimer(resolve, options.workMs));

  let inFlight = 0;
  let peakInFlight = 0;
  let requests = 0;
  let rejected = 0;
  let succeeded = 0;
  let degraded = 0;
  const checkout = async (): Promise<void> => {
    requests++;
    if (inFlight >= options.pool) {
      rejected++;
      return;
    }
    inFlight++;
    peakInFlight = Math.max(peakInFlight, inFlight);
    try {
      await work();
      if (await fetchRecommendations()) degraded++;
      succeeded++;
    } finally {
      inFlight--;
    }
  };

  const gapMs = 1_000 / options.rate;
  const pending: Promise<void>[] = [];
  for (let t = 0; t < options.durationMs; t += gapMs) {
    pending.push(checkout());
    await clock.advance(gapMs);
  }
  await clock.runAll();
  await Promise.all(pending);
  return {
    requests,
    succeeded,
    successRate: succeeded / requests,
    rejected,
    peakInFlight,
    slowCalls,
    degraded,
  };
}

/** Options of {@link adaptiveTrace}. */
export interface AdaptiveTraceOptions {
  /** `static`: a fixed bulkhead of `maxConcurrent`; `adaptive`: the limit starts there and follows latency. */
  readonly mode: "static" | "adaptive";
  readonly maxConcurrent: number;
  /** Calls per second offered at time 0, rising linearly to `peakRate` at `rampMs`, then held. */
  readonly startRate: number;
  readonly peakRate: number;
  readonly rampMs: number;
  /** Simulated time during which calls arrive, in milliseconds. */
  readonly durationMs: number;
  /** The dependency's latency with `capacity` calls or fewer in flight (±20 % per response). */
  readonly serviceMs: number;
  /** Calls the dependency serves at once before each one slows (the knee). */
  readonly capacity: number;
  /** The dependency degrades to `degradedCapacity` from `degradeFromMs` until `degradeToMs`. */
  readonly degradedCapacity: number;
  readonly degradeFromMs: number;
  readonly degradeToMs: number;
  /** Attempt timeout, in milliseconds. */
  readonly attemptMs: number;
  /** Width of one row of the trace, in milliseconds. */
  readonly stepMs: number;
  readonly seed: number;
}

/** One row of {@link AdaptiveTraceResult.trace}: the end of a step. */
export interface AdaptiveTraceRow {
  readonly atMs: number;
  /** The bulkhead's limit at the end of the step. */
  readonly limit: number;
  /** Most calls in flight at the dependency during the step. */
  readonly inFlight: number;
  /** Mean latency of the calls completed in the step (milliseconds; 0 with none). */
  readonly latencyMs: number;
  /** Calls per second offered, answered, and turned away by the bulkhead during the step. */
  readonly offered: number;
  readonly answered: number;
  readonly rejected: number;
  /** Calls that timed out during the step. */
  readonly timedOut: number;
}

export interface AdaptiveTraceResult {
  readonly trace: readonly AdaptiveTraceRow[];
  readonly answered: number;
  readonly rejected: number;
  readonly timedOut: number;
  /** Times the limit changed (`bulkhead-limit-changed` events). */
  readonly limitChanges: number;
}

/**
 * A dependency whose latency rises with load: up to `capacity` calls in flight each take about
 * `serviceMs`; past the knee they share it, so each takes serviceMs × inFlight ÷ capacity (the
 * latency is fixed when the call arrives). A ramp of offered load pushes past the knee, then the
 * dependency loses capacity for a while and gets it back. A static bulkhead lets in flight what
 * its size allows, so latency climbs with it; an adaptive one (docs/runtime.md, "Adaptive
 * concurrency") cuts its limit when latency climbs past the long-term one and raises it again.
 */
/**
 * The scenario `npm run simulate` prints and the simulation tests check: a load that ramps from
 * 100 to 800 calls/s past a dependency whose knee is 20 calls in flight, which drops to 8 from
 * 40 s to 60 s and recovers (docs/runtime.md, "Adaptive concurrency").
 */
export const ADAPTIVE_SCENARIO = {
  maxConcurrent: 100,
  startRate: 100,
  peakRate: 800,
  rampMs: 20_000,
  durationMs: 80_000,
  serviceMs: 50,
  capacity: 20,
  degradedCapacity: 8,
  degradeFromMs: 40_000,
  degradeToMs: 60_000,
  attemptMs: 500,
  stepMs: 4_000,
  seed: 42,
} as const satisfies Omit<AdaptiveTraceOptions, "mode">;

export async function adaptiveTrace(options: AdaptiveTraceOptions): Promise<AdaptiveTraceResult> {
  const clock = createVirtualClock(0);
  const random = createSeededRandom(options.seed);
  let limitChanges = 0;
  const dep = createDependency(
    {
      name: "inventory",
      deadline: null,
      breaker: null,
      bulkhead: {
        maxConcurrent: options.maxConcurrent,
        maxQueue: 0,
        queueTimeoutMs: 0,
        overflow: "reject",
        adaptive:
          options.mode === "adaptive"
            ? {
                minLimit: 1,
                maxLimit: options.maxConcurrent * 2,
                smoothing: 0.2,
                tolerance: 1.5,
                windowMs: 1_000,
              }
            : null,
      },
      budget: null,
    },
    {
      clock,
      random,
      observer: (event) => {
        if (event.type === "bulkhead-limit-changed") limitChanges++;
      },
    },
  );
  const op: OperationSettings<null> = {
    name: "reserve",
    repeatable: true,
    idempotencyKey: null,
    timeout: { attemptMs: options.attemptMs, totalMs: options.attemptMs * 2 },
    retry: null,
    hedge: null,
    fallback: null,
  };
  let inFlight = 0;
  let step = { peak: 0, latency: 0, done: 0, offered: 0, rejected: 0, timedOut: 0 };
  const respond = (): Promise<string> => {
    inFlight++;
    if (inFlight > step.peak) step.peak = inFlight;
    const now = clock.now();
    const degraded = now >= options.degradeFromMs && now < options.degradeToMs;
    const capacity = degraded ? options.degradedCapacity : options.capacity;
    const latency = options.serviceMs * Math.max(1, inFlight / capacity) * (0.8 + 0.4 * random());
    return new Promise<string>((resolve) => {
      clock.setTimer(() => {
        inFlight--;
        resolve("ok");
      }, latency);
    });
  };
  const trace: AdaptiveTraceRow[] = [];
  let answered = 0;
  let rejected = 0;
  let timedOut = 0;
  const pending: Promise<void>[] = [];
  const perSecond = (n: number) => Math.round((n * 1_000) / options.stepMs);
  let nextRow = options.stepMs;
  let t = 0;
  while (t < options.durationMs) {
    const share = Math.min(1, t / options.rampMs);
    const rate = options.startRate + (options.peakRate - options.startRate) * share;
    const started = clock.now();
    step.offered++;
    const counted = step;
    pending.push(
      dep.call(op, respond).then(
        () => {
          answered++;
          counted.done++;
          counted.latency += clock.now() - started;
        },
        (error: unknown) => {
          if (error instanceof ResilienceError && error.kind === "bulkhead-full") {
            rejected++;
            counted.rejected++;
          } else {
            timedOut++;
            counted.timedOut++;
          }
        },
      ),
    );
    const gap = 1_000 / rate;
    await clock.advance(gap);
    t += gap;
    if (t >= nextRow) {
      trace.push({
        atMs: nextRow,
        limit: dep.bulkhead?.limit ?? 0,
        inFlight: step.peak,
        latencyMs: step.done === 0 ? 0 : step.latency / step.done,
        offered: perSecond(step.offered),
        answered: perSecond(step.done),
        rejected: perSecond(step.rejected),
        timedOut: perSecond(step.timedOut),
      });
      step = { peak: inFlight, latency: 0, done: 0, offered: 0, rejected: 0, timedOut: 0 };
      nextRow += options.stepMs;
    }
  }
  await clock.runAll();
  await Promise.all(pending);
  return { trace, answered, rejected, timedOut, limitChanges };
}
