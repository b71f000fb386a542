/**
 * The policy language, version 1: one zod schema is the single source of truth for validation,
 * for the TypeScript types of raw policies (`z.infer`) and for schema/policy.schema.json (which
 * editors read for completion and hover text, so every property carries a description).
 */
import { z } from "zod";
import {
  checkDurationRange,
  checkRateRange,
  describeDurationRange,
  DURATION_PATTERN,
  parseDuration,
  parseRate,
  parseThroughput,
  RATE_PATTERN,
  THROUGHPUT_PATTERN,
  type DurationRange,
  type RateRange,
} from "./durations.js";

/** What a leaf of the schema holds, so the loader can explain a bad value precisely. */
export type ValueKind = "duration" | "rate" | "throughput" | "name" | "path" | "ref" | "header";
const kinds = new WeakMap<object, ValueKind>();

function tag<T extends z.ZodType>(schema: T, kind: ValueKind): T {
  kinds.set(schema, kind);
  return schema;
}

/** The kind registered for a schema node, if any (used by the issue translator). */
export function kindOf(schema: z.ZodType): ValueKind | undefined {
  return kinds.get(schema);
}

/** The range a duration or rate leaf accepts, so the translator can give the bound. */
const ranges = new WeakMap<object, DurationRange | RateRange>();

export function rangeOf(schema: z.ZodType): DurationRange | RateRange | undefined {
  return ranges.get(schema);
}

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * The range of every duration, rate and size of the language, in one place: the schema enforces
 * them, normalisation clamps derived values to them, docs/policy.md ("Ranges") lists them.
 * Durations are milliseconds after rounding; a minimum of 1ms means "more than zero".
 */
export const RANGES = {
  latency: { min: 1, max: HOUR, why: "a percentile under 0.5ms rounds to 0ms: write 1ms" },
  rps: { max: 1_000_000 },
  connect: { min: 1, max: HOUR, why: "a zero connect timeout fails every connection at once" },
  attempt: { min: 1, max: HOUR, why: "a zero attempt timeout fails every attempt at once" },
  headers: { min: 1, max: HOUR, why: "a zero headers timeout fails every attempt at once" },
  total: { min: 1, max: DAY, why: "a zero total timeout fails every call at once" },
  margin: { min: 0, max: MINUTE },
  minAttempt: { min: 0, max: HOUR },
  backoffBase: { min: 0, max: HOUR },
  backoffCap: { min: 0, max: HOUR },
  retryAfterMax: { min: 0, max: HOUR },
  slowCall: {
    min: 1,
    max: HOUR,
    why: "every call takes at least 0ms, so every call would be slow",
  },
  window: { min: 1, max: HOUR, why: "an empty window holds no calls" },
  openFor: { min: 1, max: HOUR, why: "a breaker open for 0ms never stops a call" },
  rampUp: {
    min: 1,
    max: HOUR,
    why: "a ramp of 0ms is no ramp: leave rampUp out for full traffic at once",
  },
  queueTimeout: { min: 0, max: HOUR },
  hedgeDelay: {
    min: 1,
    max: HOUR,
    why: "with no delay every copy is sent at once: that multiplies the load instead of hedging the slow calls",
  },
  maxAge: {
    min: 1,
    max: 7 * DAY,
    why: "a stale response 0ms old is never served: use kind: none for no fallback",
  },
  bulkhead: { max: 100_000 },
  maxResponseBytes: { min: 1_024, max: 268_435_456 },
  failureRate: {
    positive: true,
    why: "0% is reached by successes alone: the breaker would open after minCalls successful calls",
  },
  slowCallRate: {
    positive: true,
    why: "0% is reached with no slow call at all: the breaker would open after minCalls fast calls",
  },
  hedgeBudget: {
    positive: true,
    why: "0% allows no hedge: write hedge: false to turn hedging off",
  },
  // service policies
  edge: {
    min: 1,
    max: HOUR,
    why: "a zero edge deadline expires every request before it is handled",
  },
  serviceMax: {
    min: 1,
    max: DAY,
    why: "a zero deadline expires every request before it is handled",
  },
  admissionQueueTimeout: { min: 0, max: HOUR },
  minBudget: { min: 0, max: HOUR },
  adaptiveLatency: {
    min: 1,
    max: HOUR,
    why: "every request takes at least 0ms, so every request would cut the limit",
  },
  retryAfter: { min: 0, max: HOUR },
  idempotencyTtl: {
    min: 1_000,
    max: 30 * DAY,
    why: "a key kept under a second cannot catch a client's retry",
  },
  idempotencyMaxBytes: { min: 1, max: 16_777_216 },
  rateLimitWait: { min: 0, max: HOUR },
  rateLimitPause: { min: 0, max: DAY },
  adaptiveWindow: {
    min: 1,
    max: MINUTE,
    why: "a window of 0ms averages nothing: each update would follow a single call",
  },
} as const satisfies Record<string, DurationRange | RateRange | { max: number }>;

export const NAME_PATTERN = "^[A-Za-z][A-Za-z0-9_-]*$";
export const GRPC_SERVICE_PATTERN = "^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*$";
export const HOST_PATTERN =
  "^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$";
export const HEADER_PATTERN = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";

/** A duration within `range`; the description ends with the range, for editors' hover text. */
const duration = (description: string, range: DurationRange) => {
  const schema = tag(
    z
      .string()
      .regex(new RegExp(DURATION_PATTERN))
      .refine((v) => {
        const parsed = parseDuration(v);
        return parsed.ok && checkDurationRange(parsed.value, range, v) === undefined;
      })
      .meta({ description: `${description} From ${describeDurationRange(range)}.` }),
    "duration",
  );
  ranges.set(schema, range);
  return schema;
};

const rate = (description: string, range: RateRange = { positive: false }) => {
  const schema = tag(
    z
      .union([z.number().min(0).max(1), z.string().regex(new RegExp(RATE_PATTERN))])
      .refine((v) => {
        const parsed = parseRate(v);
        return parsed.ok && checkRateRange(parsed.value, range, v) === undefined;
      })
      .meta({
        description: `${description} ${range.positive ? "More than 0%, at most 100%." : "From 0% to 100%."}`,
      }),
    "rate",
  );
  ranges.set(schema, range);
  return schema;
};

/** A request rate such as `100/s` or `6000/min` (docs/policy.md, "Rate limit"). */
const throughput = (description: string) =>
  tag(
    z
      .string()
      .regex(new RegExp(THROUGHPUT_PATTERN))
      .refine((v) => parseThroughput(v).ok)
      .meta({
        description: `${description} A count per s, min, h or d; at most 1000000/s, at least 1/d.`,
      }),
    "throughput",
  );

const name = (description: string) =>
  tag(z.string().regex(new RegExp(NAME_PATTERN)).meta({ description }), "name");
const header = (description: string) =>
  tag(z.string().regex(new RegExp(HEADER_PATTERN)).meta({ description }), "header");

const int = (min: number, max: number, description: string) =>
  z.number().int().min(min).max(max).meta({ description });

/** Field builders the service policy (service-schema.ts) shares, so its values are explained the same way. */
export { duration, header, int, name };

// ---------------------------------------------------------------------------------------------
// The JSON Schema subset for bodies, responses and named schemas.

export const SCHEMA_TYPES = [
  "object",
  "array",
  "string",
  "number",
  "integer",
  "boolean",
  "null",
] as const;

export interface TypeSchemaInput {
  $ref?: string | undefined;
  type?: (typeof SCHEMA_TYPES)[number] | (typeof SCHEMA_TYPES)[number][] | undefined;
  description?: string | undefined;
  nullable?: boolean | undefined;
  enum?: (string | number | boolean | null)[] | undefined;
  const?: string | number | boolean | null | undefined;
  allOf?: TypeSchemaInput[] | undefined;
  oneOf?: TypeSchemaInput[] | undefined;
  anyOf?: TypeSchemaInput[] | undefined;
  format?: string | undefined;
  properties?: Record<string, TypeSchemaInput> | undefined;
  required?: string[] | undefined;
  items?: TypeSchemaInput | undefined;
  additionalProperties?: boolean | TypeSchemaInput | undefined;
}

export const TypeSchema: z.ZodType<TypeSchemaInput> = z
  .strictObject({
    $ref: tag(
      z
        .string()
        .regex(/^#\/schemas\/[A-Za-z_][A-Za-z0-9_]*$/)
        .meta({ description: 'Reference to a named schema of this policy: "#/schemas/Name".' }),
      "ref",
    ).optional(),
    type: z
      .union([z.enum(SCHEMA_TYPES), z.array(z.enum(SCHEMA_TYPES)).min(1)])
      .optional()
      .meta({
        description: "The JSON type of the value, or a list of types (a union, as in OpenAPI 3.1).",
      }),
    description: z
      .string()
      .optional()
      .meta({ description: "Documentation, emitted as JSDoc on the generated type." }),
    nullable: z.boolean().optional().meta({ description: "The value may also be null." }),
    enum: z
      .array(z.union([z.string(), z.number(), z.boolean(), z.null()]))
      .min(1)
      .optional()
      .meta({ description: "The only values allowed; becomes a union of literal types." }),
    const: z
      .union([z.string(), z.number(), z.boolean(), z.null()])
      .optional()
      .meta({ description: "The only value allowed; becomes a literal type." }),
    get allOf() {
      return z.array(TypeSchema).min(1).optional().meta({
        description: "The value matches every one of these schemas; becomes an intersection.",
      });
    },
    get oneOf() {
      return z
        .array(TypeSchema)
        .min(1)
        .optional()
        .meta({ description: "The value matches exactly one of these schemas; becomes a union." });
    },
    get anyOf() {
      return z
        .array(TypeSchema)
        .min(1)
        .optional()
        .meta({ description: "The value matches at least one of these schemas; becomes a union." });
    },
    format: z.string().optional().meta({
      description: "Informative format (date-time, uuid, ...); the generated type stays string.",
    }),
    get properties() {
      return z
        .record(z.string(), TypeSchema)
        .optional()
        .meta({ description: "Properties of an object, by name." });
    },
    required: z
      .array(z.string())
      .optional()
      .meta({ description: "Names of the properties an object must have." }),
    get items() {
      return TypeSchema.optional().meta({ description: "Schema of the elements of an array." });
    },
    get additionalProperties() {
      return z.union([z.boolean(), TypeSchema]).optional().meta({
        description: "Whether an object may carry other properties, or the schema they follow.",
      });
    },
  })
  .meta({
    id: "TypeSchema",
    description:
      "A JSON Schema subset: object, array, string, number, integer, boolean, null, enum, const, nullable, allOf, oneOf, anyOf, $ref.",
  });

// ---------------------------------------------------------------------------------------------
// Sections shared by the policy, its operations and the project defaults.

export const JITTERS = ["none", "full", "equal", "decorrelated"] as const;
export const RETRY_CONDITIONS = ["timeout", "network"] as const;
export const METHODS = ["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "POST", "PATCH"] as const;

export const Latency = z
  .strictObject({
    p50: duration("Median latency of healthy calls.", RANGES.latency).optional(),
    p90: duration("90th percentile latency of healthy calls.", RANGES.latency).optional(),
    p95: duration(
      "95th percentile latency of healthy calls; the default hedge delay.",
      RANGES.latency,
    ).optional(),
    p99: duration("99th percentile latency of healthy calls.", RANGES.latency).optional(),
    p999: duration(
      "99.9th percentile latency of healthy calls; the attempt timeout is derived from it.",
      RANGES.latency,
    ).optional(),
    rps: z.number().positive().max(RANGES.rps.max).optional().meta({
      description:
        "Requests per second this service sends to the dependency at peak. More than 0, at most 1000000.",
    }),
  })
  .meta({
    description:
      "Measured latency of the dependency when healthy, and the request rate. Timeouts and sizes are derived from it when omitted.",
  });

export const Timeout = z
  .strictObject({
    connect: duration(
      "Time allowed to open a connection. Used by mesh targets; fetch enforces it only through an undici Agent you pass as the client's dispatcher (see docs/runtime.md).",
      RANGES.connect,
    ).optional(),
    headers: duration(
      "Time allowed until the response headers arrive, within each attempt (http transport). Defaults to none: the attempt timeout alone.",
      RANGES.headers,
    ).optional(),
    attempt: duration(
      "Time allowed for one attempt. Defaults to 1.5 × p999, or 3 × p99, or 2s.",
      RANGES.attempt,
    ).optional(),
    total: duration(
      "Time allowed for the whole call, all attempts and backoff included. Defaults to the worst case of the retry plan.",
      RANGES.total,
    ).optional(),
  })
  .meta({ description: "Timeouts: per attempt and for the whole logical call." });

export const Deadline = z
  .strictObject({
    propagate: z.boolean().optional().meta({
      description: "Send the remaining time to the dependency in a header. Defaults to true.",
    }),
    margin: duration(
      "Time kept back from each attempt for the caller to handle the answer. Defaults to 10ms.",
      RANGES.margin,
    ).optional(),
    minAttempt: duration(
      "Least time left worth starting an attempt with; with less the call fails at once with a deadline error. Defaults to the latency p50 (at most the attempt timeout), or 0ms without one.",
      RANGES.minAttempt,
    ).optional(),
  })
  .meta({ description: "Deadline propagation to the dependency." });

export const Backoff = z
  .strictObject({
    base: duration(
      "Delay before the first retry, before jitter. Defaults to 50ms.",
      RANGES.backoffBase,
    ).optional(),
    cap: duration(
      "Largest delay between attempts; applied before jitter. Defaults to 1s.",
      RANGES.backoffCap,
    ).optional(),
    multiplier: z
      .number()
      .min(1)
      .max(10)
      .optional()
      .meta({ description: "Growth of the delay per retry. Defaults to 2." }),
    jitter: z.enum(JITTERS).optional().meta({
      description:
        "Randomisation of the delay: none | full | equal | decorrelated. Defaults to full.",
    }),
  })
  .meta({ description: "Exponential backoff between attempts." });

export const Budget = z
  .strictObject({
    maxTokens: int(
      1,
      10_000,
      "Size of the token bucket shared by all operations of the dependency. Defaults to 100.",
    ).optional(),
    tokenRatio: z.number().min(0.001).max(1).optional().meta({
      description:
        "Tokens earned per successful attempt (a failed attempt that is retried costs 1), counted to the thousandth. From 0.001 to 1. Defaults to 0.1.",
    }),
  })
  .meta({
    description:
      "Retry budget with gRPC retry-throttling semantics: retries stop while tokens ≤ maxTokens / 2.",
  });

/**
 * The path of a body condition: `$`, then property names (`.status`) and array indexes (`[0]`),
 * such as `$.job.state` or `$.items[0].status` (docs/policy.md, "Which failures are retried").
 */
export const RESULT_PATH = /^\$(?:\.[A-Za-z_$][A-Za-z0-9_$-]*|\[\d{1,9}\])*$/;

/** The segments of a {@link RESULT_PATH}: property names and array indexes. */
export function resultPathSegments(path: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const m of path.slice(1).matchAll(/\.([^.[]+)|\[(\d+)\]/g))
    out.push(m[1] === undefined ? Number(m[2]) : m[1]);
  return out;
}

/**
 * An entry of `retry.on` written as a mapping: a thrown error, matched on the error and its
 * causes, by `{ code: ECONNRESET }` (compared as text, so `{ code: 14 }` matches a gRPC status 14)
 * or `{ name: ThrottlingException }`; or a response by its status and a value in its decoded JSON
 * body, `{ status: 200, body: { path: $.status, equals: pending } }` (docs/policy.md, "Which
 * failures are retried").
 */
export const RetryErrorCondition = z
  .strictObject({
    code: z
      .union([
        z.string().regex(/^[A-Za-z0-9_.:-]{1,100}$/),
        z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
      ])
      .optional()
      .meta({
        description:
          "The error's code (its `code` property), such as ECONNRESET or 14. Quote a code with leading zeros.",
      }),
    name: z
      .string()
      .regex(/^[A-Za-z_$][A-Za-z0-9_$.-]{0,99}$/)
      .optional()
      .meta({
        description: "The error's name (its `name` property), such as ThrottlingException.",
      }),
    status: z.number().int().min(100).max(599).optional().meta({
      description:
        "With body: the status of a response retried for a value in its body, such as 200 or 202.",
    }),
    body: z
      .strictObject({
        path: z
          .string()
          .max(200)
          .superRefine((path, ctx) => {
            if (!RESULT_PATH.test(path))
              ctx.addIssue({
                code: "custom",
                path: [],
                message: `${JSON.stringify(path)} is not a body path: it starts at $ and names properties (.status) and array indexes ([0])`,
                params: { range: true, hint: "for example $.status or $.items[0].state" },
              });
          })
          .meta({
            description:
              "Where the value is in the JSON body: $, then .name and [index] steps, such as $.status or $.items[0].state.",
          }),
        equals: z.union([z.string().max(200), z.number(), z.boolean(), z.null()]).meta({
          description: "The value that makes the response transient, compared exactly.",
        }),
      })
      .optional()
      .meta({
        description:
          "With status: a value in the decoded JSON body that makes the response transient, { path: $.status, equals: pending }.",
      }),
  })
  // checked only on an entry with no other issue: a mistyped key (`cod:`) is reported as such, not also as missing
  .superRefine(
    (c, ctx) => {
      const response = c.status !== undefined || c.body !== undefined;
      const error = c.code !== undefined || c.name !== undefined;
      const problem =
        response && error
          ? {
              message:
                "an entry of retry.on matches a thrown error (code or name) or a response (status and body), not both",
              hint: "split it in two entries",
            }
          : response
            ? c.status === undefined
              ? {
                  message: "a response in retry.on needs its status beside its body",
                  hint: "for example { status: 200, body: { path: $.status, equals: pending } }",
                }
              : c.body === undefined
                ? {
                    message: "a response in retry.on by its status alone is written as the status",
                    hint: `write ${String(c.status)}, or add body: { path: $.status, equals: pending }`,
                  }
                : undefined
            : c.code !== undefined && c.name !== undefined
              ? {
                  message: "an error in retry.on is matched by its code or by its name, not both",
                  hint: "keep one: { code: ECONNRESET } or { name: ThrottlingException }",
                }
              : c.code === undefined && c.name === undefined
                ? {
                    message: "an error in retry.on needs its code or its name",
                    hint: "for example { code: ECONNRESET } or { name: ThrottlingException }",
                  }
                : undefined;
      if (problem)
        ctx.addIssue({
          code: "custom",
          path: [],
          message: problem.message,
          params: { range: true, hint: problem.hint },
        });
    },
    { when: (payload) => payload.issues.length === 0 },
  )
  .meta({
    description:
      "A thrown error that is retried, by its code or its name: { code: ECONNRESET } or { name: ThrottlingException }; or a response retried for a value in its body: { status: 200, body: { path: $.status, equals: pending } }.",
  });

const RetryCondition = z
  .union([z.enum(RETRY_CONDITIONS), z.number().int().min(100).max(599), RetryErrorCondition])
  .meta({
    description:
      "A retryable outcome: timeout, network, an HTTP status code, a thrown error by code or name ({ code: ECONNRESET }, { name: ThrottlingException }), or a response by its status and a value in its body ({ status: 200, body: { path: $.status, equals: pending } }).",
  });

const RetryAfter = z
  .union([
    z.enum(["honor", "ignore"]),
    z.strictObject({
      max: duration(
        "Longest Retry-After wait honoured; longer waits give up at once.",
        RANGES.retryAfterMax,
      ),
    }),
  ])
  .meta({
    description:
      "Whether a Retry-After header sets the next delay (never past the deadline). Defaults to honor.",
  });

const retryShape = {
  maxAttempts: int(1, 100, "Attempts in all, the first included. Defaults to 3.").optional(),
  backoff: Backoff.optional(),
  on: z.array(RetryCondition).optional().meta({
    description:
      "Outcomes that are retried. Defaults to [timeout, network, 408, 425, 429, 500, 502, 503, 504].",
  }),
  retryAfter: RetryAfter.optional(),
};

export const Retry = z
  .strictObject({
    ...retryShape,
    budget: z
      .union([z.literal(false), Budget])
      .optional()
      .meta({
        description: "Retry budget shared by the dependency's operations, or false for none.",
      }),
  })
  .meta({ description: "Retries with jittered exponential backoff." });

/** An operation's retry: the budget belongs to the dependency, so it is not repeated here. */
export const OperationRetry = z
  .strictObject(retryShape)
  .meta({ description: "Retry settings for this operation." });

export const Breaker = z
  .strictObject({
    failureRate: rate(
      "Failure rate at which the breaker opens (reached or exceeded). Defaults to 50%.",
      RANGES.failureRate,
    ).optional(),
    slowCall: z
      .strictObject({
        duration: duration("A call slower than this counts as slow.", RANGES.slowCall),
        rate: rate(
          "Slow-call rate at which the breaker opens. Defaults to 100%.",
          RANGES.slowCallRate,
        ).optional(),
      })
      .optional()
      .meta({ description: "Open on slow calls too." }),
    window: z
      .strictObject({
        duration: duration(
          "Length of a time window, at least 1ms per bucket. Defaults to 10s.",
          RANGES.window,
        ).optional(),
        buckets: int(1, 600, "Buckets in a time window. Defaults to 10.").optional(),
        calls: int(1, 100_000, "Size of a count window, instead of a time window.").optional(),
      })
      .optional()
      .meta({
        description:
          "The window over which rates are computed: { duration, buckets } or { calls }.",
      }),
    minCalls: int(
      1,
      100_000,
      "Calls in the window before a rate means anything; at most window.calls with a count window. Defaults to 20.",
    ).optional(),
    openFor: z
      .union([
        duration(
          "How long the breaker stays open before a trial. Defaults to 30s.",
          RANGES.openFor,
        ),
        z
          .strictObject({
            base: duration("The first open period, and the one after every close.", RANGES.openFor),
            cap: duration("The longest open period; at least base.", RANGES.openFor),
            multiplier: z.number().min(1).max(10).optional().meta({
              description:
                "Growth of the open period per reopening after a failed trial. Defaults to 2.",
            }),
          })
          .meta({
            description:
              "Open-duration backoff: every reopening after a failed half-open trial stays open base × multiplier^n (n reopenings in a row), at most cap; closing starts again from base.",
          }),
      ])
      .optional()
      .meta({
        description:
          "How long the breaker stays open before a trial: a duration, or { base, cap, multiplier } to lengthen each reopening. Defaults to 30s.",
      }),
    halfOpen: z
      .strictObject({
        maxCalls: int(
          1,
          1_000,
          "Concurrent trial calls while half-open. Defaults to 3.",
        ).optional(),
        successes: int(
          1,
          1_000,
          "Successful trials that close the breaker. Defaults to maxCalls.",
        ).optional(),
      })
      .optional()
      .meta({ description: "Trials after the open period." }),
    rampUp: duration(
      "Slow start after recovery: once the half-open trials close the breaker, the share of calls admitted rises linearly from 10% to all of them over this window; the rest are rejected as circuit-open. Off by default.",
      RANGES.rampUp,
    ).optional(),
  })
  .meta({ description: "Circuit breaker over a sliding window of outcomes." });

/** Adaptive concurrency (docs/runtime.md, "Adaptive concurrency"): defaults and bounds. */
export const ADAPTIVE_DEFAULTS = {
  minLimit: 1,
  smoothing: 0.2,
  tolerance: 1.5,
  window: "1s",
} as const;

const AdaptiveConcurrency = z
  .strictObject({
    minLimit: int(
      1,
      RANGES.bulkhead.max,
      "Lowest the limit goes, however slow the dependency; at most maxLimit. Defaults to 1.",
    ).optional(),
    maxLimit: int(
      1,
      RANGES.bulkhead.max,
      "Highest the limit goes, however fast the dependency. Defaults to 2 × maxConcurrent.",
    ).optional(),
    smoothing: z.number().gt(0).max(1).optional().meta({
      description:
        "Share of each new estimate taken into the limit, more than 0 and at most 1: lower moves the limit more slowly. Defaults to 0.2.",
    }),
    tolerance: z.number().min(1).max(10).optional().meta({
      description:
        "How many times the long-term latency the recent latency may reach before the limit is cut, 1 to 10. Defaults to 1.5.",
    }),
    window: duration(
      "Completed calls are averaged over windows this long (at least ten calls each); the limit moves once per window. Defaults to 1s.",
      RANGES.adaptiveWindow,
    ).optional(),
  })
  .meta({
    description:
      "Adapt the limit to latency (Gradient2): it starts at maxConcurrent and moves between minLimit and maxLimit, cut when the recent latency exceeds tolerance × the long-term one, raised while it does not. Off by default: the limit is maxConcurrent.",
  });

export const Bulkhead = z
  .strictObject({
    maxConcurrent: int(
      1,
      RANGES.bulkhead.max,
      "Logical calls in flight at once (with adaptive: the limit it starts from). Defaults to rps × p99 (else p999) × 2 (Little's law with headroom), at least 10; else 10. Without a bulkhead section, latency with rps and p99 or p999 derives one.",
    ).optional(),
    maxQueue: int(0, 100_000, "Calls that may wait for a permit. Defaults to 0.").optional(),
    queueTimeout: duration(
      "Longest wait in the queue (also bounded by the deadline). Defaults to 0ms.",
      RANGES.queueTimeout,
    ).optional(),
    overflow: z.enum(["reject", "drop-oldest"]).optional().meta({
      description:
        "When the queue is full: reject the newcomer or evict the oldest waiter. Defaults to reject.",
    }),
    adaptive: AdaptiveConcurrency.optional(),
  })
  .superRefine((b, ctx) => {
    // the adaptive limit moves between minLimit and maxLimit: an empty interval cannot adapt
    const a = b.adaptive;
    if (a === undefined) return;
    const { minLimit: min, maxLimit: max } = a;
    if (typeof min === "number" && typeof max === "number" && min > max) {
      ctx.addIssue({
        code: "custom",
        path: ["adaptive", "minLimit"],
        message: `bulkhead.adaptive.minLimit must be at most bulkhead.adaptive.maxLimit (${max}), got ${min}`,
        params: {
          range: true,
          hint: `lower minLimit to ${max} or less, or raise maxLimit to ${min}`,
        },
      });
      return;
    }
    // maxConcurrent is where the limit starts: outside the interval it would be clamped at once
    const start = b.maxConcurrent;
    if (typeof start !== "number") return;
    if (typeof max === "number" && start > max) {
      ctx.addIssue({
        code: "custom",
        path: ["maxConcurrent"],
        message: `bulkhead.maxConcurrent is where the adaptive limit starts, so at most bulkhead.adaptive.maxLimit (${max}), got ${start}`,
        params: {
          range: true,
          hint: `lower maxConcurrent to ${max} or less, or raise maxLimit to ${start}`,
        },
      });
    } else if (typeof min === "number" && start < min) {
      ctx.addIssue({
        code: "custom",
        path: ["maxConcurrent"],
        message: `bulkhead.maxConcurrent is where the adaptive limit starts, so at least bulkhead.adaptive.minLimit (${min}), got ${start}`,
        params: {
          range: true,
          hint: `raise maxConcurrent to ${min} or more, or lower minLimit to ${start}`,
        },
      });
    }
  })
  .meta({ description: "Concurrency limit for calls to the dependency." });

export const RateLimit = z
  .strictObject({
    rate: throughput("Permits per period: every attempt (retries and hedges too) takes one."),
    burst: int(
      1,
      1_000_000,
      "Permits that may go at once after a quiet spell (the bucket's size). Defaults to 1.",
    ).optional(),
    maxWait: duration(
      "Longest a call waits for a permit; the call's deadline bounds the wait too. 0ms rejects at once with rate-limited. Defaults to 0ms.",
      RANGES.rateLimitWait,
    ).optional(),
    maxPause: duration(
      "Longest pause the server may impose (Retry-After on a 429 or 503, or the RateLimit header fields with no quota left); 0ms ignores the server. Defaults to 1m.",
      RANGES.rateLimitPause,
    ).optional(),
    quota: throughput(
      "The server's quota for this client, when it is not rate itself; resgen check compares the worst-case offered load (rate × attempts) with it. Defaults to rate.",
    ).optional(),
    store: z.enum(["memory", "redis"]).optional().meta({
      description:
        "Where the limit is kept: memory (each process has the whole rate) or redis (every replica takes its permits from one limit in Redis, so together they never exceed rate; the client then needs a store). Defaults to memory.",
    }),
    replicas: int(
      1,
      10_000,
      "Replicas that share a store: redis limit; while Redis cannot answer, each takes permits at rate ÷ replicas on its own. Required with store: redis.",
    ).optional(),
  })
  .superRefine((limit, ctx) => {
    if (limit.store === "redis" && limit.replicas === undefined)
      ctx.addIssue({
        code: "custom",
        path: ["store"],
        message:
          "rateLimit.store: redis needs rateLimit.replicas: while Redis cannot answer, each replica takes rate ÷ replicas on its own",
        params: { range: true, hint: "add replicas: the number of replicas that share the limit" },
      });
    else if (limit.store !== "redis" && limit.replicas !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["replicas"],
        message:
          "rateLimit.replicas is read only with store: redis: a limit in memory is each process's own",
        params: { range: true, hint: "add store: redis, or remove replicas" },
      });
  })
  .meta({
    description:
      "Client-side rate limit: at most rate permits per period, burst at once; calls wait up to maxWait or fail as rate-limited.",
  });

export const Endpoints = z
  .strictObject({
    choose: z.enum(["power-of-two", "round-robin"]).optional().meta({
      description:
        "How an attempt's endpoint is chosen among those whose breaker admits it and that the call has not tried: power-of-two (two drawn at random, the one with fewer attempts in flight) or round-robin. Defaults to power-of-two.",
    }),
    max: int(
      2,
      16,
      "Most endpoints the client accepts in its baseUrl list (a longer list throws at creation); bounds the metrics' endpoint label, and resgen check divides the load by it. Defaults to 8.",
    ).optional(),
  })
  .meta({
    description:
      "Several endpoints (baseUrl may then be a list): a breaker per endpoint, retries and hedges sent to an endpoint the call has not tried (transport: http).",
  });

export const Hedge = z
  .strictObject({
    delay: duration(
      "Wait before launching another copy. Defaults to p95.",
      RANGES.hedgeDelay,
    ).optional(),
    maxAttempts: int(2, 10, "Copies in all, the first included. Defaults to 2.").optional(),
    budget: rate(
      "Largest fraction of calls that may hedge. Defaults to 5%.",
      RANGES.hedgeBudget,
    ).optional(),
  })
  .meta({
    description:
      "Hedged requests for idempotent reads: extra copies after a delay, first success wins.",
  });

export const Fallback = z
  .discriminatedUnion("kind", [
    z.strictObject({
      kind: z.literal("value").meta({ description: "Serve a constant." }),
      value: z
        .unknown()
        .meta({ description: "The value served; it must match the response schema." }),
    }),
    z.strictObject({
      kind: z
        .literal("stale")
        .meta({ description: "Serve the last good response for the same arguments." }),
      maxAge: duration("Oldest response served. Defaults to 5m.", RANGES.maxAge).optional(),
      maxEntries: int(
        1,
        1_000_000,
        "Responses kept per operation (least recently used are evicted). Defaults to 1000.",
      ).optional(),
      vary: z
        .array(
          header("A request header whose value is part of the entry's identity, e.g. X-Tenant-Id."),
        )
        .optional()
        .meta({
          description:
            "Headers that partition the cache besides Authorization, Cookie and every per-call header (which always do).",
        }),
      store: z.enum(["memory", "redis"]).optional().meta({
        description:
          "Where the responses are kept: memory (this process) or redis (every replica serves what any of them stored, as JSON, up to maxAge; the client then needs a store). Defaults to memory.",
      }),
      otherwise: z
        .discriminatedUnion("kind", [
          z.strictObject({
            kind: z.literal("value").meta({ description: "Serve a constant." }),
            value: z
              .unknown()
              .meta({ description: "The value served; it must match the response schema." }),
          }),
          z.strictObject({
            kind: z
              .literal("provided")
              .meta({ description: "The caller passes a fallback function." }),
          }),
        ])
        .optional()
        .meta({
          description:
            "What a miss does (no entry for this request, or none young enough): value | provided. Without it a miss throws the failure.",
        }),
    }),
    z.strictObject({
      kind: z.literal("provided").meta({ description: "The caller passes a fallback function." }),
    }),
    z.strictObject({ kind: z.literal("none").meta({ description: "No fallback." }) }),
  ])
  .meta({
    description:
      "What to serve when the dependency fails: value | stale | provided | none. Served results are labelled degraded.",
  });

/** A scheme name under `auth.schemes:`, as OpenAPI's `securitySchemes` names them. */
export const AUTH_SCHEME_NAME = "^[A-Za-z0-9_.-]+$";

export const AuthScheme = z
  .discriminatedUnion("type", [
    z.strictObject({
      type: z
        .literal("bearer")
        .meta({ description: "`Authorization: Bearer <token>` (OpenAPI http, scheme bearer)." }),
    }),
    z.strictObject({
      type: z.literal("basic").meta({
        description:
          "`Authorization: Basic <base64 of username:password>` (OpenAPI http, scheme basic).",
      }),
    }),
    z.strictObject({
      type: z.literal("apiKey").meta({ description: "A key sent in a header or the query." }),
      in: z
        .enum(["header", "query"])
        .meta({ description: "Where the key goes: a request header or a query parameter." }),
      name: z
        .string()
        .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/)
        .meta({ description: "The header's or the query parameter's name, e.g. X-API-Key." }),
    }),
  ])
  .meta({ description: "How a credential is sent: bearer | basic | apiKey." });

/**
 * Security requirements: alternatives, the first one whose credentials the client has is sent.
 * Each is a scheme name, or a list of names sent together. `[]`: no credentials.
 */
export const AuthRequirement = z
  .array(
    z.union([
      z
        .string()
        .regex(new RegExp(AUTH_SCHEME_NAME))
        .meta({ description: "A scheme of auth.schemes." }),
      z
        .array(
          z
            .string()
            .regex(new RegExp(AUTH_SCHEME_NAME))
            .meta({ description: "A scheme of auth.schemes." }),
        )
        .min(1)
        .meta({ description: "Schemes sent together (all of them)." }),
    ]),
  )
  .meta({
    description:
      "Alternatives, in order: a scheme name, or a list of names sent together. The first whose credentials the client was given is sent; [] sends none.",
  });

export const Auth = z
  .strictObject({
    schemes: z.record(z.string().regex(new RegExp(AUTH_SCHEME_NAME)), AuthScheme).meta({
      description: "The security schemes, by name; they become the client's `auth` option.",
    }),
    use: AuthRequirement.optional().meta({
      description:
        "The requirement of every operation that does not set its own `auth`. Defaults to each scheme on its own, in the order declared.",
    }),
  })
  .meta({
    description:
      "Credentials the generated client sends (http transport): the schemes, and which of them each operation uses. The client takes them in its `auth` option.",
  });

/** `validate:` (docs/policy.md, "Response validation"): off unless a policy or operation asks. */
export const Validate = z.enum(["response", "none"]).meta({
  description:
    "response: the client checks each JSON response against the response schema and fails an invalid one with a parse error naming the JSON path (not retried). none (the default): the JSON is cast to the response type unchecked.",
});

const Param = z
  .strictObject({
    type: z
      .enum(["string", "number", "integer", "boolean"])
      .meta({ description: "Type of the parameter." }),
    enum: z
      .array(z.union([z.string(), z.number(), z.boolean()]))
      .min(1)
      .optional()
      .meta({ description: "Allowed values." }),
    description: z.string().optional().meta({ description: "Documentation." }),
  })
  .meta({ description: "A path parameter." });

const QueryParam = z
  .strictObject({
    type: z
      .enum(["string", "number", "integer", "boolean", "array"])
      .meta({ description: "Type of the parameter; arrays repeat the parameter." }),
    items: z
      .strictObject({
        type: z
          .enum(["string", "number", "integer", "boolean"])
          .meta({ description: "Type of the elements." }),
      })
      .optional()
      .meta({ description: "Element type of an array parameter." }),
    enum: z
      .array(z.union([z.string(), z.number(), z.boolean()]))
      .min(1)
      .optional()
      .meta({ description: "Allowed values." }),
    required: z
      .boolean()
      .optional()
      .meta({ description: "The caller must pass it. Defaults to false." }),
    description: z.string().optional().meta({ description: "Documentation." }),
  })
  .meta({ description: "A query parameter." });

export const Operation = z
  .strictObject({
    description: z
      .string()
      .optional()
      .meta({ description: "Documentation, emitted as JSDoc on the generated method." }),
    method: z
      .enum(METHODS)
      .optional()
      .meta({ description: "HTTP method (required for transport: http)." }),
    path: tag(
      z.string().meta({
        description:
          "Path template with {params}, relative to the client's baseUrl (required for transport: http).",
      }),
      "path",
    ).optional(),
    params: z
      .record(z.string(), Param)
      .optional()
      .meta({ description: "Types of the path parameters; undeclared ones are strings." }),
    query: z
      .record(z.string(), QueryParam)
      .optional()
      .meta({ description: "Query parameters, by name." }),
    body: TypeSchema.optional().meta({ description: "Schema of the JSON request body." }),
    response: TypeSchema.optional().meta({ description: "Schema of the JSON response body." }),
    idempotent: z.boolean().optional().meta({
      description:
        "Assert that repeating the call is safe. GET, HEAD, OPTIONS, PUT and DELETE are by default.",
    }),
    idempotency: z
      .strictObject({ header: header("Header that carries the key, e.g. Idempotency-Key.") })
      .optional()
      .meta({
        description: "Send an idempotency key, created once per logical call, so retries are safe.",
      }),
    timeout: Timeout.optional(),
    retry: z
      .union([z.literal(false), OperationRetry])
      .optional()
      .meta({
        description: "Retry settings for this operation, or false to turn an inherited retry off.",
      }),
    hedge: z
      .union([z.literal(false), Hedge])
      .optional()
      .meta({
        description: "Hedging for this operation, or false to turn an inherited hedge off.",
      }),
    rateLimit: z
      .union([z.literal(false), RateLimit])
      .optional()
      .meta({
        description:
          "This operation's own rate limit, used instead of the dependency's, or false for none.",
      }),
    fallback: Fallback.optional(),
    coalesce: z.boolean().optional().meta({
      description:
        "Identical calls in flight at once (same method, URL, vary headers and credentials, then cacheKey) share one attempt chain: one request, its retries, hedges and admission, for every caller. Only for retry-safe reads (GET or HEAD, transport: http). Defaults to the policy's coalesce, else false.",
    }),
    validate: Validate.optional(),
    auth: AuthRequirement.optional().meta({
      description:
        "The security requirement of this operation: scheme names of auth.schemes (alternatives; a list sends its schemes together), or [] for none. Defaults to auth.use.",
    }),
    grpc: z
      .strictObject({
        service: z.string().regex(new RegExp(GRPC_SERVICE_PATTERN)).meta({
          description:
            'Fully qualified gRPC service name, package included, e.g. "geo.v1.Geocoder".',
        }),
        method: name("gRPC method name, e.g. Geocode."),
      })
      .optional()
      .meta({
        description:
          "The gRPC method this operation calls. Used by the grpc target (service config) and, as the route /service/method, by the istio and linkerd targets.",
      }),
  })
  .meta({ description: "One call the client can make." });

export const Policy = z
  .strictObject({
    version: z.literal(1).meta({ description: "Version of the policy language. Always 1." }),
    kind: z.literal("dependency").optional().meta({
      description:
        "What the file describes: a dependency this service calls (the default), or `service` for the service's own inbound side (a service policy).",
    }),
    dependency: name("Name of the dependency; becomes create<Name>Client."),
    description: z
      .string()
      .optional()
      .meta({ description: "What the dependency is, emitted as JSDoc." }),
    essential: z.boolean().optional().meta({
      description:
        "Whether the service fails without it. Non-essential dependencies are expected to have a fallback. Defaults to true.",
    }),
    transport: z.enum(["http", "function"]).optional().meta({
      description:
        "http: the client calls fetch. function: the caller passes any async function (DB, SDK, gRPC). Defaults to http.",
    }),
    latency: Latency.optional(),
    timeout: Timeout.optional(),
    deadline: Deadline.optional(),
    retry: z
      .union([z.literal(false), Retry])
      .optional()
      .meta({
        description:
          "Retries with jittered exponential backoff, or false to turn a retry inherited from the project defaults off.",
      }),
    breaker: z
      .union([z.literal(false), Breaker])
      .optional()
      .meta({
        description:
          "Circuit breaker over a sliding window of outcomes, or false to turn a breaker inherited from the project defaults off.",
      }),
    bulkhead: z
      .union([z.literal(false), Bulkhead])
      .optional()
      .meta({
        description:
          "Concurrency limit for calls to the dependency, or false for none: turns off a bulkhead inherited from the project defaults or derived from latency.",
      }),
    hedge: z
      .union([z.literal(false), Hedge])
      .optional()
      .meta({
        description:
          "Hedged requests for idempotent reads, or false to turn a hedge inherited from the project defaults off.",
      }),
    rateLimit: z
      .union([z.literal(false), RateLimit])
      .optional()
      .meta({
        description:
          "Client-side rate limit shared by the operations (one may set its own), or false for none.",
      }),
    endpoints: Endpoints.optional(),
    fallback: Fallback.optional(),
    coalesce: z.boolean().optional().meta({
      description:
        "Coalesce identical in-flight calls of every operation that is a retry-safe read (GET or HEAD); other operations are left alone. An operation's own coalesce wins. Defaults to false.",
    }),
    auth: Auth.optional(),
    validate: Validate.optional(),
    maxResponseBytes: int(
      RANGES.maxResponseBytes.min,
      RANGES.maxResponseBytes.max,
      "Largest response body the client reads, in bytes; a larger 2xx body fails the call (not retried), and the rest is not read. From 1024 (1 KiB) to 268435456 (256 MiB). Defaults to 8388608 (8 MiB).",
    ).optional(),
    redirects: z.enum(["none", "same-origin"]).optional().meta({
      description:
        "What the client does with a redirect (301, 302, 303, 307, 308). none (the default): follows none; the call fails with an http error naming the location, which a fallback can answer. same-origin: follows up to 5 to the origin the request was sent to, with its headers; one to another origin fails the same way, and nothing of the request reaches it. A 303 (and a 301 or 302 of a POST) becomes a GET without a body; one that would send a method other than GET or HEAD again is followed only for a retry-safe operation.",
    }),
    host: z.string().max(253).regex(new RegExp(HOST_PATTERN)).optional().meta({
      description:
        "Host of the dependency as the service mesh knows it, e.g. payments.billing.svc.cluster.local (lowercase DNS name). Used by the istio and linkerd targets; defaults to <dependency>.<namespace>.<hostSuffix> from `kubernetes:` in the project file.",
    }),
    calls: z.array(name("A dependency this one calls downstream.")).optional().meta({
      description:
        "Dependencies this one calls in turn, when the same team owns them (used to multiply retries along the chain).",
    }),
    openapi: z
      .union([
        z.string().min(1).meta({
          description:
            "Path of the OpenAPI 3.0 or 3.1 document (YAML or JSON), relative to this policy.",
        }),
        z.strictObject({
          document: z.string().min(1).meta({
            description:
              "Path of the OpenAPI 3.0 or 3.1 document (YAML or JSON), relative to this policy.",
          }),
          idempotencyHeaders: z
            .array(
              header(
                "A header parameter name that carries an idempotency key (compared case-insensitively).",
              ),
            )
            .min(1)
            .optional()
            .meta({
              description:
                "Header parameters that make an operation keyed. Defaults to [Idempotency-Key, X-Idempotency-Key].",
            }),
        }),
      ])
      .optional()
      .meta({
        description:
          "Take the operations from an OpenAPI document, by operationId: all of them, or those listed under operations: (which may still override timeout, retry, hedge, fallback and idempotency).",
      }),
    operations: z
      .record(name("Operation name; becomes a method of the client."), Operation)
      .optional()
      .meta({
        description:
          "The operations of the dependency, by name. Required unless `openapi:` names a document; with one, each key is an operationId of the document.",
      }),
    schemas: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), TypeSchema)
      .optional()
      .meta({ description: "Named schemas referenced as #/schemas/Name." }),
  })
  .meta({
    title: "resgen policy",
    description: "A resilience policy for one dependency (resgen policy language version 1).",
  });

/** Sections the project file may set under every policy. */
export const Defaults = z
  .strictObject({
    essential: Policy.shape.essential,
    transport: Policy.shape.transport,
    timeout: Timeout.optional(),
    deadline: Deadline.optional(),
    retry: Retry.optional(),
    breaker: Breaker.optional(),
    bulkhead: Bulkhead.optional(),
    hedge: Hedge.optional(),
    fallback: Fallback.optional(),
    validate: Validate.optional(),
  })
  .meta({ description: "Settings merged under every policy; a policy's own values win." });

/** Codes of one target's mapping notes (docs/targets.md, "Acknowledging notes"); checked in src/program/acknowledge.ts. */
const Acknowledged = z
  .array(z.string().meta({ description: "A warning code of the target's notes, e.g. RG404." }))
  .optional()
  .meta({
    description: "Codes of this target's notes that resgen build counts but does not print.",
  });

export const ProjectConfig = z
  .strictObject({
    version: z
      .literal(1)
      .optional()
      .meta({ description: "Version of the project file. Always 1." }),
    policies: z
      .union([z.string(), z.array(z.string()).min(1)])
      .optional()
      .meta({
        description:
          "Glob(s) of policy files, relative to this file. Defaults to resilience/*.yaml.",
      }),
    out: z.string().optional().meta({
      description:
        "Output folder of generated code, relative to this file. Defaults to src/generated.",
    }),
    telemetry: z.enum(["none", "opentelemetry"]).optional().meta({
      description:
        "Telemetry built into the generated clients. opentelemetry: each client records metrics, spans and log lines through @opentelemetry/api (then a dependency of your project; see docs/telemetry.md). Defaults to none: the clients import nothing but their runtime.",
    }),
    runtime: z.enum(["vendored", "package"]).optional().meta({
      description:
        "Where the generated clients get their runtime. vendored: resgen writes it into the output folder's runtime/ (no dependency at run time). package: the clients import it from resgen/runtime, so resgen must be one of your dependencies, not a devDependency (docs/runtime-package.md). Defaults to vendored.",
    }),
    platform: z.enum(["node", "web"]).optional().meta({
      description:
        "What the generated code may use. node: Node, Bun, Deno and workerd with nodejs_compat or nodejs_als; ambient deadlines use AsyncLocalStorage. web: browsers and runtimes without AsyncLocalStorage; each call takes its deadline explicitly, and service policies are refused (docs/platforms.md). Defaults to node.",
    }),
    deadline: z
      .strictObject({
        header: header(
          "Header carrying the remaining time. Defaults to x-request-timeout-ms (or grpc-timeout for that format).",
        ).optional(),
        format: z.enum(["ms", "grpc-timeout"]).optional().meta({
          description:
            "Relative milliseconds, or gRPC's timeout notation (250m, 2S). Defaults to ms.",
        }),
      })
      .optional()
      .meta({ description: "How deadlines are propagated on the wire." }),
    kubernetes: z
      .strictObject({
        namespace: z
          .string()
          .max(63)
          .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/)
          .optional()
          .meta({
            description:
              "Namespace of the generated mesh resources, and of the dependencies' services unless a policy sets `host:`. Defaults to default.",
          }),
        hostSuffix: z.string().max(200).regex(new RegExp(HOST_PATTERN)).optional().meta({
          description:
            "Domain appended to <dependency>.<namespace> to form a dependency's host. Defaults to svc.cluster.local.",
        }),
      })
      .optional()
      .meta({
        description:
          "Kubernetes metadata of the istio and linkerd targets: where the resources live and how dependency hosts are named.",
      }),
    targets: z
      .strictObject({
        acknowledge: z
          .strictObject({
            istio: Acknowledged,
            linkerd: Acknowledged,
            grpc: Acknowledged,
          })
          .optional()
          .meta({
            description:
              "Warning codes (RG4xx) of each target's notes that were reviewed: `resgen build` counts them but does not print them.",
          }),
      })
      .optional()
      .meta({ description: "Settings of `resgen build --target istio|linkerd|grpc`." }),
    checks: z
      .strictObject({
        unmeasuredTimeouts: z.boolean().optional().meta({
          description:
            "Warn (RG226) about each timeout that comes from resgen's built-in default (2s) rather than from a measured `latency` or an explicit `timeout`. Defaults to true.",
        }),
      })
      .optional()
      .meta({
        description: "Analyzer checks that can be turned off for every policy of the project.",
      }),
    defaults: Defaults.optional(),
  })
  .meta({
    title: "resgen project",
    description:
      "resgen.config.yaml: where policies are, where code goes, and defaults for every policy.",
  });

export type PolicyInput = z.infer<typeof Policy>;
export type OperationInput = z.infer<typeof Operation>;
export type RetryInput = z.infer<typeof Retry>;
export type OperationRetryInput = z.infer<typeof OperationRetry>;
export type BreakerInput = z.infer<typeof Breaker>;
export type BulkheadInput = z.infer<typeof Bulkhead>;
export type HedgeInput = z.infer<typeof Hedge>;
export type RateLimitInput = z.infer<typeof RateLimit>;
export type EndpointsInput = z.infer<typeof Endpoints>;
export type FallbackInput = z.infer<typeof Fallback>;
export type TimeoutInput = z.infer<typeof Timeout>;
export type AuthInput = z.infer<typeof Auth>;
export type AuthSchemeInput = z.infer<typeof AuthScheme>;
export type AuthRequirementInput = z.infer<typeof AuthRequirement>;
export type DeadlineInput = z.infer<typeof Deadline>;
export type LatencyInput = z.infer<typeof Latency>;
export type DefaultsInput = z.infer<typeof Defaults>;
export type ProjectConfigInput = z.infer<typeof ProjectConfig>;
