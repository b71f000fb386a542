/**
 * What every target shares: its input and output types, the mapping report (one diagnostic per
 * policy setting the target cannot express or expresses differently, at the node responsible),
 * routes derived from operations, and the duration notations of the engines.
 */
import { formatMs } from "../language/durations.js";
import { finding, sectionRef, setAt, type Locator, type Place } from "../model/locate.js";
import type { Code } from "../diagnostics/codes.js";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { findingDiagnostic, mergeFindings, type Finding } from "../diagnostics/finding.js";
import type {
  ResolvedOperation,
  ResolvedPolicy,
  ResolvedRateLimit,
  ResolvedRetry,
  SourceRef,
} from "../model/resolved.js";
import { dnsLabel } from "../model/normalize.js";
import { describeResult } from "../model/plan.js";

import { TARGETS, type MeshTarget, type TargetName } from "../model/layout.js";

export { TARGETS, type MeshTarget, type TargetName };

export interface TargetContext {
  /** Turns a policy node back into a span, for the mapping report. */
  readonly locate: Locator;
  /** The policy's path as it appears in headers: relative to the project, forward slashes. */
  readonly sourcePath: (policy: ResolvedPolicy) => string;
}

export interface TargetOutput {
  /** File contents by path relative to the output folder (under the target's folder). */
  readonly files: ReadonlyMap<string, string>;
  /** The mapping report. */
  readonly diagnostics: readonly Diagnostic[];
}

export type Target = (policies: readonly ResolvedPolicy[], ctx: TargetContext) => TargetOutput;

/**
 * Collects the notes of one target. The same note made for several operations at one place (an
 * inherited setting) becomes one diagnostic that lists them.
 */
export class MappingReport {
  private readonly notes: Finding[] = [];

  constructor(
    /** The target the notes are about. */
    readonly target: MeshTarget,
    private readonly ctx: TargetContext,
  ) {}

  /** The target the notes are about. */
  get mesh(): MeshTarget {
    return this.target;
  }

  /** A note about `policy`, at the first of `candidates` that exists (else the policy itself). */
  note(
    policy: ResolvedPolicy,
    code: Code,
    candidates: readonly Place[],
    message: string,
    hint?: string,
    operation?: ResolvedOperation,
  ): void {
    this.notes.push(finding(this.ctx.locate, policy, code, candidates, message, hint, operation));
  }

  /** A note about a setting of an operation, at the line that set it (or the operation). */
  noteSetting(
    policy: ResolvedPolicy,
    op: ResolvedOperation,
    code: Code,
    setting: string,
    message: string,
    hint?: string,
  ): void {
    this.note(policy, code, settingPlaces(policy, op, setting), message, hint, op);
  }

  /** A note about a dependency-level section (breaker, bulkhead, retry.budget, ...). */
  noteSection(
    policy: ResolvedPolicy,
    code: Code,
    section: string,
    message: string,
    hint?: string,
  ): void {
    const own = setAt(policy.provenance[section]);
    const depth = section.split(".").length;
    // a section whose keys were set (in the policy or the project defaults) points at the section there
    const child = Object.entries(policy.provenance)
      .filter(([key]) => key.startsWith(`${section}.`))
      .map(([, p]) => setAt(p))
      .find((ref) => ref !== undefined);
    const fromChild = child
      ? {
          file: child.file,
          path: child.path.slice(0, (child.path[0] === "defaults" ? 1 : 0) + depth),
        }
      : undefined;
    const root = section.split(".")[0]!;
    this.note(
      policy,
      code,
      [
        { ref: own, key: true },
        { ref: fromChild, key: true },
        { ref: sectionRef(policy, root), key: true },
        { ref: { file: policy.file, path: ["dependency"] }, key: true },
      ],
      message,
      hint,
    );
  }

  diagnostics(): Diagnostic[] {
    return mergeFindings(this.notes).map((n) => ({
      ...findingDiagnostic(n, `${this.target}: `),
      note: {
        target: this.target,
        informational: isInformational(this.target, n.code),
        operations: n.operations ?? [],
        text: n.message,
      },
    }));
  }
}

/**
 * The notes that only say a setting stays in the application's client (docs/targets.md, "Reading
 * the notes"): the target leaves the setting out, and what it does emit does not differ from the
 * policy. Every other note is one to act on: the target does something the policy did not say
 * (another attempt count, backoff, retry conditions, budget, per-host ejection for a breaker, a
 * queue of 1 for 0, hedges without a budget), the application must do something (RG413), or two
 * engines retry (RG416).
 */
const INFORMATIONAL: Readonly<Record<MeshTarget, readonly Code[]>> = {
  istio: ["RG401", "RG403", "RG405", "RG406", "RG412", "RG414", "RG418", "RG419", "RG420", "RG421"],
  linkerd: [
    "RG401",
    "RG402",
    "RG403",
    "RG404",
    "RG405",
    "RG406",
    "RG412",
    "RG414",
    "RG418",
    "RG419",
    "RG420",
    "RG421",
  ],
  grpc: [
    "RG401",
    "RG402",
    "RG403",
    "RG404",
    "RG405",
    "RG412",
    "RG414",
    "RG418",
    "RG419",
    "RG420",
    "RG421",
  ],
};

/** Whether `code` from `target` is an informational note (see INFORMATIONAL). */
export function isInformational(target: MeshTarget, code: Code): boolean {
  return INFORMATIONAL[target].includes(code);
}

/**
 * Where an operation's setting was set, most specific first: the key itself (or its nearest
 * parent that was set in a file), then the operation.
 */
export function settingPlaces(
  policy: ResolvedPolicy,
  op: ResolvedOperation,
  setting: string,
): Place[] {
  const places: Place[] = [];
  const parts = setting.split(".");
  for (let n = parts.length; n > 0; n--) {
    const ref = setAt(op.provenance[parts.slice(0, n).join(".")]);
    if (ref) places.push({ ref, key: true });
  }
  places.push({ ref: op.source, key: true });
  places.push({ ref: { file: policy.file, path: op.source.path }, key: true });
  return places;
}

/** The ref of a dependency-level value when a file set it. */
export function dependencyRef(policy: ResolvedPolicy, key: string): SourceRef | undefined {
  return setAt(policy.provenance[key]);
}

// ---------------------------------------------------------------------------------------------
// Routes

export interface Route {
  readonly method: string;
  /** The path template (HTTP) or /service/method (gRPC). */
  readonly template: string;
  /** Whether the route is a gRPC method (so retry conditions map to gRPC codes). */
  readonly grpc: boolean;
  /** Path parameters, if any, turned into `[^/]+`; otherwise the exact path. */
  readonly regex: string | undefined;
  readonly exact: string | undefined;
}

/**
 * The request a mesh can match for an operation: its HTTP method and path, else its gRPC method
 * (POST /package.Service/Method). Undefined when it has neither.
 */
export function routeOf(op: ResolvedOperation): Route | undefined {
  if (op.method !== undefined && op.path !== undefined) {
    const hasParams = /\{[^{}]*\}/.test(op.path);
    const regex = hasParams
      ? op.path
          .split(/\{[^{}]*\}/)
          .map(escapeRegex)
          .join("[^/]+")
      : undefined;
    return {
      method: op.method,
      template: op.path,
      grpc: false,
      regex,
      exact: hasParams ? undefined : op.path,
    };
  }
  if (op.grpc) {
    const path = `/${op.grpc.service}/${op.grpc.method}`;
    return { method: "POST", template: path, grpc: true, regex: undefined, exact: path };
  }
  return undefined;
}

/** Escapes RE2 (and Rust regex) metacharacters. */
export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Routes in matching order: exact paths before templates, otherwise in policy order. */
export function routedOperations(
  policy: ResolvedPolicy,
): { op: ResolvedOperation; route: Route }[] {
  const routed = policy.operations.flatMap((op) => {
    const route = routeOf(op);
    return route ? [{ op, route }] : [];
  });
  return [
    ...routed.filter((r) => r.route.exact !== undefined),
    ...routed.filter((r) => r.route.exact === undefined),
  ];
}

/** The retry an operation runs: its plan's (src/model/plan.ts), null unless the plan retries. */
export function effectiveRetry(op: ResolvedOperation): ResolvedRetry | null {
  return op.plan.retry;
}

/** The single-attempt budget of an operation that neither retries nor hedges: one attempt, within the total. */
export function singleAttemptMs(op: ResolvedOperation): number {
  return Math.min(op.timeout.attemptMs, op.timeout.totalMs);
}

// ---------------------------------------------------------------------------------------------
// Durations

/** A Go / Kubernetes duration ("250ms", "2s", "1.5s"), at least 1ms, in whole milliseconds. */
export function goDuration(ms: number): string {
  const whole = Math.max(1, Math.round(ms));
  return whole % 1000 === 0 ? `${whole / 1000}s` : `${whole}ms`;
}

/** A protobuf Duration in its JSON form ("0.25s", "2s"), as gRPC's service config reads it. */
export function protoDuration(ms: number): string {
  const seconds = (Math.max(0, ms) / 1000).toFixed(9).replace(/\.?0+$/, "");
  return `${seconds}s`;
}

/** A Kubernetes object name from a dependency name: lower case, words joined by "-". */
export const resourceName = dnsLabel;

/** The namespace and host the mesh targets use for a policy. */
export function kubernetesOf(policy: ResolvedPolicy): { namespace: string; host: string } {
  return (
    policy.kubernetes ?? {
      namespace: "default",
      host: `${resourceName(policy.dependency)}.default.svc.cluster.local`,
    }
  );
}

/** Dependencies in a stable order. */
export function sortedPolicies(policies: readonly ResolvedPolicy[]): ResolvedPolicy[] {
  return [...policies].sort((a, b) =>
    a.dependency < b.dependency ? -1 : a.dependency > b.dependency ? 1 : 0,
  );
}

/**
 * How each target expresses which responses are retried, for retry.on's body conditions: by
 * status and headers, never by the body (docs/targets.md).
 */
const BODY_CONDITIONS: Readonly<Record<MeshTarget, string>> = {
  istio:
    "Envoy's retryOn conditions and retriableStatusCodes see the status and headers, never the body, so the mesh does not retry it",
  linkerd:
    "a ServiceProfile's responseClasses classify responses by status only, so the mesh does not retry it",
  grpc: "a gRPC retryPolicy's retryableStatusCodes name status codes only, so the channel does not retry it",
};

/** Adds the notes every mesh target makes about settings that live only in the application. */
export function noteApplicationOnly(
  report: MappingReport,
  policy: ResolvedPolicy,
  op: ResolvedOperation,
): void {
  const results = effectiveRetry(op)?.results ?? [];
  if (results.length > 0) {
    report.noteSetting(
      policy,
      op,
      "RG409",
      "retry.on",
      `${results.map(describeResult).join(", ")}: ${BODY_CONDITIONS[report.mesh]}; the application's client retries it (as it applies a classify hook, which no target can express)`,
    );
  }
  if (op.fallback) {
    report.noteSetting(
      policy,
      op,
      "RG405",
      "fallback",
      `the ${op.fallback.kind} fallback is served by the application; the target returns the failure`,
    );
  }
  if (op.coalesce) {
    report.noteSetting(
      policy,
      op,
      "RG418",
      "coalesce",
      `identical calls in flight are coalesced by the application's client; ${COALESCE_IN[report.target]}, so each caller's request reaches the dependency`,
    );
  }
}

/** How each target would express coalescing: it cannot (docs/targets.md). */
const COALESCE_IN: Readonly<Record<MeshTarget, string>> = {
  istio: "Istio (Envoy) has no request coalescing in a VirtualService or DestinationRule",
  linkerd: "Linkerd has no request coalescing in a ServiceProfile",
  grpc: "gRPC's service config has no request coalescing",
};

// ---------------------------------------------------------------------------------------------
// Breaker features that live in the client

/**
 * How each mesh target expresses the breaker features of the generated client that are not
 * policy settings, or does not (docs/targets.md, "What stays in the application"), and open-
 * duration backoff, which is (`breaker.openFor: { base, cap, multiplier }`).
 */
export const BREAKER_FEATURES: Readonly<
  Record<"manual" | "openBackoff" | "snapshot", Readonly<Record<MeshTarget, string>>>
> = {
  manual: {
    istio:
      "no runtime switch: ejection is Envoy's decision; holding traffic off means editing the DestinationRule (or a fault/route rule), not calling isolate()",
    linkerd: "no runtime switch: failure accrual has no manual open or reset",
    grpc: "no runtime switch in a service config: client.breaker stays in the application",
  },
  openBackoff: {
    istio:
      "outlier detection lengthens ejections too, but linearly: a host stays ejected for baseEjectionTime × the number of times it has been ejected (Envoy caps it at max_ejection_time, 300s by default, which Istio's DestinationRule does not expose); baseEjectionTime is openFor.base, and the multiplier and cap stay in the application",
    linkerd:
      "failure accrual backs its probes off on its own, set by balancer.linkerd.io/failure-accrual-consecutive-min-penalty and -max-penalty annotations on the Service, outside this file: the backoff stays in the application",
    grpc: "a gRPC service config has no breaker, so no open period to lengthen: the backoff stays in the application",
  },
  snapshot: {
    istio:
      "nothing to persist: each Envoy keeps its ejections in memory and starts empty when the proxy restarts",
    linkerd: "nothing to persist: each proxy keeps its failure accrual state in memory",
    grpc: "nothing to persist: a service config is configuration, not state",
  },
};

/** The note every target makes about open-duration backoff, when the policy asks for it. */
export function noteOpenBackoff(
  report: MappingReport,
  target: MeshTarget,
  policy: ResolvedPolicy,
  code: Code,
): void {
  const b = policy.breaker;
  if (b?.openBackoff === undefined) return;
  report.noteSection(
    policy,
    code,
    "breaker.openFor",
    `breaker.openFor backs off (${formatMs(b.openForMs)} × ${b.openBackoff.multiplier}^n, at most ${formatMs(b.openBackoff.capMs)}): ${BREAKER_FEATURES.openBackoff[target]}`,
  );
}

/**
 * How each target expresses a client-side rate limit (docs/targets.md, "Rate limits"): none of
 * them as the client runs it, so the limit stays in the application. Istio's (Envoy's) local
 * rate limit is a token bucket per proxy, enforced where the filter is installed (usually the
 * server's inbound side) and answering 429 at once; Linkerd's HTTPLocalRateLimitPolicy limits
 * inbound traffic at the server; a gRPC service config has only retryThrottling, a token ratio
 * over failures, not a request rate.
 */
export const RATE_LIMIT_MAPPING: Readonly<Record<MeshTarget, string>> = {
  istio:
    "Envoy's local rate limit (an EnvoyFilter with envoy.filters.http.local_ratelimit) is a token bucket per proxy that answers 429 at once, usually installed on the server's inbound side: rate and burst map to its fill interval and max tokens, but each replica of this service gets its own bucket (N replicas send N × rate), and maxWait (a wait bounded by the deadline), a permit per attempt and the pause on Retry-After and the RateLimit header fields have no field; nothing is emitted, the rate limit stays in the application",
  linkerd:
    "Linkerd has no client-side rate limit (HTTPLocalRateLimitPolicy limits a server's inbound traffic): the rate limit stays in the application",
  grpc: "a gRPC service config has no rate limit (retryThrottling is a token ratio over failures, not a request rate): the rate limit stays in the application",
};

/** The same, for a limit the replicas share in Redis (`rateLimit.store: redis`). */
export const SHARED_RATE_LIMIT_MAPPING: Readonly<Record<MeshTarget, string>> = {
  istio:
    "a limit the replicas share is what Envoy's global rate limit does (envoy.filters.http.ratelimit, asking an external rate limit service that keeps its counters in Redis), but that needs the service deployed beside the mesh, counts fixed windows rather than GCRA and answers 429 at once, with no wait bounded by the deadline and no fallback to a local share; nothing is emitted, the rate limit stays in the application",
  linkerd:
    "Linkerd has no client-side rate limit, shared or not (HTTPLocalRateLimitPolicy limits a server's inbound traffic, per proxy): the rate limit stays in the application",
  grpc: "a gRPC service config has no rate limit, shared or not: the rate limit stays in the application",
};

/** The mapping note of the rate limits of `policy`: the dependency's and each operation's own. */
export function noteRateLimits(
  report: MappingReport,
  target: MeshTarget,
  policy: ResolvedPolicy,
): void {
  const mapping = (limit: ResolvedRateLimit): string =>
    (limit.store === "redis" ? SHARED_RATE_LIMIT_MAPPING : RATE_LIMIT_MAPPING)[target];
  if (policy.rateLimit !== undefined)
    report.noteSection(policy, "RG419", "rateLimit", mapping(policy.rateLimit));
  for (const op of policy.operations)
    if (op.rateLimit !== undefined && op.rateLimit !== false)
      report.noteSetting(policy, op, "RG419", "rateLimit", mapping(op.rateLimit));
}

/**
 * How each target expresses several endpoints (docs/targets.md, "Endpoints"). In a mesh the
 * endpoints are the Service's pods, which the proxy balances on its own: Istio's outlier
 * detection (emitted from the breaker) ejects one host at a time, and Istio gives every retry
 * policy Envoy's previous_hosts predicate (host_selection_retry_max_attempts 5), so a retry goes
 * to another pod; Linkerd balances with EWMA power-of-two choices and, with failure accrual,
 * stops sending to an endpoint after consecutive failures, but a retry is balanced again and may
 * reach the same endpoint; gRPC's balancer (loadBalancingConfig, outlier_detection from gRFC A50)
 * picks anew for each retry or hedge (gRFC A6), without excluding the backend that failed.
 */
export const ENDPOINTS_MAPPING: Readonly<Record<MeshTarget, string>> = {
  istio:
    "the mesh's endpoints are the host's pods, not the client's baseUrl list: Envoy balances over them, the breaker's outlierDetection ejects one pod at a time (consecutive 5xx, not a failure rate), and Istio's retries carry Envoy's previous_hosts predicate (hostSelectionRetryMaxAttempts 5), so a retry goes to another pod; the list, the power-of-two or round-robin choice and the fast failure when every endpoint is open stay in the application",
  linkerd:
    "Linkerd balances each request over the Service's endpoints (EWMA, power of two choices) and, with failure accrual (the balancer.linkerd.io/failure-accrual: consecutive annotation on the Service, outside this file), stops sending to an endpoint after consecutive failures; a retry is balanced again and may reach the endpoint that failed: the client's list and its retry elsewhere stay in the application",
  grpc: "a gRPC channel balances over the resolver's addresses (\"loadBalancingConfig\": round_robin, and outlier_detection, gRFC A50, ejects addresses whose success rate or failure percentage stands out, per address); each retry or hedge is a new pick (gRFC A6), with no predicate that excludes the backend that failed; nothing is emitted: the client's list and its retry elsewhere stay in the application",
};

/** The mapping note of a policy's `endpoints:` section, if it has one. */
export function noteEndpoints(
  report: MappingReport,
  target: MeshTarget,
  policy: ResolvedPolicy,
): void {
  if (policy.endpoints !== undefined)
    report.noteSection(policy, "RG420", "endpoints", ENDPOINTS_MAPPING[target]);
}

/**
 * How each target expresses an adaptive bulkhead (docs/targets.md, "Adaptive concurrency"): none
 * of them as the client runs it. Envoy has an adaptive concurrency HTTP filter (a gradient over a
 * periodically measured minimum latency, during whose measurement the limit drops to a handful
 * of requests and the rest get 503), which Istio exposes only through an EnvoyFilter; Linkerd
 * and gRPC have no concurrency limit that follows latency.
 */
export const ADAPTIVE_MAPPING: Readonly<Record<MeshTarget, string>> = {
  istio:
    "Istio has no adaptive concurrency field: the DestinationRule's connection pool keeps maxConcurrent as a fixed limit. Envoy's adaptive concurrency filter (envoy.filters.http.adaptive_concurrency, an EnvoyFilter) follows latency with another algorithm (a gradient over a minimum latency it re-measures by cutting concurrency to a few requests for a while, answering 503 meanwhile), per proxy and usually on the server's side; nothing of it is emitted, the adaptive limit stays in the application",
  linkerd:
    "Linkerd has no concurrency limit that follows latency (and no client-side concurrency limit at all): the adaptive limit stays in the application",
  grpc: "a gRPC service config has no concurrency limit that follows latency (and no client-side concurrency limit at all): the adaptive limit stays in the application",
};

/** The mapping note of an adaptive bulkhead, at `bulkhead.adaptive` (RG421). */
export function noteAdaptive(
  report: MappingReport,
  target: MeshTarget,
  policy: ResolvedPolicy,
): void {
  if (policy.bulkhead && policy.bulkhead.adaptive !== undefined)
    report.noteSection(policy, "RG421", "bulkhead.adaptive", ADAPTIVE_MAPPING[target]);
}
