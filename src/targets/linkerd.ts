/**
 * The linkerd target: per dependency, a ServiceProfile (linkerd.io/v1alpha2) named after the
 * dependency's host, with one route per operation (method and path regex, timeout, isRetryable,
 * response classes for the retryable statuses) and the retry budget. docs/targets.md has the table.
 */
import { stringify } from "yaml";
import { formatMs } from "../language/durations.js";
import { yamlHeader } from "../model/header.js";
import { moduleName } from "../model/identifiers.js";
import type { ResolvedOperation, ResolvedPolicy } from "../model/resolved.js";
import {
  escapeRegex,
  goDuration,
  kubernetesOf,
  MappingReport,
  noteApplicationOnly,
  routedOperations,
  singleAttemptMs,
  sortedPolicies,
  type Route,
  type Target,
  noteOpenBackoff,
  noteAdaptive,
  noteRateLimits,
  noteEndpoints,
} from "./report.js";

/** The ttl of the emitted retry budget (Linkerd's own default). */
export const BUDGET_TTL_MS = 10_000;

export const emitLinkerd: Target = (policies, ctx) => {
  const report = new MappingReport("linkerd", ctx);
  const files = new Map<string, string>();
  for (const policy of sortedPolicies(policies)) {
    const doc = serviceProfile(policy, report);
    files.set(
      `linkerd/${moduleName(policy.dependency)}.yaml`,
      yamlHeader(ctx.sourcePath(policy)) + stringify(doc, { sortMapEntries: true, lineWidth: 0 }),
    );
  }
  return { files, diagnostics: report.diagnostics() };
};

function serviceProfile(policy: ResolvedPolicy, report: MappingReport): object {
  const { host } = kubernetesOf(policy);
  // a ServiceProfile lives in the namespace of the service it describes
  const namespace = /^[^.]+\.([^.]+)\.svc\./.exec(host)?.[1] ?? kubernetesOf(policy).namespace;
  const routed = routedOperations(policy);
  const names = new Set(routed.map((r) => r.op.name));
  for (const op of policy.operations) {
    if (!names.has(op.name))
      report.noteSetting(
        policy,
        op,
        "RG401",
        "",
        "has no HTTP method and path and no gRPC method: it has no route, and its settings stay in the application",
      );
  }
  const routes = routed.map(({ op, route }) => profileRoute(policy, op, route, report));
  const spec: Record<string, unknown> = { routes };

  const retrying = routes.some((r) => "isRetryable" in r);
  if (policy.budget) {
    const minRetriesPerSecond = Math.max(
      1,
      Math.ceil(policy.budget.maxTokens / 2 / (BUDGET_TTL_MS / 1000)),
    );
    spec["retryBudget"] = {
      retryRatio: policy.budget.tokenRatio,
      minRetriesPerSecond,
      ttl: goDuration(BUDGET_TTL_MS),
    };
    report.noteSection(
      policy,
      "RG411",
      "retry.budget",
      `retryRatio = tokenRatio ${policy.budget.tokenRatio}, over a ${formatMs(BUDGET_TTL_MS)} ttl; minRetriesPerSecond = maxTokens / 2 per ttl = ${minRetriesPerSecond}: a rate over a window, not a token bucket`,
    );
  } else if (retrying) {
    report.noteSection(
      policy,
      "RG411",
      "retry.budget",
      "the policy has no retry budget, but Linkerd always applies one: its default (20% of requests, at least 10 retries per second, 10s ttl)",
    );
  }

  noteOpenBackoff(report, "linkerd", policy, "RG402");
  if (policy.breaker) {
    report.noteSection(
      policy,
      "RG402",
      "breaker",
      "a ServiceProfile has no circuit breaker: the breaker stays in the application",
      "Linkerd's failure accrual is configured with balancer.linkerd.io/failure-accrual annotations on the Service, outside this file",
    );
    if (policy.breaker.slowCall && policy.provenance["breaker.slowCall"]?.origin !== "derived")
      report.noteSection(
        policy,
        "RG403",
        "breaker.slowCall",
        "slow calls are not failures to Linkerd",
      );
  }
  if (policy.bulkhead)
    report.noteSection(
      policy,
      "RG404",
      "bulkhead",
      "Linkerd has no client-side concurrency limit: the bulkhead stays in the application",
    );
  noteRateLimits(report, "linkerd", policy);
  noteEndpoints(report, "linkerd", policy);
  noteAdaptive(report, "linkerd", policy);
  if (policy.deadline.propagate) {
    report.noteSection(
      policy,
      "RG414",
      "deadline.propagate",
      `routes enforce a fixed timeout and do not pass the remaining time in ${policy.deadline.header}; the application still propagates it`,
    );
  }
  return {
    apiVersion: "linkerd.io/v1alpha2",
    kind: "ServiceProfile",
    metadata: { name: host, namespace, labels: { "app.kubernetes.io/managed-by": "resgen" } },
    spec,
  };
}

function profileRoute(
  policy: ResolvedPolicy,
  op: ResolvedOperation,
  route: Route,
  report: MappingReport,
): object {
  const condition = {
    method: route.method,
    pathRegex: route.exact !== undefined ? escapeRegex(route.exact) : route.regex,
  };
  const base = { name: `${route.method} ${route.template}`, condition };
  noteApplicationOnly(report, policy, op);
  const { retry, hedge } = op.plan;
  if (hedge)
    report.noteSetting(
      policy,
      op,
      "RG406",
      "hedge",
      `Linkerd cannot hedge: the route makes one attempt of ${formatMs(singleAttemptMs(op))}; hedging stays in the application`,
    );

  if (!retry) return { ...base, timeout: goDuration(singleAttemptMs(op)) };
  if (!route.grpc && !retry.on.some((c) => typeof c === "number")) {
    // marking the route retryable would retry 5xx, which the policy does not ask for
    report.noteSetting(
      policy,
      op,
      "RG409",
      "retry.on",
      `${retry.on.join(" and ")} cannot be retried by a ServiceProfile, which retries failed responses only: the route is not retryable`,
    );
    return { ...base, timeout: goDuration(singleAttemptMs(op)) };
  }

  report.noteSetting(
    policy,
    op,
    "RG407",
    "retry.maxAttempts",
    `Linkerd has no attempt count: instead of ${retry.maxAttempts} attempts, retries go on while the budget and the ${formatMs(op.timeout.totalMs)} timeout allow`,
  );
  report.noteSetting(
    policy,
    op,
    "RG412",
    "timeout.attempt",
    `the route timeout (${formatMs(op.timeout.totalMs)}) covers all retries; the attempt timeout of ${formatMs(op.timeout.attemptMs)} stays in the application`,
  );
  report.noteSetting(
    policy,
    op,
    "RG408",
    "retry.backoff",
    "Linkerd's ServiceProfile retries have no backoff: retries are sent at once",
  );
  if (retry.retryAfter)
    report.noteSetting(
      policy,
      op,
      "RG410",
      "retry.retryAfter",
      "Retry-After is not read by Linkerd",
    );
  if (op.idempotencyKey)
    report.noteSetting(
      policy,
      op,
      "RG413",
      "",
      `retries repeat the request as sent: the application must set ${op.idempotencyKey.header} once per logical call`,
    );

  if (route.grpc) {
    report.noteSetting(
      policy,
      op,
      "RG409",
      "retry.on",
      "the operation is a gRPC method: Linkerd classifies every non-OK gRPC status as a failure and retries it; the policy's conditions cannot narrow that",
    );
    return { ...base, timeout: goDuration(op.timeout.totalMs), isRetryable: true };
  }
  const statuses = [...new Set(retry.on.filter((c): c is number => typeof c === "number"))].sort(
    (a, b) => a - b,
  );
  const lost = retry.on.filter((c) => c === "timeout" || c === "network");
  if (lost.length > 0)
    report.noteSetting(
      policy,
      op,
      "RG409",
      "retry.on",
      `${lost.join(" and ")} cannot be retried by a ServiceProfile: Linkerd retries responses classified as failures`,
    );
  const extra5xx = [500, 501, 502, 503, 504, 505].filter((s) => !statuses.includes(s));
  if (extra5xx.length > 0)
    report.noteSetting(
      policy,
      op,
      "RG409",
      "retry.on",
      `every 5xx is a failure to Linkerd, so ${extra5xx.join(", ")} and other 5xx are retried too`,
    );
  const non5xx = statuses.filter((s) => s < 500);
  if (non5xx.length > 0)
    report.noteSetting(
      policy,
      op,
      "RG409",
      "retry.on",
      `${non5xx.join(", ")} ${non5xx.length === 1 ? "is" : "are"} classified as failures to be retried, which also counts ${non5xx.length === 1 ? "it" : "them"} as failures in Linkerd's success rate`,
    );
  const responseClasses = ranges(statuses).map(([min, max]) => ({
    condition: { status: { min, max } },
    isFailure: true,
  }));
  return {
    ...base,
    timeout: goDuration(op.timeout.totalMs),
    isRetryable: true,
    ...(responseClasses.length > 0 ? { responseClasses } : {}),
  };
}

/** Sorted numbers as contiguous [min, max] ranges. */
function ranges(sorted: readonly number[]): [number, number][] {
  const out: [number, number][] = [];
  for (const n of sorted) {
    const last = out[out.length - 1];
    if (last && n === last[1] + 1) last[1] = n;
    else out.push([n, n]);
  }
  return out;
}
