/**
 * One dependency → one TypeScript module: its schema types, the settings of its stack as
 * literals, and `create<Name>Client`. Built as ts-morph structures from the resolved model; every
 * string from the policy reaches the output through `literal`, `propertyKey` or `docText`.
 */
import {
  Project,
  StructureKind,
  type InterfaceDeclarationStructure,
  type MethodSignatureStructure,
  type OptionalKind,
  type PropertySignatureStructure,
  type StatementStructures,
  VariableDeclarationKind,
} from "ts-morph";
import { describePlan, describeRetryOn } from "../model/plan.js";
import type { ResolvedOperation, ResolvedPolicy, ResolvedQueryParam } from "../model/resolved.js";
import { literal } from "./literal.js";
import { access, camelCase, docText, methodSignatureKey, pascalCase, propertyKey } from "../model/identifiers.js";
import { CLIENT_MEMBERS, clientNames, operationNames, type ClientMember, type OperationNames } from "../model/names.js";
import { isInterfaceSchema, schemaTypeNames, typeOf, type TypeContext } from "./types.js";

export const RUNTIME_IMPORT = "./runtime/index.js";
export const OPENTELEMETRY_IMPORT = "./telemetry/opentelemetry.js";

/** What the project file adds to every client. */
export interface ClientOptions {
  /** `opentelemetry`: the client installs the OpenTelemetry adapter; `none` (default): it imports only its runtime. */
  readonly telemetry?: "none" | "opentelemetry" | undefined;
}

/**
 * The client's own members, besides its operations' methods: the signature in the interface and
 * the property of the object literal. Keyed by CLIENT_MEMBERS, which `check` keeps operations from.
 */
const MEMBERS: Readonly<Record<ClientMember, { readonly signature: Omit<OptionalKind<MethodSignatureStructure>, "name">; readonly value: string }>> = {
  health: {
    signature: { docs: ["Breaker state and window counts, bulkhead occupancy and retry-budget tokens, for a health endpoint."], returnType: "DependencyHealth" },
    value: "() => dependency.health()",
  },
  subscribe: {
    signature: { docs: ["Adds an observer of the stack's events; returns a function that removes it."], parameters: [{ name: "observer", type: "Observer" }], returnType: "() => void" },
    value: "(observer) => dependency.subscribe(observer)",
  },
};

const project = new Project({ useInMemoryFileSystem: true, skipAddingFilesFromTsConfig: true });
// a new name per module: the formatter's language service caches documents by name, and a module
// emitted again under the same name (watch mode, tests) could be formatted from the stale one
let emitted = 0;

/** The module text of one dependency, without its header. Deterministic for the same model. */
export function emitClient(policy: ResolvedPolicy, options: ClientOptions = {}): string {
  // the whole module is described first and printed in one go: adding statements one by one
  // makes ts-morph re-parse the file after each, which dominated build time
  const statements = build(policy, options.telemetry === "opentelemetry");
  const file = project.createSourceFile(`${policy.dependency}.${emitted++}.ts`, { statements }, { overwrite: true });
  try {
    file.formatText({ indentSize: 2, convertTabsToSpaces: true, ensureNewLineAtEndOfFile: true });
    return spaceTopLevel(file.getFullText());
  } finally {
    project.removeSourceFile(file);
  }
}

/** One blank line between top-level statements, whichever way the printer wrote them. */
function spaceTopLevel(text: string): string {
  return text.replace(/\n{3,}/g, "\n\n").replace(/^(\S[^\n]*[;}])\n(?=export |const |function |\/\*\*)/gm, "$1\n\n");
}

function build(policy: ResolvedPolicy, telemetry: boolean): (string | StatementStructures)[] {
  const statements: (string | StatementStructures)[] = [];
  const names = clientNames(policy.dependency);
  const http = policy.transport === "http";
  const ops = policy.operations.map((op) => ({ op, names: operationNames(op, policy.transport) }));

  const taken = new Set<string>([names.factory, names.client, names.config, "dependencySettings"]);
  for (const { names: n } of ops) for (const v of [n.input, n.body, n.response, n.constant]) taken.add(v);
  const types: TypeContext = { names: schemaTypeNames(policy.schemas, taken) };

  const runtimeValues = new Set<string>(["createDependency"]);
  const runtimeTypes = new Set<string>(["Clock", "DependencyHealth", "DependencySettings", "ErrorClassifier", "Observer", "OperationSettings", "Random"]);

  // --- schema types
  for (const [schemaName, schema] of Object.entries(policy.schemas).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const typeName = types.names.get(schemaName)!;
    const docs = schema.description ? [docText(schema.description)] : [];
    const text = typeOf(schema, types);
    if (isInterfaceSchema(schema) && text.startsWith("{")) {
      statements.push(`${jsdoc(docs)}export interface ${typeName} ${text}`);
    } else {
      statements.push({ kind: StructureKind.TypeAlias, name: typeName, isExported: true, type: text, docs });
    }
  }

  // --- per-operation input, body and response types
  for (const { op, names: n } of ops) {
    if (op.body) statements.push({ kind: StructureKind.TypeAlias, name: n.body, isExported: true, type: typeOf(op.body, types), docs: [`Request body of ${op.name}.`] });
    if (op.response) statements.push({ kind: StructureKind.TypeAlias, name: n.response, isExported: true, type: typeOf(op.response, types), docs: [`Response of ${op.name}.`] });
    if (http && hasInput(op)) statements.push(inputInterface(op, n));
  }

  // --- the stack's settings, as literals the runtime reads
  statements.push({
    kind: StructureKind.VariableStatement,
    declarationKind: VariableDeclarationKind.Const,
    docs: [`Settings of the ${policy.dependency} dependency, resolved from its policy.`],
    declarations: [{ name: "dependencySettings", type: "DependencySettings", initializer: literal(dependencySettings(policy)) }],
  });
  for (const { op, names: n } of ops) {
    statements.push({
      kind: StructureKind.VariableStatement,
      declarationKind: VariableDeclarationKind.Const,
      declarations: [{ name: n.constant, initializer: `${literal(operationSettings(op, http))} as const satisfies OperationSettings` }],
    });
  }

  // --- config, client interface and factory
  statements.push({
    kind: StructureKind.Interface,
    name: names.config,
    isExported: true,
    docs: [`Options of {@link ${names.factory}}.`],
    properties: [
      ...(http
        ? [
            prop("baseUrl", "string", false, `Base URL of ${policy.dependency}, e.g. \`https://${policy.dependency.toLowerCase()}.internal\`; operation paths are appended to it.`),
            prop("fetch", "typeof fetch | undefined", true, "The fetch implementation. Defaults to `globalThis.fetch`."),
            prop("dispatcher", "unknown", true, "Passed to fetch as `dispatcher`, as is. On Node, an undici `Agent` from your own undici, such as `new Agent({ connect: { timeout: 1_000 } })`, enforces a connect timeout (resgen's docs/runtime.md, \"Tiered timeouts\")."),
            prop("headers", "Readonly<Record<string, string>> | undefined", true, "Headers sent with every request (for example authorization)."),
          ]
        : []),
      prop("observer", "Observer | undefined", true, "Receives every event of the stack (attempts, retries, breaker transitions, ...)."),
      prop("clock", "Clock | undefined", true, "Time source. Defaults to the system's monotonic clock; inject a virtual clock in tests."),
      prop("random", "Random | undefined", true, "Randomness for jitter. Defaults to `Math.random`."),
      prop("classify", "ErrorClassifier | undefined", true, "Says what an error thrown by the transport means: `transient` (retried), `failure` (not retried) or `bug` (thrown as it is, no fallback); `undefined` leaves it to the runtime."),
      ...(telemetry
        ? [prop("telemetry", "OpenTelemetryOptions | false | undefined", true, "OpenTelemetry meter, tracer and logger for metrics, spans and log lines (listed in resgen's docs/telemetry.md). Defaults to the global meter and tracer and a console logger; `false` turns telemetry off.")]
        : []),
    ],
  });

  const methods: OptionalKind<MethodSignatureStructure>[] = ops.map(({ op, names: n }) => {
    const response = op.response ? n.response : http ? "void" : "R";
    const withFallback = op.fallback !== null;
    const result = withFallback ? `Outcome<${response}>` : response;
    if (withFallback) runtimeTypes.add("Outcome");
    const options = optionsParam(op, response, runtimeTypes, http);
    const docs = [methodDoc(op, http)];
    if (http) {
      return {
        name: methodSignatureKey(n.method),
        docs,
        // an optional input cannot come before required options
        parameters: [{ name: "input", type: n.input, hasQuestionToken: !requiresInput(op) && options.hasQuestionToken }, options].filter((p) => hasInput(op) || p.name !== "input"),
        returnType: `Promise<${result}>`,
      };
    }
    runtimeTypes.add("AttemptContext");
    const fn = op.body ? `(input: ${n.body}, ctx: AttemptContext) => Promise<${response}>` : `(ctx: AttemptContext) => Promise<${response}>`;
    return {
      name: propertyKey(n.method),
      docs,
      ...(op.response ? {} : { typeParameters: ["R"] }),
      parameters: [...(op.body ? [{ name: "input", type: n.body }] : []), { name: "fn", type: fn }, options],
      returnType: `Promise<${result}>`,
    };
  });
  statements.push({
    kind: StructureKind.Interface,
    name: names.client,
    isExported: true,
    docs: [policy.description ? docText(policy.description) : `Client of ${policy.dependency}.`],
    methods: [...methods, ...CLIENT_MEMBERS.map((m) => ({ name: m, ...MEMBERS[m].signature }))],
  });

  const body: string[] = [
    "const dependency = createDependency(dependencySettings, { clock: config.clock, random: config.random, observer: config.observer, classify: config.classify });",
    ...(telemetry ? ["if (config.telemetry !== false) installOpenTelemetry(dependency, config.telemetry);"] : []),
    "return {",
  ];
  for (const { op, names: n } of ops) {
    body.push(...(http ? httpMethod(op, n, runtimeValues, policy.maxResponseBytes) : functionMethod(op, n)).map((l) => `  ${l}`));
  }
  body.push(...CLIENT_MEMBERS.map((m) => `  ${m}: ${MEMBERS[m].value},`), "};");
  if (http && policy.operations.some((op) => op.query.length > 0)) {
    statements.push({
      kind: StructureKind.Function,
      name: "own",
      docs: ["A query parameter the caller set on the object itself (never one inherited from Object.prototype)."],
      typeParameters: ["T extends object", "K extends keyof T"],
      parameters: [{ name: "value", type: "T | undefined" }, { name: "key", type: "K" }],
      returnType: "T[K] | undefined",
      statements: ["return value !== undefined && Object.hasOwn(value, key) ? value[key] : undefined;"],
    });
  }
  statements.push({
    kind: StructureKind.Function,
    name: names.factory,
    isExported: true,
    docs: [
      `Creates the ${policy.dependency} client. Create one per process and share it: the breaker, bulkhead and retry budget only protect calls that go through the same instance.`,
    ],
    parameters: [{ name: "config", type: names.config, ...(http ? {} : { initializer: "{}" }) }],
    returnType: names.client,
    statements: body,
  });

  const imports = [...[...runtimeValues].sort(), ...[...runtimeTypes].sort().map((t) => `type ${t}`)];
  const head: StatementStructures[] = [{ kind: StructureKind.ImportDeclaration, moduleSpecifier: RUNTIME_IMPORT, namedImports: imports }];
  if (telemetry) head.push({ kind: StructureKind.ImportDeclaration, moduleSpecifier: OPENTELEMETRY_IMPORT, namedImports: ["installOpenTelemetry", "type OpenTelemetryOptions"] });
  return [...head, ...statements];
}

function jsdoc(docs: string[]): string {
  return docs.length === 0 ? "" : `/**\n${docs.join("\n").split("\n").map((l) => ` * ${l}`.trimEnd()).join("\n")}\n */\n`;
}

function prop(name: string, type: string, optional: boolean, doc: string): OptionalKind<PropertySignatureStructure> {
  return { name, type, hasQuestionToken: optional, isReadonly: true, docs: [doc] };
}

function hasInput(op: ResolvedOperation): boolean {
  return op.params.length > 0 || op.query.length > 0 || op.body !== undefined;
}

function requiresInput(op: ResolvedOperation): boolean {
  return op.params.length > 0 || op.query.some((q) => q.required) || op.body !== undefined;
}

function paramType(type: string, values?: readonly (string | number | boolean)[]): string {
  if (values) return values.map((v) => JSON.stringify(v)).join(" | ");
  return type === "integer" ? "number" : type;
}

function queryType(q: ResolvedQueryParam): string {
  if (q.type === "array") return `ReadonlyArray<${paramType(q.items ?? "string", q.enum)}>`;
  return paramType(q.type, q.enum);
}

function inputInterface(op: ResolvedOperation, n: OperationNames): InterfaceDeclarationStructure {
  const properties: OptionalKind<PropertySignatureStructure>[] = op.params.map((p) => ({
    name: propertyKey(p.name),
    type: paramType(p.type, p.enum),
    isReadonly: true,
    docs: [p.description ? docText(p.description) : `Path parameter {${p.name}}.`],
  }));
  if (op.query.length > 0) {
    const lines = op.query.map((q) => {
      const doc = q.description ? `  /** ${docText(q.description).replace(/\n/g, " ")} */\n` : "";
      return `${doc}  readonly ${propertyKey(q.name)}${q.required ? "" : "?"}: ${queryType(q)}${q.required ? "" : " | undefined"};`;
    });
    properties.push({ name: "query", type: `{\n${lines.join("\n")}\n}`, isReadonly: true, hasQuestionToken: !op.query.some((q) => q.required), docs: ["Query parameters."] });
  }
  if (op.body) properties.push({ name: "body", type: n.body, isReadonly: true, docs: ["Request body, sent as JSON."] });
  return { kind: StructureKind.Interface, name: n.input, isExported: true, docs: [`Input of ${op.name}.`], properties };
}

/** Whether the caller provides the fallback: `kind: provided`, or a stale one whose miss asks the caller. */
function callerProvides(op: ResolvedOperation): boolean {
  return op.fallback?.kind === "provided" || (op.fallback?.kind === "stale" && op.fallback.otherwise?.kind === "provided");
}

/**
 * A function operation with a stale fallback and no input: the runtime cannot see what the
 * caller's function asks for, so the caller must name it in `cacheKey` (docs/runtime.md, "Fallback").
 */
function requiresCacheKey(op: ResolvedOperation, http: boolean): boolean {
  return !http && op.fallback?.kind === "stale" && op.body === undefined;
}

/**
 * Per-call options. The `fallback` option exists only where a provided fallback runs, and is
 * required there; HTTP calls take their own `headers`.
 */
function optionsType(op: ResolvedOperation, response: string, http: boolean): string {
  const base = callerProvides(op) ? `ProvidedCallOptions<${response}>${http ? " & CallHeaders" : ""}` : http ? `HttpCallOptions<${response}>` : `CallOptions<${response}>`;
  const extra = [
    ...(callerProvides(op) ? [`readonly fallback: (error: ResilienceError) => ${response} | Promise<${response}>`] : []),
    ...(requiresCacheKey(op, http) ? ["readonly cacheKey: string"] : []),
  ];
  return extra.length === 0 ? base : `${base} & { ${extra.join("; ")} }`;
}

/** Whether the options parameter may be left out. */
function optionalOptions(op: ResolvedOperation, http: boolean): boolean {
  return !callerProvides(op) && !requiresCacheKey(op, http);
}

function optionsParam(op: ResolvedOperation, response: string, runtimeTypes: Set<string>, http: boolean) {
  if (callerProvides(op)) for (const t of ["ResilienceError", "ProvidedCallOptions", ...(http ? ["CallHeaders"] : [])]) runtimeTypes.add(t);
  else runtimeTypes.add(http ? "HttpCallOptions" : "CallOptions");
  return { name: "options", type: optionsType(op, response, http), hasQuestionToken: optionalOptions(op, http) };
}

/** What a fallback does, for the method's JSDoc. */
function fallbackDoc(op: ResolvedOperation, http: boolean): string | undefined {
  const f = op.fallback;
  if (f === null) return undefined;
  if (f.kind !== "stale") return `fallback: ${f.kind}; a served fallback is labelled \`degraded: true\``;
  const by = http
    ? `method, URL with query, Authorization, Cookie${f.vary.length > 0 ? `, ${f.vary.map(docText).join(", ")}` : ""} and every header of the call, then \`cacheKey\``
    : `input and \`cacheKey\``;
  const miss =
    f.otherwise === null
      ? "a miss (no entry for this request, or none young enough) throws the failure"
      : f.otherwise.kind === "value"
        ? "a miss (no entry for this request, or none young enough) serves the policy's value, labelled `degraded: true` without `ageMs`"
        : "a miss (no entry for this request, or none young enough) calls `options.fallback`";
  return `fallback: stale, the last good response at most ${f.maxAgeMs} ms old for the same ${by}, labelled \`degraded: true\` with its \`ageMs\`; ${miss}`;
}

function methodDoc(op: ResolvedOperation, http: boolean): string {
  const lines: string[] = [];
  if (op.description) lines.push(docText(op.description), "");
  if (http && op.method) lines.push(`\`${op.method} ${docText(op.path ?? "")}\``, "");
  const stack: string[] = [`attempt timeout ${op.timeout.attemptMs} ms, total ${op.timeout.totalMs} ms`];
  stack.push(describePlan(op.plan));
  if (op.plan.kind === "retry" && op.retry) stack.push(`retried on ${docText(describeRetryOn(op.retry))}; a programming error (TypeError, RangeError, ReferenceError, SyntaxError) is never retried and reaches the caller as it is`);
  if (op.idempotencyKey) stack.push(`idempotency key in ${docText(op.idempotencyKey.header)}, the same on every attempt`);
  const fallback = fallbackDoc(op, http);
  if (fallback) stack.push(fallback);
  lines.push(`Stack: ${stack.join("; ")}.`);
  return lines.join("\n");
}

function httpMethod(op: ResolvedOperation, n: OperationNames, runtimeValues: Set<string>, maxResponseBytes: number): string[] {
  runtimeValues.add("sendHttp");
  const response = op.response ? n.response : "void";
  // parameter types come from the client interface the object literal is returned as
  const params = hasInput(op) ? "input, options" : "options";
  const lines = [`${propertyKey(n.method)}(${params}) {`, ...pathLines(op, runtimeValues)];
  const request = ["fetch: config.fetch", "dispatcher: config.dispatcher", "baseUrl: config.baseUrl", `method: ${JSON.stringify(op.method ?? "GET")}`, "path"];
  const from = requiresInput(op) ? "input" : "input?";
  if (op.query.length > 0) {
    const query = op.query.some((q) => q.required) ? `${from}.query` : `${from}.query?`;
    // own properties only: a parameter called toString must not send Object.prototype.toString
    lines.push(`  const query = { ${op.query.map((q) => `${propertyKey(q.name)}: own(${query.replace(/\?$/, "")}, ${JSON.stringify(q.name)})`).join(", ")} };`);
    request.push("query");
  }
  const given = optionalOptions(op, true) ? "options?." : "options.";
  request.push(`headers: ${given}headers === undefined ? config.headers : { ...config.headers, ...options.headers }`);
  if (op.body) request.push(`body: ${member(from, "body")}`);
  request.push(`responseType: ${op.response ? '"json"' : '"none"'}`, `maxResponseBytes: ${maxResponseBytes}`);
  // a stale fallback serves an entry only to a request of the same identity (docs/runtime.md, "Fallback")
  let identity = "";
  if (op.fallback?.kind === "stale") {
    runtimeValues.add("buildUrl");
    runtimeValues.add("requestIdentity");
    const url = `buildUrl(config.baseUrl, path${op.query.length > 0 ? ", query" : ""})`;
    const vary = op.fallback.vary.length > 0 ? `, vary: ${literal(op.fallback.vary)}` : "";
    identity = `, requestIdentity({ method: ${JSON.stringify(op.method ?? "GET")}, url: ${url}, headers: config.headers, callHeaders: ${given}headers${vary} })`;
  }
  lines.push(`  return dependency.call(${n.constant}, (ctx) => sendHttp<${response}>({ ${request.join(", ")} }, ctx), options${identity});`, "},");
  return lines;
}

/** `target.name`, `target?.name` or `target?.["odd-name"]`; `target` may end in `?` for optional chaining. */
function member(target: string, name: string): string {
  if (!target.endsWith("?")) return access(target, name);
  const base = target.slice(0, -1);
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? `${base}?.${name}` : `${base}?.[${JSON.stringify(name)}]`;
}

function functionMethod(op: ResolvedOperation, n: OperationNames): string[] {
  const response = op.response ? n.response : "R";
  const fnType = op.body ? `(input: ${n.body}, ctx: AttemptContext) => Promise<${response}>` : `(ctx: AttemptContext) => Promise<${response}>`;
  const params = [...(op.body ? [`input: ${n.body}`] : []), `fn: ${fnType}`, `options${optionalOptions(op, false) ? "?" : ""}: ${optionsType(op, response, false)}`];
  // the input is the request's identity; the caller's cacheKey partitions further (without input it is required)
  const identity = op.fallback?.kind === "stale" && op.body ? ", JSON.stringify(input)" : "";
  return [
    `${propertyKey(n.method)}${op.response ? "" : "<R>"}(${params.join(", ")}) {`,
    `  return dependency.call(${n.constant}, ${op.body ? "(ctx) => fn(input, ctx)" : "fn"}, options${identity});`,
    "},",
  ];
}

/**
 * `const path = ...;`. With parameters, `pathSegment` encodes each and refuses `.` and `..`
 * (docs/runtime.md, "HTTP"); its refusal is returned as a rejected promise, like every failure.
 */
function pathLines(op: ResolvedOperation, runtimeValues: Set<string>): string[] {
  const expression = pathExpression(op);
  if (!/\{[^{}]*\}/.test(op.path ?? "/")) return [`  const path = ${expression};`];
  runtimeValues.add("pathSegment");
  return ["  let path: string;", "  try {", `    path = ${expression};`, "  } catch (error) {", "    return Promise.reject(error);", "  }"];
}

/** `"/users/" + pathSegment("userId", input.userId) + "/recommendations"`: no template literals, so no `${}` can sneak in. */
function pathExpression(op: ResolvedOperation): string {
  const path = op.path ?? "/";
  const parts: string[] = [];
  let last = 0;
  for (const m of path.matchAll(/\{([^{}]*)\}/g)) {
    if (m.index > last) parts.push(JSON.stringify(path.slice(last, m.index)));
    parts.push(`pathSegment(${literal(m[1]!)}, ${access("input", m[1]!)})`);
    last = m.index + m[0].length;
  }
  if (last < path.length) parts.push(JSON.stringify(path.slice(last)));
  return parts.length === 0 ? '"/"' : parts.join(" + ");
}

function dependencySettings(policy: ResolvedPolicy): unknown {
  return {
    name: policy.dependency,
    deadline: { propagate: policy.deadline.propagate, marginMs: policy.deadline.marginMs, header: policy.deadline.header, format: policy.deadline.format },
    breaker: policy.breaker,
    bulkhead: policy.bulkhead,
    budget: policy.budget,
  };
}

/** The settings the runtime gets for one operation (exported for the tests that run them). */
export function operationSettings(op: ResolvedOperation, http: boolean): unknown {
  return {
    name: op.name,
    retrySafe: op.retrySafe,
    idempotencyKey: op.idempotencyKey ? { header: http ? op.idempotencyKey.header : null } : null,
    timeout: {
      attemptMs: op.timeout.attemptMs,
      totalMs: op.timeout.totalMs,
      // only what is set, so operations without a floor or a headers timeout emit what they did before
      ...(op.timeout.minAttemptMs === undefined ? {} : { minAttemptMs: op.timeout.minAttemptMs }),
      ...(op.timeout.headersMs === undefined ? {} : { headersMs: op.timeout.headersMs }),
    },
    retry: op.retry
      ? {
          maxAttempts: op.retry.maxAttempts,
          backoff: op.retry.backoff,
          on: op.retry.on,
          ...(op.retry.errors.length > 0 ? { errors: op.retry.errors } : {}),
          retryAfter: op.retry.retryAfter ? { honor: true, capMs: op.retry.retryAfter.maxMs ?? null } : null,
        }
      : null,
    // the runtime hedges what the plan hedges (a hedge on an operation that is not retry-safe never runs)
    hedge: op.plan.kind === "hedge" ? op.hedge : null,
    fallback: op.fallback,
  };
}

