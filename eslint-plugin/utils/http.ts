import { AST_NODE_TYPES, type TSESTree } from "@typescript-eslint/types";
import { DefinitionType } from "./scope.js";
import { contains, memberName, skipWrappers, someInside, staticString, type Node } from "./ast.js";
import { classifyOutbound, configArgument, outboundArgument, type Outbound } from "./clients.js";
import { anyKeyOf, exactKey, readKey, stringValue, type KeyLookup } from "./objects.js";
import { isModule, type Resolver } from "./resolve.js";

/**
 * An HTTP request as the idempotency check sees it: the method (upper case; null when the file
 * does not say), the URL argument, and the arguments that may carry headers.
 */
export interface HttpRequest {
  readonly call: TSESTree.CallExpression;
  readonly method: string | null;
  readonly url: Node | undefined;
  readonly optionArgs: readonly Node[];
  readonly outbound: Outbound | null;
}

const VERBS = new Set(["get", "post", "put", "patch", "delete", "head", "options"]);

function methodFrom(
  resolver: Resolver,
  options: Node | undefined,
  fallback: string,
): string | null {
  if (options === undefined) return fallback;
  const found = readKey(resolver, options, exactKey("method"));
  if (found.kind === "absent") return fallback;
  if (found.kind === "unknown") return null;
  return stringValue(resolver, found.node)?.toUpperCase() ?? null;
}

/** Classifies a call as an HTTP request with a method, for known clients and `x.post(...)` calls. */
export function httpRequestOf(
  resolver: Resolver,
  call: TSESTree.CallExpression,
  extraFetch: readonly string[] = [],
): HttpRequest | null {
  const outbound = classifyOutbound(resolver, call, extraFetch);
  if (outbound) {
    const options = configArgument(outbound);
    let method: string | null;
    if (outbound.verb !== null) method = outbound.verb.toUpperCase();
    else if (outbound.library === "fetch")
      method = methodFrom(resolver, options ?? requestInit(resolver, outbound), "GET");
    else method = methodFrom(resolver, options, "GET");
    const url = outbound.configIndex === 0 ? undefined : outboundArgument(outbound, 0);
    const optionArgs = options === undefined ? [] : [options];
    return { call, method, url, optionArgs, outbound };
  }
  const callee = skipWrappers(call.callee);
  if (callee.type !== AST_NODE_TYPES.MemberExpression) return null;
  const name = memberName(callee);
  if (name === null) return null;
  const args = call.arguments.filter(
    (arg): arg is TSESTree.Expression => arg.type !== AST_NODE_TYPES.SpreadElement,
  );
  if (VERBS.has(name)) {
    // A client we do not know (`client.patch(url, body)`), called with a URL first.
    const first = args[0];
    if (first === undefined) return null;
    // With two arguments the second is the body; an options object comes third.
    const optionArgs = args
      .slice(1)
      .filter((arg, i) => i >= 1 || resolver.valueOf(arg).type === AST_NODE_TYPES.ObjectExpression);
    return { call, method: name.toUpperCase(), url: first, optionArgs, outbound: null };
  }
  if (name === "request" && args[0] !== undefined) {
    const config = args[0];
    const method = methodFrom(resolver, config, "GET");
    const url = readKey(resolver, config, exactKey("url"));
    return {
      call,
      method,
      url: url.kind === "value" ? url.node : undefined,
      optionArgs: args,
      outbound: null,
    };
  }
  return null;
}

/** `fetch(new Request(url, init))`: the init of the request. */
function requestInit(resolver: Resolver, outbound: Outbound): Node | undefined {
  const first = outboundArgument(outbound, 0);
  if (first === undefined) return undefined;
  const value = resolver.valueOf(first);
  if (value.type !== AST_NODE_TYPES.NewExpression) return undefined;
  const ctor = skipWrappers(value.callee);
  if (ctor.type !== AST_NODE_TYPES.Identifier || ctor.name !== "Request") return undefined;
  const init = value.arguments[1];
  return init === undefined || init.type === AST_NODE_TYPES.SpreadElement ? undefined : init;
}

/** The static text of a URL: a string, or a template literal's fixed parts joined. */
export function urlText(resolver: Resolver, url: Node | undefined): string | null {
  if (url === undefined) return null;
  const value = resolver.valueOf(url);
  const text = staticString(value);
  if (text !== null) return text;
  if (value.type === AST_NODE_TYPES.TemplateLiteral)
    return value.quasis.map((q) => q.value.cooked ?? "").join("{}");
  if (value.type === AST_NODE_TYPES.BinaryExpression && value.operator === "+") {
    return `${urlText(resolver, value.left) ?? "{}"}${urlText(resolver, value.right) ?? "{}"}`;
  }
  return null;
}

/** Where a request's idempotency key is, if anywhere. */
export function idempotencyKeyOf(
  resolver: Resolver,
  request: HttpRequest,
  headerNames: readonly string[],
): KeyLookup {
  const match = anyKeyOf(headerNames);
  let sawUnknown = false;
  const args =
    request.optionArgs.length > 0
      ? request.optionArgs
      : request.outbound?.library === "fetch"
        ? [requestInit(resolver, request.outbound)].filter((n): n is Node => n !== undefined)
        : [];
  for (const arg of args) {
    const sdk = readKey(resolver, arg, anyKeyOf(["idempotencyKey", "idempotency_key"]));
    if (sdk.kind === "value") return sdk;
    if (sdk.kind === "unknown") sawUnknown = true;
    const headers = readKey(resolver, arg, exactKey("headers"));
    if (headers.kind === "unknown") sawUnknown = true;
    if (headers.kind !== "value") continue;
    const header = headerValue(resolver, headers.node, match, 0);
    if (header.kind === "value") return header;
    if (header.kind === "unknown") sawUnknown = true;
  }
  return sawUnknown ? { kind: "unknown" } : { kind: "absent" };
}

function headerValue(
  resolver: Resolver,
  node: Node,
  match: (key: string) => boolean,
  depth: number,
): KeyLookup {
  if (depth > 4) return { kind: "unknown" };
  const value = resolver.valueOf(node);
  // headers.set("Idempotency-Key", key) on a variable
  const inner = skipWrappers(node);
  if (inner.type === AST_NODE_TYPES.Identifier) {
    const set = setCalls(resolver, inner, match);
    if (set) return set;
  }
  if (value.type === AST_NODE_TYPES.NewExpression) {
    const ctor = skipWrappers(value.callee);
    if (ctor.type === AST_NODE_TYPES.Identifier && ctor.name === "Headers") {
      const init = value.arguments[0];
      if (init === undefined) return { kind: "absent" };
      if (init.type === AST_NODE_TYPES.SpreadElement) return { kind: "unknown" };
      return headerValue(resolver, init, match, depth + 1);
    }
    return { kind: "unknown" };
  }
  return readKey(resolver, node, match);
}

function setCalls(
  resolver: Resolver,
  id: TSESTree.Identifier,
  match: (key: string) => boolean,
): KeyLookup | null {
  const variable = resolver.variableOf(id);
  if (!variable) return null;
  for (const ref of variable.references) {
    const parent = ref.identifier.parent;
    if (parent.type !== AST_NODE_TYPES.MemberExpression || parent.object !== ref.identifier)
      continue;
    const method = memberName(parent);
    if (method !== "set" && method !== "append") continue;
    const call = parent.parent;
    if (call.type !== AST_NODE_TYPES.CallExpression) continue;
    const name = call.arguments[0] === undefined ? null : stringValue(resolver, call.arguments[0]);
    const value = call.arguments[1];
    if (name === null) return { kind: "unknown" };
    if (match(name) && value !== undefined) return { kind: "value", node: value, via: name };
  }
  return null;
}

const FRESH_NAMES = new Set([
  "randomUUID",
  "uuidv4",
  "uuidV4",
  "uuidv7",
  "uuidv1",
  "nanoid",
  "randomBytes",
  "ulid",
  "cuid",
  "createId",
]);

/** Whether a call makes a new unique value each time it runs (a UUID, a random id, the time). */
export function isFreshValueCall(resolver: Resolver, call: TSESTree.CallExpression): boolean {
  const callee = skipWrappers(call.callee);
  const origin = resolver.origin(callee);
  if (origin.kind === "global") {
    const path = origin.path.join(".");
    if (
      path === "Date.now" ||
      path === "Math.random" ||
      path === "crypto.randomUUID" ||
      path === "crypto.getRandomValues"
    )
      return true;
  }
  if (origin.kind === "module" && origin.path.length === 1) {
    const name = origin.path[0]!;
    if (origin.module === "uuid" && /^v[1-7]$/.test(name)) return true;
    if (origin.module === "crypto" && (name === "randomUUID" || name === "randomBytes"))
      return true;
    if (
      (origin.module === "nanoid" ||
        origin.module === "ulid" ||
        origin.module === "@paralleldrive/cuid2") &&
      FRESH_NAMES.has(name)
    )
      return true;
  }
  if (isModule(origin, "crypto", "webcrypto", "randomUUID")) return true;
  if (
    callee.type === AST_NODE_TYPES.Identifier &&
    origin.kind !== "module" &&
    FRESH_NAMES.has(callee.name)
  )
    return true;
  if (callee.type === AST_NODE_TYPES.MemberExpression) {
    const name = memberName(callee);
    if (name !== null && FRESH_NAMES.has(name) && origin.kind === "unknown") return true;
    // randomBytes(16).toString("hex"), new Date().getTime() are covered by looking at the object
    const object = skipWrappers(callee.object);
    if (object.type === AST_NODE_TYPES.CallExpression) return isFreshValueCall(resolver, object);
    if (
      object.type === AST_NODE_TYPES.NewExpression &&
      skipWrappers(object.callee).type === AST_NODE_TYPES.Identifier &&
      (skipWrappers(object.callee) as TSESTree.Identifier).name === "Date" &&
      object.arguments.length === 0
    ) {
      return true;
    }
  }
  return false;
}

/** What changes from one attempt to the next besides fresh calls: the retried function's parameters (the attempt number), or a loop's counter. */
export interface AttemptInputs {
  readonly fn: Node | null;
  readonly loop: Node | null;
}

/**
 * Whether a key value is made fresh inside `region` (the code each attempt runs): computed
 * there in place, through a const declared there, or from what changes per attempt (a retry
 * wrapper's attempt-number parameter, a loop counter).
 */
export function isFreshInside(
  resolver: Resolver,
  value: Node,
  region: Node,
  inputs: AttemptInputs,
  depth = 0,
): boolean {
  if (depth > 6) return false;
  const node = skipWrappers(value);
  if (!contains(region, node) && node.type !== AST_NODE_TYPES.Identifier) return false;
  if (node.type === AST_NODE_TYPES.Identifier) {
    if (changesPerAttempt(resolver, node, inputs)) return true;
    const binding = resolver.constantBinding(node);
    if (!binding || !contains(region, binding.init)) return false;
    return isFreshInside(resolver, binding.init, region, inputs, depth + 1);
  }
  return someInside(node, (inner) => {
    if (inner.type === AST_NODE_TYPES.CallExpression && isFreshValueCall(resolver, inner))
      return true;
    if (inner !== node && inner.type === AST_NODE_TYPES.Identifier && isIdentifierRead(inner))
      return isFreshInside(resolver, inner, region, inputs, depth + 1);
    return false;
  });
}

function changesPerAttempt(
  resolver: Resolver,
  id: TSESTree.Identifier,
  inputs: AttemptInputs,
): boolean {
  const variable = resolver.variableOf(id);
  if (!variable) return false;
  if (
    inputs.fn !== null &&
    variable.defs.some((def) => def.type === DefinitionType.Parameter && def.node === inputs.fn)
  )
    return true;
  const loop = inputs.loop;
  if (loop === null) return false;
  return variable.references.some(
    (ref) => ref.isWrite() && !ref.init && contains(loop, ref.identifier),
  );
}

function isIdentifierRead(id: TSESTree.Identifier): boolean {
  const parent = id.parent;
  if (parent.type === AST_NODE_TYPES.MemberExpression && parent.property === id && !parent.computed)
    return false;
  if (parent.type === AST_NODE_TYPES.Property && parent.key === id && !parent.computed)
    return false;
  return true;
}
