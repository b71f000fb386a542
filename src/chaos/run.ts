/**
 * Runs one drill: the generated stack (`createDependency` with the settings a generated client
 * passes) on a virtual clock, its requests over real loopback sockets to the drill server.
 *
 * Time moves only when everything is still: every request sent is either parked at the server
 * or settled at the client (its body read to the end, or its fetch failed). Then the earliest
 * thing due happens: the stack's timers first, then a new call, then one parked response, in a
 * fixed order, so the same seed gives the same drill however the sockets are scheduled. A
 * second of policy time costs no second of real time: a 30s open period passes in one step.
 */
import { performance } from "node:perf_hooks";
import type { ResolvedOperation, ResolvedPolicy } from "../model/resolved.js";
import { dependencySettings, operationSettings } from "../emit/client.js";
import {
  createDependency,
  createMemoryStore,
  createVirtualClock,
  createSeededRandom,
  httpIdentity,
  pathSegment,
  sendHttp,
  type CallOptions,
  type Clock,
  type DependencySettings,
  type HttpRequest,
  type OperationSettings,
  type ResilienceEvent,
  type SharedStore,
  type TimerHandle,
  type Transport,
  type VirtualClock,
} from "../../templates/runtime/index.js";
import type { Drill } from "./drills.js";
import { sampleValue } from "./drills.js";
import {
  ATTEMPT_HEADER,
  CALL_HEADER,
  REQUEST_HEADER,
  startDrillServer,
  type DrillServer,
} from "./server.js";

/** Real milliseconds a drill may wait for its sockets to be still before it gives up. */
export const STALL_MS = 30_000;
/** Distinct request identities the calls cycle through, so a stale cache has entries to serve. */
const KEYS = 8;

export interface Transition {
  readonly from: string;
  readonly to: string;
  /** Virtual milliseconds since the drill began. */
  readonly atMs: number;
}

/** What one drill measured, from the stack's events and the server's count. */
export interface Measured {
  readonly calls: number;
  readonly outcomes: {
    readonly success: number;
    readonly fallback: number;
    readonly failure: number;
  };
  /** Attempts the stack started, per call. */
  readonly attempts: { readonly total: number; readonly max: number };
  /** Attempts that succeeded (they earn the retry budget tokens). */
  readonly successfulAttempts: number;
  /** Each call's time from start to settlement, in virtual milliseconds, sorted. */
  readonly latencies: readonly number[];
  readonly transitions: readonly Transition[];
  readonly fallbacks: Readonly<Record<string, number>>;
  readonly rejected: {
    readonly breaker: number;
    readonly bulkhead: number;
    readonly budget: number;
    readonly rateLimit: number;
  };
  /** Retry budget tokens at the start, the lowest seen, and at the end; null without a budget. */
  readonly budget: { readonly start: number; readonly min: number; readonly end: number } | null;
  /** Requests that reached the server. */
  readonly requests: number;
  /** Virtual milliseconds the drill covered. */
  readonly virtualMs: number;
  /**
   * Every step a rate limit kept in a store (`store: redis`) took, with the drill's time it was
   * taken at and what the store answered, so the answers can be replayed against the policy's
   * rate (chaos.ts, the limit promise); empty for a limit in memory or none.
   */
  readonly limitSteps: readonly LimitStep[];
}

/** One step of a rate limit kept in a store, as the drill saw it. */
export type LimitStep =
  | {
      readonly kind: "take";
      readonly key: string;
      /** Virtual milliseconds of the drill's clock when the step ran. */
      readonly atMs: number;
      /** The server's pause the permit is asked for after (ms). */
      readonly offsetMs: number;
      /** The longest wait the attempt accepts (ms). */
      readonly boundMs: number;
      readonly granted: boolean;
      readonly waitMs: number;
    }
  | { readonly kind: "refund"; readonly key: string; readonly atMs: number };

/** How a drill is run: the store its stack is given, on the drill's clock (tests replace it). */
export interface DrillRig {
  readonly store?: (clock: Clock) => SharedStore;
}

/** A clock that knows when its next timer is due, over a virtual clock. */
interface TrackedClock extends Clock {
  nextDue(): number;
}

function trackedClock(clock: VirtualClock): TrackedClock {
  const due = new Map<TimerHandle, number>();
  return {
    now: () => clock.now(),
    wallTime: () => clock.wallTime?.() ?? clock.now(),
    setTimer(callback, delayMs) {
      const at = clock.now() + Math.max(0, delayMs);
      const handle: TimerHandle = clock.setTimer(() => {
        due.delete(handle);
        callback();
      }, delayMs);
      due.set(handle, at);
      return handle;
    },
    clearTimer(handle) {
      due.delete(handle);
      clock.clearTimer(handle);
    },
    nextDue() {
      let next = Infinity;
      for (const at of due.values()) if (at < next) next = at;
      return next;
    },
  };
}

/** Which requests are on the move: sent and not yet parked, or released and not yet settled. */
class Requests {
  #next = 0;
  readonly #moving = new Set<number>();
  readonly #settled = new Set<number>();

  sent(): number {
    const id = ++this.#next;
    this.#moving.add(id);
    return id;
  }
  parked(id: number): void {
    this.#moving.delete(id);
  }
  released(id: number): void {
    if (!this.#settled.has(id)) this.#moving.add(id);
  }
  settled(id: number): void {
    this.#settled.add(id);
    this.#moving.delete(id);
  }
  get moving(): number {
    return this.#moving.size;
  }
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Runs `drill` against a fresh stack and server; everything it opened is closed when it returns. */
export async function runDrill(
  policy: ResolvedPolicy,
  op: ResolvedOperation,
  drill: Drill,
  seed: number,
  rig: DrillRig = {},
): Promise<Measured> {
  const virtual = createVirtualClock();
  const clock = trackedClock(virtual);
  const requests = new Requests();
  const server = await startDrillServer({
    now: () => virtual.now(),
    decide: drill.decide,
    parked: (id) => requests.parked(id),
  });
  try {
    const store = (rig.store ?? ((c: Clock) => createMemoryStore({ clock: c })))(clock);
    return await drive(policy, op, drill, seed, { virtual, clock, requests, server, store });
  } finally {
    await server.close();
  }
}

interface Rig {
  readonly virtual: VirtualClock;
  readonly clock: TrackedClock;
  readonly requests: Requests;
  readonly server: DrillServer;
  readonly store: SharedStore;
}

async function drive(
  policy: ResolvedPolicy,
  op: ResolvedOperation,
  drill: Drill,
  seed: number,
  rig: Rig,
): Promise<Measured> {
  const { virtual, clock, requests, server } = rig;
  const events = collect(clock);
  const http = policy.transport === "http";
  const limitSteps: Promise<LimitStep | undefined>[] = [];
  const dependency = createDependency(dependencySettings(policy) as DependencySettings, {
    clock,
    random: createSeededRandom(seed),
    observer: events.observe,
    // a rate limit or stale cache kept in Redis runs in a memory store on the drill's clock:
    // a drill never needs or touches a Redis server (docs/chaos.md, "Limits")
    store: recording(rig.store, clock, limitSteps),
  });
  const settings = operationSettings(op, http) as OperationSettings;
  const budgetStart = dependency.budget?.tokens;
  events.budget = () => dependency.budget?.tokens;

  const started: number[] = [];
  const ended: number[] = [];
  let issued = 0;
  let settledCalls = 0;
  const issue = (index: number): void => {
    started[index] = virtual.now();
    const done = (): void => {
      ended[index] = virtual.now();
      settledCalls++;
    };
    const { transport, options, identity } = callOf(policy, op, index, server.url, requests);
    dependency.call(settings, transport, options, identity).then(done, done);
  };

  const stallAt = (): number => performance.now() + STALL_MS;
  const still = async (): Promise<void> => {
    const limit = stallAt();
    // two quiet turns: a settled fetch's continuation may itself take a turn to send the next
    for (let quiet = 0; quiet < 2;) {
      await turn();
      if (requests.moving === 0) quiet++;
      else {
        quiet = 0;
        if (performance.now() > limit)
          throw new Error(
            `the ${drill.name} drill of ${policy.dependency}.${op.name} stalled: ${String(requests.moving)} request(s) neither parked nor settled after ${String(STALL_MS / 1000)}s`,
          );
      }
    }
  };

  for (;;) {
    await still();
    if (issued === drill.calls && settledCalls === drill.calls) break;
    const timer = clock.nextDue();
    const call = issued < drill.calls ? Math.round(issued * drill.intervalMs) : Infinity;
    const response = server.nextDue();
    const at = Math.min(timer, call, response);
    if (at === Infinity)
      throw new Error(
        `the ${drill.name} drill of ${policy.dependency}.${op.name} stopped with ${String(drill.calls - settledCalls)} call(s) unsettled and nothing due`,
      );
    if (timer === at) {
      await virtual.advanceTo(at);
      continue;
    }
    if (at > virtual.now()) await virtual.advanceTo(at);
    if (call === at) issue(issued++);
    else {
      const id = server.releaseNext();
      if (id !== undefined) requests.released(id);
    }
  }

  const latencies = started.map((s, i) => ended[i]! - s).sort((a, b) => a - b);
  return {
    ...events.result(),
    calls: drill.calls,
    latencies,
    budget:
      budgetStart === undefined
        ? null
        : {
            start: budgetStart,
            min: events.minTokens(budgetStart),
            end: dependency.budget!.tokens,
          },
    requests: server.received,
    virtualMs: virtual.now(),
    limitSteps: (await Promise.all(limitSteps)).filter((step) => step !== undefined),
  };
}

/**
 * `store`, with every rate-limit step it answers recorded at the drill's time: `steps` holds them
 * in the order they were asked for, which is the order the store runs them in, once each has
 * been answered.
 */
function recording(
  store: SharedStore,
  clock: Clock,
  steps: Promise<LimitStep | undefined>[],
): SharedStore {
  return {
    kind: store.kind,
    key: (...parts) => store.key(...parts),
    run(script, keys, args) {
      const atMs = clock.now();
      const key = keys[0] ?? "";
      const answer = store.run(script, keys, args);
      if (script.name === "rate-limit-refund" || script.name === "rate-limit-take")
        steps.push(
          answer.then(
            (result): LimitStep => {
              if (script.name === "rate-limit-refund") return { kind: "refund", key, atMs };
              const taken = result as { granted: boolean; waitMs: number };
              return {
                ...{ kind: "take", key, atMs, granted: taken.granted, waitMs: taken.waitMs },
                ...{ offsetMs: Number(args[2] ?? 0), boundMs: Number(args[3] ?? 0) },
              };
            },
            () => undefined,
          ),
        );
      return answer;
    },
  };
}

/** The observer of a drill and what it counts. */
function collect(clock: Clock) {
  const outcomes = { success: 0, fallback: 0, failure: 0 };
  const perCall = new Map<number, number>();
  const transitions: Transition[] = [];
  const fallbacks: Record<string, number> = {};
  const rejected = { breaker: 0, bulkhead: 0, budget: 0, rateLimit: 0 };
  let successfulAttempts = 0;
  let lowest = Infinity;
  const state = {
    budget: (): number | undefined => undefined,
    observe: (event: ResilienceEvent): void => {
      const tokens = state.budget();
      if (tokens !== undefined && tokens < lowest) lowest = tokens;
      switch (event.type) {
        case "call-end":
          outcomes[event.outcome]++;
          break;
        case "attempt-start":
          perCall.set(event.call, (perCall.get(event.call) ?? 0) + 1);
          break;
        case "attempt-end":
          if (event.outcome === "success") successfulAttempts++;
          break;
        case "breaker-transition":
          transitions.push({ from: event.from, to: event.to, atMs: clock.now() });
          break;
        case "fallback-served":
          fallbacks[event.fallback] = (fallbacks[event.fallback] ?? 0) + 1;
          break;
        case "breaker-rejected":
          rejected.breaker++;
          break;
        case "bulkhead-rejected":
          rejected.bulkhead++;
          break;
        case "budget-exhausted":
          rejected.budget++;
          break;
        case "rate-limit-rejected":
          rejected.rateLimit++;
          break;
        default:
          break;
      }
    },
    minTokens: (start: number): number => Math.min(start, lowest),
    result: () => {
      let total = 0;
      let max = 0;
      for (const n of perCall.values()) {
        total += n;
        if (n > max) max = n;
      }
      return {
        outcomes,
        attempts: { total, max },
        successfulAttempts,
        transitions,
        fallbacks,
        rejected,
      };
    },
  };
  return state;
}

interface DrillCall {
  readonly transport: Transport<unknown>;
  readonly options: CallOptions;
  readonly identity: string | (() => Promise<string>) | undefined;
}

/**
 * One call as the generated client makes it: the request it builds, `sendHttp` as its
 * transport, the identity its stale fallback or coalescing needs, and a provided fallback where
 * the policy asks the caller for one. A function transport is drilled with a function that
 * sends the same kind of request to the drill server with the attempt's signal, failing as an
 * HTTP client does. The only change is the fetch, which tags each request with the drill's call
 * and attempt numbers and reads the body to its end before the stack sees the response.
 */
function callOf(
  policy: ResolvedPolicy,
  op: ResolvedOperation,
  index: number,
  baseUrl: string,
  requests: Requests,
): DrillCall {
  const key = index % KEYS;
  const http = policy.transport === "http";
  const body = op.body === undefined ? undefined : sampleBody(op, policy, key);
  const stale = op.fallback?.kind === "stale" ? op.fallback : undefined;
  const request: HttpRequest = {
    baseUrl,
    method: http ? (op.method ?? "GET") : "POST",
    path: http ? pathOf(op, key) : `/${encodeURIComponent(op.name)}`,
    ...(http && stale !== undefined ? { vary: stale.vary } : {}),
    ...(body === undefined ? {} : { body }),
    responseType: op.response === undefined ? "none" : "json",
    maxResponseBytes: policy.maxResponseBytes,
  };
  const transport: Transport<unknown> = (ctx) =>
    sendHttp({ ...request, fetch: taggedFetch(index, ctx.attempt, requests) }, ctx);
  const provided =
    op.fallback?.kind === "provided" ||
    (op.fallback?.kind === "stale" && op.fallback.otherwise?.kind === "provided");
  const answer = sampleValue(op.response, policy.schemas);
  const options: CallOptions = {
    ...(provided ? { fallback: () => answer } : {}),
    // a function operation's stale entries are told apart by its input, or by cacheKey without one
    ...(!http && stale !== undefined && body === undefined ? { cacheKey: `k${String(key)}` } : {}),
  } as unknown as CallOptions;
  const identity = http
    ? stale !== undefined || op.coalesce
      ? () => httpIdentity(request)
      : undefined
    : stale !== undefined && body !== undefined
      ? JSON.stringify(body)
      : undefined;
  return { transport, options, identity };
}

function pathOf(op: ResolvedOperation, key: number): string {
  return (op.path ?? "/").replace(/\{([^{}]*)\}/g, (_, name: string) => {
    const param = op.params.find((p) => p.name === name);
    const value =
      param?.enum?.[0] ??
      (param?.type === "integer" || param?.type === "number"
        ? key + 1
        : param?.type === "boolean"
          ? true
          : `${name}-${String(key)}`);
    return pathSegment(name, value);
  });
}

function sampleBody(op: ResolvedOperation, policy: ResolvedPolicy, key: number): unknown {
  const value = sampleValue(op.body, policy.schemas);
  // the key varies the body, so the calls of a function operation have several identities
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? { ...value, drillKey: key }
    : value;
}

function taggedFetch(call: number, attempt: number, requests: Requests): typeof fetch {
  return async (input, init) => {
    const id = requests.sent();
    try {
      const headers = new Headers(init?.headers);
      headers.set(REQUEST_HEADER, String(id));
      headers.set(CALL_HEADER, String(call));
      headers.set(ATTEMPT_HEADER, String(attempt));
      const response = await fetch(input, { ...init, headers });
      const bytes = await response.arrayBuffer();
      const empty = response.status === 204 || response.status === 304;
      return new Response(empty ? null : bytes, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    } finally {
      requests.settled(id);
    }
  };
}
