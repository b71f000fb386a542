/**
 * Service policies (`kind: service`): validation against the service schema and normalisation
 * into the resolved service model the analyzer and the emitter read.
 */
import { diagnostic, type Diagnostic } from "../diagnostics/diagnostic.js";
import { formatMs, parseDuration } from "../language/durations.js";
import type { Path, SourceDocument } from "../language/parse.js";
import type { Origin, Provenance, SourceRef } from "./resolved.js";
import { DEFAULTS, type ConfigSettings } from "./normalize.js";
import { Service, type ServiceInput } from "../language/service-schema.js";
import { validate } from "../language/validate.js";

export type PriorityName = "critical" | "high" | "normal" | "low";

export interface ResolvedPriorityRule {
  readonly priority: PriorityName;
  /** Uppercase method, or null for any. */
  readonly method: string | null;
  /** Exact path, or a prefix ending in `*`; null for any. */
  readonly path: string | null;
  /** Lowercase header name, or null. */
  readonly header: string | null;
  readonly value: string | null;
  /** `header.trusted: proxy`: a proxy sets the header, callers cannot send it. */
  readonly trusted: boolean;
  readonly source: SourceRef;
}

/** A route of a service policy (`routes:`), resolved. */
export interface ResolvedRoute {
  /** The route as written: `POST /orders`. */
  readonly route: string;
  /** Uppercase method, or null for every method but the safe ones. */
  readonly method: string | null;
  /** Exact path, or a prefix ending in `*`. */
  readonly path: string;
  readonly essential: boolean;
  readonly idempotency: {
    /** Lowercase. */
    readonly header: string;
    readonly ttlMs: number;
    readonly store: "memory" | "redis";
    readonly required: boolean;
    readonly maxBytes: number;
    /** Lowercase header names. */
    readonly scope: readonly string[];
  } | null;
  readonly source: SourceRef;
}

/** A service policy, resolved: durations in milliseconds, defaults applied, header names lowercase. */
export interface ResolvedService {
  readonly file: string;
  readonly source: SourceRef;
  readonly service: string;
  readonly description?: string;
  /** Dependencies the service calls; null: every dependency policy checked with it. */
  readonly calls: readonly string[] | null;
  readonly deadline: {
    readonly edgeMs: number;
    readonly maxMs: number;
    readonly header: string;
    readonly format: "ms" | "grpc-timeout";
    readonly grpcTimeout: boolean;
    readonly expiredStatus: number;
    /** Least remaining time a request needs (`deadline.minBudget`); present only when set. */
    readonly minBudgetMs?: number;
  };
  readonly admission: {
    readonly maxConcurrent: number;
    readonly maxQueue: number;
    readonly queueTimeoutMs: number;
    /** Present only when the policy asks for an adaptive limit. */
    readonly adaptive?: {
      readonly minLimit: number;
      readonly latencyMs: number;
      readonly backoff: number;
    };
    /** Present only when the policy sets it; the runtime's default otherwise (one slot for critical when maxConcurrent ≥ 2). */
    readonly reserve?: {
      readonly critical?: number;
      readonly high?: number;
      readonly normal?: number;
    };
  } | null;
  readonly rejection: { readonly status: 429 | 503; readonly retryAfterS: number };
  readonly defaultPriority: PriorityName;
  readonly priorities: readonly ResolvedPriorityRule[];
  /** Header listing the dependencies that answered degraded (`responses.degradedHeader`, lowercase); present only when set. */
  readonly degradedHeader?: string;
  readonly routes: readonly ResolvedRoute[];
  /** Where each value came from ("deadline.edge", "deadline.max", ...). */
  readonly provenance: Readonly<Record<string, Provenance>>;
}

/** Built-in defaults of service policies. */
export const SERVICE_DEFAULTS = {
  edgeMs: 5_000,
  maxMs: 30_000,
  grpcTimeout: true,
  expiredStatus: 504,
  maxConcurrent: 100,
  queueTimeoutMs: 500,
  rejectStatus: 503,
  retryAfterMs: 1_000,
  priority: "normal",
  idempotencyHeader: "idempotency-key",
  idempotencyTtlMs: 86_400_000,
  idempotencyMaxBytes: 1_048_576,
  idempotencyScope: ["authorization", "cookie"],
} as const;

/** Whether a loaded document declares `kind: service`. */
export function isServiceDocument(source: SourceDocument): boolean {
  const data = source.data;
  return (
    data !== null &&
    typeof data === "object" &&
    !Array.isArray(data) &&
    (data as Record<string, unknown>)["kind"] === "service"
  );
}

const ms = (raw: string): number => {
  const parsed = parseDuration(raw);
  if (!parsed.ok) throw new Error(`internal: unvalidated duration ${raw}`);
  return parsed.value;
};

/** Resolves a validated service policy. Pure; never throws on valid input. */
export function normalizeService(
  input: ServiceInput,
  file: string,
  project: ConfigSettings = {},
): ResolvedService {
  const provenance: Record<string, Provenance> = {};
  const at = (path: Path): SourceRef => ({ file, path });
  const pick = <T>(
    key: string,
    path: Path,
    value: T | undefined,
    fallback: T,
    origin: Origin = "default",
  ): T => {
    if (value !== undefined) {
      provenance[key] = { origin: "policy", source: at(path) };
      return value;
    }
    provenance[key] = { origin, formula: `built-in default ${String(fallback)}` };
    return fallback;
  };
  const d = input.deadline ?? {};
  const format = d.format ?? project.config?.deadline?.format ?? "ms";
  const header = (
    d.header ??
    project.config?.deadline?.header ??
    (format === "grpc-timeout" ? DEFAULTS.grpcHeader : DEFAULTS.header)
  ).toLowerCase();
  const edgeMs = pick(
    "deadline.edge",
    ["deadline", "edge"],
    d.edge === undefined ? undefined : ms(d.edge),
    SERVICE_DEFAULTS.edgeMs,
  );
  const maxMs = pick(
    "deadline.max",
    ["deadline", "max"],
    d.max === undefined ? undefined : ms(d.max),
    SERVICE_DEFAULTS.maxMs,
  );
  const a = input.admission;
  const admission =
    a === undefined
      ? null
      : {
          maxConcurrent: a.maxConcurrent ?? SERVICE_DEFAULTS.maxConcurrent,
          maxQueue: a.maxQueue ?? a.maxConcurrent ?? SERVICE_DEFAULTS.maxConcurrent,
          queueTimeoutMs:
            a.queueTimeout === undefined ? SERVICE_DEFAULTS.queueTimeoutMs : ms(a.queueTimeout),
          ...(a.adaptive === undefined
            ? {}
            : {
                adaptive: {
                  minLimit: a.adaptive.minLimit ?? 1,
                  latencyMs: ms(a.adaptive.latency),
                  backoff: a.adaptive.backoff ?? 0.9,
                },
              }),
          ...(a.reserve === undefined
            ? {}
            : {
                reserve: Object.fromEntries(
                  Object.entries(a.reserve).filter(([, n]) => n !== undefined),
                ) as { critical?: number; high?: number; normal?: number },
              }),
        };
  const r = input.reject ?? {};
  const rules = (input.priorities?.rules ?? []).map((rule, i): ResolvedPriorityRule => {
    const route = rule.route;
    const space = route === undefined ? -1 : route.indexOf(" ");
    return {
      priority: rule.priority,
      method: route !== undefined && space > 0 ? route.slice(0, space) : null,
      path: route === undefined ? null : space > 0 ? route.slice(space + 1) : route,
      header: rule.header === undefined ? null : rule.header.name.toLowerCase(),
      value: rule.header?.value ?? null,
      trusted: rule.header?.trusted === "proxy",
      source: at(["priorities", "rules", i]),
    };
  });
  const routes = (input.routes ?? []).map((r, i): ResolvedRoute => {
    const space = r.route.indexOf(" ");
    const idem = r.idempotency;
    return {
      route: r.route,
      method: space > 0 ? r.route.slice(0, space) : null,
      path: space > 0 ? r.route.slice(space + 1) : r.route,
      essential: r.essential ?? false,
      idempotency:
        idem === undefined
          ? null
          : {
              header: (idem.header ?? SERVICE_DEFAULTS.idempotencyHeader).toLowerCase(),
              ttlMs: idem.ttl === undefined ? SERVICE_DEFAULTS.idempotencyTtlMs : ms(idem.ttl),
              store: idem.store ?? "memory",
              required: idem.required ?? false,
              maxBytes: idem.maxBytes ?? SERVICE_DEFAULTS.idempotencyMaxBytes,
              scope: (idem.scope ?? SERVICE_DEFAULTS.idempotencyScope).map((h) => h.toLowerCase()),
            },
      source: at(["routes", i]),
    };
  });
  return {
    file,
    source: at([]),
    service: input.service,
    ...(input.description === undefined ? {} : { description: input.description }),
    calls: input.calls ?? null,
    deadline: {
      edgeMs,
      maxMs,
      header,
      format,
      grpcTimeout: d.grpcTimeout ?? SERVICE_DEFAULTS.grpcTimeout,
      expiredStatus: d.expiredStatus ?? SERVICE_DEFAULTS.expiredStatus,
      ...(d.minBudget === undefined
        ? {}
        : {
            minBudgetMs: pick("deadline.minBudget", ["deadline", "minBudget"], ms(d.minBudget), 0),
          }),
    },
    admission,
    rejection: {
      status: r.status ?? SERVICE_DEFAULTS.rejectStatus,
      retryAfterS: Math.ceil(
        (r.retryAfter === undefined ? SERVICE_DEFAULTS.retryAfterMs : ms(r.retryAfter)) / 1_000,
      ),
    },
    defaultPriority: input.priorities?.default ?? SERVICE_DEFAULTS.priority,
    priorities: rules,
    ...(input.responses?.degradedHeader === undefined
      ? {}
      : { degradedHeader: input.responses.degradedHeader.toLowerCase() }),
    routes,
    provenance,
  };
}

/** Validates and resolves one loaded service policy; the service is returned only when the file has no errors. */
export function checkServiceSource(
  source: SourceDocument,
  project: ConfigSettings = {},
): { service: ResolvedService | undefined; diagnostics: Diagnostic[] } {
  const result = validate(Service, source);
  const diagnostics = [...result.diagnostics];
  // read from the raw data, so this is reported in the same run as any schema error
  const raw = (source.data as { priorities?: { rules?: unknown } }).priorities?.rules;
  if (Array.isArray(raw)) {
    raw.forEach((rule: unknown, i) => {
      if (rule !== null && typeof rule === "object" && !("route" in rule) && !("header" in rule)) {
        diagnostics.push(
          diagnostic(
            "RG102",
            source.file,
            source.keySpanOf(["priorities", "rules", i]),
            "a priority rule needs a route, a header or both",
            'add route: "GET /healthz" or header: { name: x-priority }',
          ),
        );
      }
    });
  }
  if (!result.value || diagnostics.length > 0) return { service: undefined, diagnostics };
  return { service: normalizeService(result.value, source.file, project), diagnostics };
}

/** One line for `resgen check`'s summary: what the service's middleware will do. */
export function describeService(s: ResolvedService): string {
  const a = s.admission;
  const parts = [
    `service, edge deadline ${formatMs(s.deadline.edgeMs)} (max ${formatMs(s.deadline.maxMs)}) in ${s.deadline.header}`,
    a === null
      ? "admits everything"
      : `${a.maxConcurrent} at once + ${a.maxQueue} queued (${formatMs(a.queueTimeoutMs)})`,
    `sheds with ${s.rejection.status} Retry-After ${s.rejection.retryAfterS}s`,
    `${s.priorities.length} priority ${s.priorities.length === 1 ? "rule" : "rules"}`,
  ];
  const idempotent = s.routes.filter((r) => r.idempotency !== null);
  if (idempotent.length > 0)
    parts.push(
      `idempotent ${idempotent.map((r) => `${r.route} (${r.idempotency?.store ?? "memory"})`).join(", ")}`,
    );
  return `${s.service} (${s.file}): ${parts.join(", ")}`;
}
