/**
 * The names of generated code, computed in one place: what a policy's dependency, operations and
 * schemas become, what a generated module imports from the runtime, and the clashes between them.
 * Plain data, so `resgen check` reports clashes before anything is emitted, and the emitter
 * (src/emit/) prints these names rather than spelling its own.
 */
import type { JsonSchema, ResolvedOperation, ResolvedPolicy, SourceRef } from "./resolved.js";
import { camelCase, methodName, moduleName, pascalCase } from "./identifiers.js";
import { BARREL_MODULE, RUNTIME_DIR, TARGETS, TELEMETRY_DIR } from "./layout.js";

export { BARREL_MODULE };

/**
 * A name a generated module imports. Printing one (src/emit/printer.ts) writes the name and adds
 * the import, so a module imports what its code names and nothing else.
 */
export interface ImportSymbol {
  readonly kind: "import";
  readonly name: string;
  /** The module specifier, relative to the output folder's top (`./runtime/index.js`). */
  readonly from: string;
  /** Imported with `type` (the name is only ever used as a type). */
  readonly typeOnly: boolean;
}

/** The runtime's entry point, as the modules at the top of an output folder import it. */
export const RUNTIME_MODULE = `./${RUNTIME_DIR}/index.js`;

/**
 * The runtime's entry points in the resgen package, which `runtime: package` imports instead of
 * the output folder's runtime/ (docs/runtime-package.md): what generated modules use, and the
 * public surface the barrel re-exports.
 */
export const RUNTIME_PACKAGE = {
  generated: "resgen/runtime/generated",
  public: "resgen/runtime",
} as const;

/** The OpenTelemetry adapter (`telemetry: opentelemetry`), as the client modules import it. */
export const TELEMETRY_MODULE = `./${TELEMETRY_DIR}/opentelemetry.js`;

function symbols<const V extends string, const T extends string>(
  from: string,
  values: readonly V[],
  types: readonly T[],
): Readonly<Record<V | T, ImportSymbol>> {
  const out: Record<string, ImportSymbol> = {};
  for (const name of values) out[name] = { kind: "import", name, from, typeOnly: false };
  for (const name of types) out[name] = { kind: "import", name, from, typeOnly: true };
  return out as Record<V | T, ImportSymbol>;
}

/**
 * Everything a client module may import from the runtime. The emitter names the runtime only
 * through these, so they are also the names a schema type must not take (`schemaTypeNames`).
 */
export const CLIENT_RUNTIME = symbols(
  RUNTIME_MODULE,
  [
    "buildUrl",
    "checkedResult",
    "controlOf",
    "createDependency",
    "expectedType",
    "firstEndpoint",
    "httpIdentity",
    "isJsonObject",
    "missingProperty",
    "noAlternative",
    "notAllowed",
    "pathSegment",
    "propertyPath",
    "requestIdentity",
    "sendHttp",
    "unexpectedProperty",
  ],
  [
    "AttemptContext",
    "AuthRequirement",
    "BasicCredentials",
    "BreakerControl",
    "CallHeaders",
    "CallOptions",
    "ChaosControl",
    "ChaosOptions",
    "Clock",
    "DependencyHealth",
    "DependencySettings",
    "DependencySnapshot",
    "CredentialSource",
    "Classifier",
    "FunctionAttemptResult",
    "HttpAttemptResult",
    "HeaderSource",
    "HttpCallOptions",
    "HttpRequest",
    "Observer",
    "OperationSettings",
    "Outcome",
    "ProvidedCallOptions",
    "Random",
    "Reconfiguration",
    "ReconfigureResult",
    "ResilienceError",
    "SharedStore",
  ],
);

/** What a client module imports from the OpenTelemetry adapter (`telemetry: opentelemetry`). */
export const CLIENT_TELEMETRY = symbols(
  TELEMETRY_MODULE,
  ["installOpenTelemetry"],
  ["OpenTelemetryOptions"],
);

/** Everything a service module imports from the runtime. */
export const SERVICE_RUNTIME = symbols(
  RUNTIME_MODULE,
  ["createInboundMiddleware"],
  ["InboundMiddleware", "InboundOptions", "ServiceSettings", "SharedStore"],
);

/**
 * Members every generated client has besides the methods of its operations. src/emit/client.ts
 * emits the interface and the object literal from this list, so it is the list of what they hold.
 */
export const CLIENT_MEMBERS = [
  "health",
  "subscribe",
  "breaker",
  "snapshot",
  "reconfigure",
  "chaos",
] as const;
export type ClientMember = (typeof CLIENT_MEMBERS)[number];

/** What the module of one dependency exports, for the barrel. */
export interface ClientNames {
  readonly factory: string;
  readonly client: string;
  readonly config: string;
}

export function clientNames(dependency: string): ClientNames {
  const base = pascalCase(dependency);
  return { factory: `create${base}Client`, client: `${base}Client`, config: `${base}ClientConfig` };
}

/** Names of an operation in generated code. */
export interface OperationNames {
  readonly method: string;
  readonly constant: string;
  /** The constant of its security requirement (HTTP operations with credentials). */
  readonly auth: string;
  readonly input: string;
  readonly body: string;
  readonly response: string;
}

export function operationNames(
  op: ResolvedOperation,
  transport: "http" | "function",
): OperationNames {
  const pascal = pascalCase(op.name);
  return {
    method: transport === "function" ? `run${pascal}` : methodName(op.name),
    constant: `${camelCase(op.name).replace(/_$/, "")}Operation`,
    auth: `${camelCase(op.name).replace(/_$/, "")}Auth`,
    input: `${pascal}Input`,
    body: `${pascal}Body`,
    response: `${pascal}Response`,
  };
}

/**
 * Names a dependency's module cannot take, by why: the files and folders resgen itself writes at
 * the top of an output folder (the barrel, the runtime, the telemetry adapter, one folder per mesh
 * target), and the names Windows keeps for devices (`aux.ts` cannot be created or checked out
 * there). Module names are lower case (moduleName), so this also holds on case-insensitive disks.
 */
export const RESERVED_MODULES: ReadonlyMap<string, string> = new Map([
  [BARREL_MODULE, "the barrel resgen writes in the output folder"],
  [RUNTIME_DIR, `the name of the ${RUNTIME_DIR}/ folder resgen writes in the output folder`],
  [
    TELEMETRY_DIR,
    `the name of the ${TELEMETRY_DIR}/ folder resgen writes in the output folder (telemetry: opentelemetry)`,
  ],
  ...TARGETS.filter((t) => t !== "ts").map((t): [string, string] => [
    t,
    `the name of the ${t}/ folder resgen writes in the output folder (--target ${t})`,
  ]),
  ...[
    "con",
    "prn",
    "aux",
    "nul",
    ...Array.from({ length: 10 }, (_, d) => [`com${d}`, `lpt${d}`]).flat(),
  ].map((d): [string, string] => [d, "a device name on Windows, where the file cannot be created"]),
]);

/**
 * Method names an operation cannot take, by why: the client's own members, `then` (an object with
 * a then() method is a thenable: `await` and async functions call it instead of resolving to the
 * client), and every member of Object.prototype (String(client), `==`, libraries calling
 * client.hasOwnProperty() or checking client.constructor would send a request instead).
 */
export const RESERVED_METHODS: ReadonlyMap<string, string> = new Map([
  ...CLIENT_MEMBERS.map((m): [string, string] => [
    m,
    `a member every generated client has for itself`,
  ]),
  [
    "then",
    "which makes the client a thenable: awaiting it, or returning it from an async function, would call then() and send a request instead of resolving to the client",
  ],
  ...Object.getOwnPropertyNames(Object.prototype).map((m): [string, string] => [
    m,
    `which would replace Object.prototype.${m} on the client: code that calls it (String(client), comparisons, libraries) would send a request`,
  ]),
]);

/** Problems that would make the output wrong; reported by `check` as diagnostics (RG301). */
export interface NameClash {
  /**
   * Where the name is written: an operation (its key under `operations:`), or, for the
   * dependency's own name, the policy's `dependency` entry (`source.path` is `["dependency"]`).
   */
  readonly operation: { readonly name: string; readonly source: SourceRef };
  readonly message: string;
  /** What to do about it. */
  readonly hint: string;
}

/**
 * Names of one policy that would break the output: a dependency whose module would be a file
 * resgen writes itself, operations whose generated names collide with each other or with the
 * client's own members, and path parameters that clash with input keys.
 */
export function findClashes(policy: ResolvedPolicy): NameClash[] {
  const out: NameClash[] = [];
  const module = moduleName(policy.dependency);
  const file = RESERVED_MODULES.get(module);
  if (file !== undefined) {
    out.push({
      operation: { name: policy.dependency, source: { file: policy.file, path: ["dependency"] } },
      message: `dependency "${policy.dependency}" becomes the module ${module}.ts, ${file}`,
      hint: "rename the dependency",
    });
  }
  const seen = new Map<string, string>();
  for (const op of policy.operations) {
    const names = operationNames(op, policy.transport);
    const reserved = RESERVED_METHODS.get(names.method);
    if (reserved !== undefined) {
      out.push({
        operation: op,
        message: `operation "${op.name}" becomes the method ${names.method}(), ${reserved}`,
        hint: "rename the operation",
      });
    }
    const previous = seen.get(names.method);
    if (previous !== undefined) {
      out.push({
        operation: op,
        message: `operation "${op.name}" and "${previous}" both become the method ${names.method}()`,
        hint: "rename one of the operations",
      });
    }
    seen.set(names.method, op.name);
    for (const p of op.params) {
      if (p.name === "query" || p.name === "body") {
        out.push({
          operation: op,
          message: `path parameter {${p.name}} clashes with the "${p.name}" field of the method's input`,
          hint: "rename the parameter",
        });
      }
    }
  }
  return out;
}

/** Names a service policy becomes. */
export function serviceNames(service: string): {
  readonly factory: string;
  readonly module: string;
} {
  return {
    factory: `create${pascalCase(service)}Middleware`,
    module: `${moduleName(service)}-service`,
  };
}

/** What a service module imports from the runtime: its factory may not take one of these names. */
export const SERVICE_RUNTIME_IMPORTS: readonly string[] = Object.values(SERVICE_RUNTIME).map(
  (s) => s.name,
);

/**
 * Names of the client module's own top-level declarations that no policy name can produce: the
 * settings literal and the query helper.
 */
export const CLIENT_LOCALS = {
  settings: "dependencySettings",
  policyHash: "policyHash",
  own: "own",
  /** The record of each operation's settings in force, inside the factory (reconfigured live). */
  operations: "operations",
  /** The first endpoint of a `baseUrl` list, inside the factory of a policy with `endpoints:`. */
  baseUrl: "baseUrl",
} as const;

/**
 * Names a schema type must not take: globals the generated module (or code importing its types)
 * relies on, and whatever a client module imports. Schemas from OpenAPI documents are often
 * called `Error`, `Date` or `Record`.
 */
const GLOBAL_TYPES = [
  "Array",
  "ReadonlyArray",
  "Record",
  "Readonly",
  "Partial",
  "Promise",
  "Object",
  "String",
  "Number",
  "Boolean",
  "Symbol",
  "BigInt",
  "Date",
  "Error",
  "Map",
  "Set",
  "JSON",
  "Math",
  "URL",
  "Request",
  "Response",
  "Headers",
  "AbortSignal",
  "Function",
];

/** The reserved schema type names: globals, and every name in CLIENT_RUNTIME and CLIENT_TELEMETRY. */
export const RESERVED_TYPE_NAMES: ReadonlySet<string> = new Set([
  ...GLOBAL_TYPES,
  ...Object.values(CLIENT_RUNTIME).map((s) => s.name),
  ...Object.values(CLIENT_TELEMETRY).map((s) => s.name),
]);

/**
 * Type names for the named schemas of a policy, by schema name: PascalCase, with `Schema`
 * appended until the name clashes with none of `taken` and RESERVED_TYPE_NAMES.
 */
export function schemaTypeNames(
  schemas: Readonly<Record<string, JsonSchema>>,
  taken: ReadonlySet<string>,
): Map<string, string> {
  const names = new Map<string, string>();
  const used = new Set([...taken, ...RESERVED_TYPE_NAMES]);
  for (const name of Object.keys(schemas).sort()) {
    let candidate = pascalCase(name);
    while (used.has(candidate)) candidate += "Schema";
    used.add(candidate);
    names.set(name, candidate);
  }
  return names;
}

/** Every name of one client module. */
export interface ClientModuleNames extends ClientNames {
  /** Names of each operation, in the policy's order. */
  readonly operations: readonly OperationNames[];
  /** Type name of each named schema, by schema name. */
  readonly schemas: ReadonlyMap<string, string>;
}

/**
 * The names of a policy's client module. Schema types give way to everything else the module
 * declares or imports; the operations' own names cannot meet (`findClashes` refuses those that would).
 */
export function clientModuleNames(policy: ResolvedPolicy): ClientModuleNames {
  const client = clientNames(policy.dependency);
  const operations = policy.operations.map((op) => operationNames(op, policy.transport));
  const taken = new Set<string>([
    client.factory,
    client.client,
    client.config,
    ...Object.values(CLIENT_LOCALS),
  ]);
  for (const n of operations)
    for (const v of [n.input, n.body, n.response, n.constant, n.auth]) taken.add(v);
  return { ...client, operations, schemas: schemaTypeNames(policy.schemas, taken) };
}
