/**
 * The resolved model: what every later stage (analyzer, emitters, explain) reads. Plain,
 * readonly data with durations in milliseconds and rates as fractions; no YAML or zod objects.
 * Each node keeps a reference to its source so a late check can still point at file:line:col.
 */
import type { SourceRef } from "../language/parse.js";
import type { TypeSchemaInput } from "../language/schema.js";
import type { OperationPlan } from "./plan.js";

export type { AttemptPlan, OperationPlan } from "./plan.js";
export type { SourceRef } from "../language/parse.js";

/**
 * Which step of the lookup supplied an effective value (docs/policy.md, "Derived defaults"):
 * - `operation`: the operation's own override;
 * - `policy`: the dependency's section;
 * - `project`: resgen.config.yaml, under `defaults:` or a project-wide setting (`deadline.header`);
 * - `derived`: computed from `latency` or other settings (`inputs` says from which);
 * - `default`: resgen's built-in default value;
 * - `absent`: a layer (retry, hedge, fallback, bulkhead, budget, slow-call threshold) that nothing
 *   declares and nothing derives, so it is not there; unlike `default`, there is no value.
 */
export type Origin =
  | "operation"
  | "policy"
  | "project"
  | "derived"
  | "default"
  | "absent"
  /** Set by an overrides document (`resgen explain --overrides`), not by the policy. */
  | "override";

/** A value a derived value was computed from: its key (`latency.p99`, `timeout.total`) and where it is set. */
export interface ProvenanceInput {
  readonly key: string;
  /** Where the input is set; absent when it is itself a default. */
  readonly source?: SourceRef;
}

/**
 * Where an effective value came from, typed so later stages read it instead of parsing text.
 * `source` is its position: for a value set in a file (operation, policy, project) the node
 * that set it; for a derived value the section it was derived from (`latency`); absent for a
 * built-in default or an absent layer.
 */
export interface Provenance {
  readonly origin: Origin;
  readonly source?: SourceRef;
  /** For derived values: the values it was computed from, in the order the formula uses them. */
  readonly inputs?: readonly ProvenanceInput[];
  /** The arithmetic or the default in words, for `explain`: "1.5 × p999 (200ms) = 300ms". */
  readonly formula?: string;
}

export type Jitter = "none" | "full" | "equal" | "decorrelated";
export type RetryCondition = "timeout" | "network" | number;
/** A thrown error that is retried, named in `retry.on` by its `code` or its `name`. */
export type ErrorCondition = { readonly code: string | number } | { readonly name: string };
/**
 * A response `retry.on` retries by its status and a value in its JSON body (`{ status: 200, body:
 * { path: $.status, equals: pending } }`).
 */
export interface ResultCondition {
  readonly status: number;
  /** The path as written (`$.status`). */
  readonly path: string;
  /** Its property names and array indexes. */
  readonly segments: readonly (string | number)[];
  readonly equals: string | number | boolean | null;
}
export type HttpMethod = "GET" | "HEAD" | "OPTIONS" | "PUT" | "DELETE" | "POST" | "PATCH";
export type JsonSchema = TypeSchemaInput;

export interface ResolvedLatency {
  readonly p50Ms?: number;
  readonly p90Ms?: number;
  readonly p95Ms?: number;
  readonly p99Ms?: number;
  readonly p999Ms?: number;
  readonly rps?: number;
}

export interface ResolvedTimeout {
  readonly attemptMs: number;
  readonly totalMs: number;
  readonly connectMs?: number;
  /** Time until the response headers (`timeout.headers`), when declared. */
  readonly headersMs?: number;
  /** Least time left worth starting an attempt with (`deadline.minAttempt`, or the latency p50); absent for none (0ms). */
  readonly minAttemptMs?: number;
}

export interface ResolvedDeadline {
  readonly propagate: boolean;
  readonly marginMs: number;
  readonly header: string;
  readonly format: "ms" | "grpc-timeout";
}

export interface ResolvedBackoff {
  readonly baseMs: number;
  readonly capMs: number;
  readonly multiplier: number;
  readonly jitter: Jitter;
}

export interface ResolvedRetry {
  readonly maxAttempts: number;
  readonly backoff: ResolvedBackoff;
  readonly on: readonly RetryCondition[];
  /**
   * Thrown errors `retry.on` names by code or name (in the order written, duplicates removed):
   * transient, so retried, whatever `on` says about `network`. Empty when it names none.
   */
  readonly errors: readonly ErrorCondition[];
  /** Responses `retry.on` retries by their body (in the order written, duplicates removed). */
  readonly results: readonly ResultCondition[];
  /** Honour Retry-After up to `maxMs` (undefined: up to the deadline); null: ignore it. */
  readonly retryAfter: { readonly maxMs?: number } | null;
}

export interface ResolvedBudget {
  readonly maxTokens: number;
  readonly tokenRatio: number;
}

export interface ResolvedBreaker {
  readonly failureRate: number;
  readonly slowCall: { readonly durationMs: number; readonly rate: number } | null;
  readonly window:
    | { readonly kind: "time"; readonly durationMs: number; readonly buckets: number }
    | { readonly kind: "count"; readonly calls: number };
  readonly minCalls: number;
  readonly openForMs: number;
  readonly halfOpen: { readonly maxCalls: number; readonly successes: number };
  /** Slow start after recovery (`breaker.rampUp`); present only when the policy or the project sets it. */
  readonly rampUpMs?: number;
  /**
   * Open-duration backoff (`breaker.openFor: { base, cap, multiplier }`): the n-th reopening in a
   * row after a failed trial stays open min(cap, openForMs × multiplier^n). Absent: fixed openFor.
   */
  readonly openBackoff?: { readonly capMs: number; readonly multiplier: number };
}

/** An adaptive bulkhead limit (docs/runtime.md, "Adaptive concurrency"). */
export interface ResolvedAdaptiveConcurrency {
  readonly minLimit: number;
  readonly maxLimit: number;
  readonly smoothing: number;
  readonly tolerance: number;
  readonly windowMs: number;
}

export interface ResolvedBulkhead {
  /** The fixed limit, or where the adaptive limit starts. */
  readonly maxConcurrent: number;
  /** Present only when declared: the limit then follows latency. */
  readonly adaptive?: ResolvedAdaptiveConcurrency;
  readonly maxQueue: number;
  readonly queueTimeoutMs: number;
  readonly overflow: "reject" | "drop-oldest";
}

/** Several endpoints (docs/policy.md, "Endpoints"). */
export interface ResolvedEndpoints {
  readonly choose: "power-of-two" | "round-robin";
  readonly max: number;
  /** Where the `endpoints` section is. */
  readonly source: SourceRef;
}

/** A request rate: `count` per `periodMs`, as written (`100/s`). */
export interface ResolvedThroughput {
  readonly count: number;
  readonly periodMs: number;
  /** Permits per second. */
  readonly perSecond: number;
  /** As written in the policy's notation, normalized (`6000/min`). */
  readonly text: string;
}

/** A client-side rate limit (docs/policy.md, "Rate limit"). */
export interface ResolvedRateLimit {
  readonly rate: ResolvedThroughput;
  readonly burst: number;
  readonly maxWaitMs: number;
  readonly maxPauseMs: number;
  /** The server's quota the analyzer checks against; `null`: the rate itself. */
  readonly quota: ResolvedThroughput | null;
  /** `redis`: the replicas share one limit in Redis; `memory`: each process has its own. */
  readonly store: "memory" | "redis";
  /** Replicas sharing a `redis` limit (its local share is rate ÷ replicas); `null` in memory. */
  readonly replicas: number | null;
  /** Where the `rateLimit` section is. */
  readonly source: SourceRef;
}

export interface ResolvedHedge {
  readonly delayMs: number;
  readonly maxAttempts: number;
  readonly budget: number;
}

export type ResolvedFallback =
  | { readonly kind: "value"; readonly value: unknown }
  | {
      readonly kind: "stale";
      readonly maxAgeMs: number;
      readonly maxEntries: number;
      /** Headers listed under `fallback.vary` (Authorization, Cookie and per-call headers always partition). */
      readonly vary: readonly string[];
      /** `redis`: the replicas share the entries (docs/store.md); absent: this process's own. */
      readonly store?: "redis";
      /** What a miss does; `null`: the failure is thrown. */
      readonly otherwise:
        { readonly kind: "value"; readonly value: unknown } | { readonly kind: "provided" } | null;
    }
  | { readonly kind: "provided" };

/**
 * A security scheme the client sends credentials for (docs/policy.md, "Credentials"): by name,
 * as `auth.schemes` (or the OpenAPI document's `securitySchemes`) calls it.
 */
export type ResolvedAuthScheme =
  | { readonly name: string; readonly type: "bearer" | "basic" }
  | {
      readonly name: string;
      readonly type: "apiKey";
      readonly in: "header" | "query";
      /** The header's or the query parameter's name. */
      readonly param: string;
    };

export interface ResolvedParam {
  readonly name: string;
  readonly type: "string" | "number" | "integer" | "boolean";
  readonly enum?: readonly (string | number | boolean)[];
  readonly description?: string;
  /** Declared under `params:` (false: undeclared, typed as string). */
  readonly declared: boolean;
}

export interface ResolvedQueryParam {
  readonly name: string;
  readonly type: "string" | "number" | "integer" | "boolean" | "array";
  readonly items?: "string" | "number" | "integer" | "boolean";
  readonly enum?: readonly (string | number | boolean)[];
  readonly required: boolean;
  readonly description?: string;
}

/**
 * Why an operation may or may not be repeated (docs/policy.md, "Operations"): its method is idempotent, the author
 * asserted `idempotent: true`, or an idempotency key makes repeats safe; `none`: none of them (a POST or PATCH,
 * a function call, or `idempotent: false`). The operation's `provenance.idempotency` says where it was decided.
 */
export type IdempotencyBasis = "method" | "asserted" | "key" | "none";

export interface ResolvedOperation {
  readonly name: string;
  readonly description?: string;
  readonly source: SourceRef;
  readonly method?: HttpMethod;
  readonly path?: string;
  readonly params: readonly ResolvedParam[];
  /** Names declared under `params:`, in order; absent when the operation has no `params:`. */
  readonly declaredParams?: readonly string[];
  readonly query: readonly ResolvedQueryParam[];
  readonly body?: JsonSchema;
  readonly response?: JsonSchema;
  /**
   * Whether repeating the call is safe (the runtime's word: templates/runtime/call.ts); `idempotency` says why.
   * The same as `plan.repeatable`.
   */
  readonly repeatable: boolean;
  readonly idempotency: IdempotencyBasis;
  readonly idempotencyKey: { readonly header: string } | null;
  readonly timeout: ResolvedTimeout;
  /** The retry as declared; what runs is `plan` (a repeatable operation only, and more than one attempt). */
  readonly retry: ResolvedRetry | null;
  /** The hedge as declared; what runs is `plan`. */
  readonly hedge: ResolvedHedge | null;
  /**
   * The operation's own rate limit, used instead of the dependency's; `false`: none even though
   * the dependency has one; absent: the dependency's, if any.
   */
  readonly rateLimit?: ResolvedRateLimit | false;
  /**
   * The effective plan (src/model/plan.ts): attempted once, retried or hedged, with its attempts,
   * worst case, budget, repeatability and runtime settings. Read it rather than `retry` and `hedge`.
   */
  readonly plan: OperationPlan;
  readonly fallback: ResolvedFallback | null;
  /**
   * Whether identical in-flight calls share one attempt chain (docs/runtime.md, "Coalescing"):
   * the operation's `coalesce`, else the policy's where the operation is a retry-safe read over
   * HTTP without a provided fallback; `provenance.coalesce` says which.
   */
  readonly coalesce: boolean;
  /** The gRPC method the operation calls, when the policy names one. */
  readonly grpc?: { readonly service: string; readonly method: string };
  /**
   * Whether the client checks each response against `response` (`validate: response`); absent:
   * the JSON is cast unchecked, the default.
   */
  readonly validateResponse?: true;
  /**
   * The operation's security requirement: alternatives in order, each the names of schemes sent
   * together; the first whose credentials the client has is sent. Empty, or absent: none.
   */
  readonly auth?: readonly (readonly string[])[];
  /** Where each effective value came from, keyed by setting ("timeout.attempt", "retry", "idempotency", ...). */
  readonly provenance: Readonly<Record<string, Provenance>>;
}

export interface ResolvedPolicy {
  readonly file: string;
  readonly source: SourceRef;
  readonly dependency: string;
  readonly description?: string;
  readonly essential: boolean;
  readonly transport: "http" | "function";
  readonly latency: ResolvedLatency;
  readonly deadline: ResolvedDeadline;
  readonly breaker: ResolvedBreaker | null;
  readonly bulkhead: ResolvedBulkhead | null;
  readonly budget: ResolvedBudget | null;
  /** The rate limit the operations share (one may have its own); absent: none. */
  readonly rateLimit?: ResolvedRateLimit;
  /** Several endpoints, each with its own breaker; absent: one (the client's single baseUrl). */
  readonly endpoints?: ResolvedEndpoints;
  readonly calls: readonly string[];
  /** Largest response body an HTTP client reads, in bytes (docs/policy.md, "Response size"). */
  readonly maxResponseBytes: number;
  /**
   * Redirects an HTTP client follows (docs/policy.md, "Redirects"): present only for
   * `same-origin`; absent, it follows none.
   */
  readonly redirects?: "same-origin";
  /**
   * Where the mesh targets place the dependency: the namespace of the generated resources and the
   * dependency's host (the policy's `host:`, else <dependency>.<namespace>.<hostSuffix>).
   */
  readonly kubernetes?: { readonly namespace: string; readonly host: string };
  readonly operations: readonly ResolvedOperation[];
  readonly schemas: Readonly<Record<string, JsonSchema>>;
  /** The security schemes the client takes credentials for (its `auth` option); absent: none. */
  readonly auth?: readonly ResolvedAuthScheme[];
  /** Where each dependency-level value came from ("breaker.minCalls", "bulkhead.maxConcurrent", ...). */
  readonly provenance: Readonly<Record<string, Provenance>>;
}
