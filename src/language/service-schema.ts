/**
 * The service policy (`kind: service`): the inbound side of one service — the deadline it gives
 * and accepts, how much work it admits at once, what it sheds first, and how it says no. One file
 * per service, next to the dependency policies of the same project.
 */
import { z } from "zod";
import { duration, header, int, name, RANGES } from "./schema.js";

export const PRIORITY_NAMES = ["critical", "high", "normal", "low"] as const;
export const ROUTE_PATTERN = "^((GET|HEAD|OPTIONS|PUT|DELETE|POST|PATCH) )?/[^\\s*]*\\*?$";

/** The default of admission.maxConcurrent (SERVICE_DEFAULTS in service.ts), the bound of minLimit when it is omitted. */
const SERVICE_MAX_CONCURRENT_DEFAULT = 100;

const priority = (description: string) => z.enum(PRIORITY_NAMES).meta({ description });

export const ServiceDeadline = z
  .strictObject({
    edge: duration(
      "Deadline given to a request that arrives without one (the edge deadline). Defaults to 5s.",
      RANGES.edge,
    ).optional(),
    max: duration(
      "Longest deadline accepted from a caller; longer ones are clamped to it. Defaults to 30s.",
      RANGES.serviceMax,
    ).optional(),
    header: header(
      "Header carrying the caller's remaining time. Defaults to the project's deadline header (x-request-timeout-ms).",
    ).optional(),
    format: z.enum(["ms", "grpc-timeout"]).optional().meta({
      description:
        "Encoding of the header: relative milliseconds, or gRPC's timeout notation (250m, 2S). Defaults to the project's format (ms).",
    }),
    grpcTimeout: z.boolean().optional().meta({
      description:
        "Also accept gRPC's grpc-timeout header when the configured one is absent. Defaults to true.",
    }),
    expiredStatus: int(
      400,
      599,
      "Status answered, without running the handler, to a request whose deadline has already passed. Defaults to 504.",
    ).optional(),
    minBudget: duration(
      "Least remaining time a request needs to be handled: with less, it is answered expiredStatus without running the handler, like a spent budget. Defaults to 0ms (only spent budgets are refused).",
      RANGES.minBudget,
    ).optional(),
  })
  .meta({
    description:
      "Deadlines of inbound requests: read from the caller, clamped, or stamped at the edge.",
  });

export const Admission = z
  .strictObject({
    maxConcurrent: int(1, 1_000_000, "Requests handled at once. Defaults to 100.").optional(),
    maxQueue: int(
      0,
      1_000_000,
      "Requests that may wait for a slot; beyond it the least important are shed. Defaults to maxConcurrent.",
    ).optional(),
    queueTimeout: duration(
      "Longest wait for a slot before the request is shed (its deadline bounds it too). Defaults to 500ms.",
      RANGES.admissionQueueTimeout,
    ).optional(),
    adaptive: z
      .strictObject({
        latency: duration(
          "A request slower than this (or a failed one) cuts the limit; a faster one raises it.",
          RANGES.adaptiveLatency,
        ),
        minLimit: int(
          1,
          1_000_000,
          "Lowest limit, at most maxConcurrent. Defaults to 1.",
        ).optional(),
        backoff: z
          .number()
          .gt(0)
          .lt(1)
          .optional()
          .meta({ description: "Factor applied to the limit on a slow request. Defaults to 0.9." }),
      })
      .optional()
      .meta({
        description:
          "Adapt the limit to latency (AIMD: +1/limit per fast request, × backoff per slow one), between minLimit and maxConcurrent. Off by default: the limit is maxConcurrent.",
      }),
    reserve: z
      .strictObject({
        critical: int(0, 1_000_000, "Slots only critical requests may take.").optional(),
        high: int(0, 1_000_000, "Slots only high and critical requests may take.").optional(),
        normal: int(0, 1_000_000, "Slots low requests may not take.").optional(),
      })
      .optional()
      .meta({
        description:
          "Slots kept for each priority above the lowest: less important requests cannot take them, so a critical request is admitted while its reserve is free, whatever the queue holds. Their sum must be below maxConcurrent. Defaults to { critical: 1 } (none when maxConcurrent is 1); {} reserves nothing.",
      }),
  })
  .superRefine((a, ctx) => {
    // the reserves come out of maxConcurrent: the lowest priority needs at least one slot left
    const reserved = (a.reserve?.critical ?? 0) + (a.reserve?.high ?? 0) + (a.reserve?.normal ?? 0);
    const slots = a.maxConcurrent ?? SERVICE_MAX_CONCURRENT_DEFAULT;
    if (
      a.reserve !== undefined &&
      typeof slots === "number" &&
      Number.isFinite(reserved) &&
      reserved >= slots
    ) {
      ctx.addIssue({
        code: "custom",
        path: ["reserve"],
        message: `admission.reserve keeps ${reserved} slots, but admission.maxConcurrent is ${slots}${a.maxConcurrent === undefined ? " (the default)" : ""}: at least one slot must be left for the lowest priority`,
        params: {
          range: true,
          hint: `reserve at most ${slots - 1} slots in all, or raise maxConcurrent to ${reserved + 1}`,
        },
      });
    }
    // the adaptive limit moves between minLimit and maxConcurrent: an empty interval cannot adapt
    const max = a.maxConcurrent ?? SERVICE_MAX_CONCURRENT_DEFAULT;
    const min = a.adaptive?.minLimit;
    if (typeof min === "number" && typeof max === "number" && min > max) {
      ctx.addIssue({
        code: "custom",
        path: ["adaptive", "minLimit"],
        message: `admission.adaptive.minLimit must be at most admission.maxConcurrent (${max}${a.maxConcurrent === undefined ? ", the default" : ""}), got ${min}`,
        params: {
          range: true,
          hint: `lower minLimit to ${max} or less, or raise maxConcurrent to ${min}`,
        },
      });
    }
  })
  .meta({
    description:
      "Admission control: a concurrency limit and a bounded priority queue for inbound work. Without it every request is admitted.",
  });

export const Reject = z
  .strictObject({
    status: z.literal([429, 503]).optional().meta({
      description:
        "Status of a shed request: 503 (overloaded) or 429 (slow down). Defaults to 503.",
    }),
    retryAfter: duration(
      "Sent as Retry-After (rounded up to whole seconds). Defaults to 1s.",
      RANGES.retryAfter,
    ).optional(),
  })
  .meta({
    description: "The answer to a request shed for overload: a status, Retry-After and no body.",
  });

export const Responses = z
  .strictObject({
    degradedHeader: header(
      "Header added to a response when a dependency answered with a fallback while the request was handled, listing those dependencies (e.g. x-degraded: recommendations). Off by default.",
    ).optional(),
  })
  .meta({ description: "What the middleware adds to the responses of admitted requests." });

export const PriorityRuleSchema = z
  .strictObject({
    priority: priority("Priority of the requests this rule matches."),
    route: z.string().regex(new RegExp(ROUTE_PATTERN)).optional().meta({
      description:
        'Requests by method and path: "GET /healthz", "/checkout" (any method), "/sync/*" (a path prefix).',
    }),
    header: z
      .strictObject({
        name: header("Header name, e.g. x-priority."),
        value: z
          .string()
          .optional()
          .meta({ description: "Value the header must have; without it, any value." }),
        trusted: z.enum(["proxy"]).optional().meta({
          description:
            "proxy: a proxy in front of the service sets this header and removes it from what callers send, so callers cannot claim the priority. Without it, a rule that raises priority on this header is reported (RG508): any caller can send it.",
        }),
      })
      .optional()
      .meta({ description: "Requests that carry this header (and value)." }),
  })
  .meta({
    description:
      "A priority rule: the first rule whose route and header both match gives the request its priority.",
  });

export const Priorities = z
  .strictObject({
    default: priority("Priority of requests no rule matches. Defaults to normal.").optional(),
    rules: z.array(PriorityRuleSchema).optional().meta({
      description:
        "Rules, first match wins: health checks and critical paths high, background work low.",
    }),
  })
  .meta({ description: "Which requests are shed last (critical) and first (low) under overload." });

export const RouteIdempotency = z
  .strictObject({
    header: header(
      "Request header carrying the key the client sends once per logical request (resgen's clients send it on every attempt). Defaults to Idempotency-Key.",
    ).optional(),
    ttl: duration(
      "How long a completed response is kept and replayed for its key. Defaults to 24h.",
      RANGES.idempotencyTtl,
    ).optional(),
    store: z.enum(["memory", "redis"]).optional().meta({
      description:
        "Where keys and responses are kept: memory (this process alone) or redis (every replica; create<Name>Middleware then requires a Redis store). Defaults to memory.",
    }),
    required: z.boolean().optional().meta({
      description:
        "Answer 400 to a request of the route without a key. Defaults to false: such a request runs without deduplication.",
    }),
    maxBytes: int(
      RANGES.idempotencyMaxBytes.min,
      RANGES.idempotencyMaxBytes.max,
      "Largest request body fingerprinted and largest response body stored, in bytes; a larger one is not stored, so a repeat runs again. Defaults to 1048576 (1 MiB).",
    ).optional(),
    scope: z.array(header("A request header.")).optional().meta({
      description:
        "Request headers that identify the caller: keys are kept apart per value, so one caller never receives another's stored response. Defaults to [authorization, cookie].",
    }),
  })
  .meta({
    description:
      "Deduplicate the route's requests by their idempotency key: the first runs and its response is stored, a repeat gets that response back without running the handler.",
  });

export const RouteSchema = z
  .strictObject({
    route: z.string().regex(new RegExp(ROUTE_PATTERN)).meta({
      description:
        'Requests by method and path: "POST /orders", "/orders/*" (a path prefix; without a method, every method but GET, HEAD, OPTIONS and TRACE).',
    }),
    essential: z.boolean().optional().meta({
      description:
        "The route must not run without its guarantees: with the store down, its requests get 503 (fail closed) instead of running without deduplication (fail open). Defaults to false.",
    }),
    idempotency: RouteIdempotency.optional(),
  })
  .meta({
    description: "A route with settings of its own. The first route that matches a request wins.",
  });

export const Service = z
  .strictObject({
    version: z.literal(1).meta({ description: "Version of the policy language. Always 1." }),
    kind: z.literal("service").meta({
      description: "This file is a service policy: the inbound side of the service itself.",
    }),
    service: name("Name of the service; becomes create<Name>Middleware."),
    description: z
      .string()
      .optional()
      .meta({ description: "What the service is, emitted as JSDoc." }),
    calls: z.array(name("A dependency the service calls.")).optional().meta({
      description:
        "Dependencies the service calls, checked against its edge deadline. Defaults to every dependency policy checked with it.",
    }),
    deadline: ServiceDeadline.optional(),
    admission: Admission.optional(),
    reject: Reject.optional(),
    responses: Responses.optional(),
    priorities: Priorities.optional(),
    routes: z.array(RouteSchema).optional().meta({
      description: "Routes with settings of their own, such as idempotency. First match wins.",
    }),
  })
  .meta({
    title: "resgen service policy",
    description:
      "The inbound side of one service (resgen policy language version 1, kind: service).",
  });

export type ServiceInput = z.infer<typeof Service>;
