/**
 * One dependency → one TypeScript module: its schema types, the settings of its stack as
 * literals, and `create<Name>Client`. Written with the printer (src/emit/printer.ts) from the
 * resolved model and the names of src/model/names.ts; every string from the policy reaches the
 * output through `literal`, `propertyKey` or `docText`, and every runtime name through the
 * import symbols of CLIENT_RUNTIME, which are also the names schema types avoid.
 */
import { createHash } from "node:crypto";
import type {
  ResolvedAuthScheme,
  ResolvedRateLimit,
  ResolvedOperation,
  ResolvedPolicy,
  ResolvedQueryParam,
} from "../model/resolved.js";
import { literal } from "./literal.js";
import { overridesVariable } from "../../templates/runtime/reconfigure.js";
import { access, docText, methodSignatureKey, propertyKey } from "../model/identifiers.js";
import {
  CLIENT_LOCALS,
  CLIENT_MEMBERS,
  CLIENT_RUNTIME as R,
  CLIENT_TELEMETRY,
  clientModuleNames,
  type ClientMember,
  type OperationNames,
} from "../model/names.js";
import {
  blankLine,
  code,
  group,
  indent,
  join,
  jsdoc,
  line,
  lines,
  list,
  objectLiteral,
  printModule,
  softline,
  type Doc,
} from "./printer.js";
import { isInterfaceSchema, schemaType, typeDoc, unionDoc, type TypeContext } from "./types.js";
import { Validators } from "./validators.js";

/** `<A, B>`, broken one argument a line when it does not fit (no trailing comma, as types need). */
function typeArguments(items: readonly Doc[]): Doc {
  return group("<", indent([softline, join([",", line], items)]), softline, ">");
}

/** What the project file adds to every client. */
export interface ClientOptions {
  /** `opentelemetry`: the client installs the OpenTelemetry adapter; `none` (default): it imports only its runtime. */
  readonly telemetry?: "none" | "opentelemetry" | undefined;
  /** Maps the module a runtime symbol comes from to the one the import names (src/emit/index.ts). */
  readonly specifier?: ((from: string) => string) | undefined;
}

/**
 * The client's own members, besides its operations' methods: the signature in the interface and
 * the property of the object literal. Keyed by CLIENT_MEMBERS, which `check` keeps operations from.
 */
const MEMBERS: Readonly<
  Record<ClientMember, { readonly doc: string; readonly signature: Doc; readonly value: Doc }>
> = {
  health: {
    doc: "Breaker state and window counts, bulkhead occupancy and retry-budget tokens, for a health endpoint.",
    signature: code`health(): ${R.DependencyHealth};`,
    value: "health: () => dependency.health(),",
  },
  subscribe: {
    doc: "Adds an observer of the stack's events; returns a function that removes it.",
    signature: code`subscribe(observer: ${R.Observer}): () => void;`,
    value: "subscribe: (observer) => dependency.subscribe(observer),",
  },
  breaker: {
    doc: 'Manual control of the breaker: `isolate()` holds it open until the handle it returns is disposed (reference-counted), `reset()` closes it with an empty window, `state` reads it. Only on clients whose policy has a breaker (resgen\'s docs/runtime.md, "Manual control").',
    signature: code`readonly breaker: ${R.BreakerControl};`,
    value: code`breaker: ${R.controlOf}(dependency),`,
  },
  reconfigure: {
    doc: "Changes timeouts, retry attempts and backoff, breaker thresholds, bulkhead size and rate-limit waits at run time, for the calls that start after it (calls in flight keep theirs). The change is checked by the compiler's rules first; a bad one is refused whole, with every problem listed, and nothing of it applies. Never throws (resgen's docs/runtime.md, \"Reconfiguration\").",
    signature: "",
    value: "reconfigure: (change) => dependency.reconfigure(change),",
  },
  snapshot: {
    doc: "The breaker's and the retry budget's state as versioned JSON, to pass as `state` to a new client after a cold start (resgen's docs/runtime.md, \"Snapshot and restore\").",
    signature: code`snapshot(): ${R.DependencySnapshot};`,
    value: "snapshot: () => dependency.snapshot(),",
  },
  chaos: {
    doc: "The `chaos` option's faults: `enabled`, `disable()` (the kill switch: no attempt that starts after it gets a fault) and `injected()` counts. Inert on a client created without the option (resgen's docs/runtime.md, \"Chaos\").",
    signature: code`readonly chaos: ${R.ChaosControl};`,
    value: "chaos: dependency.chaos,",
  },
};

/** `Reconfiguration<"a" | "b">`: the change `reconfigure` takes, with the policy's operation names. */
function reconfigurationType(policy: ResolvedPolicy): Doc {
  return code`${R.Reconfiguration}${typeArguments([
    unionDoc(policy.operations.map((op) => JSON.stringify(op.name))),
  ])}`;
}

/** The members whose signature names the policy's operations, which MEMBERS cannot hold. */
function memberSignature(policy: ResolvedPolicy, m: ClientMember): Doc {
  return m === "reconfigure"
    ? code`reconfigure(change: ${reconfigurationType(policy)}): ${R.ReconfigureResult};`
    : MEMBERS[m].signature;
}

/** The client's own members for `policy`: `breaker` only where the policy has a breaker. */
function membersOf(policy: ResolvedPolicy): readonly ClientMember[] {
  return CLIENT_MEMBERS.filter((m) => m !== "breaker" || policy.breaker !== null);
}

/** The module text of one dependency, without its header. Deterministic for the same model. */
export function emitClient(policy: ResolvedPolicy, options: ClientOptions = {}): string {
  return printModule(
    join(blankLine, statements(policy, options.telemetry === "opentelemetry")),
    options.specifier,
  );
}

function statements(policy: ResolvedPolicy, telemetry: boolean): Doc[] {
  const out: Doc[] = [];
  const names = clientModuleNames(policy);
  const http = policy.transport === "http";
  const ops = policy.operations.map((op, i) => ({ op, names: names.operations[i]! }));
  const types: TypeContext = { names: names.schemas };

  // --- schema types
  for (const [schemaName, schema] of Object.entries(policy.schemas).sort(([a], [b]) =>
    a < b ? -1 : 1,
  )) {
    const typeName = types.names.get(schemaName)!;
    const type = schemaType(schema, types);
    const declaration =
      isInterfaceSchema(schema) && type.kind === "object"
        ? code`export interface ${typeName} ${typeDoc(type)}`
        : code`export type ${typeName} = ${typeDoc(type)};`;
    out.push(code`
      ${jsdoc(schema.description ? docText(schema.description) : undefined)}
      ${declaration}
    `);
  }

  // --- per-operation input, body and response types
  for (const { op, names: n } of ops) {
    if (op.body)
      out.push(
        typeAlias(`Request body of ${op.name}.`, n.body, typeDoc(schemaType(op.body, types))),
      );
    if (op.response)
      out.push(
        typeAlias(`Response of ${op.name}.`, n.response, typeDoc(schemaType(op.response, types))),
      );
    if (http && hasInput(op)) out.push(inputInterface(op, n));
  }

  // --- response validators (`validate: response`): without one, the JSON is cast unchecked
  const validators = new Validators(policy.schemas, types.names);
  const validatorOf = new Map<string, string>();
  for (const { op, names: n } of ops) {
    if (op.validateResponse !== true || op.response === undefined) continue;
    const name = validators.response(n.response, op.response);
    if (name !== undefined) validatorOf.set(op.name, name);
  }
  out.push(...validators.functions);

  // --- the stack's settings, as literals the runtime reads
  out.push(code`
    ${jsdoc(`Settings of the ${policy.dependency} dependency, resolved from its policy.`)}
    const ${CLIENT_LOCALS.settings}: ${R.DependencySettings} = ${literal(dependencySettings(policy))};
  `);
  out.push(code`
    ${jsdoc("Hash of the settings above: snapshots carry it, and a snapshot taken under other settings is refused.")}
    const ${CLIENT_LOCALS.policyHash} = ${literal(settingsHash(policy))};
  `);
  for (const { op, names: n } of ops) {
    out.push(
      code`const ${n.constant} = ${literal(operationSettings(op, http))} as const satisfies ${R.OperationSettings};`,
    );
  }
  // the security requirement of each operation that sends credentials (docs/policy.md, "Credentials")
  const schemes = http ? (policy.auth ?? []) : [];
  for (const { op, names: n } of ops) {
    const required = authRequirement(op, schemes);
    if (required !== undefined)
      out.push(code`const ${n.auth}: ${R.AuthRequirement} = ${literal(required)};`);
  }

  // --- config, client interface and factory
  // a rate limit kept in Redis cannot work without the application's store
  const shared =
    (policy.rateLimit !== undefined && policy.rateLimit.store === "redis") ||
    policy.operations.some(
      (op) =>
        (op.rateLimit !== undefined && op.rateLimit !== false && op.rateLimit.store === "redis") ||
        (op.fallback?.kind === "stale" && op.fallback.store === "redis"),
    );
  const config = [
    ...(http
      ? [
          policy.endpoints === undefined
            ? prop(
                "baseUrl",
                "string",
                false,
                `Base URL of ${policy.dependency}, e.g. \`https://${policy.dependency.toLowerCase()}.internal\`; operation paths are appended to it.`,
              )
            : prop(
                "baseUrl",
                "string | readonly string[]",
                false,
                `Base URL of ${policy.dependency}, or a list of its endpoints (at most ${String(policy.endpoints.max)}), e.g. \`["https://a.${policy.dependency.toLowerCase()}.internal", "https://b.${policy.dependency.toLowerCase()}.internal"]\`; operation paths are appended to it. With several, each endpoint has its own breaker and a retry or hedge goes to another endpoint (resgen's docs/runtime.md, "Endpoints"); a longer list, an empty one or a repeated endpoint throws a \`RangeError\` here.`,
              ),
          prop(
            "fetch",
            "typeof fetch | undefined",
            true,
            "The fetch implementation. Defaults to `globalThis.fetch`.",
          ),
          prop(
            "dispatcher",
            "unknown",
            true,
            'Passed to fetch as `dispatcher`, as is. On Node, an undici `Agent` from your own undici, such as `new Agent({ connect: { timeout: 1_000 } })`, enforces a connect timeout (resgen\'s docs/runtime.md, "Tiered timeouts").',
          ),
          ...(schemes.length > 0 ? [authProp(policy.dependency, schemes)] : []),
          prop(
            "headers",
            code`${R.HeaderSource} | undefined`,
            true,
            "Headers sent with every request (for example authorization): a record, or a function that returns one (or a promise of one), called once per attempt so that a rotating token is read fresh. A call's own `headers` go over them (names compared case-insensitively); the runtime's deadline and idempotency-key headers go over both.",
          ),
        ]
      : []),
    prop(
      "observer",
      code`${R.Observer} | undefined`,
      true,
      "Receives every event of the stack (attempts, retries, breaker transitions, ...).",
    ),
    prop(
      "clock",
      code`${R.Clock} | undefined`,
      true,
      "Time source. Defaults to the system's monotonic clock; inject a virtual clock in tests.",
    ),
    prop(
      "random",
      code`${R.Random} | undefined`,
      true,
      "Randomness for jitter. Defaults to `Math.random`.",
    ),
    prop(
      "classify",
      code`${R.Classifier}${typeArguments([
        unionDoc(
          ops.map(
            ({ op, names: n }) =>
              code`${http ? R.HttpAttemptResult : R.FunctionAttemptResult}${typeArguments([
                op.response ? n.response : http ? "undefined" : "unknown",
                JSON.stringify(op.name),
              ])}`,
          ),
        ),
      ])} | undefined`,
      true,
      "Says what each attempt's outcome means (the response with its status, headers and decoded body, a function's value, or an error): `success`, `transient` (retried, counted by the breaker), `failure` (counted, not retried) or `ignore` (counted by nothing); `undefined` keeps the built-in verdict. See resgen's docs/runtime.md, \"Classifying outcomes\".",
    ),
    prop(
      "overrides",
      code`${reconfigurationType(policy)} | string | undefined`,
      true,
      `Settings to start from instead of the policy's: a reconfiguration, or its JSON text (read from a file, say), applied before the \`${overridesVariable(policy.dependency)}\` environment variable's. Both go through the validator of \`reconfigure\`; one it refuses throws a \`ReconfigurationError\` listing every problem (resgen's docs/runtime.md, "Overrides at creation").`,
    ),
    prop(
      "state",
      code`${R.DependencySnapshot} | undefined`,
      true,
      "A snapshot from `snapshot()` to start from (breaker state, window, retry budget). One taken under other settings, or malformed, throws a `SnapshotError` and nothing of it is applied.",
    ),
    prop(
      "chaos",
      code`${R.ChaosOptions}${typeArguments([unionDoc(ops.map(({ op }) => JSON.stringify(op.name)))])} | undefined`,
      true,
      "Faults to inject into this client's attempts, for drills and tests: latency, error statuses, network errors and hangs, each at a rate, seeded (resgen's docs/runtime.md, \"Chaos\"). Only code turns chaos on, never a policy file; `RESGEN_CHAOS=off` in the environment keeps it off. Off when absent, and then free.",
    ),
    ...(shared
      ? [
          prop(
            "store",
            R.SharedStore,
            false,
            "The store the replicas share, where what the policy keeps in Redis lives (a rate limit, stale responses): `createRedisStore(redisClient)` (resgen's docs/store.md). `createMemoryStore()` runs it in this process, for tests.",
          ),
        ]
      : []),
    ...(telemetry
      ? [
          prop(
            "telemetry",
            code`${CLIENT_TELEMETRY.OpenTelemetryOptions} | false | undefined`,
            true,
            "OpenTelemetry meter, tracer and logger for metrics, spans and log lines (listed in resgen's docs/telemetry.md). Defaults to the global meter and tracer and a console logger; `false` turns telemetry off.",
          ),
        ]
      : []),
  ];
  out.push(code`
    ${jsdoc(`Options of {@link ${names.factory}}.`)}
    export interface ${names.config} {
      ${lines(config)}
    }
  `);

  const methods = ops.map(
    ({ op, names: n }) => code`
    ${jsdoc(methodDoc(op, http, schemes, validatorOf.has(op.name), policy.rateLimit))}
    ${http ? httpSignature(op, n) : functionSignature(op, n)}
  `,
  );
  const members = membersOf(policy).map(
    (m) => code`
    ${jsdoc(MEMBERS[m].doc)}
    ${memberSignature(policy, m)}
  `,
  );
  out.push(code`
    ${jsdoc(policy.description ? docText(policy.description) : `Client of ${policy.dependency}.`)}
    export interface ${names.client} {
      ${lines([...methods, ...members])}
    }
  `);

  if (http && policy.operations.some((op) => op.query.length > 0)) {
    out.push(code`
      ${jsdoc("A query parameter the caller set on the object itself (never one inherited from Object.prototype).")}
      function ${CLIENT_LOCALS.own}<T extends object, K extends keyof T>(value: T | undefined, key: K): T[K] | undefined {
        return value !== undefined && Object.hasOwn(value, key) ? value[key] : undefined;
      }
    `);
  }
  // several endpoints: the runtime chooses each attempt's, and the first is the request's own
  const endpoints = http && policy.endpoints !== undefined;
  const implementations = ops.map(({ op, names: n }) =>
    http
      ? httpMethod(
          op,
          n,
          policy.maxResponseBytes,
          authRequirement(op, schemes) !== undefined,
          validatorOf.get(op.name),
          endpoints ? CLIENT_LOCALS.baseUrl : "config.baseUrl",
          policy.redirects === "same-origin",
        )
      : functionMethod(op, n, validatorOf.get(op.name)),
  );
  const clientConfig = objectLiteral([
    "clock: config.clock",
    "random: config.random",
    "observer: config.observer",
    code`classify: config.classify as ${R.Classifier} | undefined`,
    CLIENT_LOCALS.policyHash,
    "state: config.state",
    "chaos: config.chaos",
    ...(endpoints ? ["endpoints: config.baseUrl"] : []),
    ...(shared ? ["store: config.store"] : []),
  ]);
  out.push(code`
    ${jsdoc(`Creates the ${policy.dependency} client. Create one per process and share it: the breaker, bulkhead and retry budget only protect calls that go through the same instance.`)}
    export function ${names.factory}${list("(", [`config: ${names.config}${http || shared ? "" : " = {}"}`], ")")}: ${names.client} {
      const dependency = ${R.createDependency}(${CLIENT_LOCALS.settings}, ${clientConfig});
      ${endpoints ? code`const ${CLIENT_LOCALS.baseUrl} = ${R.firstEndpoint}(config.baseUrl);` : null}
      ${telemetry ? code`if (config.telemetry !== false) ${CLIENT_TELEMETRY.installOpenTelemetry}(dependency, config.telemetry);` : null}
      ${telemetry ? "// after telemetry is installed, so that it records the overrides applied here" : null}
      const ${CLIENT_LOCALS.operations} = dependency.operations${list("(", [objectLiteral(ops.map(({ op, names: n }) => code`${propertyKey(op.name)}: ${n.constant}`)), "config.overrides"], ")")};
      return {
        ${lines(implementations)}
        ${lines(membersOf(policy).map((m) => MEMBERS[m].value))}
      };
    }
  `);
  return out;
}

function typeAlias(doc: string, name: string, type: Doc): Doc {
  return code`
    ${jsdoc(doc)}
    export type ${name} = ${type};
  `;
}

/** A readonly property of an interface, with its JSDoc. */
function prop(name: string, type: Doc, optional: boolean, doc: string): Doc {
  return code`
    ${jsdoc(doc)}
    readonly ${name}${optional ? "?" : ""}: ${type};
  `;
}

function hasInput(op: ResolvedOperation): boolean {
  return op.params.length > 0 || op.query.length > 0 || op.body !== undefined;
}

function requiresInput(op: ResolvedOperation): boolean {
  return op.params.length > 0 || op.query.some((q) => q.required) || op.body !== undefined;
}

/** The members of a parameter's type: its enum's values, or its type. */
function paramMembers(type: string, values?: readonly (string | number | boolean)[]): Doc[] {
  if (values) return values.map((v) => JSON.stringify(v));
  return [type === "integer" ? "number" : type];
}

function queryMembers(q: ResolvedQueryParam): Doc[] {
  if (q.type === "array")
    return [["ReadonlyArray<", unionDoc(paramMembers(q.items ?? "string", q.enum)), ">"]];
  return paramMembers(q.type, q.enum);
}

function inputInterface(op: ResolvedOperation, n: OperationNames): Doc {
  const properties: Doc[] = op.params.map((p) =>
    prop(
      propertyKey(p.name),
      unionDoc(paramMembers(p.type, p.enum)),
      false,
      p.description ? docText(p.description) : `Path parameter {${p.name}}.`,
    ),
  );
  if (op.query.length > 0) {
    const query = op.query.map(
      (q) => code`
      ${jsdoc(q.description ? docText(q.description).replace(/\n/g, " ") : undefined)}
      readonly ${propertyKey(q.name)}${q.required ? "" : "?"}: ${unionDoc([...queryMembers(q), ...(q.required ? [] : ["undefined"])])};
    `,
    );
    const type = code`
      {
        ${lines(query)}
      }
    `;
    properties.push(prop("query", type, !op.query.some((q) => q.required), "Query parameters."));
  }
  if (op.body) properties.push(prop("body", n.body, false, "Request body, sent as JSON."));
  return code`
    ${jsdoc(`Input of ${op.name}.`)}
    export interface ${n.input} {
      ${lines(properties)}
    }
  `;
}

/** Whether the caller provides the fallback: `kind: provided`, or a stale one whose miss asks the caller. */
function callerProvides(op: ResolvedOperation): boolean {
  return (
    op.fallback?.kind === "provided" ||
    (op.fallback?.kind === "stale" && op.fallback.otherwise?.kind === "provided")
  );
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
function optionsType(op: ResolvedOperation, response: string, http: boolean): Doc {
  const base = callerProvides(op)
    ? http
      ? group(indent(code`${R.ProvidedCallOptions}<${response}> &${line}${R.CallHeaders}`))
      : code`${R.ProvidedCallOptions}<${response}>`
    : http
      ? code`${R.HttpCallOptions}<${response}>`
      : code`${R.CallOptions}<${response}>`;
  const extra = [
    ...(callerProvides(op)
      ? [
          code`readonly fallback: (error: ${R.ResilienceError}) => ${unionDoc([response, `Promise<${response}>`])}`,
        ]
      : []),
    ...(requiresCacheKey(op, http) ? ["readonly cacheKey: string"] : []),
  ];
  return extra.length === 0
    ? base
    : code`${base} & ${list("{", extra, "}", { space: true, separator: ";" })}`;
}

/** Whether the options parameter may be left out. */
function optionalOptions(op: ResolvedOperation, http: boolean): boolean {
  return !callerProvides(op) && !requiresCacheKey(op, http);
}

/** The `options` parameter, typed. */
function optionsParam(op: ResolvedOperation, response: string, http: boolean): Doc {
  return code`options${optionalOptions(op, http) ? "?" : ""}: ${optionsType(op, response, http)}`;
}

/** What a method returns: the response, or an Outcome of it when a fallback may serve instead. */
function resultType(op: ResolvedOperation, response: string): Doc {
  return op.fallback !== null ? code`Promise<${R.Outcome}<${response}>>` : `Promise<${response}>`;
}

function httpSignature(op: ResolvedOperation, n: OperationNames): Doc {
  const response = op.response ? n.response : "void";
  // an optional input cannot come before required options
  const input = `input${!requiresInput(op) && optionalOptions(op, true) ? "?" : ""}: ${n.input}`;
  const params = [...(hasInput(op) ? [input] : []), optionsParam(op, response, true)];
  return code`${methodSignatureKey(n.method)}${list("(", params, ")")}: ${resultType(op, response)};`;
}

/** The type of the caller's function that makes one attempt. */
function attemptFunction(op: ResolvedOperation, n: OperationNames, response: string): Doc {
  return op.body
    ? code`(input: ${n.body}, ctx: ${R.AttemptContext}) => Promise<${response}>`
    : code`(ctx: ${R.AttemptContext}) => Promise<${response}>`;
}

function functionParams(op: ResolvedOperation, n: OperationNames): Doc {
  const response = op.response ? n.response : "R";
  return list(
    "(",
    [
      ...(op.body ? [`input: ${n.body}`] : []),
      code`fn: ${attemptFunction(op, n, response)}`,
      optionsParam(op, response, false),
    ],
    ")",
  );
}

function functionSignature(op: ResolvedOperation, n: OperationNames): Doc {
  return code`${propertyKey(n.method)}${op.response ? "" : "<R>"}${functionParams(op, n)}: ${resultType(op, op.response ? n.response : "R")};`;
}

/** What a fallback does, for the method's JSDoc. */
function fallbackDoc(op: ResolvedOperation, http: boolean): string | undefined {
  const f = op.fallback;
  if (f === null) return undefined;
  if (f.kind !== "stale")
    return `fallback: ${f.kind}; a served fallback is labelled \`degraded: true\``;
  const by = http
    ? `method, URL with query, Authorization, Cookie${f.vary.length > 0 ? `, ${f.vary.map(docText).join(", ")}` : ""} and every header of the call, then \`cacheKey\``
    : `input and \`cacheKey\``;
  const miss =
    f.otherwise === null
      ? "a miss (no entry for this request, or none young enough) throws the failure"
      : f.otherwise.kind === "value"
        ? "a miss (no entry for this request, or none young enough) serves the policy's value, labelled `degraded: true` without `ageMs`"
        : "a miss (no entry for this request, or none young enough) calls `options.fallback`";
  const where = f.store === "redis" ? " (kept in Redis: any replica's)" : "";
  return `fallback: stale, the last good response${where} at most ${f.maxAgeMs} ms old for the same ${by}, labelled \`degraded: true\` with its \`ageMs\`; ${miss}`;
}

function methodDoc(
  op: ResolvedOperation,
  http: boolean,
  schemes?: readonly ResolvedAuthScheme[],
  validated = false,
  sharedLimit?: ResolvedRateLimit,
): string {
  const lines: string[] = [];
  if (op.description) lines.push(docText(op.description), "");
  if (http && op.method) lines.push(`\`${op.method} ${docText(op.path ?? "")}\``, "");
  const stack: string[] = [
    `attempt timeout ${op.timeout.attemptMs} ms, total ${op.timeout.totalMs} ms`,
  ];
  stack.push(op.plan.description);
  if (op.plan.retriedOn !== null)
    stack.push(
      `retried on ${docText(op.plan.retriedOn)}; a programming error (TypeError, RangeError, ReferenceError, SyntaxError) is never retried and reaches the caller as it is`,
    );
  if (op.idempotencyKey)
    stack.push(
      `idempotency key in ${docText(op.idempotencyKey.header)}, the same on every attempt`,
    );
  if (op.coalesce && http)
    stack.push(
      "coalesced: identical calls in flight (same method, URL with query, Authorization, Cookie, credentials and headers of the call, then `cacheKey`) share one attempt chain and resolve to the same object, which callers must not mutate; each keeps its own deadline and signal",
    );
  const limit = op.rateLimit === undefined ? sharedLimit : op.rateLimit;
  if (limit) stack.push(rateLimitDoc(limit, op.rateLimit !== undefined));
  const fallback = fallbackDoc(op, http);
  if (fallback) stack.push(fallback);
  const credentials = authDoc(op, http ? (schemes ?? []) : []);
  if (credentials) stack.push(credentials);
  if (validated)
    stack.push(
      "the response is checked against its schema (validate: response): one that does not match fails with a parse error naming the JSON path, not retried",
    );
  lines.push(`Stack: ${stack.join("; ")}.`);
  return lines.join("\n");
}

function httpMethod(
  op: ResolvedOperation,
  n: OperationNames,
  maxResponseBytes: number,
  auth: boolean,
  validator: string | undefined,
  baseUrl: string,
  sameOrigin: boolean,
): Doc {
  const response = op.response ? n.response : "void";
  const method = JSON.stringify(op.method ?? "GET");
  const from = requiresInput(op) ? "input" : "input?";
  const request: Doc[] = [
    "fetch: config.fetch",
    "dispatcher: config.dispatcher",
    baseUrl === "baseUrl" ? "baseUrl" : `baseUrl: ${baseUrl}`,
    `method: ${method}`,
    "path",
  ];
  // own properties only: a parameter called toString must not send Object.prototype.toString
  const query =
    op.query.length > 0
      ? objectLiteral(
          op.query.map((q) => [
            `${propertyKey(q.name)}: ${CLIENT_LOCALS.own}`,
            list("(", [`${from}.query`, JSON.stringify(q.name)], ")"),
          ]),
        )
      : null;
  if (query) request.push("query");
  const given = optionalOptions(op, true) ? "options?." : "options.";
  // the client's headers (a record, or a function sendHttp calls once per attempt) and the call's
  // over them: sendHttp merges them, names compared case-insensitively (docs/runtime.md, "HTTP")
  request.push("headers: config.headers", `callHeaders: ${given}headers`);
  if (auth) request.push(`auth: { credentials: config.auth, require: ${n.auth} }`);
  const stale = op.fallback?.kind === "stale" ? op.fallback : undefined;
  // with a stale fallback each attempt reports the identity of what it sends (docs/runtime.md, "Fallback")
  if (stale !== undefined) request.push(["vary: ", literal(stale.vary)]);
  if (op.body) request.push(`body: ${member(from, "body")}`);
  request.push(
    `responseType: ${op.response ? '"json"' : '"none"'}`,
    `maxResponseBytes: ${maxResponseBytes}`,
  );
  if (validator !== undefined) request.push(`validate: ${validator}`);
  // same-origin redirects are followed; a method sent again only when the call is repeatable
  // (docs/runtime.md, "Redirects"). Without it sendHttp follows none.
  if (sameOrigin)
    request.push('redirects: "same-origin"', `repeatable: ${String(op.plan.repeatable)}`);
  const args: Doc[] = [
    access(CLIENT_LOCALS.operations, op.name),
    // `undefined`, not `void`: void is no type argument of a call (no-invalid-void-type)
    code`(ctx) => ${R.sendHttp}<${op.response ? response : "undefined"}>(request, ctx)`,
    "options",
  ];
  // a call that sends no attempt (an open breaker) resolves the identity its attempt would have sent
  // so does a coalesced call, before it joins the chain in flight for the same identity
  if (stale !== undefined || op.coalesce) args.push(code`() => ${R.httpIdentity}(request)`);
  // parameter types come from the client interface the object literal is returned as
  return code`
    ${propertyKey(n.method)}(${hasInput(op) ? "input, options" : "options"}) {
      ${pathStatements(op)}
      ${query ? code`const query = ${query};` : null}
      const request: ${R.HttpRequest} = ${objectLiteral(request)};
      return dependency.call${list("(", args, ")")};
    },
  `;
}

/** `target.name`, `target?.name` or `target?.["odd-name"]`; `target` may end in `?` for optional chaining. */
function member(target: string, name: string): string {
  if (!target.endsWith("?")) return access(target, name);
  const base = target.slice(0, -1);
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name)
    ? `${base}?.${name}`
    : `${base}?.[${JSON.stringify(name)}]`;
}

function functionMethod(
  op: ResolvedOperation,
  n: OperationNames,
  validator: string | undefined,
): Doc {
  const attempt = op.body ? "fn(input, ctx)" : "fn(ctx)";
  // the input is the request's identity; the caller's cacheKey partitions further (without input it is required)
  const args = [
    access(CLIENT_LOCALS.operations, op.name),
    validator !== undefined
      ? code`(ctx) => ${R.checkedResult}(${attempt}, ${validator}, ctx)`
      : op.body
        ? "(ctx) => fn(input, ctx)"
        : "fn",
    "options",
    ...(op.fallback?.kind === "stale" && op.body ? ["JSON.stringify(input)"] : []),
  ];
  return code`
    ${propertyKey(n.method)}${op.response ? "" : "<R>"}${functionParams(op, n)} {
      return dependency.call${list("(", args, ")")};
    },
  `;
}

/**
 * `const path = ...;`. With parameters, `pathSegment` encodes each and refuses `.` and `..`
 * (docs/runtime.md, "HTTP"); its refusal is returned as a rejected promise, like every failure.
 * The reason is what was thrown, as it was: `pathSegment`'s RangeError, or whatever a parameter's
 * own `toString` threw; `as Error` only types it for Promise.reject (docs/build.md, "Guarantees of
 * the generated code": lint-clean under strictTypeChecked).
 */
function pathStatements(op: ResolvedOperation): Doc {
  const expression = pathExpression(op);
  if (!/\{[^{}]*\}/.test(op.path ?? "/")) return code`const path = ${expression};`;
  return code`
    let path: string;
    try {
      path = ${expression};
    } catch (error) {
      const reason = error as Error;
      return Promise.reject(reason);
    }
  `;
}

/** `"/users/" + pathSegment("userId", input.userId) + "/recommendations"`: no template literals, so no `${}` can sneak in. */
function pathExpression(op: ResolvedOperation): Doc {
  const path = op.path ?? "/";
  const parts: Doc[] = [];
  let last = 0;
  for (const m of path.matchAll(/\{([^{}]*)\}/g)) {
    if (m.index > last) parts.push(JSON.stringify(path.slice(last, m.index)));
    parts.push(code`${R.pathSegment}(${literal(m[1]!)}, ${access("input", m[1]!)})`);
    last = m.index + m[0].length;
  }
  if (last < path.length) parts.push(JSON.stringify(path.slice(last)));
  return parts.length === 0 ? '"/"' : group(indent(join([" +", line], parts)));
}

/**
 * The first 16 hex digits of the SHA-256 of the settings literal: it changes whenever a setting
 * the runtime reads changes, so a snapshot is only restored under the settings it was taken with.
 */
export function settingsHash(policy: ResolvedPolicy): string {
  return createHash("sha256")
    .update(JSON.stringify(dependencySettings(policy)))
    .digest("hex")
    .slice(0, 16);
}

/** The rate limit in a method's JSDoc: what a call waits for, and what it fails with. */
function rateLimitDoc(limit: ResolvedRateLimit, own: boolean): string {
  const then =
    limit.maxWaitMs > 0
      ? `a call waits up to ${String(limit.maxWaitMs)} ms (never past the deadline) for one, else fails`
      : "a call without a free one fails at once";
  const where =
    limit.store === "redis"
      ? ` kept in Redis, shared by ${String(limit.replicas ?? 1)} replicas`
      : "";
  return `${own ? "its own " : ""}rate limit ${limit.rate.text}, burst ${String(limit.burst)}${where}: every attempt takes a permit; ${then} with rate-limited (never retried, no breaker verdict)`;
}

/** A rate limit as the runtime takes it (templates/runtime/rate-limit.ts). */
function rateLimitSettings(limit: ResolvedRateLimit): unknown {
  return {
    rate: limit.rate.count,
    periodMs: limit.rate.periodMs,
    burst: limit.burst,
    maxWaitMs: limit.maxWaitMs,
    maxPauseMs: limit.maxPauseMs,
    ...(limit.store === "redis" ? { store: "redis", replicas: limit.replicas ?? 1 } : {}),
  };
}

/**
 * The settings the runtime gets for the dependency, as the generated client passes them to
 * `createDependency` (exported for `resgen chaos`, which drills the same stack).
 */
export function dependencySettings(policy: ResolvedPolicy): unknown {
  return {
    name: policy.dependency,
    deadline: {
      propagate: policy.deadline.propagate,
      marginMs: policy.deadline.marginMs,
      header: policy.deadline.header,
      format: policy.deadline.format,
    },
    breaker: policy.breaker,
    bulkhead: policy.bulkhead,
    budget: policy.budget,
    // only when set, so a policy without one emits what it did before
    ...(policy.rateLimit === undefined ? {} : { rateLimit: rateLimitSettings(policy.rateLimit) }),
    ...(policy.endpoints === undefined
      ? {}
      : { endpoints: { choose: policy.endpoints.choose, max: policy.endpoints.max } }),
  };
}

/** The settings the runtime gets for one operation (exported for the tests that run them). */
export function operationSettings(op: ResolvedOperation, http: boolean): unknown {
  const { retry } = op.plan.runtime;
  return {
    name: op.name,
    repeatable: op.plan.runtime.repeatable,
    idempotencyKey: op.idempotencyKey ? { header: http ? op.idempotencyKey.header : null } : null,
    timeout: {
      attemptMs: op.timeout.attemptMs,
      totalMs: op.timeout.totalMs,
      // only what is set, so operations without a floor or a headers timeout emit what they did before
      ...(op.timeout.minAttemptMs === undefined ? {} : { minAttemptMs: op.timeout.minAttemptMs }),
      ...(op.timeout.headersMs === undefined ? {} : { headersMs: op.timeout.headersMs }),
    },
    retry: retry
      ? {
          maxAttempts: retry.maxAttempts,
          backoff: retry.backoff,
          on: retry.on,
          ...(retry.errors.length > 0 ? { errors: retry.errors } : {}),
          ...(retry.results.length > 0
            ? {
                results: retry.results.map((c) => ({
                  status: c.status,
                  path: c.segments,
                  equals: c.equals,
                })),
              }
            : {}),
          retryAfter: retry.retryAfter ? { maxMs: retry.retryAfter.maxMs ?? null } : null,
        }
      : null,
    hedge: op.plan.runtime.hedge,
    fallback: op.fallback,
    // only when on, so operations that do not coalesce emit what they did before
    ...(op.coalesce && http ? { coalesce: true } : {}),
    ...(op.rateLimit === undefined
      ? {}
      : { rateLimit: op.rateLimit === false ? false : rateLimitSettings(op.rateLimit) }),
  };
}

/** The credential member of each scheme in the client's `auth` option: its type, and the scheme's name when several share the type. */
function authMembers(
  schemes: readonly ResolvedAuthScheme[],
): Map<string, { readonly type: ResolvedAuthScheme["type"]; readonly nested: boolean }> {
  const count = new Map<string, number>();
  for (const s of schemes) count.set(s.type, (count.get(s.type) ?? 0) + 1);
  return new Map(schemes.map((s) => [s.name, { type: s.type, nested: count.get(s.type)! > 1 }]));
}

/** The schemes of an operation's requirement as the runtime reads them; `undefined` when it sends none. */
function authRequirement(
  op: ResolvedOperation,
  schemes: readonly ResolvedAuthScheme[],
): unknown[][] | undefined {
  const required = (op.auth ?? []).filter((all) => all.length > 0);
  if (schemes.length === 0 || required.length === 0) return undefined;
  const members = authMembers(schemes);
  const byName = new Map(schemes.map((s) => [s.name, s]));
  return required.map((all) =>
    all.map((name) => {
      const scheme = byName.get(name)!;
      const nested = members.get(name)!.nested ? { scheme: name } : {};
      return scheme.type === "apiKey"
        ? { type: "apiKey", in: scheme.in, name: scheme.param, ...nested }
        : { type: scheme.type, ...nested };
    }),
  );
}

/** How a scheme sends its credential, for JSDoc. */
function schemeDoc(scheme: ResolvedAuthScheme): string {
  switch (scheme.type) {
    case "bearer":
      return `\`Authorization: Bearer <token>\``;
    case "basic":
      return `\`Authorization: Basic <base64 of username:password>\``;
    case "apiKey":
      return `the ${scheme.in === "header" ? "header" : "query parameter"} \`${docText(scheme.param)}\``;
  }
}

const AUTH_NESTED: Readonly<Record<ResolvedAuthScheme["type"], string>> = {
  bearer: "Bearer tokens",
  basic: "HTTP basic credentials",
  apiKey: "API keys",
};

const AUTH_TYPES: Readonly<Record<ResolvedAuthScheme["type"], string>> = {
  bearer: "A bearer token",
  basic: "HTTP basic credentials",
  apiKey: "An API key",
};

/** The client's `auth` option: one member per scheme type, keyed by scheme where several share one. */
function authProp(dependency: string, schemes: readonly ResolvedAuthScheme[]): Doc {
  const credential = (s: ResolvedAuthScheme): Doc =>
    s.type === "basic" ? R.BasicCredentials : R.CredentialSource;
  const once = (s: ResolvedAuthScheme) =>
    s.type === "basic" ? "" : "; a function is called once per attempt (a rotating token)";
  const members: Doc[] = [];
  for (const type of ["bearer", "basic", "apiKey"] as const) {
    const of = schemes.filter((s) => s.type === type);
    if (of.length === 1) {
      const s = of[0]!;
      members.push(
        prop(
          type,
          code`${credential(s)} | undefined`,
          true,
          `${AUTH_TYPES[type]} for the scheme ${docText(s.name)}, sent as ${schemeDoc(s)}${once(s)}.`,
        ),
      );
    } else if (of.length > 1) {
      const inner = of.map((s) =>
        prop(
          propertyKey(s.name),
          code`${credential(s)} | undefined`,
          true,
          `${AUTH_TYPES[type]} for the scheme ${docText(s.name)}, sent as ${schemeDoc(s)}${once(s)}.`,
        ),
      );
      members.push(
        prop(
          type,
          code`
            {
              ${lines(inner)}
            } | undefined
          `,
          true,
          `${AUTH_NESTED[type]}, by scheme.`,
        ),
      );
    }
  }
  return prop(
    "auth",
    code`
      {
        ${lines(members)}
      } | undefined
    `,
    true,
    `Credentials for the security schemes of ${dependency}. Each operation sends those of the first of its requirements whose credentials are all given here, and none when no requirement is met (the method's JSDoc lists them); a call's own \`headers\` go over them.`,
  );
}

/** The credentials an operation sends, for its JSDoc. */
function authDoc(
  op: ResolvedOperation,
  schemes: readonly ResolvedAuthScheme[],
): string | undefined {
  if (schemes.length === 0) return undefined;
  const required = (op.auth ?? []).filter((all) => all.length > 0);
  if (required.length === 0) return "sends no credentials";
  const members = authMembers(schemes);
  const name = (scheme: string) => {
    const m = members.get(scheme)!;
    return m.nested ? `auth.${m.type}[${JSON.stringify(scheme)}]` : `auth.${m.type}`;
  };
  return `credentials: ${required.map((all) => all.map((s) => `\`${docText(name(s))}\``).join(" and ")).join(", else ")}`;
}
