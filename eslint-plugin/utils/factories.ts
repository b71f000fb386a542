import { AST_NODE_TYPES, type TSESTree } from "@typescript-eslint/types";
import {
  propertyKey,
  returnedValues,
  skipWrappers,
  someInside,
  type FunctionNode,
  type Node,
} from "./ast.js";
import { exactKey, readKey, type KeyLookup } from "./objects.js";
import type { Resolver } from "./resolve.js";
import { localFunction } from "./retry-helpers.js";
import { DefinitionType } from "./scope.js";

/** A node with the resolver of the file it is in: a factory's body may be another file. */
export interface Located {
  readonly resolver: Resolver;
  readonly node: Node;
}

/**
 * One call of a function of the project that makes a value (a policy, a breaker): declared in
 * this file, or, with type information, in another file of the project, whose body `resolver`
 * reads. `site` is the resolver of the file that makes the call.
 */
export interface FactoryCall {
  readonly call: TSESTree.CallExpression;
  readonly site: Resolver;
  readonly fn: FunctionNode;
  readonly resolver: Resolver;
  /**
   * The factory whose body makes this call, when the call was found by following one (a base
   * constructor's `createPolicy(options)`): the call's arguments are bound through it in turn.
   */
  readonly outer?: FactoryCall;
}

/** The factory a call runs, when its body can be read. */
export function factoryCall(site: Resolver, call: TSESTree.CallExpression): FactoryCall | null {
  const callee = skipWrappers(call.callee);
  const local = localFunction(site, callee);
  if (local) return { call, site, fn: local, resolver: site };
  const followed = site.project?.followFunction(callee);
  return followed ? { call, site, fn: followed.fn, resolver: followed.resolver } : null;
}

/**
 * The base constructor a `super(...)` call runs: the class `extends` names, declared in this
 * file, or, with type information, in another file of the project.
 */
export function superCall(site: Resolver, call: TSESTree.CallExpression): FactoryCall | null {
  if (call.callee.type !== AST_NODE_TYPES.Super) return null;
  let owner: Node | undefined = call.parent;
  while (owner && owner.type !== AST_NODE_TYPES.ClassBody) owner = owner.parent;
  const base = owner?.parent;
  if (
    (base?.type === AST_NODE_TYPES.ClassDeclaration ||
      base?.type === AST_NODE_TYPES.ClassExpression) &&
    base.superClass
  ) {
    const local = constructorOf(site, base.superClass);
    if (local) return { call, site, fn: local, resolver: site };
  }
  const followed = site.project?.followFunction(call);
  return followed ? { call, site, fn: followed.fn, resolver: followed.resolver } : null;
}

/** The constructor of a class declared in this file, named by `node`. */
function constructorOf(resolver: Resolver, node: Node): FunctionNode | null {
  const value = skipWrappers(node);
  if (value.type !== AST_NODE_TYPES.Identifier) return null;
  const def = resolver.variableOf(value)?.defs[0];
  if (def?.type !== DefinitionType.ClassName) return null;
  for (const element of def.node.body.body)
    if (
      element.type === AST_NODE_TYPES.MethodDefinition &&
      element.kind === "constructor" &&
      element.value.type === AST_NODE_TYPES.FunctionExpression
    )
      return element.value;
  return null;
}

/**
 * What a factory hands back, in its own file: each returned expression, and the values spread
 * into a returned object literal (`return { ...policy, reset }` has `policy`'s methods).
 */
export function madeValues(factory: FactoryCall): Node[] {
  const values: Node[] = [];
  for (const returned of returnedValues(factory.fn)) {
    if (returned === null) continue;
    values.push(returned);
    const object = skipWrappers(factory.resolver.valueOf(returned));
    if (object.type !== AST_NODE_TYPES.ObjectExpression) continue;
    for (const property of object.properties)
      if (property.type === AST_NODE_TYPES.SpreadElement) values.push(property.argument);
  }
  return values;
}

/**
 * The value a node of a factory's body has for one call. A name bound to a parameter, or
 * destructured from one (`const { filter = handleAll } = options`, or `{ filter = handleAll }`
 * in the parameter list), is what the caller passes there, or the default where the caller
 * passes nothing (or an object without that key). Any other node is itself. Null when the
 * caller's value cannot be read, or is `undefined` with no default.
 */
export function boundValue(
  factory: FactoryCall,
  node: Node,
  reading: Reading = "exact",
): Located | null {
  const value = skipWrappers(node);
  const own: Located = { resolver: factory.resolver, node };
  if (value.type !== AST_NODE_TYPES.Identifier) return own;
  const def = factory.resolver.variableOf(value)?.defs[0];
  if (def?.type === DefinitionType.Parameter) {
    const param = parameterHolding(factory.fn, def.name);
    return param ? fromCaller(factory, param, param.pattern, def.name, reading) : own;
  }
  // const { maxRetries = 3 } = options, with `options` a parameter of the factory
  if (
    def?.type === DefinitionType.Variable &&
    def.node.id.type === AST_NODE_TYPES.ObjectPattern &&
    def.node.init?.type === AST_NODE_TYPES.Identifier
  ) {
    const root = factory.resolver.variableOf(def.node.init)?.defs[0];
    if (root?.type !== DefinitionType.Parameter) return own;
    const param = parameterHolding(factory.fn, root.name);
    return param ? fromCaller(factory, param, def.node.id, def.name, reading) : own;
  }
  return own;
}

/**
 * How a key of an object the caller passes is read. `exact`: a spread the rules cannot read
 * makes the key unknown. `configured`: a spread of the enclosing function's own parameter
 * (`{ ...DEFAULTS, ...options }`) is taken to add nothing, so the key is what the code
 * configures unless its caller overrides it, as a parameter's default is.
 */
export type Reading = "exact" | "configured";

interface Parameter {
  readonly index: number;
  /** The parameter as declared, with its default if it has one. */
  readonly pattern: Node;
}

/** The parameter of `fn` (its index, and the pattern with its default) that declares `name`. */
function parameterHolding(fn: FunctionNode, name: Node): Parameter | null {
  for (const [index, param] of fn.params.entries())
    if (someInside(param, (node) => node === name)) return { index, pattern: param };
  return null;
}

/**
 * The caller's value for `target`, declared in `pattern` (the parameter itself, or an object
 * pattern one key deep that destructures it).
 */
function fromCaller(
  factory: FactoryCall,
  param: Parameter,
  pattern: Node,
  target: Node,
  reading: Reading,
): Located | null {
  const paramDefault =
    param.pattern.type === AST_NODE_TYPES.AssignmentPattern
      ? { resolver: factory.resolver, node: param.pattern.right }
      : null;
  const arg = factory.call.arguments[param.index];
  if (arg?.type === AST_NODE_TYPES.SpreadElement) return null;
  let given: Located | null = paramDefault;
  if (arg && factory.outer) {
    given = boundValue(factory.outer, arg, reading);
    if (!given) return null;
  } else if (arg) given = { resolver: factory.site, node: arg };
  const inner = pattern.type === AST_NODE_TYPES.AssignmentPattern ? pattern.left : pattern;
  if (inner === target) return given;
  if (inner.type !== AST_NODE_TYPES.ObjectPattern) return null;
  for (const property of inner.properties) {
    if (property.type !== AST_NODE_TYPES.Property) continue;
    const holds =
      property.value === target ||
      (property.value.type === AST_NODE_TYPES.AssignmentPattern && property.value.left === target);
    if (!holds) continue;
    const key = propertyKey(property);
    const fallback =
      property.value.type === AST_NODE_TYPES.AssignmentPattern
        ? { resolver: factory.resolver, node: property.value.right }
        : null;
    if (key === null) return null;
    if (!given) return fallback;
    const found =
      reading === "configured"
        ? readConfigured(given.resolver, given.node, key)
        : readKey(given.resolver, given.node, exactKey(key));
    if (found.kind === "value") return { resolver: given.resolver, node: found.node };
    return found.kind === "absent" ? fallback : null;
  }
  return null;
}

/** A key of an object literal, reading past spreads of parameters (`configured` above). */
function readConfigured(resolver: Resolver, node: Node, key: string): KeyLookup {
  const exact = readKey(resolver, node, exactKey(key));
  const object = skipWrappers(resolver.valueOf(node));
  if (exact.kind !== "unknown" || object.type !== AST_NODE_TYPES.ObjectExpression) return exact;
  for (const property of [...object.properties].reverse()) {
    if (property.type === AST_NODE_TYPES.SpreadElement) {
      if (isParameter(resolver, property.argument)) continue;
      const found = readKey(resolver, property.argument, exactKey(key));
      if (found.kind !== "absent") return found;
    } else if (propertyKey(property) === key)
      return { kind: "value", node: property.value, via: "" };
    else if (propertyKey(property) === null) return exact;
  }
  return { kind: "absent" };
}

function isParameter(resolver: Resolver, node: Node): boolean {
  const value = skipWrappers(node);
  if (value.type !== AST_NODE_TYPES.Identifier) return false;
  return resolver.variableOf(value)?.defs[0]?.type === DefinitionType.Parameter;
}
