import { AST_NODE_TYPES, type TSESTree } from "@typescript-eslint/types";
import { DefinitionType } from "./scope.js";
import {
  isFunction,
  memberName,
  outerParent,
  propertyKey,
  skipWrappers,
  type Node,
} from "./ast.js";
import { exactKey, readKey, type KeyLookup } from "./objects.js";
import { isModule, type Resolver } from "./resolve.js";

/** A client instance made in this file: `axios.create(config)` or `got.extend(config)`. */
export interface Instance {
  readonly library: "axios" | "got";
  readonly call: TSESTree.CallExpression;
}

/** Whether a call creates an axios or got instance from the module itself. */
export function instanceOf(resolver: Resolver, call: TSESTree.CallExpression): Instance | null {
  const callee = skipWrappers(call.callee);
  if (callee.type !== AST_NODE_TYPES.MemberExpression) return null;
  const name = memberName(callee);
  if (name !== "create" && name !== "extend") return null;
  const origin = resolver.origin(callee);
  if (name === "create" && isModule(origin, "axios", "create")) return { library: "axios", call };
  if (name === "extend" && isModule(origin, "got", "extend")) return { library: "got", call };
  return null;
}

function isModuleExports(node: Node): boolean {
  const inner = skipWrappers(node);
  if (inner.type === AST_NODE_TYPES.Identifier) return inner.name === "exports";
  if (inner.type !== AST_NODE_TYPES.MemberExpression) return false;
  const object = skipWrappers(inner.object);
  if (object.type === AST_NODE_TYPES.Identifier && object.name === "module")
    return memberName(inner) === "exports";
  return isModuleExports(object);
}

/** Whether a value leaves the file's sight where it stands: exported, returned, module.exports. */
function leavesAt(node: Node): boolean | "variable" {
  const { parent, child } = outerParent(node);
  if (!parent) return false;
  switch (parent.type) {
    case AST_NODE_TYPES.ExportDefaultDeclaration:
    case AST_NODE_TYPES.ReturnStatement:
      return true;
    case AST_NODE_TYPES.ArrowFunctionExpression:
      return parent.body === child;
    case AST_NODE_TYPES.AssignmentExpression:
      return parent.right === child && isModuleExports(parent.left);
    case AST_NODE_TYPES.VariableDeclarator:
      return parent.init === child ? "variable" : false;
    default:
      return false;
  }
}

/**
 * Whether the calls made through an instance are out of this file's sight: it is exported, or
 * returned from the function that made it (a factory), directly or through a local.
 */
export function escapes(resolver: Resolver, call: TSESTree.CallExpression): boolean {
  const where = leavesAt(call);
  if (where !== "variable") return where;
  const declarator = outerParent(call).parent as TSESTree.VariableDeclarator;
  if (declarator.id.type !== AST_NODE_TYPES.Identifier) return false;
  if (declarator.parent.parent.type === AST_NODE_TYPES.ExportNamedDeclaration) return true;
  const variable = resolver.variableOf(declarator.id);
  if (!variable) return false;
  return variable.references.some((ref) => {
    const use = ref.identifier;
    if (use === declarator.id) return false;
    if (use.parent.type === AST_NODE_TYPES.ExportSpecifier) return true;
    return leavesAt(use) === true;
  });
}

/**
 * The timeout an instance's config gives. A spread of a factory's parameter that defaults to an
 * object without the key (`function make(defaults = {}) { axios.create({ ...defaults }) }`)
 * reads as absent when the file calls the factory without that argument.
 */
export function instanceTimeout(resolver: Resolver, instance: Instance): KeyLookup {
  const config = instance.call.arguments[0];
  if (config === undefined) return { kind: "absent" };
  if (config.type === AST_NODE_TYPES.SpreadElement) return { kind: "unknown" };
  const direct = readKey(resolver, config, exactKey("timeout"));
  if (direct.kind !== "unknown") return direct;
  const object = resolver.valueOf(config);
  if (object.type !== AST_NODE_TYPES.ObjectExpression) return direct;
  for (let i = object.properties.length - 1; i >= 0; i--) {
    const prop = object.properties[i]!;
    if (prop.type !== AST_NODE_TYPES.SpreadElement) {
      const key = propertyKey(prop);
      if (key === null) return { kind: "unknown" };
      if (key === "timeout") return { kind: "value", node: prop.value, via: key };
      continue;
    }
    const found = readKey(resolver, prop.argument, exactKey("timeout"));
    if (found.kind === "value") return found;
    if (found.kind === "unknown" && !omittedDefaultedParameter(resolver, prop.argument))
      return found;
  }
  return { kind: "absent" };
}

/** A parameter defaulting to an object without `timeout`, left out by a call in this file. */
function omittedDefaultedParameter(resolver: Resolver, node: Node): boolean {
  const inner = skipWrappers(node);
  if (inner.type !== AST_NODE_TYPES.Identifier) return false;
  const variable = resolver.variableOf(inner);
  const def = variable?.defs.length === 1 ? variable.defs[0] : undefined;
  if (def?.type !== DefinitionType.Parameter) return false;
  const pattern = def.name.parent;
  if (pattern.type !== AST_NODE_TYPES.AssignmentPattern || pattern.left !== def.name) return false;
  if (readKey(resolver, pattern.right, exactKey("timeout")).kind !== "absent") return false;
  const fn = def.node;
  if (!isFunction(fn)) return false;
  const index = fn.params.indexOf(pattern);
  if (index < 0) return false;
  let name: TSESTree.Identifier | null = null;
  if (fn.type === AST_NODE_TYPES.FunctionDeclaration) name = fn.id;
  else if (
    fn.parent.type === AST_NODE_TYPES.VariableDeclarator &&
    fn.parent.id.type === AST_NODE_TYPES.Identifier
  )
    name = fn.parent.id;
  if (name === null) return false;
  const factory = resolver.variableOf(name);
  if (!factory) return false;
  return factory.references.some((ref) => {
    const { parent, child } = outerParent(ref.identifier);
    return (
      parent?.type === AST_NODE_TYPES.CallExpression &&
      parent.callee === child &&
      parent.arguments.length <= index &&
      !parent.arguments.some((arg) => arg.type === AST_NODE_TYPES.SpreadElement)
    );
  });
}
