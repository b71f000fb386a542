/**
 * Normalisation: a validated policy plus the project defaults become the resolved model.
 * Every effective value is looked up operation → policy → project defaults → derived from
 * latency → built-in default, and the step that supplied it is recorded as its provenance.
 * The formulas are documented in docs/policy.md ("Derived defaults").
 */
import { isRetrySafeRead } from "./reads.js";
import { planOperation, planWorstCase, type PlanInputs } from "./plan.js";
import {
  formatMs,
  formatThroughput,
  parseDuration,
  parseRate,
  parseThroughput,
  perSecond,
} from "../language/durations.js";
import type { Path } from "../language/parse.js";
import type {
  ResolvedAdaptiveConcurrency,
  ResolvedBackoff,
  ResolvedBreaker,
  ResolvedBudget,
  ResolvedBulkhead,
  ResolvedDeadline,
  ResolvedFallback,
  ResolvedHedge,
  ResolvedLatency,
  ResolvedOperation,
  ResolvedRateLimit,
  ResolvedThroughput,
  ResolvedPolicy,
  ResolvedRetry,
  ResolvedTimeout,
  ResolvedAuthScheme,
  IdempotencyBasis,
  Origin,
  Provenance,
  ProvenanceInput,
  RetryCondition,
  ErrorCondition,
  ResultCondition,
  SourceRef,
} from "./resolved.js";
import {
  ADAPTIVE_DEFAULTS,
  RANGES,
  resultPathSegments,
  type BreakerInput,
  type BulkheadInput,
  type DefaultsInput,
  type FallbackInput,
  type OperationInput,
  type PolicyInput,
  type ProjectConfigInput,
  type RateLimitInput,
} from "../language/schema.js";

/** Built-in defaults, used when neither the policy, the project nor latency says otherwise. */
export const DEFAULTS = {
  essential: true,
  transport: "http",
  attemptMs: 2_000,
  marginMs: 10,
  propagate: true,
  header: "x-request-timeout-ms",
  grpcHeader: "grpc-timeout",
  retry: { maxAttempts: 3, baseMs: 50, capMs: 1_000, multiplier: 2, jitter: "full" },
  retryOn: ["timeout", "network", 408, 425, 429, 500, 502, 503, 504] as const,
  budget: { maxTokens: 100, tokenRatio: 0.1 },
  breaker: {
    failureRate: 0.5,
    windowMs: 10_000,
    buckets: 10,
    minCalls: 20,
    openForMs: 30_000,
    halfOpenMaxCalls: 3,
  },
  slowCallRate: 1,
  /** The slow-call rate of a slow-call threshold derived from latency (docs/policy.md, "Derived defaults"). */
  derivedSlowCallRate: 0.5,
  bulkhead: { maxConcurrent: 10, maxQueue: 0, queueTimeoutMs: 0, overflow: "reject" },
  rateLimit: { burst: 1, maxWaitMs: 0, maxPauseMs: 60_000 },
  // the runtime's DEFAULT_ENDPOINTS (templates/runtime/endpoints.ts)
  endpoints: { choose: "power-of-two", max: 8 },
  hedge: { delayMs: 50, maxAttempts: 2, budget: 0.05 },
  stale: { maxAgeMs: 300_000, maxEntries: 1_000 },
  kubernetes: { namespace: "default", hostSuffix: "svc.cluster.local" },
  // the runtime's DEFAULT_MAX_RESPONSE_BYTES (templates/runtime/http.ts): 8 MiB
  maxResponseBytes: 8 * 1024 * 1024,
} as const;

/** Methods that are idempotent by HTTP semantics (RFC 9110 §9.2.2). */
export const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set([
  "GET",
  "HEAD",
  "OPTIONS",
  "PUT",
  "DELETE",
]);

/**
 * resgen.config.yaml as the model reads it: the file's name and its validated content, whose
 * `defaults:` each policy inherits and whose settings (`deadline`, `kubernetes`) apply to all.
 */
export interface ConfigSettings {
  /** The project file's name as the model's SourceRefs spell it, when there is one. */
  readonly configFile?: string;
  readonly config?: ProjectConfigInput;
}

type Sections = DefaultsInput;

/** One place a value may come from: who supplied it, where, and the raw value. */
interface Layer<T> {
  readonly origin: Origin;
  readonly source: SourceRef;
  readonly value: T | undefined;
}

class Tracer {
  readonly provenance: Record<string, Provenance> = {};

  /** The first defined value among `layers`, else `fallback()`; records where it came from. */
  pick<T, R>(
    key: string,
    layers: readonly Layer<T>[],
    convert: (raw: T) => R,
    fallback: () => [R, Provenance],
  ): R {
    for (const layer of layers) {
      if (layer.value !== undefined) {
        this.provenance[key] = { origin: layer.origin, source: layer.source };
        return convert(layer.value);
      }
    }
    const [value, provenance] = fallback();
    this.provenance[key] = provenance;
    return value;
  }

  note(key: string, provenance: Provenance): void {
    this.provenance[key] = provenance;
  }
}

const ms = (raw: string): number => {
  const parsed = parseDuration(raw);
  // validation ran first, so a failure here is a bug in the schema, not the user's mistake
  if (!parsed.ok) throw new Error(`internal: unvalidated duration ${raw}`);
  return parsed.value;
};
const fraction = (raw: string | number): number => {
  const parsed = parseRate(raw);
  if (!parsed.ok) throw new Error(`internal: unvalidated rate ${String(raw)}`);
  return parsed.value;
};
const same = <T>(v: T): T => v;
const builtIn = (value: unknown): Provenance => ({
  origin: "default",
  formula: `built-in default ${String(value)}`,
});
/** A layer nothing declares and nothing derives: `why` says how to get one. */
const absent = (why: string): Provenance => ({ origin: "absent", formula: why });
/** A value derived from `inputs`, positioned at `source` (the section it was derived from). */
const derived = (
  formula: string,
  source: SourceRef | undefined,
  inputs: readonly ProvenanceInput[],
): Provenance => ({
  origin: "derived",
  ...(source === undefined ? {} : { source }),
  inputs,
  formula,
});
/** A latency entry as an input of a derived value. */
const latencyInput = (file: string, key: string): ProvenanceInput => ({
  key: `latency.${key}`,
  source: { file, path: ["latency", key] },
});
/** An input that is itself an effective value: its key and, when it was set in a file, where. */
const valueInput = (key: string, provenance: Provenance | undefined): ProvenanceInput => {
  const set =
    provenance?.source &&
    (provenance.origin === "operation" ||
      provenance.origin === "policy" ||
      provenance.origin === "project")
      ? provenance.source
      : undefined;
  return set ? { key, source: set } : { key };
};

/** Resolves one validated policy against the project file's defaults and settings. Pure; never throws on valid input. */
export function normalize(
  policy: PolicyInput,
  file: string,
  project: ConfigSettings = {},
): ResolvedPolicy {
  const defaults: Sections = project.config?.defaults ?? {};
  const configFile = project.configFile ?? "resgen.config.yaml";
  const at = (path: Path): SourceRef => ({ file, path });
  const atProject = (path: Path): SourceRef => ({ file: configFile, path: ["defaults", ...path] });
  /** The policy's value and the project's default for the same path, in that order. */
  const layers = <T>(
    path: Path,
    fromPolicy: T | undefined,
    fromProject: T | undefined,
  ): Layer<T>[] => [
    { origin: "policy", source: at(path), value: fromPolicy },
    { origin: "project", source: atProject(path), value: fromProject },
  ];

  const t = new Tracer();
  const latency = resolveLatency(policy);

  const essential = t.pick(
    "essential",
    layers(["essential"], policy.essential, defaults.essential),
    same,
    () => [DEFAULTS.essential, builtIn(DEFAULTS.essential)],
  );
  const transport = t.pick(
    "transport",
    layers(["transport"], policy.transport, defaults.transport),
    same,
    () => [DEFAULTS.transport, builtIn(DEFAULTS.transport)],
  );

  const format = project.config?.deadline?.format ?? "ms";
  // project-wide settings: no policy overrides them, so they are noted where the project file sets them
  const deadlineSettings = project.config?.deadline;
  t.note(
    "deadline.format",
    deadlineSettings?.format === undefined
      ? builtIn("ms")
      : { origin: "project", source: { file: configFile, path: ["deadline", "format"] } },
  );
  t.note(
    "deadline.header",
    deadlineSettings?.header === undefined
      ? { origin: "default", formula: `built-in default for format ${format}` }
      : { origin: "project", source: { file: configFile, path: ["deadline", "header"] } },
  );
  const deadline: ResolvedDeadline = {
    propagate: t.pick(
      "deadline.propagate",
      layers(["deadline", "propagate"], policy.deadline?.propagate, defaults.deadline?.propagate),
      same,
      () => [DEFAULTS.propagate, builtIn(DEFAULTS.propagate)],
    ),
    marginMs: t.pick(
      "deadline.margin",
      layers(["deadline", "margin"], policy.deadline?.margin, defaults.deadline?.margin),
      ms,
      () => [DEFAULTS.marginMs, builtIn("10ms")],
    ),
    header:
      project.config?.deadline?.header ??
      (format === "grpc-timeout" ? DEFAULTS.grpcHeader : DEFAULTS.header),
    format,
  };

  const breaker = resolveBreaker(policy, defaults, t, layers, at, atProject, latency, file);
  const bulkhead = resolveBulkhead(policy, defaults, t, layers, at, atProject, latency, file);
  const budget = resolveBudget(policy, defaults, t, layers);
  const rateLimit = resolveRateLimit(policy.rateLimit, at(["rateLimit"]));
  t.note(
    "rateLimit",
    policy.rateLimit === undefined
      ? absent("no rate limit unless one is declared")
      : { origin: "policy", source: at(["rateLimit"]) },
  );

  const endpoints =
    policy.endpoints === undefined
      ? undefined
      : {
          choose: policy.endpoints.choose ?? DEFAULTS.endpoints.choose,
          max: policy.endpoints.max ?? DEFAULTS.endpoints.max,
          source: at(["endpoints"]),
        };
  t.note(
    "endpoints",
    policy.endpoints === undefined
      ? absent("one endpoint: the client's baseUrl")
      : { origin: "policy", source: at(["endpoints"]) },
  );

  const auth = resolveAuth(policy, transport);
  const operations = Object.entries(policy.operations ?? {}).map(([name, op]) =>
    resolveOperation(name, op, {
      policy,
      defaults,
      latency,
      transport,
      file,
      configFile,
      marginMs: deadline.marginMs,
      margin: t.provenance["deadline.margin"],
      budget,
    }),
  );

  return {
    file,
    source: at([]),
    dependency: policy.dependency,
    ...(policy.description === undefined ? {} : { description: policy.description }),
    essential,
    transport,
    latency,
    deadline,
    breaker,
    bulkhead,
    budget,
    ...(rateLimit === undefined ? {} : { rateLimit }),
    ...(endpoints === undefined ? {} : { endpoints }),
    calls: policy.calls ?? [],
    maxResponseBytes: t.pick(
      "maxResponseBytes",
      layers(["maxResponseBytes"], policy.maxResponseBytes, undefined),
      same,
      () => [DEFAULTS.maxResponseBytes, builtIn("8388608 (8 MiB)")],
    ),
    // only when set, so a policy without it resolves (and emits) what it did before
    ...(policy.redirects === "same-origin" ? { redirects: "same-origin" as const } : {}),
    kubernetes: resolveKubernetes(policy, project, t, at(["host"])),
    operations: auth === undefined ? operations : withAuth(operations, policy, auth),
    schemas: policy.schemas ?? {},
    ...(auth === undefined ? {} : { auth: auth.schemes }),
    provenance: t.provenance,
  };
}

/**
 * The policy's security schemes and its default requirement (docs/policy.md, "Credentials");
 * `undefined` without `auth:` or outside the http transport. `use` defaults to each scheme on
 * its own, in the order declared. Names no scheme declares were reported (RG118) and are dropped.
 */
function resolveAuth(
  policy: PolicyInput,
  transport: "http" | "function",
): { schemes: ResolvedAuthScheme[]; use: string[][] } | undefined {
  const auth = policy.auth;
  if (auth === undefined || transport !== "http") return undefined;
  const schemes: ResolvedAuthScheme[] = Object.entries(auth.schemes).map(([name, scheme]) =>
    scheme.type === "apiKey"
      ? { name, type: "apiKey", in: scheme.in, param: scheme.name }
      : { name, type: scheme.type },
  );
  const use =
    auth.use === undefined ? schemes.map((s) => [s.name]) : requirement(auth.use, schemes);
  return { schemes, use };
}

/** A requirement as alternatives of scheme names, keeping only declared schemes. */
function requirement(
  raw: NonNullable<OperationInput["auth"]>,
  schemes: readonly ResolvedAuthScheme[],
): string[][] {
  const known = new Set(schemes.map((s) => s.name));
  return raw
    .map((entry) => (Array.isArray(entry) ? entry : [entry]))
    .filter((names) => names.every((n) => known.has(n)));
}

function withAuth(
  operations: readonly ResolvedOperation[],
  policy: PolicyInput,
  auth: { schemes: ResolvedAuthScheme[]; use: string[][] },
): ResolvedOperation[] {
  return operations.map((op) => {
    const own = policy.operations?.[op.name]?.auth;
    return { ...op, auth: own === undefined ? auth.use : requirement(own, auth.schemes) };
  });
}

/** The namespace of mesh resources and the dependency's host; `host` records where the host came from. */
function resolveKubernetes(
  policy: PolicyInput,
  project: ConfigSettings,
  t: Tracer,
  hostRef: SourceRef,
): { namespace: string; host: string } {
  const k = project.config?.kubernetes;
  const namespace = k?.namespace ?? DEFAULTS.kubernetes.namespace;
  if (policy.host !== undefined) {
    t.note("host", { origin: "policy", source: hostRef });
    return { namespace, host: policy.host };
  }
  const label = dnsLabel(policy.dependency);
  const host = `${label}.${namespace}.${k?.hostSuffix ?? DEFAULTS.kubernetes.hostSuffix}`;
  const configFile = project.configFile ?? "resgen.config.yaml";
  const setting = (key: "namespace" | "hostSuffix"): ProvenanceInput =>
    k?.[key] === undefined
      ? { key: `kubernetes.${key}` }
      : { key: `kubernetes.${key}`, source: { file: configFile, path: ["kubernetes", key] } };
  t.note(
    "host",
    derived(
      `<dependency>.<namespace>.<hostSuffix> = ${host}`,
      { file: hostRef.file, path: ["dependency"] },
      [
        { key: "dependency", source: { file: hostRef.file, path: ["dependency"] } },
        setting("namespace"),
        setting("hostSuffix"),
      ],
    ),
  );
  return { namespace, host };
}

/** A dependency name as a DNS label: lowercase, words joined by "-" (recordClick → record-click). */
export function dnsLabel(name: string): string {
  const label = name
    .replace(/([a-z0-9])([A-Z])/g, "$1-$2")
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/-+/g, "-")
    .replace(/^-|-$/g, "");
  return label.slice(0, 63).replace(/-$/, "") || "dependency";
}

function resolveLatency(policy: PolicyInput): ResolvedLatency {
  const l = policy.latency ?? {};
  const out: { -readonly [K in keyof ResolvedLatency]?: number } = {};
  if (l.p50 !== undefined) out.p50Ms = ms(l.p50);
  if (l.p90 !== undefined) out.p90Ms = ms(l.p90);
  if (l.p95 !== undefined) out.p95Ms = ms(l.p95);
  if (l.p99 !== undefined) out.p99Ms = ms(l.p99);
  if (l.p999 !== undefined) out.p999Ms = ms(l.p999);
  if (l.rps !== undefined) out.rps = l.rps;
  return out;
}

type Layers = <T>(path: Path, fromPolicy: T | undefined, fromProject: T | undefined) => Layer<T>[];

/** Where a dependency-level layer (breaker, bulkhead) was turned on, or off with `false`; undefined when no file sets it. */
function noteLayer(
  t: Tracer,
  key: string,
  own: object | false | undefined,
  project: object | undefined,
  at: (path: Path) => SourceRef,
  atProject: (path: Path) => SourceRef,
): void {
  if (own !== undefined) t.note(key, { origin: "policy", source: at([key]) });
  else if (project !== undefined) t.note(key, { origin: "project", source: atProject([key]) });
}

function resolveBreaker(
  policy: PolicyInput,
  defaults: Sections,
  t: Tracer,
  layers: Layers,
  at: (path: Path) => SourceRef,
  atProject: (path: Path) => SourceRef,
  latency: ResolvedLatency,
  file: string,
): ResolvedBreaker | null {
  const project = defaults.breaker;
  noteLayer(t, "breaker", policy.breaker, project, at, atProject);
  if (policy.breaker === undefined && project === undefined)
    t.note("breaker", absent("no breaker unless one is declared"));
  // `breaker: false` in the policy turns a breaker inherited from the project defaults off
  if (policy.breaker === false || (!policy.breaker && !project)) return null;
  const own = policy.breaker;
  const d = DEFAULTS.breaker;
  const failureRate = t.pick(
    "breaker.failureRate",
    layers(["breaker", "failureRate"], own?.failureRate, project?.failureRate),
    fraction,
    () => [d.failureRate, builtIn("50%")],
  );
  const slow = own?.slowCall ?? project?.slowCall;
  const slowCall = slow
    ? {
        durationMs: t.pick(
          "breaker.slowCall.duration",
          layers(
            ["breaker", "slowCall", "duration"],
            own?.slowCall?.duration,
            project?.slowCall?.duration,
          ),
          ms,
          () => [0, builtIn(0)],
        ),
        rate: t.pick(
          "breaker.slowCall.rate",
          layers(["breaker", "slowCall", "rate"], own?.slowCall?.rate, project?.slowCall?.rate),
          fraction,
          () => [DEFAULTS.slowCallRate, builtIn("100%")],
        ),
      }
    : derivedSlowCall(latency, t, file);
  const w = own?.window ?? project?.window;
  if (w?.calls !== undefined) {
    const fromPolicy = own?.window !== undefined;
    t.note("breaker.window.calls", {
      origin: fromPolicy ? "policy" : "project",
      source: (fromPolicy ? at : atProject)(["breaker", "window", "calls"]),
    });
  }
  const window: ResolvedBreaker["window"] =
    w?.calls !== undefined
      ? { kind: "count", calls: w.calls }
      : {
          kind: "time",
          durationMs: t.pick(
            "breaker.window.duration",
            layers(
              ["breaker", "window", "duration"],
              own?.window?.duration,
              project?.window?.duration,
            ),
            ms,
            () => [d.windowMs, builtIn("10s")],
          ),
          buckets: t.pick(
            "breaker.window.buckets",
            layers(
              ["breaker", "window", "buckets"],
              own?.window?.buckets,
              project?.window?.buckets,
            ),
            same,
            () => [d.buckets, builtIn(d.buckets)],
          ),
        };
  const minCalls = t.pick(
    "breaker.minCalls",
    layers(["breaker", "minCalls"], own?.minCalls, project?.minCalls),
    same,
    () => [d.minCalls, builtIn(d.minCalls)],
  );
  // openFor is a duration, or { base, cap, multiplier } for open-duration backoff (docs/policy.md,
  // "Breaker"): the policy's value replaces the project's as a whole
  const baseOf = (v: BreakerInput["openFor"]): string | undefined =>
    typeof v === "object" ? v.base : v;
  const openFor = own?.openFor ?? project?.openFor;
  const openForMs = t.pick(
    "breaker.openFor",
    layers(["breaker", "openFor"], baseOf(own?.openFor), baseOf(project?.openFor)),
    ms,
    () => [d.openForMs, builtIn("30s")],
  );
  const fromOwn = own?.openFor !== undefined;
  const openBackoff =
    typeof openFor === "object"
      ? {
          capMs: t.pick(
            "breaker.openFor.cap",
            layers(["breaker", "openFor", "cap"], fromOwn ? openFor.cap : undefined, openFor.cap),
            ms,
            () => [openForMs, builtIn(openForMs)],
          ),
          multiplier: t.pick(
            "breaker.openFor.multiplier",
            layers(
              ["breaker", "openFor", "multiplier"],
              fromOwn ? openFor.multiplier : undefined,
              fromOwn ? undefined : openFor.multiplier,
            ),
            same,
            () => [2, builtIn(2)],
          ),
        }
      : undefined;
  const maxCalls = t.pick(
    "breaker.halfOpen.maxCalls",
    layers(
      ["breaker", "halfOpen", "maxCalls"],
      own?.halfOpen?.maxCalls,
      project?.halfOpen?.maxCalls,
    ),
    same,
    () => [d.halfOpenMaxCalls, builtIn(d.halfOpenMaxCalls)],
  );
  const successes = t.pick(
    "breaker.halfOpen.successes",
    layers(
      ["breaker", "halfOpen", "successes"],
      own?.halfOpen?.successes,
      project?.halfOpen?.successes,
    ),
    same,
    () => {
      const input = valueInput(
        "breaker.halfOpen.maxCalls",
        t.provenance["breaker.halfOpen.maxCalls"],
      );
      return [maxCalls, derived(`halfOpen.maxCalls = ${maxCalls}`, input.source, [input])];
    },
  );
  // slow start after recovery: only when asked for, so breakers without one keep their settings as they were
  const rampUpMs =
    (own?.rampUp ?? project?.rampUp) === undefined
      ? undefined
      : t.pick(
          "breaker.rampUp",
          layers(["breaker", "rampUp"], own?.rampUp, project?.rampUp),
          ms,
          () => [0, builtIn(0)],
        );
  return {
    failureRate,
    slowCall,
    window,
    minCalls,
    openForMs,
    halfOpen: { maxCalls, successes },
    ...(rampUpMs === undefined ? {} : { rampUpMs }),
    ...(openBackoff === undefined ? {} : { openBackoff }),
  };
}

/**
 * A slow-call threshold from latency, for a breaker that declares none (docs/policy.md, "Derived
 * defaults"): a call slower than p999 (else 2 × p99) is slow, and the breaker opens when half the
 * calls of the window are. Healthy traffic has at most 0.1% (1%) of its calls over the threshold,
 * far from half: only a dependency whose median call is slower than its healthy tail trips it.
 * Without p999 or p99 nothing bounds the healthy tail, so nothing is derived.
 */
function derivedSlowCall(
  latency: ResolvedLatency,
  t: Tracer,
  file: string,
): ResolvedBreaker["slowCall"] {
  const { p99Ms, p999Ms } = latency;
  let durationMs: number;
  let formula: string;
  if (p999Ms !== undefined) {
    durationMs = p999Ms;
    formula = `p999 = ${formatMs(p999Ms)}`;
  } else if (p99Ms !== undefined) {
    durationMs = 2 * p99Ms;
    formula = `2 × p99 (${formatMs(p99Ms)}) = ${formatMs(durationMs)}`;
  } else {
    t.note(
      "breaker.slowCall",
      absent("no slow-call threshold: declare it, or latency.p99 or p999 to derive one"),
    );
    return null;
  }
  const section: SourceRef = { file, path: ["latency"] };
  const inputs = [latencyInput(file, p999Ms !== undefined ? "p999" : "p99")];
  if (durationMs > RANGES.slowCall.max) {
    durationMs = RANGES.slowCall.max;
    formula += `, capped at ${formatMs(durationMs)}, the longest slow-call duration`;
  }
  const rate = DEFAULTS.derivedSlowCallRate;
  t.note(
    "breaker.slowCall",
    derived("derived from latency: no slowCall declared", section, inputs),
  );
  t.note("breaker.slowCall.duration", derived(formula, section, inputs));
  t.note(
    "breaker.slowCall.rate",
    derived(
      `${rate * 100}%, far above the ${p999Ms !== undefined ? "0.1%" : "1%"} of healthy calls that slow`,
      section,
      inputs,
    ),
  );
  return { durationMs, rate };
}

/** Little's law with 2× headroom (docs/policy.md, "Derived defaults"): rps × p99 × 2, else rps × p999 × 2, never below the built-in 10. */
function littlesLaw(latency: ResolvedLatency, file: string): [number, Provenance] | undefined {
  const rps = latency.rps;
  const tail =
    latency.p99Ms !== undefined
      ? (["p99", latency.p99Ms] as const)
      : latency.p999Ms !== undefined
        ? (["p999", latency.p999Ms] as const)
        : undefined;
  if (rps === undefined || tail === undefined) return undefined;
  const [name, tailMs] = tail;
  const exact = Math.max(1, Math.ceil(rps * (tailMs / 1000) * 2));
  const floor = DEFAULTS.bulkhead.maxConcurrent;
  const value = Math.min(Math.max(exact, floor), RANGES.bulkhead.max);
  const adjusted =
    value < exact
      ? `, capped at ${RANGES.bulkhead.max}, the largest bulkhead`
      : value > exact
        ? `, raised to ${floor}, the smallest derived bulkhead`
        : "";
  const formula = `Little's law with 2× headroom: ceil(rps ${rps} × ${name} ${formatMs(tailMs)} × 2) = ${exact}${adjusted}`;
  return [
    value,
    derived(formula, { file, path: ["latency"] }, [
      latencyInput(file, "rps"),
      latencyInput(file, name),
    ]),
  ];
}

function resolveBulkhead(
  policy: PolicyInput,
  defaults: Sections,
  t: Tracer,
  layers: Layers,
  at: (path: Path) => SourceRef,
  atProject: (path: Path) => SourceRef,
  latency: ResolvedLatency,
  file: string,
): ResolvedBulkhead | null {
  const project = defaults.bulkhead;
  noteLayer(t, "bulkhead", policy.bulkhead, project, at, atProject);
  // `bulkhead: false` turns off a bulkhead inherited from the project defaults or derived from latency
  if (policy.bulkhead === false) return null;
  const own = policy.bulkhead;
  const d = DEFAULTS.bulkhead;
  if (!own && !project) {
    // no bulkhead declared: with rps and a tail percentile, one is derived by Little's law
    const sized = littlesLaw(latency, file);
    if (!sized) {
      t.note(
        "bulkhead",
        absent("no bulkhead: declare one, or latency.rps and p99 (or p999) to derive one"),
      );
      return null;
    }
    t.note(
      "bulkhead",
      derived("derived from latency: no bulkhead declared", sized[1].source, sized[1].inputs ?? []),
    );
    t.note("bulkhead.maxConcurrent", sized[1]);
    t.note("bulkhead.maxQueue", builtIn(d.maxQueue));
    t.note("bulkhead.queueTimeout", builtIn("0ms"));
    t.note("bulkhead.overflow", builtIn(d.overflow));
    return {
      maxConcurrent: sized[0],
      maxQueue: d.maxQueue,
      queueTimeoutMs: d.queueTimeoutMs,
      overflow: d.overflow,
    };
  }
  const maxConcurrent = t.pick(
    "bulkhead.maxConcurrent",
    layers(["bulkhead", "maxConcurrent"], own?.maxConcurrent, project?.maxConcurrent),
    same,
    (): [number, Provenance] => {
      return littlesLaw(latency, file) ?? [d.maxConcurrent, builtIn(d.maxConcurrent)];
    },
  );
  const adaptive = resolveAdaptive(own, project, maxConcurrent, t, layers);
  return {
    maxConcurrent,
    ...(adaptive === undefined ? {} : { adaptive }),
    maxQueue: t.pick(
      "bulkhead.maxQueue",
      layers(["bulkhead", "maxQueue"], own?.maxQueue, project?.maxQueue),
      same,
      () => [d.maxQueue, builtIn(d.maxQueue)],
    ),
    queueTimeoutMs: t.pick(
      "bulkhead.queueTimeout",
      layers(["bulkhead", "queueTimeout"], own?.queueTimeout, project?.queueTimeout),
      ms,
      () => [d.queueTimeoutMs, builtIn("0ms")],
    ),
    overflow: t.pick(
      "bulkhead.overflow",
      layers(["bulkhead", "overflow"], own?.overflow, project?.overflow),
      same,
      () => [d.overflow, builtIn(d.overflow)],
    ),
  };
}

/**
 * The adaptive limit (docs/runtime.md, "Adaptive concurrency"), when the policy or the project
 * defaults declare `bulkhead.adaptive`: it starts at maxConcurrent (declared or derived by
 * Little's law); maxLimit defaults to twice that, and never below minLimit.
 */
function resolveAdaptive(
  own: BulkheadInput | undefined,
  project: BulkheadInput | undefined,
  maxConcurrent: number,
  t: Tracer,
  layers: Layers,
): ResolvedAdaptiveConcurrency | undefined {
  if (own?.adaptive === undefined && project?.adaptive === undefined) return undefined;
  const a = ADAPTIVE_DEFAULTS;
  const o = own?.adaptive;
  const p = project?.adaptive;
  const at = (leaf: string) => ["bulkhead", "adaptive", leaf];
  const minLimit = t.pick(
    "bulkhead.adaptive.minLimit",
    layers(at("minLimit"), o?.minLimit, p?.minLimit),
    same,
    () => [a.minLimit, builtIn(a.minLimit)],
  );
  const maxLimit = t.pick(
    "bulkhead.adaptive.maxLimit",
    layers(at("maxLimit"), o?.maxLimit, p?.maxLimit),
    same,
    () => {
      const value = Math.max(minLimit, Math.min(maxConcurrent * 2, RANGES.bulkhead.max));
      return [value, builtIn(value)];
    },
  );
  return {
    minLimit,
    maxLimit,
    smoothing: t.pick(
      "bulkhead.adaptive.smoothing",
      layers(at("smoothing"), o?.smoothing, p?.smoothing),
      same,
      () => [a.smoothing, builtIn(a.smoothing)],
    ),
    tolerance: t.pick(
      "bulkhead.adaptive.tolerance",
      layers(at("tolerance"), o?.tolerance, p?.tolerance),
      same,
      () => [a.tolerance, builtIn(a.tolerance)],
    ),
    windowMs: t.pick(
      "bulkhead.adaptive.window",
      layers(at("window"), o?.window, p?.window),
      ms,
      () => [ms(a.window), builtIn(a.window)],
    ),
  };
}

function resolveBudget(
  policy: PolicyInput,
  defaults: Sections,
  t: Tracer,
  layers: Layers,
): ResolvedBudget | null {
  const own = obj(policy.retry)?.budget;
  const project = defaults.retry?.budget;
  const chosen = own !== undefined ? own : project;
  if (chosen === undefined || chosen === false) {
    // `budget: false` is noted where it was written, so a finding about it can point there
    const off = layers(["retry", "budget"], own, project).find((l) => l.value === false);
    t.note(
      "retry.budget",
      off ? { origin: off.origin, source: off.source } : absent("no budget unless one is declared"),
    );
    return null;
  }
  const ownObj = own === false ? undefined : own;
  const projectObj = project === false ? undefined : project;
  return {
    maxTokens: t.pick(
      "retry.budget.maxTokens",
      layers(["retry", "budget", "maxTokens"], ownObj?.maxTokens, projectObj?.maxTokens),
      same,
      () => [DEFAULTS.budget.maxTokens, builtIn(DEFAULTS.budget.maxTokens)],
    ),
    tokenRatio: t.pick(
      "retry.budget.tokenRatio",
      layers(["retry", "budget", "tokenRatio"], ownObj?.tokenRatio, projectObj?.tokenRatio),
      same,
      () => [DEFAULTS.budget.tokenRatio, builtIn(DEFAULTS.budget.tokenRatio)],
    ),
  };
}

interface OperationContext {
  readonly policy: PolicyInput;
  readonly defaults: Sections;
  readonly latency: ResolvedLatency;
  readonly transport: "http" | "function";
  readonly file: string;
  readonly configFile: string;
  /** The deadline margin: a derived total leaves it, so a single attempt's own timeout fires first. */
  readonly marginMs: number;
  /** Where the margin came from, an input of a derived total. */
  readonly margin: Provenance | undefined;
  /** The dependency's retry budget, which bounds a retry plan. */
  readonly budget: ResolvedBudget | null;
}

function resolveOperation(
  name: string,
  op: OperationInput,
  ctx: OperationContext,
): ResolvedOperation {
  const { policy, defaults, latency, file, configFile, marginMs, transport } = ctx;
  const t = new Tracer();
  const opPath: Path = ["operations", name];
  /** Operation override, then the policy's section, then the project default, for one key. */
  const chain = <T>(
    path: Path,
    fromOp: T | undefined,
    fromPolicy: T | undefined,
    fromProject: T | undefined,
  ): Layer<T>[] => [
    { origin: "operation", source: { file, path: [...opPath, ...path] }, value: fromOp },
    { origin: "policy", source: { file, path }, value: fromPolicy },
    {
      origin: "project",
      source: { file: configFile, path: ["defaults", ...path] },
      value: fromProject,
    },
  ];

  // --- idempotency (docs/policy.md, "Operations"): the key wins, then the author's assertion, then the method
  const idempotencyKey = op.idempotency ? { header: op.idempotency.header } : null;
  const [idempotency, idempotencyProvenance] = decideIdempotency(op, transport, {
    file,
    path: opPath,
  });
  t.note("idempotency", idempotencyProvenance);

  // --- layers present for this operation: `false` turns an inherited layer off
  const retryLayers = chain<OperationInput["retry"]>(
    ["retry"],
    op.retry,
    policy.retry,
    defaults.retry,
  );
  const retrySource = retryLayers.find((l) => l.value !== undefined);
  const retryInput = retrySource?.value;
  const retry = retryInput ? resolveRetry(op, policy, defaults, t, chain) : null;
  t.note(
    "retry",
    retrySource
      ? { origin: retrySource.origin, source: retrySource.source }
      : absent("no retry unless one is declared"),
  );

  const hedgeLayers = chain<OperationInput["hedge"]>(
    ["hedge"],
    op.hedge,
    policy.hedge,
    defaults.hedge,
  );
  const hedgeSource = hedgeLayers.find((l) => l.value !== undefined);
  const hedge = hedgeSource?.value
    ? resolveHedge(op, policy, defaults, t, chain, latency, file)
    : null;
  t.note(
    "hedge",
    hedgeSource
      ? { origin: hedgeSource.origin, source: hedgeSource.source }
      : absent("no hedging unless declared"),
  );

  const fallbackLayers = chain<FallbackInput>(
    ["fallback"],
    op.fallback,
    policy.fallback,
    defaults.fallback,
  );
  const fallbackSource = fallbackLayers.find((l) => l.value !== undefined);
  const fallback = fallbackSource?.value ? resolveFallback(fallbackSource.value) : null;
  t.note(
    "fallback",
    fallbackSource
      ? { origin: fallbackSource.origin, source: fallbackSource.source }
      : absent("no fallback unless declared"),
  );

  // --- the effective plan: computed once, here; the total timeout is derived from its worst case
  const repeatable = idempotency !== "none";
  const planInputs: PlanInputs = { repeatable, idempotency, retry, hedge, budget: ctx.budget };
  const timeout = resolveTimeout(
    op,
    policy,
    defaults,
    t,
    chain,
    latency,
    planInputs,
    marginMs,
    ctx.margin,
    file,
  );
  const plan = planOperation(planInputs, timeout);

  // --- coalescing (docs/runtime.md, "Coalescing"): the operation's word, as written (the
  // analyzer refuses it where it cannot apply); the policy's only where it can
  const provided =
    fallback?.kind === "provided" ||
    (fallback?.kind === "stale" && fallback.otherwise?.kind === "provided");
  let coalesce = false;
  if (op.coalesce !== undefined) {
    coalesce = op.coalesce;
    t.note("coalesce", { origin: "operation", source: { file, path: [...opPath, "coalesce"] } });
  } else if (policy.coalesce === true) {
    const read =
      transport === "http" && isRetrySafeRead({ method: op.method, idempotency, plan }, transport);
    coalesce = read && !provided;
    t.note(
      "coalesce",
      coalesce
        ? { origin: "policy", source: { file, path: ["coalesce"] } }
        : derived(
            read
              ? "the policy's coalesce skips an operation whose caller provides the fallback"
              : "the policy's coalesce applies to retry-safe reads (GET, HEAD over http) only",
            { file, path: ["coalesce"] },
            [],
          ),
    );
  } else {
    t.note("coalesce", absent("no coalescing unless declared"));
  }

  // --- response validation (docs/policy.md, "Response validation"): off unless asked for
  const validate = t.pick(
    "validate",
    chain<"response" | "none">(["validate"], op.validate, policy.validate, defaults.validate),
    same,
    (): ["response" | "none", Provenance] => ["none", builtIn("none")],
  );

  // --- rate limit (docs/policy.md, "Rate limit"): the operation's own replaces the dependency's
  const ownLimit =
    op.rateLimit === undefined
      ? undefined
      : op.rateLimit === false
        ? false
        : resolveRateLimit(op.rateLimit, { file, path: [...opPath, "rateLimit"] });
  if (op.rateLimit !== undefined)
    t.note("rateLimit", { origin: "operation", source: { file, path: [...opPath, "rateLimit"] } });

  const pathParams = op.path === undefined ? [] : extractParams(op.path);
  return {
    name,
    ...(op.description === undefined ? {} : { description: op.description }),
    source: { file, path: opPath },
    ...(op.method === undefined ? {} : { method: op.method }),
    ...(op.path === undefined ? {} : { path: op.path }),
    params: pathParams.map((p) => {
      const declared = op.params?.[p];
      return {
        name: p,
        type: declared?.type ?? "string",
        ...(declared?.enum ? { enum: declared.enum } : {}),
        ...(declared?.description === undefined ? {} : { description: declared.description }),
        declared: declared !== undefined,
      };
    }),
    ...(op.params === undefined ? {} : { declaredParams: Object.keys(op.params) }),
    query: Object.entries(op.query ?? {}).map(([qname, q]) => ({
      name: qname,
      type: q.type,
      ...(q.items ? { items: q.items.type } : {}),
      ...(q.enum ? { enum: q.enum } : {}),
      required: q.required ?? false,
      ...(q.description === undefined ? {} : { description: q.description }),
    })),
    ...(op.body === undefined ? {} : { body: op.body }),
    ...(op.response === undefined ? {} : { response: op.response }),
    repeatable,
    idempotency,
    idempotencyKey,
    timeout,
    retry,
    hedge,
    ...(ownLimit === undefined ? {} : { rateLimit: ownLimit }),
    plan,
    fallback,
    coalesce,
    ...(op.grpc === undefined
      ? {}
      : { grpc: { service: op.grpc.service, method: op.grpc.method } }),
    ...(validate === "response" && op.response !== undefined
      ? { validateResponse: true as const }
      : {}),
    provenance: t.provenance,
  };
}

/** A `rateLimit:` section in milliseconds; `undefined` for none (absent, or `false`). */
function resolveRateLimit(
  input: RateLimitInput | false | undefined,
  source: SourceRef,
): ResolvedRateLimit | undefined {
  if (input === undefined || input === false) return undefined;
  const rate = throughputOf(input.rate);
  if (rate === undefined) return undefined;
  const quota = input.quota === undefined ? undefined : throughputOf(input.quota);
  return {
    rate,
    burst: input.burst ?? DEFAULTS.rateLimit.burst,
    maxWaitMs: input.maxWait === undefined ? DEFAULTS.rateLimit.maxWaitMs : ms(input.maxWait),
    maxPauseMs: input.maxPause === undefined ? DEFAULTS.rateLimit.maxPauseMs : ms(input.maxPause),
    quota: quota ?? null,
    store: input.store ?? "memory",
    replicas: input.store === "redis" ? (input.replicas ?? null) : null,
    source,
  };
}

function throughputOf(text: string): ResolvedThroughput | undefined {
  const parsed = parseThroughput(text);
  if (!parsed.ok) return undefined;
  const t = parsed.value;
  return {
    count: t.count,
    periodMs: t.periodMs,
    perSecond: perSecond(t),
    text: formatThroughput(t),
  };
}

/**
 * Whether an operation may be repeated, and where that was decided: an idempotency key, then
 * `idempotent:` as written, then the method (RFC 9110 §9.2.2); a function call without either
 * is not idempotent.
 */
function decideIdempotency(
  op: OperationInput,
  transport: "http" | "function",
  at: SourceRef,
): [IdempotencyBasis, Provenance] {
  const under = (key: string): SourceRef => ({ file: at.file, path: [...at.path, key] });
  if (op.idempotency) return ["key", { origin: "operation", source: under("idempotency") }];
  if (op.idempotent === true)
    return ["asserted", { origin: "operation", source: under("idempotent") }];
  if (op.idempotent === false)
    return ["none", { origin: "operation", source: under("idempotent") }];
  if (op.method === undefined) {
    return [
      "none",
      {
        origin: "default",
        formula:
          transport === "function"
            ? "a function call is not idempotent unless asserted"
            : "no method: not idempotent unless asserted",
      },
    ];
  }
  const method = [{ key: "method", source: under("method") }];
  return IDEMPOTENT_METHODS.has(op.method)
    ? [
        "method",
        derived(
          "RFC 9110: GET, HEAD, OPTIONS, PUT and DELETE are idempotent",
          under("method"),
          method,
        ),
      ]
    : ["none", derived(`RFC 9110: ${op.method} is not idempotent`, under("method"), method)];
}

type Chain = <T>(
  path: Path,
  fromOp: T | undefined,
  fromPolicy: T | undefined,
  fromProject: T | undefined,
) => Layer<T>[];

/** An object section, or undefined when the layer is absent or turned off with `false`. */
const obj = <T>(v: T | false | undefined): T | undefined => (v === false ? undefined : v);

function resolveRetry(
  op: OperationInput,
  policy: PolicyInput,
  defaults: Sections,
  t: Tracer,
  chain: Chain,
): ResolvedRetry {
  const o = obj(op.retry);
  const p = obj(policy.retry);
  const d = defaults.retry;
  const D = DEFAULTS.retry;
  const backoff: ResolvedBackoff = {
    baseMs: t.pick(
      "retry.backoff.base",
      chain(["retry", "backoff", "base"], o?.backoff?.base, p?.backoff?.base, d?.backoff?.base),
      ms,
      () => [D.baseMs, builtIn("50ms")],
    ),
    capMs: t.pick(
      "retry.backoff.cap",
      chain(["retry", "backoff", "cap"], o?.backoff?.cap, p?.backoff?.cap, d?.backoff?.cap),
      ms,
      () => [D.capMs, builtIn("1s")],
    ),
    multiplier: t.pick(
      "retry.backoff.multiplier",
      chain(
        ["retry", "backoff", "multiplier"],
        o?.backoff?.multiplier,
        p?.backoff?.multiplier,
        d?.backoff?.multiplier,
      ),
      same,
      () => [D.multiplier, builtIn(D.multiplier)],
    ),
    jitter: t.pick(
      "retry.backoff.jitter",
      chain(
        ["retry", "backoff", "jitter"],
        o?.backoff?.jitter,
        p?.backoff?.jitter,
        d?.backoff?.jitter,
      ),
      same,
      () => [D.jitter, builtIn(D.jitter)],
    ),
  };
  const retryAfter = t.pick(
    "retry.retryAfter",
    chain(["retry", "retryAfter"], o?.retryAfter, p?.retryAfter, d?.retryAfter),
    (raw): ResolvedRetry["retryAfter"] =>
      raw === "ignore" ? null : raw === "honor" ? {} : { maxMs: ms(raw.max) },
    () => [{}, builtIn("honor")],
  );
  return {
    maxAttempts: t.pick(
      "retry.maxAttempts",
      chain(["retry", "maxAttempts"], o?.maxAttempts, p?.maxAttempts, d?.maxAttempts),
      same,
      () => [D.maxAttempts, builtIn(D.maxAttempts)],
    ),
    backoff,
    ...t.pick("retry.on", chain(["retry", "on"], o?.on, p?.on, d?.on), splitRetryOn, () => [
      { on: DEFAULTS.retryOn, errors: [], results: [] },
      builtIn(DEFAULTS.retryOn.join(", ")),
    ]),
    retryAfter,
  };
}

/** `retry.on` as written: outcomes (kinds and statuses) apart from thrown errors named by code or name, each once. */
function splitRetryOn(
  raw: readonly (
    | RetryCondition
    | {
        readonly code?: string | number | undefined;
        readonly name?: string | undefined;
        readonly status?: number | undefined;
        readonly body?:
          { readonly path: string; readonly equals: string | number | boolean | null } | undefined;
      }
  )[],
): Pick<ResolvedRetry, "on" | "errors" | "results"> {
  const on = new Set<RetryCondition>();
  const errors = new Map<string, ErrorCondition>();
  const results = new Map<string, ResultCondition>();
  for (const c of raw) {
    if (typeof c !== "object") on.add(c);
    else if (c.status !== undefined && c.body !== undefined) {
      const { status, body } = c;
      results.set(JSON.stringify([status, body.path, body.equals]), {
        status,
        path: body.path,
        segments: resultPathSegments(body.path),
        equals: body.equals,
      });
    } else if (c.code !== undefined) errors.set(`code:${String(c.code)}`, { code: c.code });
    else if (c.name !== undefined) errors.set(`name:${c.name}`, { name: c.name });
  }
  return { on: [...on], errors: [...errors.values()], results: [...results.values()] };
}

function resolveHedge(
  op: OperationInput,
  policy: PolicyInput,
  defaults: Sections,
  t: Tracer,
  chain: Chain,
  latency: ResolvedLatency,
  file: string,
): ResolvedHedge {
  const o = obj(op.hedge);
  const p = obj(policy.hedge);
  const d = defaults.hedge;
  const D = DEFAULTS.hedge;
  return {
    delayMs: t.pick(
      "hedge.delay",
      chain(["hedge", "delay"], o?.delay, p?.delay, d?.delay),
      ms,
      (): [number, Provenance] => {
        if (latency.p95Ms !== undefined)
          return [
            latency.p95Ms,
            derived(`p95 = ${formatMs(latency.p95Ms)}`, { file: file, path: ["latency"] }, [
              latencyInput(file, "p95"),
            ]),
          ];
        return [D.delayMs, builtIn("50ms")];
      },
    ),
    maxAttempts: t.pick(
      "hedge.maxAttempts",
      chain(["hedge", "maxAttempts"], o?.maxAttempts, p?.maxAttempts, d?.maxAttempts),
      same,
      () => [D.maxAttempts, builtIn(D.maxAttempts)],
    ),
    budget: t.pick(
      "hedge.budget",
      chain(["hedge", "budget"], o?.budget, p?.budget, d?.budget),
      fraction,
      () => [D.budget, builtIn("5%")],
    ),
  };
}

function resolveFallback(raw: FallbackInput): ResolvedFallback | null {
  switch (raw.kind) {
    case "none":
      return null;
    case "value":
      return { kind: "value", value: raw.value ?? null };
    case "provided":
      return { kind: "provided" };
    case "stale":
      return {
        kind: "stale",
        maxAgeMs: raw.maxAge === undefined ? DEFAULTS.stale.maxAgeMs : ms(raw.maxAge),
        maxEntries: raw.maxEntries ?? DEFAULTS.stale.maxEntries,
        vary: raw.vary ?? [],
        ...(raw.store === "redis" ? { store: "redis" as const } : {}),
        otherwise:
          raw.otherwise === undefined
            ? null
            : raw.otherwise.kind === "value"
              ? { kind: "value", value: raw.otherwise.value ?? null }
              : { kind: "provided" },
      };
  }
}

function resolveTimeout(
  op: OperationInput,
  policy: PolicyInput,
  defaults: Sections,
  t: Tracer,
  chain: Chain,
  latency: ResolvedLatency,
  plan: PlanInputs,
  marginMs: number,
  margin: Provenance | undefined,
  file: string,
): ResolvedTimeout {
  const totalLayers = chain(
    ["timeout", "total"],
    op.timeout?.total,
    policy.timeout?.total,
    defaults.timeout?.total,
  );
  const explicitTotal = totalLayers.find((l) => l.value !== undefined);
  const section: SourceRef = { file, path: ["latency"] };
  const attemptMs = t.pick(
    "timeout.attempt",
    chain(
      ["timeout", "attempt"],
      op.timeout?.attempt,
      policy.timeout?.attempt,
      defaults.timeout?.attempt,
    ),
    ms,
    (): [number, Provenance] => {
      let value: number;
      let formula: string;
      let inputs: ProvenanceInput[];
      if (latency.p999Ms !== undefined) {
        value = Math.ceil(latency.p999Ms * 1.5);
        formula = `1.5 × p999 (${formatMs(latency.p999Ms)}) = ${formatMs(value)}`;
        inputs = [latencyInput(file, "p999")];
      } else if (latency.p99Ms !== undefined) {
        value = latency.p99Ms * 3;
        formula = `3 × p99 (${formatMs(latency.p99Ms)}) = ${formatMs(value)}`;
        inputs = [latencyInput(file, "p99")];
      } else {
        return [DEFAULTS.attemptMs, builtIn("2s (no latency declared)")];
      }
      if (value > RANGES.attempt.max) {
        value = RANGES.attempt.max;
        formula += `, capped at ${formatMs(value)}, the longest attempt timeout`;
      }
      if (explicitTotal?.value !== undefined && value > ms(explicitTotal.value)) {
        value = ms(explicitTotal.value);
        formula += `, capped at the total timeout ${formatMs(value)}`;
        inputs = [...inputs, { key: "timeout.total", source: explicitTotal.source }];
      }
      return [value, derived(formula, section, inputs)];
    },
  );
  const totalMs = t.pick("timeout.total", totalLayers, ms, (): [number, Provenance] => {
    // The worst case of the effective plan, plus the deadline margin: the runtime gives an attempt
    // min(attempt timeout, time left − margin), so with the margin left over every attempt,
    // the last one included, ends by its own timeout (a `timeout` failure), not by the deadline.
    const worst = planWorstCase(plan, attemptMs);
    const wanted = worst.ms + marginMs;
    const sum = worst.formula.slice(0, worst.formula.lastIndexOf(" = "));
    const formula =
      marginMs === 0
        ? worst.formula
        : `${sum === "one attempt" ? `one attempt ${formatMs(attemptMs)}` : sum} + margin ${formatMs(marginMs)} = ${formatMs(wanted)}`;
    // the worst case may exceed the longest total; the analyzer then says how many attempts fit (RG207)
    const value = Math.min(wanted, RANGES.total.max);
    const layer =
      plan.repeatable && plan.hedge
        ? "hedge"
        : plan.repeatable && plan.retry && plan.retry.maxAttempts > 1
          ? "retry"
          : undefined;
    const inputs = [
      valueInput("timeout.attempt", t.provenance["timeout.attempt"]),
      ...(layer ? [valueInput(layer, t.provenance[layer])] : []),
      valueInput("deadline.margin", margin),
    ];
    return [
      value,
      derived(
        value < wanted
          ? `${formula}, capped at ${formatMs(value)}, the longest total timeout`
          : formula,
        inputs.find((i) => i.source)?.source,
        inputs,
      ),
    ];
  });
  const connect = [op.timeout?.connect, policy.timeout?.connect, defaults.timeout?.connect].find(
    (v) => v !== undefined,
  );
  const headers = [op.timeout?.headers, policy.timeout?.headers, defaults.timeout?.headers].find(
    (v) => v !== undefined,
  );
  const headersMs =
    headers === undefined
      ? undefined
      : t.pick(
          "timeout.headers",
          chain(
            ["timeout", "headers"],
            op.timeout?.headers,
            policy.timeout?.headers,
            defaults.timeout?.headers,
          ),
          ms,
          () => [ms(headers), builtIn("none")],
        );
  // The least useful budget of an attempt: with less time left than the median answer takes,
  // an attempt is more likely to be cut by the deadline than to succeed (docs/runtime.md, "Deadlines").
  const minAttemptMs = t.pick(
    "deadline.minAttempt",
    chain(
      ["deadline", "minAttempt"],
      undefined,
      policy.deadline?.minAttempt,
      defaults.deadline?.minAttempt,
    ),
    ms,
    (): [number, Provenance] => {
      if (latency.p50Ms === undefined) return [0, builtIn("0ms (no p50 declared)")];
      const value = Math.min(latency.p50Ms, attemptMs);
      const formula = `p50 (${formatMs(latency.p50Ms)})${value < latency.p50Ms ? `, capped at the attempt timeout ${formatMs(value)}` : ""} = ${formatMs(value)}`;
      const inputs = [
        latencyInput(file, "p50"),
        ...(value < latency.p50Ms
          ? [valueInput("timeout.attempt", t.provenance["timeout.attempt"])]
          : []),
      ];
      return [value, derived(formula, section, inputs)];
    },
  );
  return {
    attemptMs,
    totalMs,
    ...(connect === undefined ? {} : { connectMs: ms(connect) }),
    ...(headersMs === undefined ? {} : { headersMs }),
    ...(minAttemptMs > 0 ? { minAttemptMs } : {}),
  };
}

/** The `{name}` parameters of a path template, in order. */
export function extractParams(path: string): string[] {
  return [...path.matchAll(/\{([^{}]*)\}/g)].map((m) => m[1]!);
}
