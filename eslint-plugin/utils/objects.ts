import { AST_NODE_TYPES, type TSESTree } from "@typescript-eslint/types";
import {
  memberName,
  propertyKey,
  returnedValues,
  skipWrappers,
  staticString,
  type Node,
} from "./ast.js";
import type { Resolver } from "./resolve.js";
import { localFunction } from "./retry-helpers.js";

/**
 * What an object says about one key, the last word winning as at run time:
 * - `absent`: provably not there;
 * - `value`: set to `node` (`via` is the key as written, for header-style lookups);
 * - `unknown`: a spread, computed key, mutation or parameter hides the answer.
 */
export type KeyLookup =
  | { readonly kind: "absent" }
  | { readonly kind: "value"; readonly node: Node; readonly via: string }
  | { readonly kind: "unknown" };

const ABSENT: KeyLookup = { kind: "absent" };
const UNKNOWN: KeyLookup = { kind: "unknown" };
const MAX_DEPTH = 12;

export type KeyMatcher = (key: string) => boolean;

export function exactKey(name: string): KeyMatcher {
  return (key) => key === name;
}

export function anyKeyOf(names: readonly string[]): KeyMatcher {
  const lower = new Set(names.map((n) => n.toLowerCase()));
  return (key) => lower.has(key.toLowerCase());
}

/** Reads one key of an object-valued expression, following consts, spreads and mutations. */
export function readKey(resolver: Resolver, node: Node, match: KeyMatcher, depth = 0): KeyLookup {
  if (depth > MAX_DEPTH) return UNKNOWN;
  const inner = skipWrappers(node);
  switch (inner.type) {
    case AST_NODE_TYPES.ObjectExpression:
      return readObjectLiteral(resolver, inner, match, depth);
    case AST_NODE_TYPES.Identifier: {
      const binding = resolver.constantBinding(inner);
      if (!binding) return UNKNOWN;
      const mutation = lastMutation(resolver, inner, match);
      if (mutation) return mutation;
      let target: KeyLookup = { kind: "value", node: binding.init, via: "" };
      for (const key of binding.keys) {
        if (target.kind !== "value") return UNKNOWN;
        target = readKey(resolver, target.node, exactKey(key), depth + 1);
      }
      if (target.kind !== "value") return UNKNOWN;
      return readKey(resolver, target.node, match, depth + 1);
    }
    case AST_NODE_TYPES.CallExpression: {
      // Object.assign({}, a, b): the last source wins, like spreads.
      const callee = skipWrappers(inner.callee);
      if (
        callee.type === AST_NODE_TYPES.MemberExpression &&
        callee.object.type === AST_NODE_TYPES.Identifier &&
        callee.object.name === "Object" &&
        memberName(callee) === "assign" &&
        resolver.isGlobal(callee.object)
      ) {
        for (let i = inner.arguments.length - 1; i >= 0; i--) {
          const arg = inner.arguments[i]!;
          if (arg.type === AST_NODE_TYPES.SpreadElement) return UNKNOWN;
          const found = readKey(resolver, arg, match, depth + 1);
          if (found.kind !== "absent") return found;
        }
        return ABSENT;
      }
      // a helper of this file that builds the object: what each of its returns holds
      const fn = localFunction(resolver, callee);
      if (fn === null) return UNKNOWN;
      const returned = returnedValues(fn);
      // a bare `return` hands back undefined: not an object the rules can read
      if (returned.length === 0 || returned.includes(null)) return UNKNOWN;
      return agree(returned.map((value) => readKey(resolver, value as Node, match, depth + 1)));
    }
    default:
      return UNKNOWN;
  }
}

/**
 * A spread's key. A spread parameter of a function that only this file calls (not exported, not
 * a public method) holds what every call passes: `{ ...params, ...parameters }` where each call
 * gives `{}`. A parameter that is the whole options object is left to the rules, which judge it
 * at each call (require-timeout's forwarded options).
 */
function readSpread(resolver: Resolver, node: Node, match: KeyMatcher, depth: number): KeyLookup {
  const inner = skipWrappers(node);
  if (inner.type !== AST_NODE_TYPES.Identifier || resolver.constantBinding(inner))
    return readKey(resolver, node, match, depth);
  const variable = resolver.variableOf(inner);
  if (!variable || variable.references.some((ref) => ref.isWrite() && !ref.init)) return UNKNOWN;
  if (lastMutation(resolver, inner, match)) return UNKNOWN;
  const sites = resolver.callerArguments(inner, true);
  if (sites === null) return UNKNOWN;
  return agree(
    sites.map((site) =>
      site.value === null ? ABSENT : readSpread(resolver, site.value, match, depth + 1),
    ),
  );
}

/**
 * One answer from several possible objects: absent when none has the key, the value when there
 * is a single one and it has it, unknown otherwise (some have it and some do not, or two values).
 */
function agree(lookups: readonly KeyLookup[]): KeyLookup {
  if (lookups.length === 0 || lookups.some((lookup) => lookup.kind === "unknown")) return UNKNOWN;
  if (lookups.every((lookup) => lookup.kind === "absent")) return ABSENT;
  return lookups.length === 1 ? lookups[0]! : UNKNOWN;
}

function readObjectLiteral(
  resolver: Resolver,
  object: TSESTree.ObjectExpression,
  match: KeyMatcher,
  depth: number,
): KeyLookup {
  for (let i = object.properties.length - 1; i >= 0; i--) {
    const prop = object.properties[i]!;
    if (prop.type === AST_NODE_TYPES.SpreadElement) {
      const found = readSpread(resolver, prop.argument, match, depth + 1);
      if (found.kind !== "absent") return found;
      continue;
    }
    const key = propertyKey(prop);
    if (key === null) {
      // A computed key we cannot read may be the one we are looking for.
      const resolved = prop.computed ? staticString(resolver.valueOf(prop.key)) : null;
      if (resolved === null) return UNKNOWN;
      if (match(resolved)) return { kind: "value", node: prop.value, via: resolved };
      continue;
    }
    if (match(key)) {
      if (prop.kind !== "init") return UNKNOWN;
      return { kind: "value", node: prop.value, via: key };
    }
  }
  return ABSENT;
}

/**
 * The last assignment or `delete` of a matching key on a variable (`cfg.timeout = 0`), which
 * overrides whatever the initialiser said. Any other escape of the variable into a
 * mutating call such as `Object.assign(cfg, …)` makes the answer unknown.
 */
function lastMutation(
  resolver: Resolver,
  id: TSESTree.Identifier,
  match: KeyMatcher,
): KeyLookup | null {
  const variable = resolver.variableOf(id);
  if (!variable) return null;
  let last: { at: number; result: KeyLookup } | null = null;
  for (const ref of variable.references) {
    const use = ref.identifier;
    const parent = use.parent;
    if (
      parent.type === AST_NODE_TYPES.CallExpression &&
      parent.arguments[0] === use &&
      skipWrappers(parent.callee).type === AST_NODE_TYPES.MemberExpression &&
      memberName(skipWrappers(parent.callee) as TSESTree.MemberExpression) === "assign"
    ) {
      return UNKNOWN;
    }
    if (parent.type !== AST_NODE_TYPES.MemberExpression || parent.object !== use) continue;
    const name = memberName(parent);
    if (name === null || !match(name)) continue;
    const grand = parent.parent;
    let result: KeyLookup | null = null;
    if (grand.type === AST_NODE_TYPES.AssignmentExpression && grand.left === parent) {
      result = grand.operator === "=" ? { kind: "value", node: grand.right, via: name } : UNKNOWN;
    } else if (grand.type === AST_NODE_TYPES.UnaryExpression && grand.operator === "delete") {
      result = ABSENT;
    }
    if (result && (last === null || parent.range[0] > last.at))
      last = { at: parent.range[0], result };
  }
  return last?.result ?? null;
}

/** What a timeout-like value means. Anything the file cannot pin down counts as a real bound. */
export function meansNoTimeout(resolver: Resolver, node: Node): boolean {
  const value = resolver.valueOf(node);
  if (value.type === AST_NODE_TYPES.Literal) {
    return value.value === null || value.value === 0;
  }
  if (value.type === AST_NODE_TYPES.Identifier) {
    return (value.name === "undefined" || value.name === "Infinity") && resolver.isGlobal(value);
  }
  if (value.type === AST_NODE_TYPES.UnaryExpression) {
    if (value.operator === "void") return true;
    if (value.operator === "-" || value.operator === "+")
      return value.operator === "+"
        ? meansNoTimeout(resolver, value.argument)
        : isZero(resolver, value.argument);
  }
  if (
    value.type === AST_NODE_TYPES.MemberExpression &&
    value.object.type === AST_NODE_TYPES.Identifier
  ) {
    return (
      value.object.name === "Number" &&
      memberName(value) === "POSITIVE_INFINITY" &&
      resolver.isGlobal(value.object)
    );
  }
  return false;
}

function isZero(resolver: Resolver, node: Node): boolean {
  const value = resolver.valueOf(node);
  return value.type === AST_NODE_TYPES.Literal && value.value === 0;
}

/** A numeric literal (through consts), or null. */
export function numberValue(resolver: Resolver, node: Node): number | null {
  const value = resolver.valueOf(node);
  if (value.type === AST_NODE_TYPES.Literal && typeof value.value === "number") return value.value;
  return null;
}

/** A string (through consts), or null; template literals only without substitutions. */
export function stringValue(resolver: Resolver, node: Node): string | null {
  return staticString(resolver.valueOf(node));
}
