import { AST_NODE_TYPES, type TSESTree } from "@typescript-eslint/types";
import {
  calleeName,
  isFunction,
  memberName,
  skipWrappers,
  staticString,
  walk,
  type CallLike,
  type FunctionNode,
  type Node,
} from "../utils/ast.js";
import { createRule } from "../utils/create-rule.js";
import { resolverOf } from "../utils/project.js";
import { isModule, type Origin, type Resolver } from "../utils/resolve.js";
import {
  conditionNodes,
  describeRetrier,
  findRetryScope,
  retriesDisabled,
  type RetryScope,
} from "../utils/retry.js";
import {
  boundValue,
  factoryCall,
  madeValues,
  superCall,
  type FactoryCall,
  type Located,
} from "../utils/factories.js";
import { exactKey, readKey } from "../utils/objects.js";
import { localFunction } from "../utils/retry-helpers.js";
import { typeKindOf, type TypeAware } from "../utils/types.js";

export type Options = [
  {
    /** Regular expressions matched against import paths of resgen-generated client modules. */
    generatedClientModules?: string[];
    /** Names of project functions that retry the function passed to them. */
    retryWrappers?: string[];
    /** Use type information (when the parser provides it) to recognise breakers and generated clients held in parameters. */
    useTypeInformation?: boolean;
  },
];

export type MessageIds =
  "retryWrapsBreaker" | "retryAroundOpenBreaker" | "retryAroundGeneratedClient" | "breakerPerCall";

export const DEFAULT_GENERATED_MODULES = ["(^|/)generated(/|$)"];
const CLIENT_FACTORY = /^create[A-Z][A-Za-z0-9_]*Client$/;
/** Text that shows a retry condition looks at the open-circuit rejection. */
const OPEN_CIRCUIT =
  /EOPENBREAKER|BrokenCircuitError|isBrokenCircuitError|\.opened\b|circuit-open|isCircuitOpen/;

interface Problem {
  readonly node: Node;
  readonly messageId: MessageIds;
  readonly data: Record<string, string>;
}

interface Settings {
  readonly generated: readonly RegExp[];
  readonly wrappers: ReadonlySet<string>;
  readonly types: TypeAware | null;
}

type BreakerKind = "opossum" | "cockatiel";

/** The breaker a value is: `new CircuitBreaker(...)` (opossum) or cockatiel's `circuitBreaker(...)`, possibly inside `wrap(...)`. */
export function breakerOf(resolver: Resolver, origin: Origin, depth = 0): BreakerKind | null {
  if (depth > 4 || origin.kind !== "result" || origin.path.length !== 0) return null;
  // opossum's default export is also a factory in older releases: `circuitBreaker(fn, options)`.
  if (isModule(origin.callee, "opossum")) return "opossum";
  if (isModule(origin.callee, "cockatiel", "circuitBreaker")) return "cockatiel";
  // cockatiel's older chain API: Policy.handleAll().circuitBreaker(…)
  if (
    origin.callee.kind === "result" &&
    origin.callee.path.length === 1 &&
    origin.callee.path[0] === "circuitBreaker" &&
    isCockatielChain(origin.callee)
  )
    return "cockatiel";

  if (isModule(origin.callee, "cockatiel", "wrap")) {
    for (const arg of origin.call.arguments) {
      const inner = breakerOf(resolver, resolver.origin(arg), depth + 1);
      if (inner) return inner;
    }
  }
  return null;
}

/** Whether a chain of calls starts at cockatiel (`Policy.handleAll().retry()`). */
function isCockatielChain(origin: Origin): boolean {
  let current: Origin = origin;
  for (let i = 0; i < 8; i++) {
    if (current.kind === "module") return current.module === "cockatiel";
    if (current.kind !== "result") return false;
    current = current.callee;
  }
  return false;
}

/**
 * The breaker a call to a function of the project returns (`makeBreaker(fn)` around
 * `new CircuitBreaker`, `createServicePolicy()` around `wrap(retry, circuitBreaker(…))`): declared
 * in this file, or, with type information, in another.
 */
export function factoryBreaker(resolver: Resolver, node: Node): BreakerKind | null {
  const value = resolver.valueOf(node);
  if (value.type !== AST_NODE_TYPES.CallExpression) return null;
  const factory = factoryCall(resolver, value);
  if (!factory) return null;
  for (const made of madeValues(factory)) {
    const kind = breakerOf(factory.resolver, factory.resolver.origin(made));
    if (kind) return kind;
  }
  return null;
}

function madeByFactory(resolver: Resolver, call: TSESTree.CallExpression): boolean {
  return factoryBreaker(resolver, call) !== null;
}

/** A breaker made by a project factory on every request: the factory call is the construction. */
function checkFactoryCall(
  resolver: Resolver,
  call: TSESTree.CallExpression,
  settings: Settings,
): Problem | null {
  for (let current: Node | undefined = call.parent; current; current = current.parent) {
    if (isFunction(current) && isRequestHandler(resolver, current))
      return {
        node: call,
        messageId: "breakerPerCall",
        data: { where: "inside a request handler" },
      };
  }
  if (!servesOneCall(call)) return null;
  // a factory of this file called where a retry runs is reported at its construction
  const local = factoryCall(resolver, call)?.resolver === resolver;
  return local && findRetryScope(resolver, call, settings.wrappers) ? null : ONE_CALL(call);
}

/** A raw cockatiel breaker (`new ConsecutiveBreaker(5)`) put into a wrap in place of a policy. */
function isRawBreaker(origin: Origin): boolean {
  return (
    origin.kind === "result" &&
    origin.path.length === 0 &&
    origin.call.type === AST_NODE_TYPES.NewExpression &&
    origin.callee.kind === "module" &&
    origin.callee.module === "cockatiel" &&
    /Breaker$/.test(origin.callee.path[0] ?? "")
  );
}

/**
 * The handler of cockatiel's older chain form, `Policy.handleAll().retry().attempts(3)`: the
 * object `.retry()` is called on, or null when the value is not such a chain.
 */
function chainRetryHandler(resolver: Resolver, node: Node): Node | null {
  let value = resolver.valueOf(node);
  for (let i = 0; i < 8 && value.type === AST_NODE_TYPES.CallExpression; i++) {
    const callee = skipWrappers(value.callee);
    if (callee.type !== AST_NODE_TYPES.MemberExpression) return null;
    if (memberName(callee) === "retry") {
      const handler = skipWrappers(callee.object);
      return isCockatielChain(resolver.origin(handler)) ? handler : null;
    }
    value = skipWrappers(callee.object);
  }
  return null;
}

/** A handler that is a parameter or destructured binding with a default: the default it falls back to. */
export function withDefault(resolver: Resolver, node: Node): Node {
  const value = skipWrappers(node);
  if (value.type !== AST_NODE_TYPES.Identifier) return node;
  const def = resolver.variableOf(value)?.defs[0];
  const parent = def?.name.parent;
  if (
    def !== undefined &&
    parent?.type === AST_NODE_TYPES.AssignmentPattern &&
    parent.left === def.name
  )
    return parent.right;
  return node;
}

/** Whether a handler catches `BrokenCircuitError`, for both cockatiel API generations. */
function handlerCatchesAll(resolver: Resolver, handler: Node): boolean | null {
  const value = skipWrappers(resolver.valueOf(withDefault(resolver, handler)));
  if (value.type === AST_NODE_TYPES.CallExpression) {
    const callee = skipWrappers(value.callee);
    if (
      callee.type === AST_NODE_TYPES.MemberExpression &&
      memberName(callee) === "handleAll" &&
      isCockatielChain(resolver.origin(callee.object))
    )
      return true;
  }
  return handlesBrokenCircuit(resolver, value);
}

function isRetryPolicy(origin: Origin): origin is Extract<Origin, { kind: "result" }> {
  return (
    origin.kind === "result" &&
    origin.path.length === 0 &&
    isModule(origin.callee, "cockatiel", "retry")
  );
}

/**
 * Whether a cockatiel handler (`handleAll`, `handleType(X)`, `handleWhen(fn)`, chained `.or…`)
 * catches `BrokenCircuitError`: true, false (provably not), or null (cannot tell).
 */
export function handlesBrokenCircuit(resolver: Resolver, handler: Node, depth = 0): boolean | null {
  if (depth > 6) return null;
  const value = resolver.valueOf(handler);
  if (cockatielExport(resolver, value) === "handleAll") return true;
  if (value.type !== AST_NODE_TYPES.CallExpression) return null;
  const callee = skipWrappers(value.callee);
  let base: boolean | null = false;
  let name: string | null = null;
  if (callee.type === AST_NODE_TYPES.MemberExpression) {
    name = memberName(callee);
    base = handlesBrokenCircuit(resolver, callee.object, depth + 1);
  } else if (callee.type === AST_NODE_TYPES.Identifier) {
    name = cockatielExport(resolver, callee);
    if (name === null) return null;
  }
  if (base === true) return true;
  let own: boolean | null = null;
  const first = value.arguments[0];
  if (
    (name === "handleType" || name === "orType") &&
    first &&
    first.type !== AST_NODE_TYPES.SpreadElement
  ) {
    const type = resolver.origin(first);
    const catchesAll =
      (type.kind === "global" && type.path.join(".") === "Error") ||
      isModule(type, "cockatiel", "BrokenCircuitError");
    own = catchesAll && value.arguments.length < 2 ? true : catchesAll ? null : false;
  } else if (
    (name === "handleWhen" || name === "orWhen") &&
    first &&
    first.type !== AST_NODE_TYPES.SpreadElement
  ) {
    const predicate = localFunction(resolver, first) ?? resolver.valueOf(first);
    const text = resolver.sourceCode.getText(predicate);
    if (OPEN_CIRCUIT.test(text)) own = false;
    else if (isFunction(predicate) && (returnsTrue(predicate) || truthyForOthers(predicate)))
      own = true;
    else own = null;
  } else if (
    name === "handleResultType" ||
    name === "handleWhenResult" ||
    name === "orResultType" ||
    name === "orWhenResult"
  ) {
    own = false;
  }
  if (own === true) return true;
  if (own === false && base === false) return false;
  return null;
}

/**
 * What a name is among cockatiel's exports: imported from cockatiel, or, with type information,
 * from a module of the project that re-exports it.
 */
function cockatielExport(resolver: Resolver, node: Node): string | null {
  const origin = resolver.origin(node);
  if (origin.kind !== "module" || origin.path.length !== 1) return null;
  if (origin.module === "cockatiel") return origin.path[0]!;
  return resolver.project?.packageOf(node) === "cockatiel" ? origin.path[0]! : null;
}

/**
 * A predicate that answers true for every error not of the classes it tests:
 * `if (error instanceof HttpError) return error.status >= 500; return true;`. The
 * open-circuit rejection is none of them (unless a test names Error itself), so it is retried.
 */
function truthyForOthers(fn: FunctionNode): boolean {
  const body = fn.body;
  if (body.type !== AST_NODE_TYPES.BlockStatement || body.body.length < 2) return false;
  const last = body.body[body.body.length - 1]!;
  if (
    last.type !== AST_NODE_TYPES.ReturnStatement ||
    last.argument?.type !== AST_NODE_TYPES.Literal ||
    last.argument.value !== true
  )
    return false;
  return body.body
    .slice(0, -1)
    .every(
      (statement) =>
        statement.type === AST_NODE_TYPES.IfStatement && testsOtherClass(statement.test),
    );
}

/** A test that only an instance of a class other than Error can pass (`e instanceof X && …`). */
function testsOtherClass(test: Node): boolean {
  const inner = skipWrappers(test);
  if (inner.type === AST_NODE_TYPES.LogicalExpression && inner.operator === "&&")
    return testsOtherClass(inner.left) || testsOtherClass(inner.right);
  if (inner.type !== AST_NODE_TYPES.BinaryExpression || inner.operator !== "instanceof")
    return false;
  const type = skipWrappers(inner.right);
  return type.type === AST_NODE_TYPES.Identifier && !/^(Error|BrokenCircuitError)$/.test(type.name);
}

function returnsTrue(fn: FunctionNode): boolean {
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

/** cockatiel `wrap(retry, ..., breaker)`: the retry outside the breaker catching its rejection. */
export function checkWrap(resolver: Resolver, call: TSESTree.CallExpression): Problem | null {
  const args = call.arguments;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const origin = resolver.origin(arg);
    let handler: Node | null = null;
    if (isRetryPolicy(origin)) {
      const first = origin.call.arguments[0];
      if (!first || first.type === AST_NODE_TYPES.SpreadElement) continue;
      if (retriesDisabled(resolver, origin.call.arguments[1])) continue;
      handler = first;
    } else {
      handler = chainRetryHandler(resolver, arg);
    }
    if (handler === null) continue;
    const inner = args.slice(i + 1).some((later) => {
      const laterOrigin = resolver.origin(later);
      return breakerOf(resolver, laterOrigin) !== null || isRawBreaker(laterOrigin);
    });
    if (!inner) continue;
    if (handlerCatchesAll(resolver, handler) === true) {
      return { node: arg, messageId: "retryWrapsBreaker", data: {} };
    }
  }
  return null;
}

/** How deep calls are followed from a call to the wrap its retry handler reaches. */
const MAX_FACTORY_DEPTH = 3;

/**
 * A call that configures the retry of a wrap made elsewhere: `createPolicy({ filter: handleAll })`
 * around `wrap(retry(filter), breaker)`, or a `super({ policyOptions })` whose base constructor
 * passes the options on to such a factory. Reported at the call when the handler it passes
 * (directly, or through a constant of defaults it spreads) retries the open-circuit rejection;
 * a handler the factory itself defaults to is reported at the factory's wrap.
 */
function checkConfiguredWrap(resolver: Resolver, call: TSESTree.CallExpression): Problem | null {
  const factory = superCall(resolver, call) ?? factoryCall(resolver, call);
  if (!factory) return null;
  const followed: Located[] = [];
  const caught = passedHandlers(factory, followed, 0).some(
    (handler) =>
      handler.resolver === resolver &&
      !followed.some((fn) => fn.resolver === resolver && contains(fn.node, handler.node)) &&
      handlerCatchesAll(resolver, handler.node) === true,
  );
  return caught ? { node: call, messageId: "retryWrapsBreaker", data: {} } : null;
}

/** The retry handlers of the wraps a factory's body makes, bound to what its call passes. */
function passedHandlers(factory: FactoryCall, followed: Located[], depth: number): Located[] {
  const found: Located[] = [];
  followed.push({ resolver: factory.resolver, node: factory.fn });
  walk(factory.fn.body, (node) => {
    if (isFunction(node)) return false;
    if (node.type !== AST_NODE_TYPES.CallExpression) return true;
    const own = factory.resolver;
    if (isModule(own.origin(node.callee), "cockatiel", "wrap")) {
      for (const retried of wrappedRetries(own, node)) {
        const attempts = retried.attempts && boundValue(factory, retried.attempts, "configured");
        if (attempts && staticNumber(attempts.resolver, attempts.node) === 0) continue;
        const bound = boundValue(factory, retried.handler, "configured");
        if (bound) found.push(bound);
      }
    } else if (depth < MAX_FACTORY_DEPTH && node.callee.type === AST_NODE_TYPES.Identifier) {
      const inner = factoryCall(own, node);
      if (inner) found.push(...passedHandlers({ ...inner, outer: factory }, followed, depth + 1));
    }
    return true;
  });
  return found;
}

function contains(outer: Node, inner: Node): boolean {
  return outer.range[0] <= inner.range[0] && inner.range[1] <= outer.range[1];
}

/** A literal number a node holds, through consts. */
function staticNumber(resolver: Resolver, node: Node): number | null {
  const value = skipWrappers(resolver.valueOf(node));
  return value.type === AST_NODE_TYPES.Literal && typeof value.value === "number"
    ? value.value
    : null;
}

/**
 * The retry policies a wrap puts outside a breaker: each one's handler, and its `maxAttempts`
 * where written.
 */
function wrappedRetries(
  resolver: Resolver,
  call: TSESTree.CallExpression,
): Array<{ handler: Node; attempts: Node | null }> {
  const handlers: Array<{ handler: Node; attempts: Node | null }> = [];
  const args = call.arguments;
  for (let i = 0; i < args.length; i++) {
    const origin = resolver.origin(args[i]!);
    if (!isRetryPolicy(origin)) continue;
    const first = origin.call.arguments[0];
    if (!first || first.type === AST_NODE_TYPES.SpreadElement) continue;
    if (retriesDisabled(resolver, origin.call.arguments[1])) continue;
    const inner = args.slice(i + 1).some((later) => {
      const laterOrigin = resolver.origin(later);
      return breakerOf(resolver, laterOrigin) !== null || isRawBreaker(laterOrigin);
    });
    const options = origin.call.arguments[1];
    const attempts =
      options && options.type !== AST_NODE_TYPES.SpreadElement
        ? readKey(resolver, options, exactKey("maxAttempts"))
        : null;
    if (inner)
      handlers.push({
        handler: first,
        attempts: attempts?.kind === "value" ? attempts.node : null,
      });
  }
  return handlers;
}

/** Whether the retry provably stops on the breaker's rejection (or can tell nothing). */
function stopsOnOpenCircuit(resolver: Resolver, scope: RetryScope): boolean | null {
  if (scope.kind === "wrapper" && scope.policy) {
    const handler = scope.policy.handler;
    if (!handler) return null;
    const handles = handlerCatchesAll(handler.resolver, handler.node);
    return handles === null ? null : !handles;
  }
  const texts: Located[] = scope.kind === "wrapper" ? conditionNodes(resolver, scope) : [];
  const own: Node[] =
    scope.kind === "wrapper" ? [scope.fn] : scope.kind === "loop" ? [scope.loop] : [scope.fn];
  if (scope.via.length > 0) own.push(scope.region);
  if (scope.kind === "wrapper" && scope.options !== undefined) own.push(scope.options);
  for (const node of own) texts.push({ resolver, node });
  return texts.some((text) => mentionsStop(text.resolver, text.node));
}

/**
 * Whether a node tells the open-circuit rejection apart in a way that can stop the retry: a
 * mention outside any `if` (a `retryIf` predicate, a `bail` argument), or an `if` testing it with
 * a branch that leaves (`return`, `throw`, `break`). A mention whose `if` only adjusts counters or
 * delays (`if (error.code != 'EOPENBREAKER') attempts++`) retries the open circuit all the same.
 */
function mentionsStop(resolver: Resolver, root: Node): boolean {
  if (!OPEN_CIRCUIT.test(resolver.sourceCode.getText(root))) return false;
  const mentions: Node[] = [];
  walk(root, (node) => {
    const text =
      node.type === AST_NODE_TYPES.Literal && typeof node.value === "string"
        ? node.value
        : node.type === AST_NODE_TYPES.Identifier
          ? node.name
          : null;
    if (text !== null && OPEN_CIRCUIT.test(text === "opened" ? ".opened" : text))
      mentions.push(node);
    return true;
  });
  // a mention the walk cannot place (in a comment, in a template's raw text): as before
  if (mentions.length === 0) return true;
  return mentions.some((node) => {
    const test = enclosingIf(node, root);
    return test === null || branchLeaves(test.consequent) || branchLeaves(test.alternate);
  });
}

/** The `if` whose test holds `node`, up to `root`. */
function enclosingIf(node: Node, root: Node): TSESTree.IfStatement | null {
  for (
    let child = node, current = node.parent;
    current;
    child = current, current = current.parent
  ) {
    if (current.type === AST_NODE_TYPES.IfStatement && current.test === child) return current;
    if (current === root || isFunction(current)) return null;
  }
  return null;
}

function branchLeaves(branch: Node | null): boolean {
  if (branch === null) return false;
  let leaves = false;
  walk(branch, (node) => {
    if (leaves || (node !== branch && isFunction(node))) return false;
    if (
      node.type === AST_NODE_TYPES.ReturnStatement ||
      node.type === AST_NODE_TYPES.ThrowStatement ||
      node.type === AST_NODE_TYPES.BreakStatement ||
      (node.type === AST_NODE_TYPES.CallExpression && calleeName(node) === "bail")
    )
      leaves = true;
    return !leaves;
  });
  return leaves;
}

/** What a call's receiver is: a breaker, a generated client, or neither. */
function receiverKind(
  resolver: Resolver,
  call: TSESTree.CallExpression,
  settings: Settings,
): { kind: "breaker"; breaker: BreakerKind } | { kind: "client"; name: string } | null {
  const callee = skipWrappers(call.callee);
  if (callee.type !== AST_NODE_TYPES.MemberExpression) return null;
  const method = memberName(callee);
  if (method === null) return null;
  const origin = resolver.origin(callee.object);
  if (method === "fire" || method === "execute") {
    const breaker = breakerOf(resolver, origin) ?? factoryBreaker(resolver, callee.object);
    if (breaker === "opossum" && method === "fire") return { kind: "breaker", breaker };
    if (breaker === "cockatiel" && method === "execute") return { kind: "breaker", breaker };
  }
  if (
    origin.kind === "result" &&
    origin.path.length === 0 &&
    origin.callee.kind === "module" &&
    origin.callee.path.length === 1
  ) {
    const factory = origin.callee.path[0]!;
    const module = origin.callee.module;
    if (
      CLIENT_FACTORY.test(factory) &&
      settings.generated.some((pattern) => pattern.test(module)) &&
      method !== "health"
    ) {
      return { kind: "client", name: factory };
    }
  }
  if (settings.types && origin.kind === "unknown") {
    const typed = typeKindOf(settings.types, callee.object, settings.generated);
    if (typed === "opossum" && method === "fire") return { kind: "breaker", breaker: "opossum" };
    if (typed === "cockatiel" && method === "execute")
      return { kind: "breaker", breaker: "cockatiel" };
    if (typed === "generated-client" && method !== "health")
      return { kind: "client", name: resolver.sourceCode.getText(callee.object) };
  }
  return null;
}

/** A breaker call or a generated-client call that a retry runs again. */
export function checkRetriedCall(
  resolver: Resolver,
  call: TSESTree.CallExpression,
  settings: Settings,
): Problem | null {
  const receiver = receiverKind(resolver, call, settings);
  if (!receiver) return null;
  const scope = findRetryScope(resolver, call, settings.wrappers);
  if (!scope) return null;
  if (scope.kind === "wrapper" && retriesDisabled(resolver, scope.options)) return null;
  if (receiver.kind === "client") {
    return {
      node: call,
      messageId: "retryAroundGeneratedClient",
      data: { retrier: describeRetrier(scope), factory: receiver.name },
    };
  }
  if (stopsOnOpenCircuit(resolver, scope) !== false) return null;
  const hint =
    receiver.breaker === "opossum"
      ? "stop when `error.code === 'EOPENBREAKER'` (p-retry: throw an AbortError or use shouldRetry; async-retry: call bail)"
      : "stop on `isBrokenCircuitError(error)` (cockatiel: handleWhen(e => !isBrokenCircuitError(e)))";
  return {
    node: call,
    messageId: "retryAroundOpenBreaker",
    data: { retrier: describeRetrier(scope), breaker: receiver.breaker, hint },
  };
}

const ROUTE_METHODS = new Set([
  "get",
  "post",
  "put",
  "patch",
  "delete",
  "all",
  "use",
  "head",
  "options",
  "route",
]);
/** Names a server or router object usually has. */
const SERVER_NAMES = /^(app|api|router|server|routes?|fastify|koa|express|[a-z]+Router)$/;

function receiverName(node: Node): string | null {
  const inner = skipWrappers(node);
  if (inner.type === AST_NODE_TYPES.Identifier) return inner.name;
  if (inner.type === AST_NODE_TYPES.MemberExpression) return memberName(inner);
  return null;
}

const HANDLER_EXPORTS = new Set(["handler", "GET", "POST", "PUT", "PATCH", "DELETE"]);

/** Whether a function runs once per inbound request. */
function isRequestHandler(resolver: Resolver, fn: FunctionNode): boolean {
  const params = fn.params.map((p) => (p.type === AST_NODE_TYPES.Identifier ? p.name : ""));
  if (/^(req|request)$/.test(params[0] ?? "") && /^(res|reply|response)$/.test(params[1] ?? ""))
    return true;
  // Koa-style middleware: async (ctx, next) => …
  if (/^(ctx|context)$/.test(params[0] ?? "") && params[1] === "next") return true;
  const parent = fn.parent;
  if (
    parent.type === AST_NODE_TYPES.CallExpression &&
    parent.arguments.includes(fn as TSESTree.Expression)
  ) {
    const callee = skipWrappers(parent.callee);
    const name =
      callee.type === AST_NODE_TYPES.MemberExpression
        ? memberName(callee)
        : callee.type === AST_NODE_TYPES.Identifier
          ? callee.name
          : null;
    if (name === "createServer") return true;
    // app.use(fn), router.get(fn): a server's registration call, with or without a path
    if (
      name !== null &&
      ROUTE_METHODS.has(name) &&
      callee.type === AST_NODE_TYPES.MemberExpression &&
      SERVER_NAMES.test(receiverName(callee.object) ?? "")
    )
      return true;
    const path = staticString(parent.arguments[0]);
    if (
      name !== null &&
      ROUTE_METHODS.has(name) &&
      path !== null &&
      path.startsWith("/") &&
      parent.arguments[0] !== fn
    )
      return true;
  }
  // exports.handler = async (event) => …, module.exports.handler = …
  if (
    parent.type === AST_NODE_TYPES.AssignmentExpression &&
    parent.right === fn &&
    parent.left.type === AST_NODE_TYPES.MemberExpression &&
    HANDLER_EXPORTS.has(memberName(parent.left) ?? "") &&
    /^(module\.)?exports$/.test(resolver.sourceCode.getText(parent.left.object))
  )
    return true;
  if (parent.type === AST_NODE_TYPES.ExportDefaultDeclaration && fn.params.length > 0) {
    const first = fn.params[0];
    if (first?.type === AST_NODE_TYPES.Identifier && /^(req|request|event|ctx)$/.test(first.name))
      return true;
  }
  // export async function handler(event) / export const POST = async (request) => …
  const declared =
    fn.type === AST_NODE_TYPES.FunctionDeclaration
      ? fn
      : parent.type === AST_NODE_TYPES.VariableDeclarator
        ? parent
        : null;
  const id = declared?.id;
  if (id?.type === AST_NODE_TYPES.Identifier && HANDLER_EXPORTS.has(id.name)) {
    const variable = resolver.variableOf(id);
    const exported =
      variable?.references.some(
        (ref) => ref.identifier.parent.type === AST_NODE_TYPES.ExportSpecifier,
      ) ?? false;
    let holder: Node | undefined = declared ?? undefined;
    while (
      holder &&
      holder.type !== AST_NODE_TYPES.ExportNamedDeclaration &&
      holder.type !== AST_NODE_TYPES.Program
    )
      holder = holder.parent;
    if (exported || holder?.type === AST_NODE_TYPES.ExportNamedDeclaration) return true;
  }
  return false;
}

/**
 * Whether a breaker is made inside a function and used at once for a single call, never kept:
 * `createPolicy().execute(…)`, `new CircuitBreaker(fn).fire()`. Each run of the function makes a
 * new breaker that sees one call, whatever calls the function.
 */
function servesOneCall(made: CallLike): boolean {
  const member = made.parent;
  if (member.type !== AST_NODE_TYPES.MemberExpression || member.object !== made) return false;
  const use = member.parent;
  if (use.type !== AST_NODE_TYPES.CallExpression || use.callee !== member) return false;
  for (let current: Node | undefined = use.parent; current; current = current.parent)
    if (isFunction(current)) return true;
  return false;
}

const ONE_CALL = (node: Node): Problem => ({
  node,
  messageId: "breakerPerCall",
  data: { where: "for a single call and never kept" },
});

/** A breaker constructed where it runs once per call, so it never accumulates failures. */
export function checkBreakerConstruction(
  resolver: Resolver,
  node: CallLike,
  settings: Settings,
): Problem | null {
  const origin = resolver.origin(node);
  if (origin.kind !== "result" || origin.path.length !== 0) return null;
  const opossum = isModule(origin.callee, "opossum");
  if (!opossum && !isModule(origin.callee, "cockatiel", "circuitBreaker")) return null;
  const scope = findRetryScope(resolver, node, settings.wrappers);
  if (scope)
    return {
      node,
      messageId: "breakerPerCall",
      data: { where: `inside the code ${describeRetrier(scope)} runs on every attempt` },
    };
  for (let current: Node | undefined = node.parent; current; current = current.parent) {
    if (isFunction(current) && isRequestHandler(resolver, current)) {
      return { node, messageId: "breakerPerCall", data: { where: "inside a request handler" } };
    }
  }
  return servesOneCall(node) ? ONE_CALL(node) : null;
}

const REQUIRE_SOURCE = /\brequire\(\s*["'`]([^"'`]+)["'`]\s*\)/g;

/** A cheap whole-file look, once per file before any node is visited: what could be here at all. */
function fileMentions(
  text: string,
  program: TSESTree.Program,
  generated: readonly RegExp[],
): { breakers: boolean; clients: boolean } {
  const breakers = /\b(opossum|cockatiel)\b/.test(text);
  const sources = program.body.flatMap((statement) =>
    statement.type === AST_NODE_TYPES.ImportDeclaration ? [statement.source.value] : [],
  );
  for (const match of text.matchAll(REQUIRE_SOURCE)) sources.push(match[1]!);
  const clients = sources.some((source) => generated.some((pattern) => pattern.test(source)));
  return { breakers, clients };
}

const BREAKER_MEMBERS = new Set(["fire", "execute", "wrap", "circuitBreaker"]);

export default createRule<Options, MessageIds>({
  name: "retry-inside-breaker",
  meta: {
    type: "problem",
    docs: {
      description:
        "Disallow retries that re-try a circuit breaker's own rejection, retries around generated clients, and breakers built per call",
      recommended: true,
      requiresTypeChecking: false,
    },
    hasSuggestions: false,
    messages: {
      retryWrapsBreaker:
        "This retry sits outside the circuit breaker and handles every error, BrokenCircuitError included: while the circuit is open each retry sleeps and hits the open breaker again, burning the caller's deadline. Exclude the rejection (handleWhen(e => !isBrokenCircuitError(e))) or handle only retryable errors (handleType(NetworkError)).",
      retryAroundOpenBreaker:
        "{{retrier}} retries a circuit breaker ({{breaker}}) without stopping when the circuit is open: each retry sleeps and polls an open breaker while the dependency is meant to rest. Make the retry {{hint}}.",
      retryAroundGeneratedClient:
        "{{retrier}} retries a call to a resgen-generated client ({{factory}}), which already retries with backoff, a retry budget and a circuit breaker: the two layers multiply attempts. Remove this retry and tune the policy's retry section instead.",
      breakerPerCall:
        "This circuit breaker is created {{where}}, so it starts closed every time and can never open. Create it once (module scope or a constructor) and reuse it.",
    },
    schema: [
      {
        type: "object",
        additionalProperties: false,
        properties: {
          generatedClientModules: {
            type: "array",
            items: { type: "string" },
            uniqueItems: true,
            description:
              "Regular expressions (JavaScript syntax) matched against import paths. A value returned by a `create<Name>Client` function imported from a matching module is a resgen-generated client. Defaults to any path with a `generated` segment, such as `./generated/index.js`.",
          },
          retryWrappers: {
            type: "array",
            items: { type: "string" },
            uniqueItems: true,
            description:
              "Names of project functions that retry the function passed to them, in addition to p-retry, async-retry, promise-retry, exponential-backoff and cockatiel.",
          },
          useTypeInformation: {
            type: "boolean",
            description:
              'Use the TypeScript type checker, when the parser provides one, to recognise opossum and cockatiel breakers and generated clients that reach a retry through parameters or properties. Off by default; `configs["recommended-type-checked"]` turns it on.',
          },
        },
      },
    ],
    defaultOptions: [
      {
        generatedClientModules: DEFAULT_GENERATED_MODULES,
        retryWrappers: [],
        useTypeInformation: false,
      },
    ],
  },
  create(context, [options]) {
    const resolver = resolverOf(context, options.useTypeInformation);
    const services = context.sourceCode.parserServices;
    const types: TypeAware | null =
      options.useTypeInformation === true && services?.program && services.esTreeNodeToTSNodeMap
        ? { program: services.program, map: services.esTreeNodeToTSNodeMap }
        : null;
    const settings: Settings = {
      generated: (options.generatedClientModules ?? DEFAULT_GENERATED_MODULES).map(
        (source) => new RegExp(source),
      ),
      wrappers: new Set(options.retryWrappers ?? []),
      types,
    };
    // Files that import neither a breaker library nor a generated client have nothing to report.
    const mentions = fileMentions(
      context.sourceCode.text,
      context.sourceCode.ast,
      settings.generated,
    );
    if (!types && !mentions.breakers && !mentions.clients) return {};
    const anyMember = types !== null || mentions.clients;
    const report = (problem: Problem | null): void => {
      if (problem)
        context.report({ node: problem.node, messageId: problem.messageId, data: problem.data });
    };
    return {
      CallExpression(node) {
        const callee = skipWrappers(node.callee);
        if (callee.type === AST_NODE_TYPES.Super) {
          report(checkConfiguredWrap(resolver, node));
          return;
        }
        if (
          callee.type !== AST_NODE_TYPES.Identifier &&
          callee.type !== AST_NODE_TYPES.MemberExpression
        )
          return;
        // Without generated clients in view, only breaker methods and cockatiel factories matter.
        if (
          callee.type === AST_NODE_TYPES.MemberExpression &&
          !anyMember &&
          !BREAKER_MEMBERS.has(memberName(callee) ?? "")
        )
          return;
        const origin = resolver.origin(callee);
        const wrapByName =
          callee.type === AST_NODE_TYPES.MemberExpression &&
          memberName(callee) === "wrap" &&
          mentions.breakers;
        if (isModule(origin, "cockatiel", "wrap") || wrapByName) report(checkWrap(resolver, node));
        else if (isModule(origin, "opossum"))
          report(checkBreakerConstruction(resolver, node, settings));
        else if (callee.type === AST_NODE_TYPES.Identifier && madeByFactory(resolver, node)) {
          report(checkFactoryCall(resolver, node, settings));
          report(checkConfiguredWrap(resolver, node));
        } else if (isModule(origin, "cockatiel", "circuitBreaker"))
          report(checkBreakerConstruction(resolver, node, settings));
        else if (callee.type === AST_NODE_TYPES.MemberExpression)
          report(checkRetriedCall(resolver, node, settings));
      },
      NewExpression(node) {
        report(checkBreakerConstruction(resolver, node, settings));
      },
    };
  },
});
