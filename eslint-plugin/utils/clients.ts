import { AST_NODE_TYPES, type TSESTree } from "@typescript-eslint/types";
import { memberName, skipWrappers, type Node } from "./ast.js";
import { isModule, type Origin, type Resolver } from "./resolve.js";

/** HTTP clients whose calls the rules understand. */
export type Library = "fetch" | "axios" | "got" | "ky" | "http" | "undici";

/**
 * One outbound call, classified:
 * - `configIndex`: where the options object goes (it may be beyond the arguments given);
 * - `verb`: the method named by the call itself (`axios.post` → "post"), if any;
 * - `instance`: for axios/got/ky instances, the call that created them, outermost first.
 */
export interface Outbound {
  readonly library: Library;
  readonly call: TSESTree.CallExpression;
  readonly configIndex: number;
  readonly verb: string | null;
  readonly instance: readonly TSESTree.CallExpression[];
  readonly label: string;
  /**
   * Set when the client function is invoked through `Function.prototype`: `fetch.call(self, url,
   * init)` or `fetch.apply(self, [url, init])`. `args` are the arguments the client receives
   * (`configIndex` counts in them), or null when `apply` gets a list the file does not spell out.
   */
  readonly through?: {
    readonly kind: "call" | "apply";
    readonly args: readonly TSESTree.CallExpressionArgument[] | null;
  };
}

const AXIOS_NO_DATA = new Set(["get", "delete", "head", "options"]);
const AXIOS_WITH_DATA = new Set(["post", "put", "patch", "postForm", "putForm", "patchForm"]);
const GOT_VERBS = new Set(["get", "post", "put", "patch", "delete", "head"]);
const KY_VERBS = new Set(["get", "post", "put", "patch", "delete", "head"]);
const FETCH_MODULES = ["node-fetch", "cross-fetch", "isomorphic-fetch", "make-fetch-happen"];

/** Member names through which any of the understood clients can send a request. */
export const SENDING_MEMBERS = new Set([
  ...AXIOS_NO_DATA,
  ...AXIOS_WITH_DATA,
  ...GOT_VERBS,
  "stream",
  "request",
  "fetch",
]);

function argumentAt(call: TSESTree.CallExpression, index: number): Node | undefined {
  const arg = call.arguments[index];
  return arg === undefined || arg.type === AST_NODE_TYPES.SpreadElement ? undefined : arg;
}

/** The arguments the client itself receives, or null when the file does not spell them out. */
export function clientArguments(
  outbound: Outbound,
): readonly TSESTree.CallExpressionArgument[] | null {
  return outbound.through ? outbound.through.args : outbound.call.arguments;
}

/** The client's argument at `index` (not a spread), through `.call` and `.apply` too. */
export function outboundArgument(outbound: Outbound, index: number): Node | undefined {
  const arg = clientArguments(outbound)?.[index];
  return arg === undefined || arg.type === AST_NODE_TYPES.SpreadElement ? undefined : arg;
}

/**
 * Where the client's argument at `index` sits among the call's own arguments, for a fix that
 * edits it: shifted by one past `.call`'s `this`; null inside `.apply`'s list.
 */
export function callArgumentIndex(outbound: Outbound, index: number): number | null {
  if (!outbound.through) return index;
  return outbound.through.kind === "call" ? index + 1 : null;
}

/**
 * `f.call(self, ...args)` / `f.apply(self, [...args])`: how `f` is invoked and the arguments it
 * receives (null for an `apply` list that is not written in place, or a spread `this`).
 */
export function invocationThrough(
  call: TSESTree.CallExpression,
): NonNullable<Outbound["through"]> | null {
  const callee = skipWrappers(call.callee);
  if (callee.type !== AST_NODE_TYPES.MemberExpression) return null;
  const kind = memberName(callee);
  if (kind !== "call" && kind !== "apply") return null;
  const self = call.arguments[0];
  if (self?.type === AST_NODE_TYPES.SpreadElement) return { kind, args: null };
  if (kind === "call") return { kind, args: call.arguments.slice(1) };
  const list = call.arguments[1];
  if (list === undefined) return { kind, args: [] };
  const inner = list.type === AST_NODE_TYPES.SpreadElement ? list : skipWrappers(list);
  if (inner.type !== AST_NODE_TYPES.ArrayExpression) return { kind, args: null };
  const args: TSESTree.CallExpressionArgument[] = [];
  for (const element of inner.elements) {
    if (element === null) return { kind, args: null };
    args.push(element);
  }
  return { kind, args };
}

/** The options argument of a client that takes `(url, options)` or `(options)`. */
function urlOrOptionsIndex(resolver: Resolver, call: TSESTree.CallExpression): number {
  const first = argumentAt(call, 0);
  if (first === undefined) return 1;
  const value = resolver.valueOf(first);
  return value.type === AST_NODE_TYPES.ObjectExpression ? 0 : 1;
}

/** The creating calls of an instance (`axios.create(...)`, `got.extend(...).extend(...)`). */
function instanceChain(
  origin: Origin,
  module: string,
  factories: readonly string[],
): TSESTree.CallExpression[] | null {
  const chain: TSESTree.CallExpression[] = [];
  let current: Origin = origin;
  for (let i = 0; i < 8; i++) {
    if (current.kind !== "result" || current.call.type !== AST_NODE_TYPES.CallExpression)
      return null;
    const callee = current.callee;
    const factory =
      callee.kind === "module"
        ? callee.path[callee.path.length - 1]
        : callee.kind === "result"
          ? callee.path[callee.path.length - 1]
          : undefined;
    if (factory === undefined || !factories.includes(factory)) return null;
    chain.push(current.call);
    if (callee.kind === "module") {
      return isModule(callee, module, factory) ? chain : null;
    }
    if (callee.kind !== "result" || callee.path.length !== 1) return null;
    current = { ...callee, path: [] };
  }
  return null;
}

/** Splits an origin into the client (without the final member) and that member. */
function splitLast(origin: Origin): { base: Origin; last: string | null } {
  if (origin.kind === "unknown" || origin.path.length === 0) return { base: origin, last: null };
  const last = origin.path[origin.path.length - 1]!;
  const path = origin.path.slice(0, -1);
  return { base: { ...origin, path }, last };
}

/**
 * A cheap first look: only a plain name (`fetch`, `axios`, `got`, an alias) or a member with a
 * sending name (`.get`, `.post`, `.request`, `.fetch`, …) can be an outbound call.
 */
export function mayBeOutbound(
  call: TSESTree.CallExpression,
  extraFetch: readonly string[] = [],
): boolean {
  const callee = skipWrappers(call.callee);
  if (callee.type === AST_NODE_TYPES.Identifier) return true;
  if (callee.type !== AST_NODE_TYPES.MemberExpression) return false;
  const name = memberName(callee);
  return (
    name !== null &&
    (SENDING_MEMBERS.has(name) || extraFetch.includes(name) || name === "call" || name === "apply")
  );
}

/** Classifies a call as an outbound request of a known client, or returns null. */
export function classifyOutbound(
  resolver: Resolver,
  call: TSESTree.CallExpression,
  extraFetch: readonly string[] = [],
): Outbound | null {
  if (!mayBeOutbound(call, extraFetch)) return null;
  return classifyCallee(resolver, call, extraFetch);
}

/**
 * `classifyOutbound` without the cheap name filter, for callers that already know the callee
 * is worth resolving (`this.axios(config)`, where the member name is not a sending one).
 */
export function classifyCallee(
  resolver: Resolver,
  call: TSESTree.CallExpression,
  extraFetch: readonly string[] = [],
): Outbound | null {
  const callee = skipWrappers(call.callee);
  if (callee.type !== AST_NODE_TYPES.Identifier && callee.type !== AST_NODE_TYPES.MemberExpression)
    return null;
  const through = invocationThrough(call);
  if (through) {
    // fetch.call(self, url, init), globalThis.fetch.apply(self, [url, init])
    const target = skipWrappers((callee as TSESTree.MemberExpression).object);
    const label = fetchLabel(resolver, target, extraFetch);
    if (label !== null)
      return { library: "fetch", call, configIndex: 1, verb: null, instance: [], label, through };
  }
  const origin = resolver.origin(callee);
  if (origin.kind === "unknown") return null;

  const label = fetchLabel(resolver, callee, extraFetch, origin);
  if (label !== null)
    return { library: "fetch", call, configIndex: 1, verb: null, instance: [], label };
  if (origin.kind === "global") return null;
  if (origin.kind === "module") {
    if (origin.module === "undici" && origin.path.length === 1) {
      if (origin.path[0] === "request")
        return {
          library: "undici",
          call,
          configIndex: 1,
          verb: null,
          instance: [],
          label: "undici request",
        };
      return null;
    }
    if ((origin.module === "http" || origin.module === "https") && origin.path.length === 1) {
      const member = origin.path[0]!;
      if (member !== "request" && member !== "get") return null;
      return {
        library: "http",
        call,
        configIndex: urlOrOptionsIndex(resolver, call),
        verb: member === "get" ? "get" : null,
        instance: [],
        label: `${origin.module}.${member}`,
      };
    }
  }

  const direct = classifyClient(origin);
  if (direct)
    return withPosition(resolver, call, direct.library, null, direct.instance, direct.label);
  const { base, last } = splitLast(origin);
  if (last === null) return null;
  const client = classifyClient(base);
  if (!client) return null;
  return withPosition(resolver, call, client.library, last, client.instance, client.label);
}

/**
 * The label of a fetch function: the global (`fetch`, `globalThis.fetch`), a fetch package's
 * export, undici's `fetch`, or a name listed in `extraFetch`; null for anything else.
 */
function fetchLabel(
  resolver: Resolver,
  node: Node,
  extraFetch: readonly string[],
  known?: Origin,
): string | null {
  if (node.type !== AST_NODE_TYPES.Identifier && node.type !== AST_NODE_TYPES.MemberExpression)
    return null;
  const origin = known ?? resolver.origin(node);
  if (origin.kind === "unknown") return null;
  if (node.type === AST_NODE_TYPES.Identifier && extraFetch.includes(node.name))
    return origin.kind === "result" ? null : node.name;
  if (origin.kind === "global") {
    const name = origin.path.join(".");
    return name === "fetch" || extraFetch.includes(name) ? name : null;
  }
  if (origin.kind !== "module") return null;
  if (FETCH_MODULES.includes(origin.module) && origin.path.length === 0) return "fetch";
  if (origin.path.length === 1 && extraFetch.includes(origin.path[0]!)) return origin.path[0]!;
  if (isModule(origin, "undici", "fetch")) return "undici fetch";
  return null;
}

function classifyClient(
  origin: Origin,
): { library: Library; instance: TSESTree.CallExpression[]; label: string } | null {
  if (isModule(origin, "axios")) return { library: "axios", instance: [], label: "axios" };
  if (isModule(origin, "got")) return { library: "got", instance: [], label: "got" };
  if (isModule(origin, "ky")) return { library: "ky", instance: [], label: "ky" };
  if (origin.kind !== "result" || origin.path.length !== 0) return null;
  const axios = instanceChain(origin, "axios", ["create"]);
  if (axios) return { library: "axios", instance: axios, label: "axios instance" };
  const got = instanceChain(origin, "got", ["extend"]);
  if (got) return { library: "got", instance: got, label: "got instance" };
  const ky = instanceChain(origin, "ky", ["create", "extend"]);
  if (ky) return { library: "ky", instance: ky, label: "ky instance" };
  return null;
}

function withPosition(
  resolver: Resolver,
  call: TSESTree.CallExpression,
  library: Library,
  member: string | null,
  instance: TSESTree.CallExpression[],
  label: string,
): Outbound | null {
  const name = member === null ? label : `${label}.${member}`;
  switch (library) {
    case "axios":
      if (member === null) {
        const first = argumentAt(call, 0);
        const isConfig =
          first !== undefined && resolver.valueOf(first).type === AST_NODE_TYPES.ObjectExpression;
        return {
          library,
          call,
          configIndex: isConfig || call.arguments.length === 0 ? 0 : 1,
          verb: null,
          instance,
          label: name,
        };
      }
      if (member === "request")
        return { library, call, configIndex: 0, verb: null, instance, label: name };
      if (AXIOS_NO_DATA.has(member))
        return { library, call, configIndex: 1, verb: member, instance, label: name };
      if (AXIOS_WITH_DATA.has(member))
        return {
          library,
          call,
          configIndex: 2,
          verb: member.replace("Form", ""),
          instance,
          label: name,
        };
      return null;
    case "got":
      if (member === null)
        return {
          library,
          call,
          configIndex: urlOrOptionsIndex(resolver, call),
          verb: null,
          instance,
          label: name,
        };
      if (GOT_VERBS.has(member))
        return { library, call, configIndex: 1, verb: member, instance, label: name };
      // got.stream(url, options): the method comes from the options, GET by default.
      if (member === "stream")
        return { library, call, configIndex: 1, verb: null, instance, label: name };
      return null;
    case "ky":
      if (member === null)
        return { library, call, configIndex: 1, verb: null, instance, label: name };
      if (KY_VERBS.has(member))
        return { library, call, configIndex: 1, verb: member, instance, label: name };
      return null;
    default:
      return null;
  }
}

export function configArgument(outbound: Outbound): Node | undefined {
  return outboundArgument(outbound, outbound.configIndex);
}

export { argumentAt };
