/**
 * The scope-manager values the rules compare against, and variable lookup, without loading
 * @typescript-eslint/utils at run time: installing resgen for its CLI must not install ESLint or
 * TypeScript (docs/eslint-plugin.md, "Install"). Only types come from @typescript-eslint/utils.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";

type Definitions = typeof TSESLint.Scope.DefinitionType;
type Scopes = typeof TSESLint.Scope.ScopeType;
type DefinitionName = "ClassName" | "FunctionName" | "ImportBinding" | "Parameter" | "Variable";
type ScopeName = "global" | "module";

// ESLint's own scope manager (for espree) and typescript-eslint's name definitions and scopes
// with the same strings; `satisfies` checks each against typescript-eslint's enum, and the cast
// gives them the enum's types so comparisons with `def.type` still narrow.
const definitionNames = {
  ClassName: "ClassName",
  FunctionName: "FunctionName",
  ImportBinding: "ImportBinding",
  Parameter: "Parameter",
  Variable: "Variable",
} as const satisfies { readonly [K in DefinitionName]: `${Definitions[K]}` };

const scopeNames = {
  global: "global",
  module: "module",
} as const satisfies { readonly [K in ScopeName]: `${Scopes[K]}` };

/** The kinds of definition of a name that the rules tell apart. */
export const DefinitionType = definitionNames as unknown as Pick<Definitions, DefinitionName>;

/** The kinds of scope that the rules tell apart. */
export const ScopeType = scopeNames as unknown as Pick<Scopes, ScopeName>;

type Scope = TSESLint.Scope.Scope;
type Variable = TSESLint.Scope.Variable;

/** The innermost scope below `scope` whose block contains `node`'s start. */
function innermostScope(scope: Scope, node: TSESTree.Node): Scope {
  const at = node.range[0];
  let current = scope;
  for (;;) {
    const inner = current.childScopes.find(
      (child) => child.block.range[0] <= at && at < child.block.range[1],
    );
    if (!inner) return current;
    current = inner;
  }
}

/**
 * The variable an identifier names: looked up in the innermost scope that contains it, then in
 * each enclosing scope in turn; null when no scope has the name.
 */
export function findVariable(scope: Scope, id: TSESTree.Identifier): Variable | null {
  for (let current: Scope | null = innermostScope(scope, id); current; current = current.upper) {
    const variable = current.set.get(id.name);
    if (variable) return variable;
  }
  return null;
}
