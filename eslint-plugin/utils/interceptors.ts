import { AST_NODE_TYPES, type TSESTree } from "@typescript-eslint/types";
import { DefinitionType } from "./scope.js";
import { memberName, skipWrappers, walk, type FunctionNode, type Node } from "./ast.js";
import { isModule, type Resolver } from "./resolve.js";
import { localFunction } from "./retry-helpers.js";

/**
 * An axios response interceptor that sends a failed request again: `resend` is the call that
 * re-sends the request's own config (`axios(error.config)`, `instance.request(config)`), and
 * `receiver` the client whose interceptors it was added to.
 */
export interface Resend {
  readonly use: TSESTree.CallExpression;
  readonly receiver: Node;
  readonly resend: TSESTree.CallExpression;
  readonly handler: FunctionNode;
}

/** `x.interceptors.response.use(...)`: the `x`, or null. */
function interceptedClient(call: TSESTree.CallExpression): Node | null {
  const callee = skipWrappers(call.callee);
  if (callee.type !== AST_NODE_TYPES.MemberExpression || memberName(callee) !== "use") return null;
  const response = skipWrappers(callee.object);
  if (response.type !== AST_NODE_TYPES.MemberExpression || memberName(response) !== "response")
    return null;
  const interceptors = skipWrappers(response.object);
  if (
    interceptors.type !== AST_NODE_TYPES.MemberExpression ||
    memberName(interceptors) !== "interceptors"
  )
    return null;
  return skipWrappers(interceptors.object);
}

/** The functions an interceptor argument denotes: in place, by name, or made by a local factory. */
function handlersOf(resolver: Resolver, arg: Node): FunctionNode[] {
  const direct = localFunction(resolver, arg);
  if (direct) return [direct];
  const value = resolver.valueOf(arg);
  if (value.type === AST_NODE_TYPES.CallExpression) {
    const factory = localFunction(resolver, skipWrappers(value.callee));
    if (factory) return [factory];
  }
  return [];
}

/** Whether an argument is the config of the request that just failed or answered. */
function isFailedConfig(resolver: Resolver, arg: Node): boolean {
  const value = skipWrappers(arg);
  if (value.type === AST_NODE_TYPES.MemberExpression && memberName(value) === "config") return true;
  if (value.type !== AST_NODE_TYPES.Identifier) return false;
  const binding = resolver.constantBinding(value);
  if (binding) {
    if (binding.keys.length === 1 && binding.keys[0] === "config") return true;
    const init = skipWrappers(binding.init);
    return init.type === AST_NODE_TYPES.MemberExpression && memberName(init) === "config";
  }
  return /^(config|originalRequest|originalConfig|requestConfig)$/.test(value.name);
}

/** Whether a callee sends an axios request: axios itself, the intercepted client, or a client handed in as a parameter. */
function sendsThrough(resolver: Resolver, callee: Node, receiver: Node): boolean {
  const text = resolver.sourceCode.getText(receiver);
  const target =
    callee.type === AST_NODE_TYPES.MemberExpression && memberName(callee) === "request"
      ? skipWrappers(callee.object)
      : callee;
  if (resolver.sourceCode.getText(target) === text) return true;
  if (isModule(resolver.origin(target), "axios")) return true;
  if (target.type === AST_NODE_TYPES.Identifier) {
    const def = resolver.variableOf(target)?.defs[0];
    return def?.type === DefinitionType.Parameter;
  }
  return false;
}

/** The interceptors in a `use(...)` call that re-send the failed request. */
export function resendsOf(resolver: Resolver, use: TSESTree.CallExpression): Resend[] {
  const receiver = interceptedClient(use);
  if (receiver === null) return [];
  const found: Resend[] = [];
  for (const arg of use.arguments) {
    if (arg.type === AST_NODE_TYPES.SpreadElement) continue;
    for (const handler of handlersOf(resolver, arg)) {
      walk(handler, (node) => {
        if (node.type !== AST_NODE_TYPES.CallExpression) return true;
        const first = node.arguments[0];
        if (
          first !== undefined &&
          first.type !== AST_NODE_TYPES.SpreadElement &&
          isFailedConfig(resolver, first) &&
          sendsThrough(resolver, skipWrappers(node.callee), receiver)
        )
          found.push({ use, receiver, resend: node, handler });
        return true;
      });
    }
  }
  return found;
}

/** Whether a client is visible outside this file: exported, or a `this.x` of an exported class. */
export function isExported(resolver: Resolver, receiver: Node): boolean {
  const program = resolver.sourceCode.ast;
  const text = resolver.sourceCode.text;
  let name: string | null = null;
  if (receiver.type === AST_NODE_TYPES.Identifier) {
    if (isModule(resolver.origin(receiver), "axios")) return true;
    name = receiver.name;
  } else if (
    receiver.type === AST_NODE_TYPES.MemberExpression &&
    receiver.object.type === AST_NODE_TYPES.ThisExpression
  ) {
    let current: Node | undefined = receiver.parent;
    while (
      current &&
      current.type !== AST_NODE_TYPES.ClassDeclaration &&
      current.type !== AST_NODE_TYPES.ClassExpression
    )
      current = current.parent;
    if (!current) return false;
    if (
      current.parent.type === AST_NODE_TYPES.ExportNamedDeclaration ||
      current.parent.type === AST_NODE_TYPES.ExportDefaultDeclaration
    )
      return true;
    name = current.id?.name ?? null;
  }
  if (name === null) return false;
  for (const statement of program.body) {
    if (statement.type === AST_NODE_TYPES.ExportNamedDeclaration) {
      if (
        statement.specifiers.some(
          (s) => s.local.type === AST_NODE_TYPES.Identifier && s.local.name === name,
        )
      )
        return true;
      const declaration = statement.declaration;
      if (
        declaration?.type === AST_NODE_TYPES.VariableDeclaration &&
        declaration.declarations.some(
          (d) => d.id.type === AST_NODE_TYPES.Identifier && d.id.name === name,
        )
      )
        return true;
    }
    // `export = RequestClient;`
    if (
      statement.type === AST_NODE_TYPES.TSExportAssignment &&
      statement.expression.type === AST_NODE_TYPES.Identifier &&
      statement.expression.name === name
    )
      return true;
    if (
      statement.type === AST_NODE_TYPES.ExportDefaultDeclaration &&
      statement.declaration.type === AST_NODE_TYPES.Identifier &&
      statement.declaration.name === name
    )
      return true;
  }
  return new RegExp(
    `\\bmodule\\.exports\\b[^;\\n]*\\b${name}\\b|\\bexports\\.\\w+\\s*=\\s*${name}\\b`,
  ).test(text);
}

/** Whether a function's text looks at the request method or is otherwise limited. */
export function mentionsMethod(resolver: Resolver, fn: Node): boolean {
  return /\bmethod\b/.test(resolver.sourceCode.getText(fn));
}
