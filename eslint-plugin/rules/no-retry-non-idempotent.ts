import { AST_NODE_TYPES, type TSESTree } from "@typescript-eslint/utils";
import { isFunction, memberName, propertyKey, skipWrappers, type Node } from "../utils/ast.js";
import { createRule } from "../utils/create-rule.js";
import {
  httpRequestOf,
  idempotencyKeyOf,
  isFreshInside,
  urlText,
  type HttpRequest,
} from "../utils/http.js";
import { anyKeyOf, exactKey, numberValue, readKey } from "../utils/objects.js";
import { isModule, normaliseModule, resolverFor, type Resolver } from "../utils/resolve.js";
import {
  attemptRegion,
  conditionNodes,
  describeRetrier,
  findRetryScope,
  onlyNeverProcessed,
  retriesDisabled,
  type RetryScope,
} from "../utils/retry.js";

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
  },
];

export type MessageIds =
  | "retriedWithoutKey"
  | "keyPerAttempt"
  | "unsafeRetryMethods"
  | "axiosRetryEveryMethod"
  | "axiosRetryDefaultCondition";

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
  for (const node of conditionNodes(resolver, scope)) {
    const text = resolver.sourceCode.getText(node);
    if (onlyNeverProcessed(text) || /\bmethod\b/.test(text)) return true;
  }
  if (scope.kind === "loop" && scope.attempt.handler) {
    const text = resolver.sourceCode.getText(scope.attempt.handler);
    if (onlyNeverProcessed(text)) return true;
  }
  return false;
}

function isIgnoredUrl(resolver: Resolver, request: HttpRequest, settings: Settings): boolean {
  if (settings.ignoreUrls.length === 0) return false;
  const text = urlText(resolver, request.url);
  return text !== null && settings.ignoreUrls.some((pattern) => pattern.test(text));
}

/** A non-idempotent request run again by a retry wrapper or loop. */
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
  const key = idempotencyKeyOf(resolver, request, settings.headers);
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
): "every-method" | "default" | "safe" | "unknown" {
  if (options === undefined) return "default";
  const found = readKey(resolver, options, exactKey("retryCondition"));
  if (found.kind === "absent") return "default";
  if (found.kind === "unknown") return "unknown";
  const value = resolver.valueOf(found.node);
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
    if (/\bmethod\b/.test(text) || onlyNeverProcessed(text)) return "safe";
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
): Problem | null {
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
    };
  }
  return null;
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
      },
    ],
  },
  create(context, [options]) {
    const resolver = resolverFor(context.sourceCode);
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
        const request = httpRequestOf(resolver, node);
        if (!request || request.method === null || !settings.methods.has(request.method)) return;
        const problem = checkRetriedRequest(resolver, request, settings);
        report(problem);
        if (!problem && request.outbound?.library === "axios") unsafeAxios.push(request);
      },
      "Property[key.name='methods'], Property[key.value='methods']"(node: TSESTree.Property) {
        retryMethodLists.push(node);
      },
      "Program:exit"() {
        if (axiosRetry.length > 0) {
          for (const request of unsafeAxios)
            report(checkAxiosRetry(resolver, request, axiosRetry, settings));
        }
        if (importsRetryingClient) {
          for (const list of retryMethodLists)
            for (const problem of checkRetryMethods(resolver, list, settings)) report(problem);
        }
      },
    };
  },
});
