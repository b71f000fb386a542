import { AST_NODE_TYPES, type TSESTree } from "@typescript-eslint/types";
import {
  contains,
  memberName,
  outerParent,
  skipWrappers,
  walk,
  type FunctionNode,
  type Node,
} from "./ast.js";
import type { Resolver } from "./resolve.js";

/** What a function calls itself through: its own name, or `this.<name>` for a class method. */
type SelfName =
  | { readonly kind: "binding"; readonly id: TSESTree.Identifier }
  | {
      readonly kind: "method";
      readonly name: string;
    };

/** The name a function can call itself by, if it has one. */
function selfName(fn: FunctionNode): SelfName | null {
  if (fn.type === AST_NODE_TYPES.FunctionDeclaration && fn.id)
    return { kind: "binding", id: fn.id };
  if (fn.type === AST_NODE_TYPES.FunctionExpression && fn.id) return { kind: "binding", id: fn.id };
  const parent = fn.parent;
  if (
    parent.type === AST_NODE_TYPES.VariableDeclarator &&
    parent.id.type === AST_NODE_TYPES.Identifier
  )
    return { kind: "binding", id: parent.id };
  if (
    (parent.type === AST_NODE_TYPES.MethodDefinition ||
      parent.type === AST_NODE_TYPES.PropertyDefinition) &&
    parent.value === fn
  ) {
    const name =
      parent.key.type === AST_NODE_TYPES.Identifier && !parent.computed ? parent.key.name : null;
    return name === null ? null : { kind: "method", name };
  }
  return null;
}

/** Test text that shows a branch is about a failed attempt (`!res.ok`, `status >= 500`, `retries > 0`). */
const FAILURE_TEST = /\b(ok|status|statusCode|code|error|err|retr\w*|attempts?\w*|tries|count)\b/i;

/**
 * Whether a self-call runs again after a failure: inside a `catch` clause or a `.catch(...)`
 * callback, deferred through `setTimeout`, or in a branch that tests the outcome or a retry
 * counter. A self-call elsewhere (walking a tree, following a `next` page link) is plain recursion.
 */
function isRetryPosition(call: Node, fn: FunctionNode): boolean {
  for (
    let current: Node | undefined = call.parent;
    current && current !== fn;
    current = current.parent
  ) {
    if (current.type === AST_NODE_TYPES.CatchClause) return true;
    if (current.type === AST_NODE_TYPES.CallExpression) {
      const callee = skipWrappers(current.callee);
      const name =
        callee.type === AST_NODE_TYPES.Identifier
          ? callee.name
          : callee.type === AST_NODE_TYPES.MemberExpression
            ? memberName(callee)
            : null;
      if (name === "setTimeout" || name === "catch") return true;
    }
    if (
      (current.type === AST_NODE_TYPES.IfStatement ||
        current.type === AST_NODE_TYPES.ConditionalExpression) &&
      !contains(current.test, call)
    ) {
      const test = current.test;
      if (test.type !== AST_NODE_TYPES.Literal && FAILURE_TEST.test(textOf(test))) return true;
    }
  }
  return false;
}

function textOf(node: Node): string {
  // Identifiers and member names are enough to read a test; avoid source text to stay parser-neutral.
  const parts: string[] = [];
  const visit = (n: Node): void => {
    if (n.type === AST_NODE_TYPES.Identifier) parts.push(n.name);
    for (const key of Object.keys(n)) {
      if (key === "parent" || key === "loc" || key === "range") continue;
      const value = (n as unknown as Record<string, unknown>)[key];
      const items: unknown[] = Array.isArray(value) ? value : [value];
      for (const item of items)
        if (typeof item === "object" && item !== null && typeof (item as Node).type === "string")
          visit(item as Node);
    }
  };
  visit(node);
  return parts.join(" ");
}

/** The `catch` clause or branch that leads to a self-call, to read the retry's condition from. */
export function retryBranchOf(again: Node, fn: FunctionNode): Node | null {
  for (
    let current: Node | undefined = again.parent;
    current && current !== fn;
    current = current.parent
  ) {
    if (current.type === AST_NODE_TYPES.CatchClause) return current;
    if (current.type === AST_NODE_TYPES.IfStatement && !contains(current.test, again))
      return current.test;
  }
  return null;
}

/** The place a function runs itself again after a failure, if it does. */
export function selfRetryOf(resolver: Resolver, fn: FunctionNode): Node | null {
  const self = selfName(fn);
  if (self === null) return null;
  if (self.kind === "binding") {
    const variable = resolver.variableOf(self.id);
    if (!variable) return null;
    for (const ref of variable.references) {
      const use = ref.identifier;
      if (use === self.id || !contains(fn.body, use)) continue;
      if (isSelfInvocation(use) && isRetryPosition(use, fn)) return use;
    }
    return null;
  }
  let found: Node | null = null;
  walkBody(fn.body, (node) => {
    if (
      found === null &&
      node.type === AST_NODE_TYPES.MemberExpression &&
      node.object.type === AST_NODE_TYPES.ThisExpression &&
      memberName(node) === self.name &&
      isSelfInvocation(node) &&
      isRetryPosition(node, fn)
    )
      found = node;
  });
  return found;
}

/** `f(...)`, `setTimeout(f, ms)`, `f.call(...)`: the reference runs the function. */
function isSelfInvocation(use: Node): boolean {
  const { parent, child: current } = outerParent(use);
  if (parent === undefined) return false;
  if (parent.type === AST_NODE_TYPES.CallExpression) {
    if (parent.callee === current) return true;
    const callee = skipWrappers(parent.callee);
    return (
      parent.arguments[0] === current &&
      callee.type === AST_NODE_TYPES.Identifier &&
      callee.name === "setTimeout"
    );
  }
  if (
    parent.type === AST_NODE_TYPES.MemberExpression &&
    parent.object === current &&
    ["call", "apply", "bind"].includes(memberName(parent) ?? "")
  )
    return parent.parent.type === AST_NODE_TYPES.CallExpression;
  return false;
}

/** Visits every node of a function body, nested functions included (a retry is often deferred in a closure). */
function walkBody(root: Node, visit: (node: Node) => void): void {
  walk(root, (node) => {
    visit(node);
    return true;
  });
}
