import { AST_NODE_TYPES, type TSESTree } from "@typescript-eslint/types";
import { DefinitionType } from "./scope.js";
import {
  calleeName,
  contains,
  isFunction,
  isRetryableLoop,
  keyName,
  memberName,
  skipWrappers,
  type FunctionNode,
  type Node,
} from "./ast.js";
import { enclosingClass, type Resolver } from "./resolve.js";

/**
 * Names that say a function retries what it is given: `retry`, `retryTypedResponse`,
 * `withRetry`, `callWithRetries`. `onRetry`, `shouldRetry` and `isRetryable` do not match.
 */
const RETRY_NAME = /^(?:[rR]etry|[rR]etrying)(?![a-z])|[wW]ithRetr(?:y|ies)(?![a-z])/;

const MAX_DEPTH = 3;

/**
 * The function a name in this file is declared as: `function f`, `const f = () => …`, or a
 * method of the class around a `this.m` / `this.#m` (also `this.m.bind(this)`).
 */
export function localFunction(resolver: Resolver, node: Node): FunctionNode | null {
  const value = resolver.valueOf(node);
  if (isFunction(value)) return value;
  if (value.type === AST_NODE_TYPES.CallExpression) {
    const bound = skipWrappers(value.callee);
    return bound.type === AST_NODE_TYPES.MemberExpression && memberName(bound) === "bind"
      ? localFunction(resolver, bound.object)
      : null;
  }
  if (value.type === AST_NODE_TYPES.MemberExpression) return thisMethod(value);
  if (value.type !== AST_NODE_TYPES.Identifier) return null;
  const def = resolver.variableOf(value)?.defs[0];
  if (
    def?.type === DefinitionType.FunctionName &&
    def.node.type === AST_NODE_TYPES.FunctionDeclaration
  )
    return def.node;
  return null;
}

/** `this.m` inside a class that declares the method (or arrow field) `m`. */
function thisMethod(member: TSESTree.MemberExpression): FunctionNode | null {
  if (member.object.type !== AST_NODE_TYPES.ThisExpression || member.computed) return null;
  const name = keyName(member.property);
  const body = enclosingClass(member);
  if (name === null || body === null) return null;
  for (const element of body.body) {
    if (
      (element.type !== AST_NODE_TYPES.MethodDefinition &&
        element.type !== AST_NODE_TYPES.PropertyDefinition) ||
      element.static ||
      element.computed
    )
      continue;
    if (keyName(element.key) !== name) continue;
    if (element.type === AST_NODE_TYPES.MethodDefinition)
      return element.kind === "method" && isFunction(element.value) ? element.value : null;
    const value = element.value && skipWrappers(element.value);
    return value && isFunction(value) ? value : null;
  }
  return null;
}

/** Where a name comes from when it is not declared in this file: an import, or a member of something. */
function isDeclaredElsewhere(resolver: Resolver, callee: Node): boolean {
  if (callee.type === AST_NODE_TYPES.MemberExpression) return true;
  if (callee.type !== AST_NODE_TYPES.Identifier) return false;
  const variable = resolver.variableOf(callee);
  if (!variable || variable.defs.length === 0) return false;
  return variable.defs[0]!.type === DefinitionType.ImportBinding;
}

/**
 * A call to a project retry helper: the index of the function argument it runs again. Helpers
 * declared in this file are read (the callback is called in a loop, in a `catch`, more than once,
 * or handed on to another retry); helpers from other files are known by a retry-like name.
 */
export function projectRetryHelper(
  resolver: Resolver,
  call: TSESTree.CallExpression,
  depth = 0,
): { readonly fn: Node; readonly name: string } | null {
  const index = call.arguments.findIndex(
    (arg) =>
      arg.type !== AST_NODE_TYPES.SpreadElement &&
      (isFunction(resolver.valueOf(arg)) || localFunction(resolver, arg) !== null),
  );
  if (index < 0) return null;
  const name = calleeName(call);
  if (name === null) return null;
  const callee = skipWrappers(call.callee);
  const declared = localFunction(resolver, callee);
  const fn = call.arguments[index] as Node;
  if (declared) {
    if (runsAgain(resolver, declared, index, depth)) return { fn, name };
    // a method may hand the callback to a library the body reading does not know: its name decides
    return callee.type === AST_NODE_TYPES.MemberExpression && RETRY_NAME.test(name)
      ? { fn, name }
      : null;
  }
  if (!isDeclaredElsewhere(resolver, callee)) return null;
  // With type information, a helper from another file of the project is read like a local one.
  const followed = resolver.project?.followFunction(callee);
  if (followed)
    return runsAgain(followed.resolver, followed.fn, index, depth) ? { fn, name } : null;
  return RETRY_NAME.test(name) ? { fn, name } : null;
}

/** Whether a function runs its parameter at `index` more than once for one call. */
export function runsAgain(
  resolver: Resolver,
  fn: FunctionNode,
  index: number,
  depth: number,
): boolean {
  if (depth >= MAX_DEPTH) return false;
  let param: Node | undefined = fn.params[index];
  if (param?.type === AST_NODE_TYPES.AssignmentPattern) param = param.left;
  if (param?.type !== AST_NODE_TYPES.Identifier) return false;
  const variable = resolver.variableOf(param);
  if (!variable) return false;
  let calls = 0;
  for (const ref of variable.references) {
    const use = ref.identifier;
    if (!contains(fn.body, use)) continue;
    const parent = use.parent;
    if (parent.type !== AST_NODE_TYPES.CallExpression) continue;
    if (parent.callee === use) {
      calls++;
      if (calls > 1 || repeatsAround(use, fn)) return true;
      continue;
    }
    // handed on: `return retry(name, method, …)`
    const position = parent.arguments.indexOf(use as TSESTree.Expression);
    if (position < 0) continue;
    const callee = skipWrappers(parent.callee);
    const declared = localFunction(resolver, callee);
    // handed back to the helper itself (`.catch(() => this.#attempt(op, left - 1))`): run again
    if (declared === fn && position === index) return true;
    if (declared && runsAgain(resolver, declared, position, depth + 1)) return true;
    if (declared) continue;
    const followed = resolver.project?.followFunction(callee);
    if (followed) {
      if (runsAgain(followed.resolver, followed.fn, position, depth + 1)) return true;
      continue;
    }
    const name = calleeName(parent);
    if (name !== null && RETRY_NAME.test(name)) return true;
  }
  return false;
}

/** Whether a call sits in a loop or a `catch` between itself and `fn`. */
function repeatsAround(node: Node, fn: FunctionNode): boolean {
  for (
    let current: Node | undefined = node.parent;
    current && current !== fn;
    current = current.parent
  ) {
    if (isRetryableLoop(current) || current.type === AST_NODE_TYPES.CatchClause) return true;
    if (isFunction(current)) return false;
  }
  return false;
}
