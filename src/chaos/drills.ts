/**
 * The five drills: what the dependency does to each request, decided from the seed, the call
 * and attempt numbers and the drill's virtual time, never from the order requests arrive in, so
 * concurrency cannot change a drill's result. Their phases are sized from the policy: the slow
 * drill answers after twice the attempt timeout, flapping alternates over the breaker's window
 * and open period. Fault injection of this kind is what Polly's chaos strategies (Simmy) and
 * Istio's `fault` (delay, abort) do to live traffic; here it runs on loopback, against the same
 * stack a generated client runs.
 */
import { formatMs } from "../language/durations.js";
import type { ResolvedOperation, ResolvedPolicy } from "../model/resolved.js";
import { createSeededRandom } from "../../templates/runtime/index.js";
import type { Arrival, Behaviour } from "./server.js";

export const DRILL_NAMES = ["slow", "down", "retry-after", "flapping", "partial"] as const;
export type DrillName = (typeof DRILL_NAMES)[number];

/** Calls per drill unless `--calls` says otherwise. */
export const DEFAULT_CALLS = 200;
/** The call rate of a policy that declares no `latency.rps`. */
export const DEFAULT_RPS = 100;
/** The share of the slow, down and retry-after drills that is healthy first (fills a stale cache). */
const WARM_SHARE = 0.1;
/** The share of attempts the partial drill fails. */
export const PARTIAL_SHARE = 0.2;
/** What the retry-after drill asks for, in seconds. */
export const RETRY_AFTER_S = 1;
/** Healthy latency of a policy that declares none. */
const DEFAULT_LATENCY_MS = 10;

export interface Drill {
  readonly name: DrillName;
  /** What the dependency does, in words. */
  readonly description: string;
  readonly calls: number;
  /** Virtual milliseconds between one call's start and the next's. */
  readonly intervalMs: number;
  readonly decide: (arrival: Arrival) => Behaviour;
}

export interface DrillOptions {
  readonly calls: number;
  readonly seed: number;
}

/** The drills of one operation, in {@link DRILL_NAMES} order. */
export function planDrills(
  policy: ResolvedPolicy,
  op: ResolvedOperation,
  options: DrillOptions,
): Drill[] {
  const rps = policy.latency.rps ?? DEFAULT_RPS;
  const intervalMs = 1000 / rps;
  const { calls, seed } = options;
  const durationMs = calls * intervalMs;
  const warmMs = Math.round(durationMs * WARM_SHARE);
  const body = JSON.stringify(sampleValue(op.response, policy.schemas) ?? null);
  const text = op.response === undefined ? "" : body;
  const healthy = (arrival: Arrival, index: number): Behaviour => ({
    kind: "answer",
    status: 200,
    latencyMs: healthyLatency(policy, requestRandom(seed, index, arrival)()),
    body: text,
  });
  const from = `from ${formatMs(warmMs)}`;
  const slowMs = 2 * op.timeout.attemptMs;
  const drills: Drill[] = [
    {
      name: "slow",
      description: `${from} every attempt takes ${formatMs(slowMs)}, twice the attempt timeout`,
      calls,
      intervalMs,
      decide: (a) =>
        a.at < warmMs
          ? healthy(a, 0)
          : { kind: "answer", status: 200, latencyMs: slowMs, body: text },
    },
    {
      name: "down",
      description: `${from} every connection is closed unanswered`,
      calls,
      intervalMs,
      decide: (a) => (a.at < warmMs ? healthy(a, 1) : { kind: "reset" }),
    },
    {
      name: "retry-after",
      description: `${from} every attempt answers 503 with Retry-After: ${String(RETRY_AFTER_S)}`,
      calls,
      intervalMs,
      decide: (a) =>
        a.at < warmMs
          ? healthy(a, 2)
          : {
              kind: "answer",
              status: 503,
              latencyMs: 0,
              body: '{"error":"unavailable"}',
              retryAfterS: RETRY_AFTER_S,
            },
    },
    flapping(policy, options, (a) => healthy(a, 3)),
    {
      name: "partial",
      description: `${String(PARTIAL_SHARE * 100)}% of attempts answer 503, the rest as healthy`,
      calls,
      intervalMs,
      decide: (a) =>
        requestRandom(seed, 4, a)() < PARTIAL_SHARE
          ? { kind: "answer", status: 503, latencyMs: 0, body: '{"error":"unavailable"}' }
          : healthy(a, 5),
    },
  ];
  return drills;
}

/**
 * Down for one breaker window, up for one open period, twice, after a healthy window: the
 * breaker should open in each down phase and close again after its open period. Calls come at
 * the policy's rate, slowed to spread the drill's calls over its length, but never so slow that
 * the breaker's window sees fewer than twice its minimum calls. Without a breaker the phases
 * are quarters of the drill.
 */
function flapping(
  policy: ResolvedPolicy,
  options: DrillOptions,
  healthy: (a: Arrival) => Behaviour,
): Drill {
  const rps = policy.latency.rps ?? DEFAULT_RPS;
  const breaker = policy.breaker;
  if (breaker === null) {
    const quarter = (options.calls * 1000) / rps / 4;
    return {
      name: "flapping",
      description: `up and down every ${formatMs(Math.round(quarter))}`,
      calls: options.calls,
      intervalMs: 1000 / rps,
      decide: (a) => (Math.floor(a.at / quarter) % 2 === 1 ? { kind: "reset" } : healthy(a)),
    };
  }
  const downMs =
    breaker.window.kind === "time"
      ? breaker.window.durationMs
      : Math.max(1000, Math.ceil((breaker.window.calls * 1000) / rps));
  const upMs = breaker.openForMs;
  const lengthMs = downMs + 2 * (downMs + upMs);
  const floorRps = (2 * breaker.minCalls * 1000) / downMs;
  const rate = Math.min(rps, Math.max((options.calls * 1000) / lengthMs, floorRps));
  const calls = Math.ceil((lengthMs * rate) / 1000);
  return {
    name: "flapping",
    description: `up ${formatMs(downMs)}, then down ${formatMs(downMs)} and up ${formatMs(upMs)}, twice; ${String(round1(rate))} calls/s`,
    calls,
    intervalMs: 1000 / rate,
    decide: (a) => {
      if (a.at < downMs) return healthy(a);
      const phase = (a.at - downMs) % (downMs + upMs);
      return phase < downMs ? { kind: "reset" } : healthy(a);
    },
  };
}

/** A generator of its own for each request, keyed by the seed, the drill's stream, call and attempt. */
function requestRandom(seed: number, stream: number, arrival: Arrival): () => number {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b);
  for (const n of [stream, arrival.call, arrival.attempt]) {
    h = Math.imul(h ^ n, 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return createSeededRandom(h >>> 0);
}

/**
 * A healthy latency: the policy's declared quantiles joined by straight lines (half of p50 at
 * the bottom, p999 plus a fifth at the top), at `u` in [0, 1), in whole milliseconds.
 */
export function healthyLatency(policy: ResolvedPolicy, u: number): number {
  const l = policy.latency;
  const points: [number, number][] = [];
  if (l.p50Ms !== undefined) points.push([0, l.p50Ms / 2], [0.5, l.p50Ms]);
  if (l.p90Ms !== undefined) points.push([0.9, l.p90Ms]);
  if (l.p95Ms !== undefined) points.push([0.95, l.p95Ms]);
  if (l.p99Ms !== undefined) points.push([0.99, l.p99Ms]);
  if (l.p999Ms !== undefined) points.push([0.999, l.p999Ms], [1, l.p999Ms * 1.2]);
  if (points.length === 0) return DEFAULT_LATENCY_MS;
  if (points[0]![0] > 0) points.unshift([0, points[0]![1] / 2]);
  if (points[points.length - 1]![0] < 1) points.push([1, points[points.length - 1]![1] * 1.2]);
  for (let i = 1; i < points.length; i++) {
    const [q1, v1] = points[i]!;
    const [q0, v0] = points[i - 1]!;
    if (u <= q1) return Math.max(1, Math.round(v0 + ((u - q0) / (q1 - q0 || 1)) * (v1 - v0)));
  }
  return Math.max(1, Math.round(points[points.length - 1]![1]));
}

/** A small value of a schema (required properties only), for healthy answers and bodies. */
export function sampleValue(
  schema: unknown,
  schemas: Readonly<Record<string, unknown>>,
  depth = 0,
): unknown {
  if (typeof schema !== "object" || schema === null || depth > 8) return undefined;
  const s = schema as Record<string, unknown>;
  if (typeof s["$ref"] === "string") {
    const name = s["$ref"].replace(/^#\/schemas\//, "");
    return sampleValue(schemas[name], schemas, depth + 1);
  }
  if (Array.isArray(s["enum"]) && s["enum"].length > 0) return s["enum"][0];
  if ("const" in s) return s["const"];
  const type = Array.isArray(s["type"]) ? (s["type"] as unknown[])[0] : s["type"];
  switch (type) {
    case "object": {
      const out: Record<string, unknown> = {};
      const properties = (s["properties"] ?? {}) as Record<string, unknown>;
      for (const key of (s["required"] ?? []) as string[])
        out[key] = sampleValue(properties[key], schemas, depth + 1) ?? null;
      return out;
    }
    case "array":
      return [];
    case "string":
      return s["format"] === "date-time" ? "2026-01-01T00:00:00Z" : "x";
    case "integer":
    case "number":
      return 1;
    case "boolean":
      return true;
    case "null":
      return null;
    default:
      return undefined;
  }
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}
