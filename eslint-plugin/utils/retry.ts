import { AST_NODE_TYPES, type TSESTree } from "@typescript-eslint/types";
import { ScopeType } from "./scope.js";
import {
  alwaysThrows,
  calleeName,
  contains,
  isFunction,
  isRetryableLoop,
  memberName,
  outerParent,
  skipWrappers,
  someInside,
  type CallLike,
  type FunctionNode,
  type LoopNode,
  type Node,
} from "./ast.js";
import { boundValue, factoryCall, madeValues, type Located } from "./factories.js";
import { isExported } from "./interceptors.js";
import { exactKey, numberValue, readKey, type KeyLookup } from "./objects.js";
import { selfRetryOf } from "./recursion.js";
import { isModule, thisPropertyValue, UNKNOWN, type Origin, type Resolver } from "./resolve.js";
import { localFunction, projectRetryHelper } from "./retry-helpers.js";

/**
 * A region of code that runs more than once for one logical call:
 * - `wrapper`: a function handed to a retry library (`fn`), with the wrapper's options and,
 *   for cockatiel, the policy's handler and attempts (`CockatielPolicy`);
 * - `loop`: a hand-written loop whose body retries a `try` block after a caught failure;
 * - `recursion`: a function that runs itself again after a failure (`again` is where).
 * `region` is the code that runs again on every attempt, as seen from the node asked about: the
 * retried function or loop body, or the local helper it calls (`via` names the helpers).
 */
export type RetryScope = (
  | {
      readonly kind: "wrapper";
      readonly library: string;
      readonly call: TSESTree.CallExpression;
      readonly fn: FunctionNode;
      readonly options: Node | undefined;
      readonly policy: CockatielPolicy | null;
    }
  | { readonly kind: "loop"; readonly loop: LoopNode; readonly attempt: TSESTree.TryStatement }
  | { readonly kind: "recursion"; readonly fn: FunctionNode; readonly again: Node }
) & { readonly region: Node; readonly via: readonly string[] };

interface WrapperShape {
  readonly library: string;
  readonly fn: Node | undefined;
  readonly options: Node | undefined;
  readonly policy: CockatielPolicy | null;
}

function plainArg(call: TSESTree.CallExpression, index: number): Node | undefined {
  const arg = call.arguments[index];
  return arg === undefined || arg.type === AST_NODE_TYPES.SpreadElement ? undefined : arg;
}

/**
 * A cockatiel retry policy as one use of it gets it. `handler` and `attempts` are the
 * `retry(handler, { maxAttempts })` arguments, with a factory's parameters bound to what its call
 * passes; each is null when that cannot be read.
 */
export interface CockatielPolicy {
  readonly handler: Located | null;
  readonly attempts: Located | null;
}

const MAX_POLICY_DEPTH = 8;

/**
 * The cockatiel retry policy a value is: `retry(...)`, `wrap(..., retry(...), ...)`, or what a
 * function of the project returns that builds one (in this file, or, with type information, in
 * another), e.g. `createServicePolicy(options)` around `wrap(retry(filter, …), breaker)`.
 */
export function cockatielRetryPolicy(
  resolver: Resolver,
  origin: Origin,
  depth = 0,
): CockatielPolicy | null {
  if (
    depth > MAX_POLICY_DEPTH ||
    origin.kind !== "result" ||
    origin.path.length !== 0 ||
    origin.call.type !== AST_NODE_TYPES.CallExpression
  )
    return null;
  const call = origin.call;
  if (isModule(origin.callee, "cockatiel", "retry")) {
    const handler = plainArg(call, 0);
    const options = plainArg(call, 1);
    const attempts = options && readKey(resolver, options, exactKey("maxAttempts"));
    return {
      handler: handler ? { resolver, node: handler } : null,
      attempts: attempts?.kind === "value" ? { resolver, node: attempts.node } : null,
    };
  }
  if (isModule(origin.callee, "cockatiel", "wrap")) {
    for (const arg of call.arguments) {
      const found = policyOf(resolver, arg, depth + 1);
      if (found) return found;
    }
    return null;
  }
  if (origin.callee.kind === "module" && origin.callee.module === "cockatiel") return null;
  const factory = factoryCall(resolver, call);
  if (!factory) return null;
  for (const made of madeValues(factory)) {
    const inner = factory.resolver;
    const found = policyOf(inner, made, depth + 1);
    if (!found) continue;
    const bind = (value: Located | null): Located | null =>
      value && value.resolver === inner ? boundValue(factory, value.node) : value;
    return { handler: bind(found.handler), attempts: bind(found.attempts) };
  }
  return null;
}

/**
 * The cockatiel retry policy a value holds: by its origin, or, where the origin is a call the
 * resolver does not name (a function of this file), through consts, `this` fields and
 * `??`/`||` fallbacks to that call (`options.policy ?? this.#policy`).
 */
export function policyOf(resolver: Resolver, node: Node, depth = 0): CockatielPolicy | null {
  if (depth > MAX_POLICY_DEPTH) return null;
  const byOrigin = cockatielRetryPolicy(resolver, resolver.origin(node), depth);
  if (byOrigin) return byOrigin;
  const value = skipWrappers(resolver.valueOf(node));
  if (value.type === AST_NODE_TYPES.LogicalExpression && value.operator !== "&&")
    return policyOf(resolver, value.left, depth + 1) ?? policyOf(resolver, value.right, depth + 1);
  if (
    value.type === AST_NODE_TYPES.MemberExpression &&
    value.object.type === AST_NODE_TYPES.ThisExpression
  ) {
    const assigned = thisPropertyValue(value);
    return assigned ? policyOf(resolver, assigned, depth + 1) : null;
  }
  if (value.type !== AST_NODE_TYPES.CallExpression) return null;
  return cockatielRetryPolicy(
    resolver,
    { kind: "result", call: value, callee: UNKNOWN, path: [] },
    depth + 1,
  );
}

/** Whether a policy's `maxAttempts` (cockatiel counts retries, not attempts) is 0. */
function neverRetries(policy: CockatielPolicy): boolean {
  const attempts = policy.attempts && numberValue(policy.attempts.resolver, policy.attempts.node);
  return attempts !== null && attempts <= 0;
}

/** What kind of retry wrapper a call is, if any. */
export function retryWrapperOf(
  resolver: Resolver,
  call: TSESTree.CallExpression,
  extraWrappers: ReadonlySet<string>,
): WrapperShape | null {
  const callee = skipWrappers(call.callee);
  if (callee.type !== AST_NODE_TYPES.Identifier && callee.type !== AST_NODE_TYPES.MemberExpression)
    return null;
  const origin = resolver.origin(callee);
  const library = retryLibraryOf(origin);
  if (
    library === "p-retry" ||
    library === "async-retry" ||
    isModule(origin, "exponential-backoff", "backOff")
  ) {
    const name = origin.kind === "module" ? (library ?? origin.module) : "retry";
    return { library: name, fn: plainArg(call, 0), options: plainArg(call, 1), policy: null };
  }
  // const op = retry.operation(options); op.attempt(fn)
  if (
    origin.kind === "result" &&
    origin.path.length === 1 &&
    origin.path[0] === "attempt" &&
    origin.callee.kind === "module" &&
    origin.callee.path.length === 1 &&
    origin.callee.path[0] === "operation" &&
    /(^|\/)retry$/.test(origin.callee.module) &&
    origin.call.type === AST_NODE_TYPES.CallExpression
  ) {
    return {
      library: origin.callee.module,
      fn: plainArg(call, 0),
      options: plainArg(origin.call, 0),
      policy: null,
    };
  }
  if (library === "promise-retry") {
    const first = plainArg(call, 0);
    const firstIsFn = first !== undefined && isFunction(resolver.valueOf(first));
    return {
      library: "promise-retry",
      fn: firstIsFn ? first : plainArg(call, 1),
      options: firstIsFn ? plainArg(call, 1) : first,
      policy: null,
    };
  }
  if (callee.type === AST_NODE_TYPES.MemberExpression && memberName(callee) === "execute") {
    const policy = policyOf(resolver, callee.object);
    if (policy && !neverRetries(policy))
      return { library: "cockatiel", fn: plainArg(call, 0), options: undefined, policy };
  }
  const name = calleeName(call);
  if (name !== null && extraWrappers.has(name)) {
    const fn = call.arguments.find(
      (arg) => arg.type !== AST_NODE_TYPES.SpreadElement && isFunction(resolver.valueOf(arg)),
    );
    return { library: name, fn: fn as Node | undefined, options: undefined, policy: null };
  }
  const helper = projectRetryHelper(resolver, call);
  if (helper)
    return { library: `${helper.name}()`, fn: helper.fn, options: undefined, policy: null };
  return null;
}

const RETRY_LIBRARIES = ["p-retry", "async-retry", "promise-retry"];

/**
 * The retry library a module export is, by the last segment of its path, so vendored copies
 * (`next/dist/compiled/async-retry`) count as the package they copy.
 */
export function retryLibraryOf(origin: Origin): string | null {
  if (origin.kind !== "module" || origin.path.length !== 0) return null;
  const last = origin.module.split("/").pop() ?? "";
  return RETRY_LIBRARIES.includes(last) ? last : null;
}

/** The function a wrapper argument denotes: written in place, a const, or a function declaration. */
function functionOf(resolver: Resolver, node: Node | undefined): FunctionNode | null {
  return node === undefined ? null : localFunction(resolver, node);
}

/** The retry wrapper calls that run `fn` (written in place or passed by name). */
function wrappersRunning(
  resolver: Resolver,
  fn: FunctionNode,
  extra: ReadonlySet<string>,
): RetryScope | null {
  const { parent } = outer(fn);
  if (parent?.type === AST_NODE_TYPES.CallExpression) {
    const shape = retryWrapperOf(resolver, parent, extra);
    if (shape && functionOf(resolver, shape.fn) === fn) {
      return {
        kind: "wrapper",
        library: shape.library,
        call: parent,
        fn,
        options: shape.options,
        policy: shape.policy,
        region: fn,
        via: [],
      };
    }
  }
  // const op = async () => ...; pRetry(op)   /   function op() {...}; pRetry(op)
  let id: TSESTree.Identifier | null = null;
  if (fn.type === AST_NODE_TYPES.FunctionDeclaration) id = fn.id;
  else if (
    parent?.type === AST_NODE_TYPES.VariableDeclarator &&
    parent.id.type === AST_NODE_TYPES.Identifier
  )
    id = parent.id;
  if (id === null) return null;
  const variable = resolver.variableOf(id);
  if (!variable) return null;
  for (const ref of variable.references) {
    const use = outer(ref.identifier);
    if (use.parent?.type !== AST_NODE_TYPES.CallExpression) continue;
    const shape = retryWrapperOf(resolver, use.parent, extra);
    if (shape && shape.fn !== undefined && skipWrappers(shape.fn) === ref.identifier) {
      return {
        kind: "wrapper",
        library: shape.library,
        call: use.parent,
        fn,
        options: shape.options,
        policy: shape.policy,
        region: fn,
        via: [],
      };
    }
  }
  return null;
}

function outer(node: Node): { parent: Node | undefined } {
  let current = node;
  while (
    current.parent &&
    (current.parent.type === AST_NODE_TYPES.TSAsExpression ||
      current.parent.type === AST_NODE_TYPES.TSSatisfiesExpression ||
      current.parent.type === AST_NODE_TYPES.TSNonNullExpression ||
      current.parent.type === AST_NODE_TYPES.ChainExpression)
  ) {
    current = current.parent;
  }
  return { parent: current.parent };
}

/**
 * A loop retries its `try` block when the block leaves the loop on success (`return` or
 * `break`) and the `catch` lets the loop go round again instead of always rethrowing. A loop
 * that never leaves on success (a poller, a heartbeat) makes a new call each time: not a retry.
 */
export function isRetryLoop(attempt: TSESTree.TryStatement): boolean {
  if (!attempt.handler || alwaysThrows(attempt.handler.body)) return false;
  return someInside(attempt.block, (node) => {
    if (node.type === AST_NODE_TYPES.ReturnStatement) return true;
    if (node.type === AST_NODE_TYPES.BreakStatement && node.label === null) return true;
    return false;
  });
}

/**
 * Calls that keep a callback for events that come later (a listener, a subscription, a timer
 * that repeats), and those that take it back: neither runs the callback as part of the code that
 * hands it over, so a retry of that code does not repeat it.
 */
const LISTENER_CALLS = new Set([
  "addEventListener",
  "addListener",
  "on",
  "once",
  "prependListener",
  "prependOnceListener",
  "subscribe",
  "setInterval",
  "removeEventListener",
  "removeListener",
  "off",
]);
/** `onMessage(cb)`, `client.onError(cb)`, and as properties `ws.onmessage = cb`. */
const HANDLER_NAME = /^on[A-Z]/;
const HANDLER_PROPERTY = /^on[a-zA-Z]/;

/** Whether a call keeps the callbacks given to it for later instead of running them now. */
function storesForLater(resolver: Resolver, call: CallLike): boolean {
  if (call.type !== AST_NODE_TYPES.CallExpression) return false;
  const name = calleeName(call);
  if (name !== null && (LISTENER_CALLS.has(name) || HANDLER_NAME.test(name))) return true;
  return intoExportedRegistry(resolver, call);
}

/**
 * `handlers.push(cb)` / `registry.register(cb)` as a statement, on a module-level value the file
 * exports: the callback is kept where other files can run it, whenever they like.
 */
function intoExportedRegistry(resolver: Resolver, call: TSESTree.CallExpression): boolean {
  if (outerParent(call).parent?.type !== AST_NODE_TYPES.ExpressionStatement) return false;
  const callee = skipWrappers(call.callee);
  if (callee.type !== AST_NODE_TYPES.MemberExpression) return false;
  let root = skipWrappers(callee.object);
  while (root.type === AST_NODE_TYPES.MemberExpression) root = skipWrappers(root.object);
  if (root.type !== AST_NODE_TYPES.Identifier) return false;
  const variable = resolver.variableOf(root);
  if (!variable || variable.defs.length === 0) return false;
  const scope = variable.scope.type;
  const topLevel = scope === ScopeType.module || scope === ScopeType.global;
  return topLevel && isExported(resolver, root);
}

/** `ws.onmessage = cb`, `this.onDone = cb`: an event-handler property, run when the event comes. */
function isHandlerAssignment(node: Node): boolean {
  if (node.type !== AST_NODE_TYPES.AssignmentExpression || node.operator !== "=") return false;
  const target = skipWrappers(node.left);
  if (target.type !== AST_NODE_TYPES.MemberExpression) return false;
  const name = memberName(target);
  return name !== null && HANDLER_PROPERTY.test(name);
}

/**
 * Whether a value at `node` is handed over to be kept for later: an argument of a listener or
 * registry call, or the value of an event-handler property.
 */
function keptForLater(resolver: Resolver, node: Node): boolean {
  const { parent, child } = outerParent(node);
  if (parent === undefined) return false;
  if (
    (parent.type === AST_NODE_TYPES.CallExpression ||
      parent.type === AST_NODE_TYPES.NewExpression) &&
    parent.arguments.includes(child as TSESTree.CallExpressionArgument)
  )
    return storesForLater(resolver, parent);
  return parent.type === AST_NODE_TYPES.AssignmentExpression && parent.right === child
    ? isHandlerAssignment(parent)
    : false;
}

/**
 * Whether a call that is handed a function runs it as part of its own work: any call that does
 * not keep it for later (`queue.add(fn)`, `items.map(fn)`, `p.then(fn)`), and of constructors
 * only `new Promise(fn)`, whose executor runs at once; others (a circuit breaker, a worker) may
 * keep it.
 */
function runsWhatItIsHanded(resolver: Resolver, node: CallLike): boolean {
  if (node.type !== AST_NODE_TYPES.NewExpression) return true;
  const origin = resolver.origin(skipWrappers(node.callee));
  return origin.kind === "global" && origin.path.length === 1 && origin.path[0] === "Promise";
}

/**
 * A local function's name, the calls that run it, and whether it is only kept for later:
 * - `calls`: `send(x)` for `function send` / `const send = …`, and the calls it is handed to
 *   that run it as part of their own work (`queue.add(send)`, `items.map(send)`,
 *   `promise.then(send)`, `new Promise(send)`);
 * - `deferred`: every use registers it for later (`emitter.on("x", send)`).
 */
function callSitesOf(
  resolver: Resolver,
  fn: FunctionNode,
): { name: string; calls: CallLike[]; deferred: boolean } | null {
  let id: TSESTree.Identifier | null = null;
  if (fn.type === AST_NODE_TYPES.FunctionDeclaration) id = fn.id;
  else if (
    fn.parent.type === AST_NODE_TYPES.VariableDeclarator &&
    fn.parent.id.type === AST_NODE_TYPES.Identifier
  )
    id = fn.parent.id;
  if (id === null) return null;
  const variable = resolver.variableOf(id);
  if (!variable) return null;
  const calls: CallLike[] = [];
  let later = 0;
  let other = 0;
  for (const ref of variable.references) {
    if (ref.identifier === id) continue;
    const { parent, child } = outerParent(ref.identifier);
    if (parent?.type === AST_NODE_TYPES.CallExpression && parent.callee === child) {
      calls.push(parent);
      continue;
    }
    if (keptForLater(resolver, ref.identifier)) {
      later++;
      continue;
    }
    if (
      (parent?.type === AST_NODE_TYPES.CallExpression ||
        parent?.type === AST_NODE_TYPES.NewExpression) &&
      parent.arguments.includes(child as TSESTree.CallExpressionArgument) &&
      runsWhatItIsHanded(resolver, parent)
    ) {
      calls.push(parent);
      continue;
    }
    other++;
  }
  return { name: id.name, calls, deferred: later > 0 && calls.length === 0 && other === 0 };
}

const MAX_HOPS = 2;

/**
 * The innermost retry scope around `node`, if any. A local helper function that a retried
 * function calls (`pRetry(() => createOrder(x))`) is followed up to two calls deep.
 */
export function findRetryScope(
  resolver: Resolver,
  node: Node,
  extra: ReadonlySet<string>,
  hops = 0,
): RetryScope | null {
  let previous: Node = node;
  let attempt: TSESTree.TryStatement | null = null;
  for (let current = node.parent; current; previous = current, current = current.parent) {
    if (current.type === AST_NODE_TYPES.TryStatement && current.block === previous)
      attempt = current;
    if (isFunction(current)) {
      const scope = wrappersRunning(resolver, current, extra);
      if (scope) return scope;
      const again = selfRetryOf(resolver, current);
      if (again && !(again.parent !== undefined && contains(again.parent, node)))
        return { kind: "recursion", fn: current, again, region: current, via: [] };
      const helper = callSitesOf(resolver, current);
      if (hops < MAX_HOPS) {
        for (const call of helper?.calls ?? []) {
          if (call.range[0] >= current.range[0] && call.range[1] <= current.range[1]) continue; // recursion
          const outerScope = findRetryScope(resolver, call, extra, hops + 1);
          if (outerScope)
            return { ...outerScope, region: current, via: [helper!.name, ...outerScope.via] };
        }
      }
      // A callback kept for later (a listener, a timer that repeats, an exported registry) runs
      // when its event comes, not as part of the code around it: no retry of that code repeats it.
      if (helper?.deferred === true || keptForLater(resolver, current)) return null;
    }
    if (
      isRetryableLoop(current) &&
      attempt !== null &&
      current.body === previous &&
      isRetryLoop(attempt)
    ) {
      return { kind: "loop", loop: current, attempt, region: current.body, via: [] };
    }
  }
  return null;
}

/** The code that runs again on each attempt, as seen from the node the scope was found for. */
export function attemptRegion(scope: RetryScope): Node {
  return scope.region;
}

/** "p-retry", "a retry loop", "p-retry through createOrder()". */
export function describeRetrier(scope: RetryScope): string {
  const base =
    scope.kind === "wrapper"
      ? scope.library
      : scope.kind === "loop"
        ? "a retry loop"
        : `${selfLabel(scope.fn)} calling itself again`;
  return scope.via.length === 0
    ? base
    : `${base} through ${scope.via.map((name) => `${name}()`).join(" and ")}`;
}

function selfLabel(fn: FunctionNode): string {
  if (
    (fn.type === AST_NODE_TYPES.FunctionDeclaration ||
      fn.type === AST_NODE_TYPES.FunctionExpression) &&
    fn.id
  )
    return `${fn.id.name}()`;
  const parent = fn.parent;
  if (
    parent.type === AST_NODE_TYPES.VariableDeclarator &&
    parent.id.type === AST_NODE_TYPES.Identifier
  )
    return `${parent.id.name}()`;
  if (
    (parent.type === AST_NODE_TYPES.MethodDefinition ||
      parent.type === AST_NODE_TYPES.PropertyDefinition) &&
    parent.key.type === AST_NODE_TYPES.Identifier
  )
    return `${parent.key.name}()`;
  return "a function";
}

const ATTEMPT_KEYS: readonly { key: string; atMost: number }[] = [
  { key: "retries", atMost: 0 },
  { key: "maxRetries", atMost: 0 },
  { key: "limit", atMost: 0 },
  { key: "maxAttempts", atMost: 1 },
  { key: "numOfAttempts", atMost: 1 },
];

/** How a check reads one key of an options object; `readKey` unless the caller knows better. */
export type KeyReader = (options: Node, key: string) => KeyLookup;

/** Whether options say there is no second attempt (`retries: 0`, `limit: 0`, `maxAttempts: 1`). */
export function retriesDisabled(
  resolver: Resolver,
  options: Node | undefined,
  read: KeyReader = (object, key) => readKey(resolver, object, exactKey(key)),
): boolean {
  if (options === undefined) return false;
  for (const { key, atMost } of ATTEMPT_KEYS) {
    const found = read(options, key);
    if (found.kind !== "value") continue;
    const value = numberValue(resolver, found.node);
    if (value !== null && value <= atMost) return true;
  }
  return false;
}

/** The option keys under which retry libraries take a "should this error be retried" predicate. */
export const CONDITION_KEYS = [
  "shouldRetry",
  "retryIf",
  "retryCondition",
  "retry",
  "shouldRetryError",
];

/** The wrapper's retry condition, when one is given, each in the file that holds it. */
export function conditionNodes(resolver: Resolver, scope: RetryScope): Located[] {
  const nodes: Located[] = [];
  if (scope.kind === "wrapper") {
    if (scope.options !== undefined) {
      for (const key of CONDITION_KEYS) {
        const found = readKey(resolver, scope.options, exactKey(key));
        if (found.kind === "value") nodes.push({ resolver, node: resolver.valueOf(found.node) });
      }
      const onFailed = readKey(resolver, scope.options, exactKey("onFailedAttempt"));
      if (onFailed.kind === "value")
        nodes.push({ resolver, node: resolver.valueOf(onFailed.node) });
    }
    if (scope.policy?.handler) nodes.push(scope.policy.handler);
  }
  return nodes;
}

export const NEVER_PROCESSED_CODES =
  /\b(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH)\b/;
const MAYBE_PROCESSED =
  /\b(ECONNRESET|ETIMEDOUT|ECONNABORTED|EPIPE|ESOCKETTIMEDOUT|isNetworkError|isRetryableError|status|response)\b/;

/** Whether a predicate's text only admits failures where the request provably never left. */
export function onlyNeverProcessed(text: string): boolean {
  return NEVER_PROCESSED_CODES.test(text) && !MAYBE_PROCESSED.test(text);
}
