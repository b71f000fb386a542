import {
  createDependency,
  createVirtualClock,
  ResilienceError,
  type Dependency,
  type DependencySettings,
  type FallbackSettings,
  type OperationSettings,
  type ResilienceEvent,
  type SharedStore,
  type StoreScript,
  type VirtualClock,
  StoreUnavailableError,
} from "../../templates/runtime/index.js";

export const breakerSettings = {
  failureRate: 0.5,
  slowCall: null,
  window: { kind: "time", durationMs: 10_000, buckets: 10 },
  minCalls: 10,
  openForMs: 30_000,
  halfOpen: { maxCalls: 3, successes: 3 },
} as const satisfies DependencySettings["breaker"];

export function dependencySettings(
  overrides: Partial<DependencySettings> = {},
): DependencySettings {
  return {
    name: "payments",
    deadline: null,
    breaker: null,
    bulkhead: null,
    budget: null,
    ...overrides,
  };
}

export function operation<F extends FallbackSettings | null = null>(
  overrides: Partial<OperationSettings<F>> = {},
): OperationSettings<F> {
  return {
    name: "getCharge",
    repeatable: true,
    idempotencyKey: null,
    timeout: { attemptMs: 250, totalMs: 1_000 },
    retry: {
      maxAttempts: 3,
      backoff: { baseMs: 50, capMs: 1_000, multiplier: 2, jitter: "none" },
      on: ["timeout", "network", 429, 500, 502, 503, 504],
      retryAfter: { maxMs: null },
    },
    hedge: null,
    fallback: null as F,
    ...overrides,
  };
}

export interface Harness {
  readonly clock: VirtualClock;
  readonly dep: Dependency;
  readonly events: ResilienceEvent[];
}

export function harness(overrides: Partial<DependencySettings> = {}): Harness {
  const clock = createVirtualClock(1_000);
  const events: ResilienceEvent[] = [];
  const dep = createDependency(dependencySettings(overrides), {
    clock,
    random: () => 0.5,
    observer: (e) => events.push(e),
  });
  return { clock, dep, events };
}

/** Watches a promise without awaiting it, recording when (in virtual time) it settled. */
export interface Tracked<T> {
  settled: boolean;
  at: number;
  value: T | undefined;
  error: unknown;
}

export function track<T>(promise: Promise<T>, clock: VirtualClock): Tracked<T> {
  const t: Tracked<T> = { settled: false, at: Number.NaN, value: undefined, error: undefined };
  promise.then(
    (value) => Object.assign(t, { settled: true, at: clock.now(), value }),
    (error: unknown) => Object.assign(t, { settled: true, at: clock.now(), error }),
  );
  return t;
}

export function httpFailure(
  status: number,
  transient = true,
  headers: Record<string, string> = {},
  body = "",
): ResilienceError {
  return new ResilienceError({
    kind: "http",
    message: `status ${status}`,
    status,
    headers,
    body,
    transient,
  });
}

/** A transport response that settles after `ms` of virtual time. */
export function after<T>(clock: VirtualClock, ms: number, outcome: () => T): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    clock.setTimer(() => {
      try {
        resolve(outcome());
      } catch (error) {
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a transport fails with whatever it threw, and tests check the runtime passes that value on unchanged
        reject(error);
      }
    }, ms);
  });
}

export const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

/**
 * A store over another that records the name of every step it is asked to run, and fails them
 * all, as a Redis server that is down does, while `down`.
 */
export class CountingStore implements SharedStore {
  readonly kind = "redis";
  readonly steps: string[] = [];
  down = false;
  readonly #inner: SharedStore;
  constructor(inner: SharedStore) {
    this.#inner = inner;
  }
  key(...parts: readonly string[]): string {
    return this.#inner.key(...parts);
  }
  run<R>(script: StoreScript<R>, keys: readonly string[], args: readonly (string | number)[]) {
    this.steps.push(script.name);
    if (this.down) return Promise.reject(new StoreUnavailableError("connection refused"));
    return this.#inner.run(script, keys, args);
  }
}
