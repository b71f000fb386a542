import { AST_NODE_TYPES, type TSESTree } from "@typescript-eslint/types";
import { DefinitionType } from "../utils/scope.js";
import {
  isFunction,
  memberName,
  propertyKey,
  skipWrappers,
  staticString,
  type Node,
} from "../utils/ast.js";
import { createRule } from "../utils/create-rule.js";
import {
  httpRequestOf,
  idempotencyKeyOf,
  isFreshInside,
  urlText,
  type HttpRequest,
} from "../utils/http.js";
import {
  anyKeyOf,
  exactKey,
  numberValue,
  readKey,
  stringValue,
  type KeyLookup,
} from "../utils/objects.js";
import { escapes } from "../utils/instances.js";
import { isExported, mentionsMethod, resendsOf, type Resend } from "../utils/interceptors.js";
import { retryBranchOf } from "../utils/recursion.js";
import { resolverOf } from "../utils/project.js";
import { isModule, normaliseModule, type Resolver } from "../utils/resolve.js";
import {
  attemptRegion,
  conditionNodes,
  describeRetrier,
  findRetryScope,
  onlyNeverProcessed,
  retriesDisabled,
  type KeyReader,
  type RetryScope,
} from "../utils/retry.js";
import { localFunction } from "../utils/retry-helpers.js";
import { writeCallOf, type WriteCall } from "../utils/write-calls.js";

export type Options = [
  {
    /** Header names that carry an idempotency key, matched case-insensitively. */
    idempotencyHeaders?: string[];
    /** HTTP methods that are not safe to repeat without a key. */
    nonIdempotentMethods?: string[];
    /** Regular expressions for URLs of requests that only read, though sent as POST. */
    ignoreUrls?: string[];
    /** Names of project functions that retry the function passed to them. */
    retryWrappers?: string[];
    /** What to do about axios-retry's default condition, which retries network errors on every method. */
    axiosRetryDefaultCondition?: "report" | "ignore";
    /** Ask the type checker about callees and retry helpers the file cannot show. */
    useTypeInformation?: boolean;
  },
];

export type MessageIds =
  | "retriedWithoutKey"
  | "keyPerAttempt"
  | "unsafeRetryMethods"
  | "axiosRetryEveryMethod"
  | "axiosRetryDefaultCondition"
  | "axiosRetryExportedClient"
  | "interceptorResendsWrites";

interface Settings {
  readonly headers: readonly string[];
  readonly methods: ReadonlySet<string>;
  readonly ignoreUrls: readonly RegExp[];
  readonly wrappers: ReadonlySet<string>;
  readonly axiosDefault: "report" | "ignore";
}

interface Problem {
  readonly node: Node;
  readonly messageId: MessageIds;
  readonly data: Record<string, string>;
}

/** Whether a retry condition makes the retry harmless for this request. */
function conditionIsSafe(resolver: Resolver, scope: RetryScope): boolean {
  for (const { resolver: at, node } of conditionNodes(resolver, scope)) {
    const text = at.sourceCode.getText(node);
    if (onlyNeverProcessed(text) || /\bmethod\b/.test(text)) return true;
  }
  if (scope.kind === "loop" && scope.attempt.handler) {
    const text = resolver.sourceCode.getText(scope.attempt.handler);
    if (onlyNeverProcessed(text)) return true;
  }
  if (scope.kind === "recursion") {
    const branch = retryBranchOf(scope.again, scope.fn);
    if (branch && onlyNeverProcessed(resolver.sourceCode.getText(branch))) return true;
  }
  return false;
}

function isIgnoredUrl(resolver: Resolver, request: HttpRequest, settings: Settings): boolean {
  if (settings.ignoreUrls.length === 0) return false;
  const text = urlText(resolver, request.url);
  return text !== null && settings.ignoreUrls.some((pattern) => pattern.test(text));
}

/** The idempotency key of a request, reading header-object arguments of the shapes `writeCallOf` knows. */
function keyOf(resolver: Resolver, request: HttpRequest, settings: Settings) {
  const headerArgs = (request as Partial<WriteCall>).headerArgs ?? [];
  for (const arg of headerArgs) {
    const found = readKey(resolver, arg, anyKeyOf(settings.headers));
    if (found.kind !== "absent") return found;
  }
  return idempotencyKeyOf(resolver, request, settings.headers);
}

/** A non-idempotent request run again by a retry wrapper, loop or self-call. */
export function checkRetriedRequest(
  resolver: Resolver,
  request: HttpRequest,
  settings: Settings,
): Problem | null {
  if (request.method === null || !settings.methods.has(request.method)) return null;
  const scope = findRetryScope(resolver, request.call, settings.wrappers);
  if (!scope) return null;
  if (scope.kind === "wrapper" && retriesDisabled(resolver, scope.options)) return null;
  if (conditionIsSafe(resolver, scope) || isIgnoredUrl(resolver, request, settings)) return null;
  const key = keyOf(resolver, request, settings);
  if (key.kind === "unknown") return null;
  if (key.kind === "absent") {
    return {
      node: request.call,
      messageId: "retriedWithoutKey",
      data: { method: request.method, retrier: describeRetrier(scope) },
    };
  }
  const inputs = {
    fn: scope.kind === "wrapper" && scope.via.length === 0 ? scope.fn : null,
    loop: scope.kind === "loop" && scope.via.length === 0 ? scope.loop : null,
  };
  if (isFreshInside(resolver, key.node, attemptRegion(scope), inputs)) {
    return {
      node: key.node,
      messageId: "keyPerAttempt",
      data: { retrier: describeRetrier(scope) },
    };
  }
  return null;
}

/** What an axios-retry `retryCondition` does with a POST. */
function axiosRetryCondition(
  resolver: Resolver,
  options: Node | undefined,
  read: KeyReader = (object, key) => readKey(resolver, object, exactKey(key)),
): "every-method" | "default" | "safe" | "unknown" {
  if (options === undefined) return "default";
  const found = read(options, "retryCondition");
  if (found.kind === "absent") return "default";
  if (found.kind === "unknown") return "unknown";
  const value = localFunction(resolver, found.node) ?? resolver.valueOf(found.node);
  const origin = resolver.origin(value);
  if (origin.kind === "module" && origin.module === "axios-retry" && origin.path.length === 1) {
    const name = origin.path[0]!;
    if (name === "isNetworkOrIdempotentRequestError") return "default";
    if (name === "isIdempotentRequestError" || name === "isSafeRequestError") return "safe";
    if (name === "isNetworkError" || name === "isRetryableError") return "every-method";
  }
  if (isFunction(value)) {
    if (returnsTrue(value)) return "every-method";
    const text = resolver.sourceCode.getText(value);
    if (
      /\bmethod\b|isIdempotentRequestError|isSafeRequestError/.test(text) ||
      onlyNeverProcessed(text)
    )
      return "safe";
    // A condition that never looks at the method retries whatever it admits, POST included.
    return "every-method";
  }
  return "unknown";
}

function returnsTrue(
  fn: TSESTree.ArrowFunctionExpression | TSESTree.FunctionExpression | TSESTree.FunctionDeclaration,
): boolean {
  const body = fn.body;
  if (body.type === AST_NODE_TYPES.Literal) return body.value === true;
  if (body.type !== AST_NODE_TYPES.BlockStatement || body.body.length !== 1) return false;
  const only = body.body[0]!;
  return (
    only.type === AST_NODE_TYPES.ReturnStatement &&
    only.argument?.type === AST_NODE_TYPES.Literal &&
    only.argument.value === true
  );
}

interface AxiosRetrySetup {
  readonly target: Node;
  readonly options: Node | undefined;
}

/** A POST sent through a client that axios-retry was attached to in this file. */
export function checkAxiosRetry(
  resolver: Resolver,
  request: HttpRequest,
  setups: readonly AxiosRetrySetup[],
  settings: Settings,
): (Problem & { readonly setup: AxiosRetrySetup }) | null {
  const outbound = request.outbound;
  if (
    !outbound ||
    outbound.library !== "axios" ||
    request.method === null ||
    !settings.methods.has(request.method)
  )
    return null;
  const client = outbound.instance[0] ?? null;
  for (const setup of setups) {
    const target = resolver.origin(setup.target);
    const matches =
      client === null
        ? isModule(target, "axios")
        : target.kind === "result" && target.path.length === 0 && target.call === client;
    if (!matches || retriesDisabled(resolver, setup.options)) continue;
    const condition = axiosRetryCondition(resolver, setup.options);
    if (condition === "safe" || condition === "unknown") continue;
    if (condition === "default" && settings.axiosDefault === "ignore") continue;
    if (perRequestRetriesOff(resolver, request)) continue;
    if (isIgnoredUrl(resolver, request, settings)) continue;
    if (idempotencyKeyOf(resolver, request, settings.headers).kind !== "absent") continue;
    return {
      node: request.call,
      messageId: condition === "default" ? "axiosRetryDefaultCondition" : "axiosRetryEveryMethod",
      data: { method: request.method },
      setup,
    };
  }
  return null;
}

/**
 * axios-retry with a condition that retries every method, on a client whose requests are out of
 * sight: exported, or returned by a function of this file (`createClient()`), so it is sent
 * through by its callers. Options the caller may override (`{ retryCondition, ...retry }` with
 * `retry` a parameter) are read as the callers that pass nothing get them.
 */
export function checkExportedAxiosRetry(
  resolver: Resolver,
  setup: AxiosRetrySetup,
): Problem | null {
  const target = skipWrappers(setup.target);
  if (isModule(resolver.origin(target), "axios")) return null;
  if (!isExported(resolver, target) && !isReturnedInstance(resolver, target)) return null;
  const read = readByDefault(resolver);
  if (retriesDisabled(resolver, setup.options, read)) return null;
  if (axiosRetryCondition(resolver, setup.options, read) !== "every-method") return null;
  const call = setup.target.parent;
  return call === undefined
    ? null
    : { node: call, messageId: "axiosRetryExportedClient", data: {} };
}

/**
 * An `axios.create()` instance whose calls are out of this file's sight the way require-timeout
 * judges instances: returned from the function that made it (a factory), or by a getter.
 */
function isReturnedInstance(resolver: Resolver, target: Node): boolean {
  const origin = resolver.origin(target);
  return (
    origin.kind === "result" &&
    origin.path.length === 0 &&
    origin.call.type === AST_NODE_TYPES.CallExpression &&
    isModule(origin.callee, "axios", "create") &&
    escapes(resolver, origin.call)
  );
}

const ABSENT: KeyLookup = { kind: "absent" };
const UNKNOWN_KEY: KeyLookup = { kind: "unknown" };

/**
 * A parameter's default value (`retry = {}`): null for a parameter without one, undefined when
 * `node` is not a parameter the function leaves as it came.
 */
function parameterDefault(resolver: Resolver, node: Node): Node | null | undefined {
  const inner = skipWrappers(node);
  if (inner.type !== AST_NODE_TYPES.Identifier) return undefined;
  const variable = resolver.variableOf(inner);
  if (variable?.defs.length !== 1) return undefined;
  const def = variable.defs[0]!;
  if (def.type !== DefinitionType.Parameter) return undefined;
  if (variable.references.some((ref) => ref.isWrite() && !ref.init)) return undefined;
  const parent = def.name.parent;
  if (parent.type === AST_NODE_TYPES.RestElement) return undefined;
  if (parent.type === AST_NODE_TYPES.AssignmentPattern && parent.left === def.name)
    return parent.right;
  return null;
}

/**
 * Reads options as a factory's callers get them when they pass nothing: a parameter spread into
 * them (`...retry`) or given as a value (`retryCondition = isNetworkError`) stands for its
 * default, and one without a default for nothing.
 */
function readByDefault(resolver: Resolver): KeyReader {
  const read = (options: Node, key: string, depth: number): KeyLookup => {
    if (depth > 4) return UNKNOWN_KEY;
    const fallback = parameterDefault(resolver, options);
    if (fallback !== undefined) return fallback === null ? ABSENT : read(fallback, key, depth + 1);
    // Only an object written in place is read here; a const (which may be mutated) is readKey's.
    const object = skipWrappers(options);
    if (object.type !== AST_NODE_TYPES.ObjectExpression)
      return readKey(resolver, options, exactKey(key));
    for (let i = object.properties.length - 1; i >= 0; i--) {
      const prop = object.properties[i]!;
      if (prop.type === AST_NODE_TYPES.SpreadElement) {
        const found = read(prop.argument, key, depth + 1);
        if (found.kind !== "absent") return found;
        continue;
      }
      const name =
        propertyKey(prop) ?? (prop.computed ? staticString(resolver.valueOf(prop.key)) : null);
      if (name === null) return UNKNOWN_KEY;
      if (name !== key) continue;
      if (prop.kind !== "init") return UNKNOWN_KEY;
      const value = parameterDefault(resolver, prop.value);
      if (value === null) return ABSENT;
      return { kind: "value", node: value ?? prop.value, via: name };
    }
    return ABSENT;
  };
  return (options, key) => read(options, key, 0);
}

function perRequestRetriesOff(resolver: Resolver, request: HttpRequest): boolean {
  for (const arg of request.optionArgs) {
    const own = readKey(resolver, arg, exactKey("axios-retry"));
    if (own.kind !== "value") continue;
    const retries = readKey(resolver, own.node, exactKey("retries"));
    if (retries.kind === "value" && numberValue(resolver, retries.node) === 0) return true;
  }
  return false;
}

/** got/ky told to retry POST: `retry: { methods: ["POST"] }` with no key header next to it. */
export function checkRetryMethods(
  resolver: Resolver,
  methods: TSESTree.Property,
  settings: Settings,
): Problem[] {
  const retryObject = methods.parent;
  if (retryObject.type !== AST_NODE_TYPES.ObjectExpression) return [];
  const retryProp = retryObject.parent;
  if (retryProp.type !== AST_NODE_TYPES.Property || propertyKey(retryProp) !== "retry") return [];
  const options = retryProp.parent;
  if (options.type !== AST_NODE_TYPES.ObjectExpression) return [];
  const limit = readKey(resolver, retryObject, exactKey("limit"));
  if (limit.kind === "value" && (numberValue(resolver, limit.node) ?? 1) <= 0) return [];
  const list = skipWrappers(methods.value);
  if (list.type !== AST_NODE_TYPES.ArrayExpression) return [];
  const headers = readKey(resolver, options, exactKey("headers"));
  if (headers.kind === "unknown") return [];
  if (headers.kind === "value") {
    const key = readKey(resolver, headers.node, anyKeyOf(settings.headers));
    if (key.kind !== "absent") return [];
  }
  const problems: Problem[] = [];
  for (const element of list.elements) {
    if (!element || element.type === AST_NODE_TYPES.SpreadElement) continue;
    const value = resolver.valueOf(element);
    if (value.type !== AST_NODE_TYPES.Literal || typeof value.value !== "string") continue;
    const method = value.value.toUpperCase();
    if (settings.methods.has(method))
      problems.push({ node: element, messageId: "unsafeRetryMethods", data: { method } });
  }
  return problems;
}

/** A request sent through a fetch wrapped by fetch-retry: `const f = fetchRetry(fetch); f(url, init)`. */
export function checkFetchRetry(
  resolver: Resolver,
  call: TSESTree.CallExpression,
  settings: Settings,
): Problem | null {
  const origin = resolver.origin(skipWrappers(call.callee));
  if (
    origin.kind !== "result" ||
    origin.path.length !== 0 ||
    origin.call.type !== AST_NODE_TYPES.CallExpression ||
    !isModule(origin.callee, "fetch-retry")
  )
    return null;
  const defaults = origin.call.arguments[1];
  const init = call.arguments[1];
  if (
    init?.type === AST_NODE_TYPES.SpreadElement ||
    defaults?.type === AST_NODE_TYPES.SpreadElement
  )
    return null;
  let method = "GET";
  // where the problem is reported: the call, or the call of its function that passes the verb
  let at: Node = call;
  if (init !== undefined) {
    const found = readKey(resolver, init, exactKey("method"));
    if (found.kind === "unknown") return null;
    if (found.kind === "value") {
      const text = stringValue(resolver, found.node);
      if (text !== null) method = text.toUpperCase();
      else {
        const passed = writeVerbFromCallers(resolver, found.node, settings);
        if (passed === null) return null;
        ({ method, at } = passed);
      }
    }
  }
  if (!settings.methods.has(method)) return null;
  // Per-request options win over the defaults given to fetchRetry(fetch, defaults).
  for (const options of [init, defaults]) {
    if (options === undefined) continue;
    if (retriesDisabled(resolver, options)) return null;
    const retryOn = readKey(resolver, options, exactKey("retryOn"));
    if (retryOn.kind === "value") {
      const value = localFunction(resolver, retryOn.node) ?? resolver.valueOf(retryOn.node);
      if (isFunction(value) && mentionsMethod(resolver, value)) return null;
    }
  }
  const first = call.arguments[0];
  const request: HttpRequest = {
    call,
    method,
    url: first?.type === AST_NODE_TYPES.SpreadElement ? undefined : first,
    optionArgs: init === undefined ? [] : [init],
    outbound: null,
  };
  if (isIgnoredUrl(resolver, request, settings)) return null;
  const key = keyOf(resolver, request, settings);
  if (key.kind !== "absent") return null;
  return { node: at, messageId: "retriedWithoutKey", data: { method, retrier: "fetch-retry" } };
}

/**
 * The first write verb a call of this file passes for a method that is a parameter:
 * `doReq(url, method)` → `fetchRetry(fetch)(url, { method })`, called as `this.doReq(url, "POST")`.
 */
function writeVerbFromCallers(
  resolver: Resolver,
  node: Node,
  settings: Settings,
): { method: string; at: Node } | null {
  const value = skipWrappers(node);
  if (value.type !== AST_NODE_TYPES.Identifier) return null;
  for (const site of resolver.callerArguments(value) ?? []) {
    const verb = site.value === null ? null : stringValue(resolver, site.value)?.toUpperCase();
    if (verb && settings.methods.has(verb)) return { method: verb, at: site.call };
  }
  return null;
}

/**
 * A response interceptor that re-sends the failed request's config, on a client that sends
 * writes in this file or is visible outside it. Reported at the re-send.
 */
export function checkResend(
  resolver: Resolver,
  resend: Resend,
  writes: readonly HttpRequest[],
  settings: Settings,
): Problem | null {
  if (mentionsMethod(resolver, resend.handler)) return null;
  if (onlyNeverProcessed(resolver.sourceCode.getText(resend.handler))) return null;
  // A key header anywhere in the file may be set once per request by a request interceptor.
  const text = resolver.sourceCode.text.toLowerCase();
  if (settings.headers.some((name) => text.includes(name.toLowerCase()))) return null;
  const receiverText = resolver.sourceCode.getText(resend.receiver);
  const receiverOrigin = resolver.origin(resend.receiver);
  const write = writes.find((request) => {
    const callee = skipWrappers(request.call.callee);
    const object =
      callee.type === AST_NODE_TYPES.MemberExpression ? skipWrappers(callee.object) : callee;
    if (resolver.sourceCode.getText(object) === receiverText) return true;
    const client = request.outbound?.instance[0];
    if (client !== undefined)
      return (
        receiverOrigin.kind === "result" &&
        receiverOrigin.path.length === 0 &&
        receiverOrigin.call === client
      );
    return request.outbound?.library === "axios" && isModule(receiverOrigin, "axios");
  });
  if (write === undefined && !isExported(resolver, resend.receiver)) return null;
  return {
    node: resend.resend,
    messageId: "interceptorResendsWrites",
    data: { client: receiverText, method: write?.method ?? "POST" },
  };
}

const RETRYING_CLIENTS = new Set(["got", "ky"]);

export default createRule<Options, MessageIds>({
  name: "no-retry-non-idempotent",
  meta: {
    type: "problem",
    docs: {
      description:
        "Disallow retrying POST/PATCH requests without an idempotency key created once per logical call",
      recommended: true,
      requiresTypeChecking: false,
    },
    hasSuggestions: false,
    messages: {
      retriedWithoutKey:
        "This {{method}} is retried by {{retrier}} without an idempotency key: after a lost response the retry repeats the side effect (a second charge, a duplicate order). Send an Idempotency-Key header created once before the retry, or do not retry it.",
      keyPerAttempt:
        "The idempotency key is created inside the code {{retrier}} runs again, so every attempt sends a new key and the server cannot recognise the repeat. Create the key once, before the retry starts.",
      unsafeRetryMethods:
        "`retry.methods` includes {{method}}, which is not idempotent: the client will repeat it after a failure the server may already have acted on. Remove it, or send an idempotency key with these requests.",
      axiosRetryEveryMethod:
        "This {{method}} goes through a client whose axios-retry condition retries every method. Restrict retryCondition to idempotent requests (axiosRetry.isIdempotentRequestError) or send an Idempotency-Key header.",
      axiosRetryExportedClient:
        "axios-retry on this client, which the file exports or returns, retries every method: POST and PATCH requests sent through it where this file cannot see are repeated without an idempotency key. Restrict retryCondition to idempotent requests (axiosRetry.isIdempotentRequestError) or send an Idempotency-Key header.",
      interceptorResendsWrites:
        "This interceptor re-sends the failed request's config through `{{client}}` whatever its method: a {{method}} sent through this client is repeated without an idempotency key. Re-send only idempotent methods (check `config.method`) or send an Idempotency-Key header created once per request.",
      axiosRetryDefaultCondition:
        "This {{method}} goes through a client with axios-retry's default condition, which retries network errors on every method, including after the server received the request. Send an Idempotency-Key header or use retryCondition: axiosRetry.isIdempotentRequestError.",
    },
    schema: [
      {
        type: "object",
        additionalProperties: false,
        properties: {
          idempotencyHeaders: {
            type: "array",
            items: { type: "string" },
            minItems: 1,
            uniqueItems: true,
            description:
              "Header names that carry an idempotency key, compared case-insensitively. Defaults to Idempotency-Key and X-Idempotency-Key.",
          },
          nonIdempotentMethods: {
            type: "array",
            items: { type: "string" },
            minItems: 1,
            uniqueItems: true,
            description:
              "HTTP methods that must not be retried without a key, compared case-insensitively. Defaults to POST and PATCH.",
          },
          ignoreUrls: {
            type: "array",
            items: { type: "string" },
            uniqueItems: true,
            description:
              "Regular expressions (JavaScript syntax) matched against a request's static URL text; matching requests only read even though they use POST (GraphQL queries, search endpoints). Template literal substitutions appear as `{}`.",
          },
          retryWrappers: {
            type: "array",
            items: { type: "string" },
            uniqueItems: true,
            description:
              "Names of project functions that retry the function passed to them, in addition to p-retry, async-retry, promise-retry, exponential-backoff and cockatiel.",
          },
          axiosRetryDefaultCondition: {
            type: "string",
            enum: ["report", "ignore"],
            description:
              "axios-retry's default condition retries network errors (ECONNRESET included) on every method. `report` (default) flags POST/PATCH requests without a key sent through such a client; `ignore` only flags conditions that retry every failure.",
          },
          useTypeInformation: {
            type: "boolean",
            description:
              "Use the type checker (when the parser has `parserOptions.projectService` or `project`) to recognise fetch functions and clients by their types, and to read retry helpers imported from other files of the project. Without type information the option does nothing.",
          },
        },
      },
    ],
    defaultOptions: [
      {
        idempotencyHeaders: ["Idempotency-Key", "X-Idempotency-Key"],
        nonIdempotentMethods: ["POST", "PATCH"],
        ignoreUrls: [],
        retryWrappers: [],
        axiosRetryDefaultCondition: "report",
        useTypeInformation: false,
      },
    ],
  },
  create(context, [options]) {
    const resolver = resolverOf(context, options.useTypeInformation);
    const settings: Settings = {
      headers: options.idempotencyHeaders ?? ["Idempotency-Key", "X-Idempotency-Key"],
      methods: new Set(
        (options.nonIdempotentMethods ?? ["POST", "PATCH"]).map((m) => m.toUpperCase()),
      ),
      ignoreUrls: (options.ignoreUrls ?? []).map((source) => new RegExp(source)),
      wrappers: new Set(options.retryWrappers ?? []),
      axiosDefault: options.axiosRetryDefaultCondition ?? "report",
    };
    const axiosRetry: AxiosRetrySetup[] = [];
    const unsafeAxios: HttpRequest[] = [];
    const writes: HttpRequest[] = [];
    const resends: Resend[] = [];
    let importsRetryingClient = false;
    const retryMethodLists: TSESTree.Property[] = [];
    const report = (problem: Problem | null): void => {
      if (problem)
        context.report({ node: problem.node, messageId: problem.messageId, data: problem.data });
    };
    return {
      ImportDeclaration(node) {
        if (RETRYING_CLIENTS.has(normaliseModule(node.source.value))) importsRetryingClient = true;
      },
      CallExpression(node) {
        const callee = skipWrappers(node.callee);
        if (callee.type === AST_NODE_TYPES.Identifier && callee.name === "require") {
          const origin = resolver.origin(node);
          if (origin.kind === "module" && RETRYING_CLIENTS.has(origin.module))
            importsRetryingClient = true;
        }
        const mayBeAxiosRetry =
          callee.type === AST_NODE_TYPES.Identifier ||
          (callee.type === AST_NODE_TYPES.MemberExpression && memberName(callee) === "default");
        if (mayBeAxiosRetry && isModule(resolver.origin(callee), "axios-retry")) {
          const target = node.arguments[0];
          if (target && target.type !== AST_NODE_TYPES.SpreadElement) {
            const second = node.arguments[1];
            axiosRetry.push({
              target,
              options: second && second.type !== AST_NODE_TYPES.SpreadElement ? second : undefined,
            });
          }
          return;
        }
        if (callee.type === AST_NODE_TYPES.MemberExpression && memberName(callee) === "use")
          resends.push(...resendsOf(resolver, node));
        const fetchRetry = checkFetchRetry(resolver, node, settings);
        if (fetchRetry) {
          report(fetchRetry);
          return;
        }
        let request: HttpRequest | null = httpRequestOf(resolver, node);
        if (!request || request.method === null) request = writeCallOf(resolver, node) ?? request;
        if (!request || request.method === null || !settings.methods.has(request.method)) return;
        const problem = checkRetriedRequest(resolver, request, settings);
        report(problem);
        if (!problem && keyOf(resolver, request, settings).kind === "absent") writes.push(request);
        if (!problem && request.outbound?.library === "axios") unsafeAxios.push(request);
      },
      "Property[key.name='methods'], Property[key.value='methods']"(node: TSESTree.Property) {
        retryMethodLists.push(node);
      },
      "Program:exit"() {
        if (axiosRetry.length > 0) {
          const through = new Set<AxiosRetrySetup>();
          for (const request of unsafeAxios) {
            const problem = checkAxiosRetry(resolver, request, axiosRetry, settings);
            if (problem) through.add(problem.setup);
            report(problem);
          }
          for (const setup of axiosRetry)
            if (!through.has(setup)) report(checkExportedAxiosRetry(resolver, setup));
        }
        for (const resend of resends) report(checkResend(resolver, resend, writes, settings));
        if (importsRetryingClient) {
          for (const list of retryMethodLists)
            for (const problem of checkRetryMethods(resolver, list, settings)) report(problem);
        }
      },
    };
  },
});
