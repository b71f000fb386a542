import { AST_NODE_TYPES, type TSESTree } from "@typescript-eslint/types";
import type { TSESLint } from "@typescript-eslint/utils";
import { skipWrappers, type Node } from "./ast.js";

type Fixer = TSESLint.RuleFixer;
type Fix = TSESLint.RuleFix;

/** Adds `text` (a `key: value` pair) as the last property of an object literal. */
export function addProperty(fixer: Fixer, object: TSESTree.ObjectExpression, text: string): Fix {
  const last = object.properties[object.properties.length - 1];
  if (last === undefined) return fixer.replaceText(object, `{ ${text} }`);
  return fixer.insertTextAfter(last, `, ${text}`);
}

/**
 * A fix that puts `key: value` into the options argument at `index`, when that is safe:
 * an object literal written in the call, or a missing argument right after the last one.
 * Returns null where no edit is obviously right.
 */
export function optionFix(
  call: TSESTree.CallExpression,
  index: number,
  key: string,
  value: string,
  existing: Node | null,
): ((fixer: Fixer) => Fix) | null {
  if (call.arguments.some((arg) => arg.type === AST_NODE_TYPES.SpreadElement)) return null;
  const arg = call.arguments[index];
  if (arg === undefined) {
    if (call.arguments.length !== index) return null;
    const previous = call.arguments[index - 1];
    if (previous === undefined) return null;
    return (fixer) => fixer.insertTextAfter(previous, `, { ${key}: ${value} }`);
  }
  const object = skipWrappers(arg);
  if (object.type !== AST_NODE_TYPES.ObjectExpression) return null;
  if (existing !== null) {
    const own = object.properties.find(
      (p) => p.type === AST_NODE_TYPES.Property && p.value === existing,
    );
    if (own === undefined || own.type !== AST_NODE_TYPES.Property || own.shorthand) return null;
    return (fixer) => fixer.replaceText(own.value, value);
  }
  return (fixer) => addProperty(fixer, object, `${key}: ${value}`);
}
