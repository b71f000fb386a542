/**
 * One service policy → one TypeScript module: the settings of its inbound middleware as a
 * literal, and `create<Service>Middleware` with the node:http, Express and Fastify adapters of
 * the runtime. Written with the printer (src/emit/printer.ts) from the resolved service model;
 * what it imports are the symbols of SERVICE_RUNTIME, the names `check` keeps the factory from.
 */
import type { ResolvedService } from "../model/service.js";
import { literal } from "./literal.js";
import { SERVICE_RUNTIME as S, serviceNames } from "../model/names.js";
import { docText } from "../model/identifiers.js";
import { blankLine, code, jsdoc, join, list, printModule } from "./printer.js";

/** The runtime's `ServiceSettings` for a resolved service: plain data the module emits as a literal. */
export function serviceSettings(service: ResolvedService): unknown {
  return {
    name: service.service,
    deadline: service.deadline,
    admission: service.admission,
    rejection: service.rejection,
    defaultPriority: service.defaultPriority,
    priorities: service.priorities.map((r) => ({
      priority: r.priority,
      method: r.method,
      path: r.path,
      header: r.header,
      value: r.value,
    })),
    ...(service.degradedHeader === undefined ? {} : { degradedHeader: service.degradedHeader }),
    ...(service.routes.length === 0
      ? {}
      : {
          routes: service.routes.map((r) => ({
            method: r.method,
            path: r.path,
            essential: r.essential,
            idempotency: r.idempotency,
          })),
        }),
  };
}

/**
 * The module text of one service, without its header. Deterministic for the same model.
 * `specifier` maps the module a runtime symbol comes from to the one the import names.
 */
export function emitService(
  service: ResolvedService,
  specifier?: (from: string) => string,
): string {
  const names = serviceNames(service.service);
  const about = service.description === undefined ? "" : `\n\n${docText(service.description)}`;
  const admission = service.admission;
  const doc =
    `The inbound middleware of the ${service.service} service: reads the caller's deadline from \`${service.deadline.header}\`` +
    (service.deadline.grpcTimeout && service.deadline.header !== "grpc-timeout"
      ? " or `grpc-timeout`"
      : "") +
    ` (at most ${service.deadline.maxMs} ms; ${service.deadline.edgeMs} ms when none arrives), refuses spent budgets with ${service.deadline.expiredStatus}` +
    (admission === null
      ? ", and admits every request."
      : `, runs at most ${admission.maxConcurrent} requests at once with ${admission.maxQueue} waiting (at most ${admission.queueTimeoutMs} ms), and sheds the least important with ${service.rejection.status} and Retry-After.`) +
    " Handlers run inside the request's deadline and abort signal, so every generated client call they make inherits both." +
    idempotencyDoc(service) +
    about +
    "\n\nCreate it once per process and use its `node`, `express` or `fastify` adapter.";
  // a route that keeps its keys in Redis cannot work without the application's Redis store
  const redis = service.routes.some((r) => r.idempotency?.store === "redis");
  const options = redis
    ? code`options: ${S.InboundOptions} & { readonly store: ${S.SharedStore} }`
    : code`options: ${S.InboundOptions} = {}`;
  return printModule(
    join(blankLine, [
      code`
        ${jsdoc(`Settings of the ${service.service} service's inbound middleware, resolved from its policy.`)}
        const serviceSettings: ${S.ServiceSettings} = ${literal(serviceSettings(service))};
      `,
      code`
        ${jsdoc(doc)}
        export function ${names.factory}${list("(", [options], ")")}: ${S.InboundMiddleware} {
          return ${S.createInboundMiddleware}(serviceSettings, options);
        }
      `,
    ]),
    specifier,
  );
}

function idempotencyDoc(service: ResolvedService): string {
  const routes = service.routes.filter((r) => r.idempotency !== null);
  if (routes.length === 0) return "";
  const redis = routes.some((r) => r.idempotency?.store === "redis");
  return (
    ` Deduplicates ${routes.map((r) => `\`${r.route}\``).join(", ")} by idempotency key` +
    (redis ? ", in the Redis store `options.store` (required)." : ".")
  );
}
