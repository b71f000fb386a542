import { AST_NODE_TYPES, type TSESTree } from "@typescript-eslint/types";

export type Node = TSESTree.Node;
export type Expression = TSESTree.Expression;
export type FunctionNode =
  TSESTree.ArrowFunctionExpression | TSESTree.FunctionExpression | TSESTree.FunctionDeclaration;
export type CallLike = TSESTree.CallExpression | TSESTree.NewExpression;
export type LoopNode = TSESTree.ForStatement | TSESTree.WhileStatement | TSESTree.DoWhileStatement;

/**
 * Strips the wrappers that do not change which value an expression denotes: TypeScript
 * casts (`as`, `satisfies`, `!`, `<T>x`) and optional-chain containers. Parentheses never
 * reach the AST, so both parsers agree once these are gone.
 */
export function skipWrappers(node: Node): Node {
  let current = node;
  for (;;) {
    switch (current.type) {
      case AST_NODE_TYPES.TSAsExpression:
      case AST_NODE_TYPES.TSSatisfiesExpression:
      case AST_NODE_TYPES.TSNonNullExpression:
      case AST_NODE_TYPES.TSTypeAssertion:
      case AST_NODE_TYPES.ChainExpression:
        current = current.expression;
        break;
      default:
        return current;
    }
  }
}

/** The parent of a node, skipping the same wrappers `skipWrappers` removes. */
export function outerParent(node: Node): { parent: Node | undefined; child: Node } {
  let child = node;
  let parent = node.parent;
  while (
    parent !== undefined &&
    (parent.type === AST_NODE_TYPES.TSAsExpression ||
      parent.type === AST_NODE_TYPES.TSSatisfiesExpression ||
      parent.type === AST_NODE_TYPES.TSNonNullExpression ||
      parent.type === AST_NODE_TYPES.TSTypeAssertion ||
      parent.type === AST_NODE_TYPES.ChainExpression)
  ) {
    child = parent;
    parent = parent.parent;
  }
  return { parent, child };
}

export function isFunction(node: Node): node is FunctionNode {
  return (
    node.type === AST_NODE_TYPES.ArrowFunctionExpression ||
    node.type === AST_NODE_TYPES.FunctionExpression ||
    node.type === AST_NODE_TYPES.FunctionDeclaration
  );
}

export function isRetryableLoop(node: Node): node is LoopNode {
  return (
    node.type === AST_NODE_TYPES.ForStatement ||
    node.type === AST_NODE_TYPES.WhileStatement ||
    node.type === AST_NODE_TYPES.DoWhileStatement
  );
}

/** The static text of a string literal or of a template literal without substitutions. */
export function staticString(node: Node | undefined | null): string | null {
  if (!node) return null;
  const inner = skipWrappers(node);
  if (inner.type === AST_NODE_TYPES.Literal && typeof inner.value === "string") return inner.value;
  if (inner.type === AST_NODE_TYPES.TemplateLiteral && inner.expressions.length === 0) {
    return inner.quasis[0]?.value.cooked ?? null;
  }
  return null;
}

/** The name a member expression reads, when it is written statically (`a.b`, `a["b"]`). */
export function memberName(node: TSESTree.MemberExpression): string | null {
  if (!node.computed) {
    return node.property.type === AST_NODE_TYPES.Identifier ? node.property.name : null;
  }
  return staticString(node.property);
}

/** The key of an object property when it is written statically (`a`, `"a"`, `["a"]`, `1`). */
export function propertyKey(node: TSESTree.Property | TSESTree.PropertyDefinition): string | null {
  if (!node.computed && node.key.type === AST_NODE_TYPES.Identifier) return node.key.name;
  if (node.key.type === AST_NODE_TYPES.Literal) return String(node.key.value);
  return staticString(node.key);
}

/** A class member's or property's key written as a name: `fetch`, or `#fetch` for a private one. */
export function keyName(node: TSESTree.Expression | TSESTree.PrivateIdentifier): string | null {
  if (node.type === AST_NODE_TYPES.PrivateIdentifier) return `#${node.name}`;
  return node.type === AST_NODE_TYPES.Identifier ? node.name : null;
}

/** The name a call is made through: `f(...)` → f, `a.b.f(...)` → f, `this.#f(...)` → #f. */
export function calleeName(call: CallLike): string | null {
  const callee = skipWrappers(call.callee);
  if (callee.type === AST_NODE_TYPES.Identifier) return callee.name;
  if (callee.type !== AST_NODE_TYPES.MemberExpression) return null;
  if (callee.property.type === AST_NODE_TYPES.PrivateIdentifier) return keyName(callee.property);
  return memberName(callee);
}

/** Whether `inner` lies within `outer` (inclusive). */
export function contains(outer: Node, inner: Node): boolean {
  return outer.range[0] <= inner.range[0] && inner.range[1] <= outer.range[1];
}

/** Whether a statement list (or single statement) ends by leaving unconditionally with `throw`. */
export function alwaysThrows(node: Node | null | undefined): boolean {
  if (!node) return false;
  if (node.type === AST_NODE_TYPES.ThrowStatement) return true;
  if (node.type === AST_NODE_TYPES.BlockStatement) {
    const last = node.body[node.body.length - 1];
    return last !== undefined && alwaysThrows(last);
  }
  return false;
}

/**
 * Walks a subtree depth-first, calling `visit` on every node. `visit` returning false stops
 * the descent into that node's children. Keys that lead back up or to metadata are skipped.
 */
export function walk(root: Node, visit: (node: Node) => boolean): void {
  const stack: Node[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (!visit(node)) continue;
    for (const key of Object.keys(node)) {
      if (key === "parent" || key === "loc" || key === "range" || key === "typeAnnotation")
        continue;
      const value = (node as unknown as Record<string, unknown>)[key];
      if (Array.isArray(value)) {
        for (let i = value.length - 1; i >= 0; i--) {
          const item: unknown = value[i];
          if (isNode(item)) stack.push(item);
        }
      } else if (isNode(value)) {
        stack.push(value);
      }
    }
  }
}

function isNode(value: unknown): value is Node {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { type?: unknown }).type === "string"
  );
}

/** Whether a subtree contains a node satisfying `test`, without entering nested functions. */
export function someInside(
  root: Node,
  test: (node: Node) => boolean,
  enterFunctions = false,
): boolean {
  let found = false;
  walk(root, (node) => {
    if (found) return false;
    if (test(node)) {
      found = true;
      return false;
    }
    if (!enterFunctions && node !== root && isFunction(node)) return false;
    return true;
  });
  return found;
}

/**
 * What a function's own `return`s hand back (an arrow's body; nested functions' returns are
 * theirs): each returned expression, and null for a bare `return`.
 */
export function returnedValues(fn: FunctionNode): Array<Node | null> {
  if (fn.body.type !== AST_NODE_TYPES.BlockStatement) return [fn.body];
  const values: Array<Node | null> = [];
  walk(fn.body, (node) => {
    if (node !== fn.body && isFunction(node)) return false;
    if (node.type === AST_NODE_TYPES.ReturnStatement) values.push(node.argument ?? null);
    return true;
  });
  return values;
}
