/**
 * The grpc target: per dependency whose operations name gRPC methods, a service config (JSON) with
 * one methodConfig per method (timeout, retryPolicy or hedgingPolicy) and retryThrottling from the
 * retry budget, as gRPC's service config and proposal A6 define them. docs/targets.md has the table.
 */
import { jsonHeaderText } from "../model/header.js";
import { moduleName } from "../model/identifiers.js";
import { formatMs } from "../language/durations.js";
import type { ResolvedOperation, ResolvedPolicy, RetryCondition } from "../model/resolved.js";
import { DEFAULTS } from "../model/normalize.js";
import {
  MappingReport,
  noteApplicationOnly,
  protoDuration,
  singleAttemptMs,
  sortedPolicies,
  type Target,
  noteOpenBackoff,
  noteAdaptive,
  noteRateLimits,
  noteEndpoints,
} from "./report.js";

/** gRPC clamps maxAttempts of retries and hedging to 5 (A6). */
export const GRPC_MAX_ATTEMPTS = 5;
/** retryThrottling.maxTokens must be in (0, 1000]; tokenRatio keeps 3 decimals (A6). */
export const GRPC_MAX_TOKENS = 1000;

/** The gRPC status a retryable outcome of the policy stands for, or undefined when there is none. */
export function grpcStatus(condition: RetryCondition): string | undefined {
  if (condition === "network") return "UNAVAILABLE";
  if (condition === 429) return "RESOURCE_EXHAUSTED";
  if (condition === 502 || condition === 503 || condition === 504) return "UNAVAILABLE";
  if (condition === 500) return "UNKNOWN";
  return undefined;
}

export const emitGrpc: Target = (policies, ctx) => {
  const report = new MappingReport("grpc", ctx);
  const files = new Map<string, string>();
  for (const policy of sortedPolicies(policies)) {
    const grpcOps = policy.operations.filter((op) => op.grpc !== undefined);
    if (grpcOps.length === 0) {
      report.note(
        policy,
        "RG401",
        [{ ref: { file: policy.file, path: ["dependency"] }, key: true }],
        `no operation of ${policy.dependency} names a gRPC method (grpc: { service, method }): no service config is written for it`,
      );
      continue;
    }
    for (const op of policy.operations) {
      if (!op.grpc)
        report.noteSetting(
          policy,
          op,
          "RG401",
          "",
          "names no gRPC method: it is left out of the service config",
        );
    }
    // gRPC refuses a service config that names one method twice
    const byMethod = new Map<string, ResolvedOperation>();
    const unique = grpcOps.filter((op) => {
      const key = `${op.grpc!.service}/${op.grpc!.method}`;
      const first = byMethod.get(key);
      if (!first) return (byMethod.set(key, op), true);
      report.noteSetting(
        policy,
        op,
        "RG415",
        "grpc",
        `names ${key}, as ${first.name} does: a service config cannot configure one method twice, so only ${first.name}'s settings are written`,
        "give each operation its own gRPC method",
      );
      return false;
    });
    const config: Record<string, unknown> = { "//": jsonHeaderText(ctx.sourcePath(policy)) };
    config["methodConfig"] = unique.map((op) => methodConfig(policy, op, report));
    if (policy.budget) config["retryThrottling"] = throttling(policy, report);
    notePolicy(policy, report);
    files.set(`grpc/${moduleName(policy.dependency)}.json`, JSON.stringify(config, null, 2) + "\n");
  }
  return { files, diagnostics: report.diagnostics() };
};

function methodConfig(
  policy: ResolvedPolicy,
  op: ResolvedOperation,
  report: MappingReport,
): object {
  const name = [{ service: op.grpc!.service, method: op.grpc!.method }];
  noteApplicationOnly(report, policy, op);
  // what runs is the plan's: a hedge wins over a retry, and neither runs on an operation that is not repeatable
  const { retry, hedge } = op.plan;

  if (hedge) {
    const maxAttempts = capAttempts(policy, op, hedge.maxAttempts, "hedge.maxAttempts", report);
    const codes = statusCodes(
      policy,
      op,
      op.retry?.on ?? DEFAULTS.retryOn,
      report,
      "as non-fatal outcomes of hedged copies",
    );
    report.noteSetting(
      policy,
      op,
      "RG406",
      "hedge.budget",
      `gRPC has no hedge budget (${Math.round(hedge.budget * 1000) / 10}% of calls): only retryThrottling limits hedged copies`,
    );
    report.noteSetting(
      policy,
      op,
      "RG412",
      "timeout.attempt",
      `the method timeout (${formatMs(op.timeout.totalMs)}) covers every hedged copy; the attempt timeout of ${formatMs(op.timeout.attemptMs)} stays in the application`,
    );
    return {
      name,
      timeout: protoDuration(op.timeout.totalMs),
      hedgingPolicy: {
        maxAttempts,
        hedgingDelay: protoDuration(hedge.delayMs),
        ...(codes.length > 0 ? { nonFatalStatusCodes: codes } : {}),
      },
    };
  }
  if (!retry) return { name, timeout: protoDuration(singleAttemptMs(op)) };

  const codes = statusCodes(policy, op, retry.on, report, "not retried by the channel");
  if (codes.length === 0) {
    report.noteSetting(
      policy,
      op,
      "RG409",
      "retry.on",
      "no retryable outcome has a gRPC status: the method is not retried",
    );
    return { name, timeout: protoDuration(singleAttemptMs(op)) };
  }
  const maxAttempts = capAttempts(policy, op, retry.maxAttempts, "retry.maxAttempts", report);
  report.noteSetting(
    policy,
    op,
    "RG412",
    "timeout.attempt",
    `the method timeout (${formatMs(op.timeout.totalMs)}) covers all attempts; the attempt timeout of ${formatMs(op.timeout.attemptMs)} stays in the application`,
  );
  const b = retry.backoff;
  if (b.jitter !== "full")
    report.noteSetting(
      policy,
      op,
      "RG408",
      "retry.backoff.jitter",
      `gRPC always draws full jitter (policy: ${b.jitter})`,
    );
  const initial = b.baseMs > 0 ? b.baseMs : 1;
  if (b.baseMs <= 0)
    report.noteSetting(
      policy,
      op,
      "RG408",
      "retry.backoff.base",
      "gRPC needs an initialBackoff above 0: 1ms is written",
    );
  if (retry.retryAfter)
    report.noteSetting(
      policy,
      op,
      "RG410",
      "retry.retryAfter",
      "gRPC honours only its pushback trailer (grpc-retry-pushback-ms), not Retry-After",
    );
  if (op.idempotencyKey)
    report.noteSetting(
      policy,
      op,
      "RG413",
      "",
      `retries repeat the call as sent: the application must set the ${op.idempotencyKey.header.toLowerCase()} metadata once per logical call`,
    );
  return {
    name,
    timeout: protoDuration(op.timeout.totalMs),
    retryPolicy: {
      maxAttempts,
      initialBackoff: protoDuration(initial),
      maxBackoff: protoDuration(Math.max(initial, b.capMs)),
      backoffMultiplier: b.multiplier,
      retryableStatusCodes: codes,
    },
  };
}

function capAttempts(
  policy: ResolvedPolicy,
  op: ResolvedOperation,
  attempts: number,
  setting: string,
  report: MappingReport,
): number {
  if (attempts <= GRPC_MAX_ATTEMPTS) return attempts;
  report.noteSetting(
    policy,
    op,
    "RG407",
    setting,
    `gRPC allows at most ${GRPC_MAX_ATTEMPTS} attempts: ${attempts} becomes ${GRPC_MAX_ATTEMPTS}`,
  );
  return GRPC_MAX_ATTEMPTS;
}

/** The gRPC codes of the retryable outcomes, in a stable order; outcomes without one are noted. */
function statusCodes(
  policy: ResolvedPolicy,
  op: ResolvedOperation,
  on: readonly RetryCondition[],
  report: MappingReport,
  consequence: string,
): string[] {
  const codes = new Set<string>();
  const lost: string[] = [];
  for (const c of on) {
    const code = grpcStatus(c);
    if (code) codes.add(code);
    else lost.push(String(c));
  }
  if (lost.length > 0) {
    report.noteSetting(
      policy,
      op,
      "RG409",
      "retry.on",
      `${lost.join(", ")} ${lost.length === 1 ? "has" : "have"} no gRPC status code: ${consequence === "not retried by the channel" ? consequence : `left out ${consequence}`}`,
    );
  }
  return [...codes].sort();
}

function throttling(policy: ResolvedPolicy, report: MappingReport): object {
  const budget = policy.budget!;
  const maxTokens = Math.min(GRPC_MAX_TOKENS, budget.maxTokens);
  const tokenRatio = Math.max(0.001, Math.round(budget.tokenRatio * 1000) / 1000);
  if (maxTokens !== budget.maxTokens)
    report.noteSection(
      policy,
      "RG411",
      "retry.budget.maxTokens",
      `gRPC allows at most ${GRPC_MAX_TOKENS} tokens: maxTokens ${budget.maxTokens} becomes ${maxTokens}`,
    );
  if (tokenRatio !== budget.tokenRatio)
    report.noteSection(
      policy,
      "RG411",
      "retry.budget.tokenRatio",
      `gRPC keeps 3 decimals of tokenRatio: ${budget.tokenRatio} becomes ${tokenRatio}`,
    );
  return { maxTokens, tokenRatio };
}

function notePolicy(policy: ResolvedPolicy, report: MappingReport): void {
  noteOpenBackoff(report, "grpc", policy, "RG402");
  if (policy.breaker) {
    report.noteSection(
      policy,
      "RG402",
      "breaker",
      "a gRPC service config has no circuit breaker: the breaker stays in the application",
    );
    if (policy.breaker.slowCall && policy.provenance["breaker.slowCall"]?.origin !== "derived")
      report.noteSection(
        policy,
        "RG403",
        "breaker.slowCall",
        "slow calls are not failures to a gRPC channel",
      );
  }
  if (policy.bulkhead)
    report.noteSection(
      policy,
      "RG404",
      "bulkhead",
      "a gRPC channel has no client-side concurrency limit: the bulkhead stays in the application",
    );
  noteRateLimits(report, "grpc", policy);
  noteEndpoints(report, "grpc", policy);
  noteAdaptive(report, "grpc", policy);
  if (policy.deadline.propagate) {
    report.noteSection(
      policy,
      "RG414",
      "deadline.propagate",
      `gRPC propagates its own deadline (grpc-timeout) without the ${formatMs(policy.deadline.marginMs)} margin, not ${policy.deadline.header}`,
    );
  }
}
