/**
 * The istio target: per dependency, a VirtualService (networking.istio.io/v1) with one HTTP route
 * per operation (timeout, retries) and a DestinationRule with the connection pool (bulkhead),
 * outlier detection (the nearest thing to the breaker) and the retry budget. Field meanings follow
 * the published CRD schema and Envoy's route retry policy; docs/targets.md has the full table.
 */
import { stringify } from "yaml";
import { formatMs } from "../language/durations.js";
import { yamlHeader } from "../model/header.js";
import { moduleName } from "../model/identifiers.js";
import type { ResolvedOperation, ResolvedPolicy, RetryCondition } from "../model/resolved.js";
import {
  goDuration,
  kubernetesOf,
  MappingReport,
  noteApplicationOnly,
  resourceName,
  routedOperations,
  singleAttemptMs,
  sortedPolicies,
  type Route,
  type Target,
  type TargetContext,
  noteOpenBackoff,
  noteAdaptive,
  noteRateLimits,
  noteEndpoints,
} from "./report.js";

/** Envoy's fixed backoff shape: exponential with multiplier 2, capped at 10 × the base, full jitter. */
const ENVOY_MULTIPLIER = 2;
const ENVOY_CAP_FACTOR = 10;

/** Envoy's retry-on names, in the order they are written. */
const ORDER = [
  "connect-failure",
  "refused-stream",
  "reset",
  "unavailable",
  "resource-exhausted",
  "cancelled",
  "deadline-exceeded",
  "internal",
];

export const emitIstio: Target = (policies, ctx) => {
  const report = new MappingReport("istio", ctx);
  const files = new Map<string, string>();
  for (const policy of sortedPolicies(policies)) {
    const docs = istioDocuments(policy, report);
    const text = docs
      .map((d) => stringify(d, { sortMapEntries: true, lineWidth: 0 }))
      .join("---\n");
    files.set(
      `istio/${moduleName(policy.dependency)}.yaml`,
      yamlHeader(ctx.sourcePath(policy)) + text,
    );
  }
  return { files, diagnostics: report.diagnostics() };
};

function istioDocuments(policy: ResolvedPolicy, report: MappingReport): object[] {
  const { namespace, host } = kubernetesOf(policy);
  const metadata = {
    name: resourceName(policy.dependency),
    namespace,
    labels: { "app.kubernetes.io/managed-by": "resgen" },
  };

  const http: object[] = [];
  for (const { op, route } of routedOperations(policy))
    http.push(httpRoute(policy, op, route, host, report));
  for (const op of policy.operations) {
    if (!routedOperationNames(policy).has(op.name)) {
      report.noteSetting(
        policy,
        op,
        "RG401",
        "",
        "has no HTTP method and path and no gRPC method: it has no route, and its settings stay in the application",
      );
    }
  }
  // requests the policy does not describe keep Istio's defaults, rather than finding no route
  http.push({ name: "default", route: [{ destination: { host } }] });

  if (policy.deadline.propagate) {
    report.noteSection(
      policy,
      "RG414",
      "deadline.propagate",
      `routes enforce a fixed timeout and do not pass the remaining time in ${policy.deadline.header}; the application still propagates it`,
    );
  }

  const virtualService = {
    apiVersion: "networking.istio.io/v1",
    kind: "VirtualService",
    metadata,
    spec: { hosts: [host], http },
  };
  const trafficPolicy = destinationPolicy(policy, report);
  if (Object.keys(trafficPolicy).length === 0) return [virtualService];
  return [
    virtualService,
    {
      apiVersion: "networking.istio.io/v1",
      kind: "DestinationRule",
      metadata,
      spec: { host, trafficPolicy },
    },
  ];
}

const routedNames = new WeakMap<ResolvedPolicy, Set<string>>();
function routedOperationNames(policy: ResolvedPolicy): Set<string> {
  let names = routedNames.get(policy);
  if (!names)
    routedNames.set(policy, (names = new Set(routedOperations(policy).map((r) => r.op.name))));
  return names;
}

function httpRoute(
  policy: ResolvedPolicy,
  op: ResolvedOperation,
  route: Route,
  host: string,
  report: MappingReport,
): object {
  const uri = route.exact !== undefined ? { exact: route.exact } : { regex: route.regex };
  const base = {
    name: op.name,
    match: [{ uri, method: { exact: route.method } }],
    route: [{ destination: { host } }],
  };
  noteApplicationOnly(report, policy, op);

  const { retry, hedge } = op.plan;
  if (hedge) {
    report.noteSetting(
      policy,
      op,
      "RG406",
      "hedge",
      `Istio cannot hedge: the route makes one attempt of ${formatMs(singleAttemptMs(op))}; hedging (${hedge.maxAttempts} copies after ${formatMs(hedge.delayMs)}) stays in the application`,
    );
  }
  const retryOn = retry ? retryConditions(policy, op, route, retry.on, report) : [];
  if (!retry || retryOn.length === 0) {
    // attempts: 0 turns off the retries Istio would otherwise add by default
    return { ...base, timeout: goDuration(singleAttemptMs(op)), retries: { attempts: 0 } };
  }

  const b = retry.backoff;
  const differences: string[] = [];
  if (b.jitter !== "full") differences.push(`jitter is always full (policy: ${b.jitter})`);
  if (b.multiplier !== ENVOY_MULTIPLIER)
    differences.push(`the multiplier is always ${ENVOY_MULTIPLIER} (policy: ${b.multiplier})`);
  if (b.capMs !== b.baseMs * ENVOY_CAP_FACTOR)
    differences.push(
      `the cap is always ${ENVOY_CAP_FACTOR} × base = ${formatMs(b.baseMs * ENVOY_CAP_FACTOR)} (policy: ${formatMs(b.capMs)})`,
    );
  if (differences.length > 0) {
    report.noteSetting(
      policy,
      op,
      "RG408",
      "retry.backoff",
      `Envoy's backoff starts at ${formatMs(b.baseMs)}, but ${differences.join("; ")}`,
    );
  }
  if (retry.retryAfter) {
    report.noteSetting(
      policy,
      op,
      "RG410",
      "retry.retryAfter",
      "Retry-After is not read: Envoy keeps to its backoff schedule",
    );
  }
  if (op.idempotencyKey) {
    report.noteSetting(
      policy,
      op,
      "RG413",
      "",
      `retries repeat the request as sent: the application must set ${op.idempotencyKey.header} once per logical call`,
    );
  }
  return {
    ...base,
    timeout: goDuration(op.timeout.totalMs),
    retries: {
      // Istio counts retries, the policy counts attempts (the first included)
      attempts: retry.maxAttempts - 1,
      perTryTimeout: goDuration(op.timeout.attemptMs),
      retryOn: retryOn.join(","),
      backoff: goDuration(b.baseMs),
    },
  };
}

/** The policy's retryable outcomes as Envoy retry-on values, noting what changes meaning. */
function retryConditions(
  policy: ResolvedPolicy,
  op: ResolvedOperation,
  route: Route,
  on: readonly RetryCondition[],
  report: MappingReport,
): string[] {
  const names = new Set<string>();
  const statuses: number[] = [];
  const unmapped: number[] = [];
  const hasTimeout = on.includes("timeout");
  const hasNetwork = on.includes("network");
  if (hasNetwork) for (const n of ["connect-failure", "refused-stream", "reset"]) names.add(n);
  if (hasTimeout) names.add("reset");
  if (hasNetwork && route.grpc) names.add("unavailable");
  for (const c of on) {
    if (typeof c !== "number") continue;
    if (!route.grpc) statuses.push(c);
    else if (c === 429) names.add("resource-exhausted");
    else if (c === 502 || c === 503 || c === 504) names.add("unavailable");
    else unmapped.push(c);
  }
  if (hasTimeout !== hasNetwork) {
    report.noteSetting(
      policy,
      op,
      "RG409",
      "retry.on",
      `Envoy retries per-try timeouts and connection resets under one name (reset): asking for ${hasTimeout ? "timeout" : "network"} also retries ${hasTimeout ? "connection resets" : "per-try timeouts"}`,
    );
  }
  const translated = route.grpc
    ? on.filter((c): c is number => c === 429 || c === 502 || c === 503 || c === 504)
    : [];
  if (translated.length > 0) {
    const as = translated.map((c) => `${c} as ${c === 429 ? "RESOURCE_EXHAUSTED" : "UNAVAILABLE"}`);
    report.noteSetting(
      policy,
      op,
      "RG409",
      "retry.on",
      `the operation is a gRPC method, so statuses are retried as gRPC codes: ${as.join(", ")}`,
    );
  }
  if (unmapped.length > 0) {
    report.noteSetting(
      policy,
      op,
      "RG409",
      "retry.on",
      `${unmapped.join(", ")} ${unmapped.length === 1 ? "has" : "have"} no gRPC status Envoy can retry on; not retried by the mesh`,
    );
  }
  const ordered = ORDER.filter((n) => names.has(n));
  return [...ordered, ...[...new Set(statuses)].sort((a, b) => a - b).map(String)];
}

function destinationPolicy(policy: ResolvedPolicy, report: MappingReport): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const pool: Record<string, unknown> = {};
  const connect = policy.operations
    .map((o) => o.timeout.connectMs)
    .filter((v): v is number => v !== undefined);
  if (connect.length > 0) pool["tcp"] = { connectTimeout: goDuration(Math.max(...connect)) };

  noteRateLimits(report, "istio", policy);
  noteEndpoints(report, "istio", policy);
  noteAdaptive(report, "istio", policy);
  const bulkhead = policy.bulkhead;
  if (bulkhead) {
    const queue = Math.max(1, bulkhead.maxQueue);
    pool["http"] = { http2MaxRequests: bulkhead.maxConcurrent, http1MaxPendingRequests: queue };
    const differences = [
      bulkhead.maxQueue === 0
        ? "a queue of 0 cannot be said (Istio reads 0 as unlimited): 1 pending request is allowed"
        : `the ${bulkhead.maxQueue} pending requests wait for a connection, not for a permit`,
      ...(bulkhead.queueTimeoutMs > 0
        ? [`queueTimeout ${formatMs(bulkhead.queueTimeoutMs)} has no field`]
        : []),
      ...(bulkhead.overflow === "drop-oldest"
        ? ["overflow: drop-oldest has no field (Envoy rejects the newcomer)"]
        : []),
    ];
    report.noteSection(
      policy,
      "RG404",
      "bulkhead.maxQueue",
      `http2MaxRequests = ${bulkhead.maxConcurrent} limits requests in flight per client proxy; ${differences.join("; ")}`,
    );
  }
  if (Object.keys(pool).length > 0) out["connectionPool"] = pool;

  const breaker = policy.breaker;
  if (breaker) {
    const consecutive = Math.max(1, Math.ceil(breaker.failureRate * breaker.minCalls));
    const interval = breaker.window.kind === "time" ? breaker.window.durationMs : 10_000;
    out["outlierDetection"] = {
      consecutive5xxErrors: consecutive,
      interval: goDuration(interval),
      baseEjectionTime: goDuration(breaker.openForMs),
      maxEjectionPercent: 100,
    };
    const window =
      breaker.window.kind === "time"
        ? `over ${formatMs(breaker.window.durationMs)}`
        : `over ${breaker.window.calls} calls`;
    report.noteSection(
      policy,
      "RG402",
      "breaker",
      `the breaker (${Math.round(breaker.failureRate * 100)}% failures ${window}, at least ${breaker.minCalls} calls) becomes outlier detection: a host is ejected for ${formatMs(breaker.openForMs)} after ${consecutive} consecutive 5xx; no half-open trials`,
      "the breaker stays in the application's client; the mesh protects per host",
    );
    if (breaker.slowCall && policy.provenance["breaker.slowCall"]?.origin !== "derived")
      report.noteSection(
        policy,
        "RG403",
        "breaker.slowCall",
        `slow calls over ${formatMs(breaker.slowCall.durationMs)} are not failures to Envoy`,
      );
    noteOpenBackoff(report, "istio", policy, "RG402");
  }

  const budget = policy.budget;
  if (budget) {
    const percent = Math.round(budget.tokenRatio * 100 * 1000) / 1000;
    out["retryBudget"] = { percent };
    report.noteSection(
      policy,
      "RG411",
      "retry.budget",
      `retryBudget.percent = tokenRatio × 100 = ${percent}: concurrent retries are limited to ${percent}% of active requests; maxTokens ${budget.maxTokens} has no counterpart`,
    );
  }
  return out;
}

export type { TargetContext };
