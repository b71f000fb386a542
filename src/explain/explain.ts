/**
 * `resgen explain`: the resolved stack of one policy, layer by layer in the order a call passes
 * through it (deadline → fallback → bulkhead → retry/hedge → rate limit → breaker (one per endpoint
 * with several endpoints) → attempt timeout →
 * transport: the runtime asks the breaker before each attempt, retries and hedged copies
 * included, templates/runtime/call.ts), every effective value with where it came from, then the
 * worst case of the operation's plan (src/model/plan.ts).
 * Pure: model → report object → text (or JSON with the same values).
 */
import { openPeriods, openPeriodsText } from "../model/open-periods.js";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import type { SourceTexts } from "../diagnostics/format.js";
import { formatMs } from "../language/durations.js";
import type { SourceDocument } from "../language/parse.js";
import type {
  Origin,
  Provenance,
  ResolvedOperation,
  ResolvedRateLimit,
  ResolvedPolicy,
  SourceRef,
} from "../model/resolved.js";
import {
  attemptPlanOf,
  describePlan,
  describeResult,
  describeRetryOn,
  type AttemptPlan,
  type OperationPlan,
} from "../model/plan.js";

export type LayerName =
  | "deadline"
  | "coalesce"
  | "fallback"
  | "bulkhead"
  | "breaker"
  | "retry"
  | "hedge"
  | "rate limit"
  | "endpoints"
  | "attempt timeout"
  | "transport";

export interface ExplainSetting {
  /** The policy key, e.g. "timeout.total". */
  readonly key: string;
  /** The effective value: milliseconds for durations, fractions for rates. */
  readonly value: string | number | boolean | null | readonly (string | number)[];
  /** The value as written in a policy (`2s`, `50%`). */
  readonly text: string;
  readonly origin: Origin;
  /** `file:line:col` of the node that set it, for values set in a file. */
  readonly source?: string;
  /** For derived and built-in values: the arithmetic or the default. */
  readonly formula?: string;
}

export interface ExplainLayer {
  readonly layer: LayerName;
  /** False when the layer is absent for this operation (its settings then say why). */
  readonly active: boolean;
  readonly note?: string;
  readonly settings: readonly ExplainSetting[];
}

export interface ExplainWorstCase {
  /** Most attempts one logical call can make (retries or hedged copies included). */
  readonly maxAttempts: number;
  readonly plan: "retry" | "hedge" | "single";
  /** Every attempt at its timeout and every backoff at its cap. */
  readonly maxTimeMs: number;
  readonly formula: string;
  readonly totalMs: number;
  /** Attempts that can run to their timeout within the total. */
  readonly attemptsWithinTotal: number;
  readonly fitsInTotal: boolean;
  /** A total outage: `calls` logical calls, every attempt failing. */
  readonly outage: {
    readonly calls: number;
    readonly callsBasis: string;
    readonly attemptsWithoutBudget: number;
    readonly amplificationWithoutBudget: number;
    /** With the retry budget (gRPC A6: N + maxTokens/2 + 1) or the hedge budget; null when there is none. */
    readonly attemptsWithBudget: number | null;
    readonly amplificationWithBudget: number | null;
    readonly budgetFormula?: string;
  };
}

export interface ExplainOperation {
  readonly name: string;
  readonly method?: string;
  readonly path?: string;
  /** Whether repeating the call is safe (the plan's `repeatable`); `idempotency` says why. */
  readonly repeatable: boolean;
  /** What runs: attempted once, retried or hedged, the same plan `check` and the generated JSDoc show. */
  readonly plan: AttemptPlan;
  readonly idempotency: ResolvedOperation["idempotency"];
  readonly stack: readonly ExplainLayer[];
  readonly worstCase: ExplainWorstCase;
}

export interface ExplainReport {
  readonly dependency: string;
  readonly file: string;
  readonly essential: boolean;
  readonly transport: "http" | "function";
  readonly latency: ResolvedPolicy["latency"];
  /** Bulkhead sizing by Little's law (in flight = rate × time in system), when rps is declared. */
  readonly littlesLaw: {
    readonly rps: number;
    readonly p99Ms?: number;
    readonly inFlightHealthy?: number;
    readonly attemptMs: number;
    readonly inFlightAllTimingOut: number;
    readonly maxConcurrent: number | null;
    /** With an adaptive bulkhead: the bounds its limit moves between (maxConcurrent is its start). */
    readonly adaptive?: { readonly minLimit: number; readonly maxLimit: number };
  } | null;
  readonly operations: readonly ExplainOperation[];
  /** Findings of `resgen check` for this policy (warnings only: explain refuses a policy with errors). */
  readonly findings: readonly {
    readonly code: string;
    readonly severity: string;
    readonly at: string;
    readonly message: string;
  }[];
}

export interface ExplainOptions {
  /** Only this operation. */
  readonly operation?: string;
  /** `file:line:col` of a node, when the file is loaded. */
  readonly where?: (ref: SourceRef) => string | undefined;
  readonly findings?: ExplainReport["findings"];
}

/** A locator over the documents and texts a check loaded. */
export function sourceLocator(
  documents: ReadonlyMap<string, SourceDocument>,
  sources: SourceTexts,
): (ref: SourceRef) => string | undefined {
  return (ref) => {
    const doc = documents.get(ref.file);
    if (!doc || !doc.has(ref.path)) return undefined;
    const { line, column } = sources.index(ref.file).position(doc.spanOf(ref.path).start);
    return `${ref.file}:${line}:${column}`;
  };
}

/** Findings in the shape the report carries, positioned with `sources`. */
export function reportFindings(
  diagnostics: readonly Diagnostic[],
  sources: SourceTexts,
): ExplainReport["findings"] {
  return diagnostics.map((d) => {
    const { line, column } = sources.position(d);
    return {
      code: d.code,
      severity: d.severity,
      at: `${d.file}:${line}:${column}`,
      message: d.message,
    };
  });
}

const pct = (f: number) => `${Math.round(f * 1000) / 10}%`;
const round2 = (n: number) => Math.round(n * 100) / 100;
// The standard library types JSON.stringify as returning string, but it returns undefined for
// undefined (a fallback value left out); this signature keeps the "null" shown then.
const stringify = JSON.stringify as (value: unknown) => string | undefined;

export function explain(policy: ResolvedPolicy, options: ExplainOptions = {}): ExplainReport {
  const where = options.where ?? (() => undefined);
  const ops =
    options.operation === undefined
      ? policy.operations
      : policy.operations.filter((o) => o.name === options.operation);
  const { rps, p99Ms } = policy.latency;
  const slowest = policy.operations.reduce((m, o) => Math.max(m, o.timeout.attemptMs), 0);
  return {
    dependency: policy.dependency,
    file: policy.file,
    essential: policy.essential,
    transport: policy.transport,
    latency: policy.latency,
    littlesLaw:
      rps === undefined
        ? null
        : {
            rps,
            ...(p99Ms === undefined
              ? {}
              : { p99Ms, inFlightHealthy: round2(rps * (p99Ms / 1000)) }),
            attemptMs: slowest,
            inFlightAllTimingOut: round2(rps * (slowest / 1000)),
            maxConcurrent: policy.bulkhead?.maxConcurrent ?? null,
            ...(policy.bulkhead?.adaptive === undefined
              ? {}
              : {
                  adaptive: {
                    minLimit: policy.bulkhead.adaptive.minLimit,
                    maxLimit: policy.bulkhead.adaptive.maxLimit,
                  },
                }),
          },
    operations: ops.map((op) => explainOperation(policy, op, where)),
    findings: options.findings ?? [],
  };
}

function explainOperation(
  policy: ResolvedPolicy,
  op: ResolvedOperation,
  where: (ref: SourceRef) => string | undefined,
): ExplainOperation {
  const setting = (
    key: string,
    value: ExplainSetting["value"],
    text: string,
    provenance?: Provenance,
  ): ExplainSetting => {
    const p = provenance ??
      op.provenance[key] ??
      policy.provenance[key] ?? { origin: "default" as const };
    const source =
      p.source && (p.origin === "operation" || p.origin === "policy" || p.origin === "project")
        ? where(p.source)
        : undefined;
    return {
      key,
      value,
      text,
      origin: p.origin,
      ...(source === undefined ? {} : { source }),
      ...(p.formula === undefined ? {} : { formula: p.formula }),
    };
  };
  const ms = (key: string, v: number) => setting(key, v, formatMs(v));

  const deadline: ExplainLayer = {
    layer: "deadline",
    active: true,
    settings: [
      ms("timeout.total", op.timeout.totalMs),
      ms("deadline.margin", policy.deadline.marginMs),
      // the floor under which a call fails at once, with its formula (p50, or the policy's value)
      ms("deadline.minAttempt", op.timeout.minAttemptMs ?? 0),
      setting("deadline.propagate", policy.deadline.propagate, String(policy.deadline.propagate)),
      setting(
        "deadline.header",
        policy.deadline.header,
        `${policy.deadline.header} (${policy.deadline.format})`,
      ),
    ],
  };

  // shown where a policy speaks of coalescing: on, or the policy's default and why it skips here
  const c = op.provenance["coalesce"];
  const coalesce: ExplainLayer | undefined =
    op.coalesce || (c !== undefined && c.origin !== "absent")
      ? {
          layer: "coalesce",
          active: op.coalesce,
          ...(op.coalesce
            ? {
                note: "identical calls in flight share one attempt chain; each caller keeps its own deadline and signal",
              }
            : {}),
          settings: [
            setting(
              "coalesce",
              op.coalesce,
              op.coalesce
                ? `by method, URL, Authorization, Cookie, credentials, per-call headers${op.fallback?.kind === "stale" && op.fallback.vary.length > 0 ? `, ${op.fallback.vary.join(", ")}` : ""}, then cacheKey`
                : "off",
            ),
          ],
        }
      : undefined;

  const f = op.fallback;
  const fallback: ExplainLayer = {
    layer: "fallback",
    active: f !== null,
    settings: [
      setting("fallback", f?.kind ?? "none", f === null ? "none" : f.kind),
      ...(f?.kind === "value"
        ? [setting("fallback.value", null, stringify(f.value) ?? "null", op.provenance["fallback"])]
        : []),
      ...(f?.kind === "stale"
        ? [
            setting("fallback.maxAge", f.maxAgeMs, formatMs(f.maxAgeMs), op.provenance["fallback"]),
            setting(
              "fallback.maxEntries",
              f.maxEntries,
              String(f.maxEntries),
              op.provenance["fallback"],
            ),
            setting(
              "fallback.store",
              f.store ?? "memory",
              f.store === "redis" ? "redis, shared by the replicas" : "memory, this process's",
              op.provenance["fallback"],
            ),
            setting(
              "fallback.vary",
              f.vary,
              ["method", "URL", "Authorization", "Cookie", "per-call headers", ...f.vary].join(
                ", ",
              ),
              op.provenance["fallback"],
            ),
            setting(
              "fallback.otherwise",
              f.otherwise?.kind ?? null,
              f.otherwise === null
                ? "a miss throws the failure"
                : f.otherwise.kind === "value"
                  ? `a miss serves ${stringify(f.otherwise.value) ?? "null"}`
                  : "a miss calls the caller's fallback",
              op.provenance["fallback"],
            ),
          ]
        : []),
    ],
  };

  const b = policy.bulkhead;
  const bulkhead: ExplainLayer = b
    ? {
        layer: "bulkhead",
        active: true,
        ...(b.adaptive === undefined
          ? {}
          : {
              note: `adaptive: from ${b.maxConcurrent}, within ${b.adaptive.minLimit} to ${b.adaptive.maxLimit}`,
            }),
        settings: [
          setting("bulkhead.maxConcurrent", b.maxConcurrent, String(b.maxConcurrent)),
          ...(b.adaptive === undefined
            ? []
            : [
                setting(
                  "bulkhead.adaptive.minLimit",
                  b.adaptive.minLimit,
                  String(b.adaptive.minLimit),
                ),
                setting(
                  "bulkhead.adaptive.maxLimit",
                  b.adaptive.maxLimit,
                  String(b.adaptive.maxLimit),
                ),
                setting(
                  "bulkhead.adaptive.smoothing",
                  b.adaptive.smoothing,
                  String(b.adaptive.smoothing),
                ),
                setting(
                  "bulkhead.adaptive.tolerance",
                  b.adaptive.tolerance,
                  String(b.adaptive.tolerance),
                ),
                ms("bulkhead.adaptive.window", b.adaptive.windowMs),
              ]),
          setting("bulkhead.maxQueue", b.maxQueue, String(b.maxQueue)),
          ms("bulkhead.queueTimeout", b.queueTimeoutMs),
          setting("bulkhead.overflow", b.overflow, b.overflow),
        ],
      }
    : {
        layer: "bulkhead",
        active: false,
        note:
          policy.provenance["bulkhead"]?.origin === "policy"
            ? "turned off: bulkhead: false"
            : "no bulkhead declared, none derived (latency has no rps and p99 or p999)",
        settings: [],
      };

  const br = policy.breaker;
  const breaker: ExplainLayer = br
    ? {
        layer: "breaker",
        active: true,
        settings: [
          setting("breaker.failureRate", br.failureRate, pct(br.failureRate)),
          ...(br.slowCall
            ? [
                ms("breaker.slowCall.duration", br.slowCall.durationMs),
                setting("breaker.slowCall.rate", br.slowCall.rate, pct(br.slowCall.rate)),
              ]
            : []),
          ...(br.window.kind === "time"
            ? [
                ms("breaker.window.duration", br.window.durationMs),
                setting("breaker.window.buckets", br.window.buckets, String(br.window.buckets)),
              ]
            : [
                setting(
                  "breaker.window.calls",
                  br.window.calls,
                  String(br.window.calls),
                  policy.provenance["breaker"],
                ),
              ]),
          setting("breaker.minCalls", br.minCalls, String(br.minCalls)),
          ms("breaker.openFor", br.openForMs),
          ...(br.openBackoff === undefined
            ? []
            : [
                ms("breaker.openFor.cap", br.openBackoff.capMs),
                setting(
                  "breaker.openFor.multiplier",
                  br.openBackoff.multiplier,
                  String(br.openBackoff.multiplier),
                ),
                setting("breaker.openFor.periods", openPeriods(br), openPeriodsText(br), {
                  origin: "derived",
                  formula: `min(cap, base × multiplier^n) for the n-th reopening after a failed trial; a close starts again from base: ${openPeriodsText(br)}`,
                }),
              ]),
          setting("breaker.halfOpen.maxCalls", br.halfOpen.maxCalls, String(br.halfOpen.maxCalls)),
          setting(
            "breaker.halfOpen.successes",
            br.halfOpen.successes,
            String(br.halfOpen.successes),
          ),
          ...(br.rampUpMs === undefined ? [] : [ms("breaker.rampUp", br.rampUpMs)]),
        ],
      }
    : {
        layer: "breaker",
        active: false,
        note:
          policy.provenance["breaker"]?.origin === "policy"
            ? "turned off: breaker: false"
            : "no breaker declared",
        settings: [],
      };

  const r = op.retry;
  const notSafe = "not retry-safe (not idempotent, no idempotency key): attempted once";
  const retry: ExplainLayer = r
    ? {
        layer: "retry",
        active: op.plan.kind === "retry",
        ...(op.plan.repeatable ? {} : { note: notSafe }),
        settings: [
          setting("retry.maxAttempts", r.maxAttempts, String(r.maxAttempts)),
          ms("retry.backoff.base", r.backoff.baseMs),
          ms("retry.backoff.cap", r.backoff.capMs),
          setting("retry.backoff.multiplier", r.backoff.multiplier, String(r.backoff.multiplier)),
          setting("retry.backoff.jitter", r.backoff.jitter, r.backoff.jitter),
          setting(
            "retry.on",
            [
              ...r.on,
              ...r.errors.map((e) => ("code" in e ? `code ${e.code}` : `name ${e.name}`)),
              ...r.results.map(describeResult),
            ],
            describeRetryOn(r),
          ),
          setting(
            "retry.retryAfter",
            r.retryAfter === null ? "ignore" : (r.retryAfter.maxMs ?? "honor"),
            r.retryAfter === null
              ? "ignore"
              : r.retryAfter.maxMs === undefined
                ? "honor"
                : `max ${formatMs(r.retryAfter.maxMs)}`,
          ),
          ...(policy.budget
            ? [
                setting(
                  "retry.budget.maxTokens",
                  policy.budget.maxTokens,
                  String(policy.budget.maxTokens),
                ),
                setting(
                  "retry.budget.tokenRatio",
                  policy.budget.tokenRatio,
                  String(policy.budget.tokenRatio),
                ),
              ]
            : [setting("retry.budget", false, "none")]),
        ],
      }
    : { layer: "retry", active: false, settings: [setting("retry", false, "none")] };

  const h = op.hedge;
  const hedge: ExplainLayer | undefined = h
    ? {
        layer: "hedge",
        active: op.plan.kind === "hedge",
        ...(op.plan.repeatable ? {} : { note: notSafe }),
        settings: [
          ms("hedge.delay", h.delayMs),
          setting("hedge.maxAttempts", h.maxAttempts, String(h.maxAttempts)),
          setting("hedge.budget", h.budget, pct(h.budget)),
        ],
      }
    : undefined;

  const attempt: ExplainLayer = {
    layer: "attempt timeout",
    active: true,
    settings: [
      ms("timeout.attempt", op.timeout.attemptMs),
      ...(op.timeout.headersMs === undefined ? [] : [ms("timeout.headers", op.timeout.headersMs)]),
    ],
  };

  const basis = {
    method: "idempotent method",
    asserted: "idempotent: true",
    key: `idempotency key ${op.idempotencyKey?.header ?? ""}`.trim(),
    none: "not idempotent",
  }[op.idempotency];
  const transport: ExplainLayer = {
    layer: "transport",
    active: true,
    settings: [
      setting(
        "transport",
        policy.transport,
        policy.transport === "http"
          ? `http ${op.method ?? ""} ${op.path ?? ""}`.trim()
          : "function (the caller's async function)",
      ),
      // where the model decided it: the key, `idempotent:` as written, or the method
      setting("idempotency", op.idempotency, basis),
    ],
  };

  const middle = hedge ? [retry, hedge] : [retry];
  // shown where a limit applies or was turned off: every attempt takes a permit before the
  // breaker is asked (templates/runtime/call.ts)
  const limit = op.rateLimit === undefined ? policy.rateLimit : op.rateLimit;
  const from =
    op.rateLimit === undefined ? policy.provenance["rateLimit"] : op.provenance["rateLimit"];
  const perSecond = (t: { text: string; perSecond: number }) =>
    t.text.endsWith("/s") ? t.text : `${t.text} (${String(round2(t.perSecond))}/s)`;
  const rateLimit: ExplainLayer[] =
    limit === undefined
      ? []
      : limit === false
        ? [
            {
              layer: "rate limit",
              active: false,
              note: "turned off: rateLimit: false",
              settings: [],
            },
          ]
        : [
            {
              layer: "rate limit",
              active: true,
              note: `${op.rateLimit === undefined ? "the dependency's, shared" : "its own"}: every attempt takes a permit`,
              settings: [
                setting("rateLimit.rate", limit.rate.perSecond, perSecond(limit.rate), from),
                setting("rateLimit.burst", limit.burst, String(limit.burst), from),
                setting("rateLimit.maxWait", limit.maxWaitMs, formatMs(limit.maxWaitMs), from),
                setting("rateLimit.maxPause", limit.maxPauseMs, formatMs(limit.maxPauseMs), from),
                ...(limit.store === "redis"
                  ? [
                      setting(
                        "rateLimit.store",
                        "redis",
                        `redis, shared by ${String(limit.replicas ?? 1)} replicas (${String(round2(limit.rate.perSecond / (limit.replicas ?? 1)))}/s each while Redis cannot answer)`,
                        from,
                      ),
                    ]
                  : []),
                setting(
                  "rateLimit.quota",
                  limit.quota?.perSecond ?? limit.rate.perSecond,
                  limit.quota === null ? "the rate itself" : perSecond(limit.quota),
                  from,
                ),
                ...(policy.latency.rps === undefined
                  ? []
                  : [
                      ((load) => setting("offered load", load.value, load.text, load.provenance))(
                        offeredLoad(policy.latency.rps, op.plan.attempts, limit),
                      ),
                    ]),
              ],
            },
          ];
  // several endpoints: the breaker layer is one breaker per endpoint, and the endpoint is chosen
  // with its breaker's permit (templates/runtime/endpoints.ts)
  const ep = policy.endpoints;
  const attemptsMax = op.plan.attempts;
  const endpoints: ExplainLayer[] =
    ep === undefined
      ? []
      : [
          {
            layer: "endpoints",
            active: true,
            note: "retries and hedges go to an untried endpoint; all open: circuit-open",
            settings: [
              setting("endpoints.choose", ep.choose, ep.choose, policy.provenance["endpoints"]),
              setting("endpoints.max", ep.max, String(ep.max), policy.provenance["endpoints"]),
              setting(
                "endpoints.breakers",
                policy.breaker === null ? 0 : ep.max,
                policy.breaker === null
                  ? "none (no breaker declared)"
                  : `one per endpoint (up to ${String(ep.max)})`,
                { origin: "derived", formula: "a breaker per endpoint" },
              ),
              setting(
                "endpoints.per call",
                Math.min(attemptsMax, ep.max),
                attemptsMax <= 1
                  ? "1 (one attempt)"
                  : `up to ${String(Math.min(attemptsMax, ep.max))} different (${String(attemptsMax)} attempts)`,
                { origin: "derived", formula: "min(attempts, endpoints.max)" },
              ),
            ],
          },
        ];
  return {
    name: op.name,
    ...(op.method === undefined ? {} : { method: op.method }),
    ...(op.path === undefined ? {} : { path: op.path }),
    repeatable: op.plan.repeatable,
    idempotency: op.idempotency,
    plan: attemptPlanOf(op.plan),
    // the runtime's order: the breaker admits each attempt inside the retry loop (or each hedged copy)
    // a coalesced call joins the chain after its own deadline is set; the chain runs the rest once
    stack: [
      deadline,
      ...(coalesce ? [coalesce] : []),
      fallback,
      bulkhead,
      ...middle,
      ...rateLimit,
      breaker,
      ...endpoints,
      attempt,
      transport,
    ],
    worstCase: worst(policy, op),
  };
}

function worst(policy: ResolvedPolicy, op: ResolvedOperation): ExplainWorstCase {
  // the operation's one plan (src/model/plan.ts): its kind, attempts, worst case and budget
  const p = op.plan;
  const { totalMs } = op.timeout;
  const { ms: maxTimeMs, formula } = p.worstCase;
  const plan = p.kind;
  const maxAttempts = p.attempts;
  const within = p.attemptsWithinTotal;
  const rps = policy.latency.rps;
  const calls = Math.max(1, Math.round(rps ?? 100));
  const callsBasis = rps === undefined ? "100 calls (no rps declared)" : `one second at ${rps} rps`;
  const bound = attemptBound(p, calls);
  const without = bound.without;
  const withBudget = bound.withBudget;
  const budgetFormula = bound.formula;
  return {
    maxAttempts,
    plan,
    maxTimeMs,
    formula,
    totalMs,
    attemptsWithinTotal: Math.min(within, maxAttempts),
    fitsInTotal: maxTimeMs <= totalMs,
    outage: {
      calls,
      callsBasis,
      attemptsWithoutBudget: without,
      amplificationWithoutBudget: maxAttempts,
      attemptsWithBudget: withBudget,
      amplificationWithBudget: withBudget === null ? null : round2(withBudget / calls),
      ...(budgetFormula === undefined ? {} : { budgetFormula }),
    },
  };
}

/** The most attempts a number of calls can make: {@link attemptBound}. */
export interface AttemptBound {
  /** Every call making all its attempts. */
  readonly without: number;
  /** With the retry or hedge budget; null when there is none. */
  readonly withBudget: number | null;
  /** How `withBudget` is reached, in words; absent without a budget. */
  readonly formula?: string;
}

/**
 * The most attempts `calls` logical calls of an operation make when they fail. Without a budget
 * each makes all its attempts. The retry budget (gRPC A6) lets a retry through only while more
 * than half its tokens are left, and every failure costs one, so at most maxTokens/2 + 1 retries
 * get through, plus tokenRatio for each of `successes` successful attempts (0 in an outage: the
 * figure explain prints). The hedge budget starts with max(1, 100 × ratio) tokens and earns
 * ratio per call, and each hedged copy spends one, so at most that many copies are sent.
 * `resgen chaos` checks the load it measures against this same bound.
 */
export function attemptBound(plan: OperationPlan, calls: number, successes = 0): AttemptBound {
  const without = calls * plan.attempts;
  const budget = plan.budget;
  if (budget?.kind === "retry") {
    const half = budget.maxTokens / 2;
    // thousandths, as the runtime counts tokens: no float drift in the earned tokens
    const earned = Math.round(budget.tokenRatio * 1000 * successes) / 1000;
    const total = calls + half + 1 + earned;
    const formula =
      successes === 0
        ? `gRPC A6 retry budget: N + maxTokens/2 + 1 = ${calls} + ${budget.maxTokens}/2 + 1 = ${total}`
        : `gRPC A6 retry budget: N + maxTokens/2 + 1 + tokenRatio × successes = ${calls} + ${budget.maxTokens}/2 + 1 + ${budget.tokenRatio} × ${successes} = ${total}`;
    return { without, withBudget: Math.min(without, Math.floor(total)), formula };
  }
  if (budget?.kind === "hedge") {
    // the runtime's bucket (templates/runtime/hedge-budget.ts) starts full with max(1, 100 ×
    // ratio) tokens and earns `ratio` per call; every hedged copy spends one
    const start = Math.max(1, Math.round(100 * budget.ratio * 1000) / 1000);
    const earned = Math.round(calls * budget.ratio * 1000) / 1000;
    const copies = Math.min(calls * (plan.attempts - 1), Math.floor(start + earned));
    const withBudget = calls + copies;
    return {
      without,
      withBudget,
      formula: `hedge budget ${pct(budget.ratio)}: N + max(1, 100 × ${budget.ratio}) + N × ${budget.ratio} = ${calls} + ${start} + ${earned} → ${withBudget}`,
    };
  }
  return { without, withBudget: null };
}

// ---------------------------------------------------------------------------------------------
// Text

const ORIGIN_LABEL: Readonly<Record<Origin, string>> = {
  operation: "operation",
  policy: "policy",
  project: "project defaults",
  derived: "derived",
  default: "default",
  absent: "absent",
  override: "override",
};
/** Settings of the project file outside `defaults:` (docs/policy.md, "The project file"). */
const PROJECT_SETTINGS: ReadonlySet<string> = new Set(["deadline.header", "deadline.format"]);

function originText(s: ExplainSetting, policyFile: string): string {
  // the project file holds defaults (under `defaults:`) and project-wide settings, which no policy overrides
  const label =
    s.origin === "project" && PROJECT_SETTINGS.has(s.key) ? "project file" : ORIGIN_LABEL[s.origin];
  // the header names the policy file; its own lines are shown by base name to keep rows short
  if (s.source)
    return `${label} (${s.source.startsWith(`${policyFile}:`) ? s.source.slice(policyFile.lastIndexOf("/") + 1) : s.source})`;
  if (s.formula)
    return s.origin === "default" || s.origin === "absent" ? s.formula : `${label}: ${s.formula}`;
  return label;
}

export function renderExplainText(report: ExplainReport): string {
  const out: string[] = [];
  const l = report.latency;
  const latency = [
    l.p50Ms === undefined ? undefined : `p50 ${formatMs(l.p50Ms)}`,
    l.p95Ms === undefined ? undefined : `p95 ${formatMs(l.p95Ms)}`,
    l.p99Ms === undefined ? undefined : `p99 ${formatMs(l.p99Ms)}`,
    l.p999Ms === undefined ? undefined : `p999 ${formatMs(l.p999Ms)}`,
    l.rps === undefined ? undefined : `${l.rps} rps`,
  ].filter(Boolean);
  out.push(
    `${report.dependency} (${report.file}): ${report.essential ? "essential" : "optional"}, ${report.transport}`,
  );
  out.push(`latency: ${latency.length > 0 ? latency.join(", ") : "none declared"}`);
  for (const op of report.operations) {
    out.push("", `${op.name}${op.method ? `  ${op.method} ${op.path ?? ""}` : ""}`.trimEnd());
    const rows: [string, string, string, string][] = [];
    op.stack.forEach((layer, i) => {
      const head = `${i + 1}. ${layer.layer}`;
      if (layer.settings.length === 0) rows.push([head, "", layer.note ?? "off", ""]);
      layer.settings.forEach((s, j) =>
        rows.push([j === 0 ? head : "", s.key, s.text, originText(s, report.file)]),
      );
      if (layer.note && layer.settings.length > 0) rows.push(["", "", `(${layer.note})`, ""]);
    });
    const w = [0, 1, 2].map((c) => Math.max(...rows.map((r) => r[c]!.length)));
    for (const r of rows)
      out.push(
        `  ${r[0].padEnd(w[0]!)}  ${r[1].padEnd(w[1]!)}  ${r[2].padEnd(w[2]!)}  ${r[3]}`.trimEnd(),
      );
    const wc = op.worstCase;
    const o = wc.outage;
    out.push("  worst case");
    out.push(`    attempts      ${wc.maxAttempts}: ${describePlan(op.plan)}`);
    out.push(
      `    time          ${wc.formula}${wc.fitsInTotal ? `, within the total ${formatMs(wc.totalMs)}` : `, over the total ${formatMs(wc.totalMs)}: only ${wc.attemptsWithinTotal} of ${wc.maxAttempts} attempts fit`}`,
    );
    out.push(
      `    outage        ${o.calls} calls (${o.callsBasis}) → ${o.attemptsWithoutBudget} attempts without a budget (${o.amplificationWithoutBudget}×)`,
    );
    // worstCase() sets the three together
    const { attemptsWithBudget, amplificationWithBudget, budgetFormula } = o;
    if (
      attemptsWithBudget !== null &&
      amplificationWithBudget !== null &&
      budgetFormula !== undefined
    ) {
      out.push(
        `                  with the budget at most ${attemptsWithBudget} attempts (${amplificationWithBudget}×): ${budgetFormula}`,
      );
    }
  }
  const ll = report.littlesLaw;
  out.push("");
  if (ll) {
    const healthy =
      ll.inFlightHealthy === undefined
        ? ""
        : `${ll.rps} rps × p99 ${formatMs(ll.p99Ms!)} = ${ll.inFlightHealthy} in flight when healthy; `;
    out.push(
      `bulkhead (Little's law): ${healthy}${ll.rps} rps × attempt ${formatMs(ll.attemptMs)} = ${ll.inFlightAllTimingOut} when every attempt times out; ${ll.maxConcurrent === null ? "no bulkhead declared" : `maxConcurrent ${ll.maxConcurrent}`}${ll.adaptive === undefined ? "" : `, adaptive between ${ll.adaptive.minLimit} and ${ll.adaptive.maxLimit}`}`,
    );
  } else {
    out.push("bulkhead (Little's law): declare latency.rps and p99 to size it");
  }
  if (report.findings.length > 0) {
    out.push("", "findings");
    for (const f of report.findings) out.push(`  ${f.at} ${f.severity} ${f.code} ${f.message}`);
  }
  return out.join("\n") + "\n";
}

export function renderExplainJson(report: ExplainReport): string {
  return JSON.stringify(report, null, 2) + "\n";
}

/**
 * The worst-case load on a rate limit, as RG230 counts it: `latency.rps` is one replica's rate
 * (docs/tune.md, "Several replicas"), so a limit kept in Redis, which is the fleet's, meets every
 * replica's.
 */
function offeredLoad(
  rps: number,
  attempts: number,
  limit: ResolvedRateLimit,
): { value: number; text: string; provenance: Provenance } {
  const fleet = limit.store === "redis" ? (limit.replicas ?? 1) : 1;
  const value = round2(rps * fleet * attempts);
  const replicas = fleet > 1 ? ` × ${String(fleet)} replicas` : "";
  return {
    value,
    text: `worst case rps ${String(rps)}${replicas} × ${String(attempts)} attempts = ${String(value)}/s`,
    provenance: {
      origin: "derived",
      formula: fleet > 1 ? "latency.rps × rateLimit.replicas × attempts" : "latency.rps × attempts",
    },
  };
}
