import { AST_NODE_TYPES, type TSESTree } from "@typescript-eslint/types";
import type { TSESLint } from "@typescript-eslint/utils";
import { DefinitionType, findVariable } from "./scope.js";
import {
  isFunction,
  keyName,
  memberName,
  propertyKey,
  skipWrappers,
  staticString,
  walk,
  type CallLike,
  type Node,
} from "./ast.js";
import type { Project } from "./project.js";

/**
 * Where a value comes from, as far as a careful reader of one file can tell.
 * - `global`: a free name of the environment (`fetch`, `globalThis.fetch` → path ["fetch"]).
 * - `module`: an export of an imported or required package; a leading `default` is dropped,
 *   so `import axios from "axios"`, `require("axios")` and `require("axios").default` agree.
 * - `result`: the value returned by a call or `new` (an axios instance, a breaker, a client),
 *   followed by `path` members.
 * - `unknown`: a parameter, a reassigned variable, anything the file does not pin down.
 */
export type Origin =
  | { readonly kind: "global"; readonly path: readonly string[] }
  | { readonly kind: "module"; readonly module: string; readonly path: readonly string[] }
  | {
      readonly kind: "result";
      readonly call: CallLike;
      readonly callee: Origin;
      readonly path: readonly string[];
    }
  | { readonly kind: "unknown" };

export const UNKNOWN: Origin = { kind: "unknown" };

const GLOBAL_OBJECTS = new Set(["globalThis", "window", "self", "global"]);
const MAX_DEPTH = 12;

type Scope = TSESLint.Scope.Scope;
type Variable = TSESLint.Scope.Variable;
type SourceCode = Readonly<TSESLint.SourceCode>;

function withMember(origin: Origin, name: string): Origin {
  switch (origin.kind) {
    case "unknown":
      return origin;
    case "global":
      if (origin.path.length === 1 && GLOBAL_OBJECTS.has(origin.path[0]!))
        return { kind: "global", path: [name] };
      return { kind: "global", path: [...origin.path, name] };
    case "module":
      if (origin.path.length === 0 && name === "default") return origin;
      return { kind: "module", module: origin.module, path: [...origin.path, name] };
    case "result":
      return { ...origin, path: [...origin.path, name] };
  }
}

/** An import from a file of the project (`./http.js`), not from a package. */
function isProjectModule(origin: Origin): boolean {
  return origin.kind === "module" && /^[./]/.test(origin.module);
}

/** `node:http` and `http` are the same module. */
export function normaliseModule(source: string): string {
  return source.startsWith("node:") ? source.slice(5) : source;
}

/** Whether an origin is `module` with the given name and exact path. */
export function isModule(
  origin: Origin,
  module: string | readonly string[],
  ...path: string[]
): boolean {
  if (origin.kind !== "module") return false;
  const names = typeof module === "string" ? [module] : module;
  if (!names.includes(origin.module)) return false;
  return origin.path.length === path.length && origin.path.every((p, i) => p === path[i]);
}

const shared = new WeakMap<SourceCode, Resolver>();

/** The resolver for a file, shared by every rule that lints it so each value is resolved once. */
export function resolverFor(sourceCode: SourceCode): Resolver {
  let resolver = shared.get(sourceCode);
  if (!resolver) {
    resolver = new Resolver(sourceCode);
    shared.set(sourceCode, resolver);
  }
  return resolver;
}

/**
 * Resolves values within one file. One instance per rule invocation; results are cached per
 * node, so asking twice costs nothing.
 */
export class Resolver {
  readonly sourceCode: SourceCode;
  /** The type checker's answers, when the rule lints with type information (utils/project.ts). */
  readonly project: Project | null;
  readonly #cache = new WeakMap<Node, Origin>();

  constructor(sourceCode: SourceCode, project: Project | null = null) {
    this.sourceCode = sourceCode;
    this.project = project;
  }

  scopeOf(node: Node): Scope {
    return this.sourceCode.getScope(node);
  }

  variableOf(id: TSESTree.Identifier): Variable | null {
    return findVariable(this.scopeOf(id), id);
  }

  /** A free name, declared nowhere in the file (so the environment provides it). */
  isGlobal(id: TSESTree.Identifier): boolean {
    const variable = this.variableOf(id);
    return variable === null || variable.defs.length === 0;
  }

  /**
   * The single value a variable can hold: its initialiser when it is `const`, or `let`/`var`
   * never written again. Destructured declarations return the init with the key path.
   */
  constantBinding(id: TSESTree.Identifier): { init: Node; keys: string[] } | null {
    const variable = this.variableOf(id);
    if (!variable || variable.defs.length !== 1) return null;
    const def = variable.defs[0]!;
    if (def.type !== DefinitionType.Variable) return null;
    const declarator = def.node;
    const declaration = def.parent as TSESTree.VariableDeclaration | null;
    if (!declarator.init) return null;
    if (declaration?.kind !== "const") {
      const writes = variable.references.filter(
        (ref) => ref.isWrite() && ref.identifier !== declarator.id && !isInitWrite(ref, declarator),
      );
      if (writes.length > 0) return null;
    }
    const keys = patternPath(declarator.id, def.name);
    if (keys === null) return null;
    return { init: declarator.init, keys };
  }

  /**
   * What the calls in this file pass for a parameter, when the file shows every call: `null`
   * unless `id` is a plain positional parameter of a named function, a `const` function or a
   * class method whose every use here is a direct call (`f(...)`, `this.m(...)`), with at least
   * one call. Exported functions count: their callers elsewhere are not seen, so a problem found
   * here is real but silence is not a proof. Each site is the argument, or the parameter's
   * default (`undefined` when it has none) where the call leaves it out.
   */
  callerArguments(
    id: TSESTree.Identifier,
    /** Only when no call can come from another file: the function is neither exported nor public. */
    complete = false,
  ): readonly CallerArgument[] | null {
    const variable = this.variableOf(id);
    if (!variable || variable.defs.length !== 1) return null;
    const def = variable.defs[0]!;
    if (def.type !== DefinitionType.Parameter || !isFunction(def.node)) return null;
    const fn = def.node;
    let cached = this.#callers.get(fn);
    if (cached === undefined) {
      cached = callSitesOf(this, fn);
      this.#callers.set(fn, cached);
    }
    if (cached === null || (complete && cached.exported)) return null;
    const param = def.name.parent;
    const slot = param.type === AST_NODE_TYPES.AssignmentPattern ? param : def.name;
    const index = fn.params.indexOf(slot);
    if (index < 0) return null;
    const fallback = param.type === AST_NODE_TYPES.AssignmentPattern ? param.right : null;
    const sites: CallerArgument[] = [];
    for (const call of cached.calls) {
      const args = call.arguments;
      if (args.slice(0, index + 1).some((arg) => arg.type === AST_NODE_TYPES.SpreadElement))
        return null;
      const arg = args[index] as Node | undefined;
      sites.push({ call, value: arg ?? fallback });
    }
    return sites;
  }

  readonly #callers = new WeakMap<Node, CallSites | null>();

  /** The value an expression resolves to through `const`s, when that is a plain expression. */
  valueOf(node: Node, depth = 0): Node {
    const inner = skipWrappers(node);
    if (depth > MAX_DEPTH || inner.type !== AST_NODE_TYPES.Identifier) return inner;
    const binding = this.constantBinding(inner);
    if (!binding || binding.keys.length > 0) return inner;
    return this.valueOf(binding.init, depth + 1);
  }

  /** Where a value comes from. */
  origin(node: Node, depth = 0): Origin {
    const cached = this.#cache.get(node);
    if (cached) return cached;
    // Past the depth limit the answer is "unknown" for this query only: do not cache it.
    if (depth > MAX_DEPTH) return UNKNOWN;
    let result = this.#compute(node, depth);
    // What the file leaves open, or an export of another project file, the checker may know
    // from the value's type.
    if (this.project && (result.kind === "unknown" || isProjectModule(result))) {
      const typed = this.project.typedOrigin(node);
      if (typed.kind !== "unknown") result = typed;
    }
    this.#cache.set(node, result);
    return result;
  }

  #compute(raw: Node, depth: number): Origin {
    const node = skipWrappers(raw);
    switch (node.type) {
      case AST_NODE_TYPES.Identifier:
        return this.#identifier(node, depth);
      case AST_NODE_TYPES.MemberExpression: {
        if (node.object.type === AST_NODE_TYPES.ThisExpression) {
          const assigned = thisPropertyValue(node);
          return assigned ? this.origin(assigned, depth + 1) : UNKNOWN;
        }
        const name = memberName(node);
        if (name === null) return UNKNOWN;
        return withMember(this.origin(node.object, depth + 1), name);
      }
      case AST_NODE_TYPES.AwaitExpression:
        return this.origin(node.argument, depth + 1);
      case AST_NODE_TYPES.LogicalExpression: {
        // `opts.client || axios.create()`: the client made here unless a caller supplies one
        if (node.operator === "&&") return UNKNOWN;
        return fallbackOrigin([
          this.origin(node.left, depth + 1),
          this.origin(node.right, depth + 1),
        ]);
      }
      case AST_NODE_TYPES.ImportExpression: {
        // `await import("got")` resolves to the module's namespace, as `import * as` does.
        const source = staticString(node.source);
        return source === null
          ? UNKNOWN
          : { kind: "module", module: normaliseModule(source), path: [] };
      }
      case AST_NODE_TYPES.CallExpression:
      case AST_NODE_TYPES.NewExpression: {
        const callee = skipWrappers(node.callee);
        if (
          node.type === AST_NODE_TYPES.CallExpression &&
          callee.type === AST_NODE_TYPES.Identifier &&
          callee.name === "require" &&
          this.isGlobal(callee)
        ) {
          const source = staticString(node.arguments[0]);
          return source === null
            ? UNKNOWN
            : { kind: "module", module: normaliseModule(source), path: [] };
        }
        const calleeOrigin = this.origin(callee, depth + 1);
        if (calleeOrigin.kind === "unknown") return UNKNOWN;
        return { kind: "result", call: node, callee: calleeOrigin, path: [] };
      }
      default:
        return UNKNOWN;
    }
  }

  #identifier(id: TSESTree.Identifier, depth: number): Origin {
    const variable = this.variableOf(id);
    if (variable === null || variable.defs.length === 0) return { kind: "global", path: [id.name] };
    if (variable.defs.length !== 1) return UNKNOWN;
    const def = variable.defs[0]!;
    if (def.type === DefinitionType.ImportBinding) {
      const spec = def.node;
      const declaration = def.parent as TSESTree.ImportDeclaration;
      if (declaration.importKind === "type") return UNKNOWN;
      const module = normaliseModule(declaration.source.value);
      if (spec.type === AST_NODE_TYPES.ImportSpecifier) {
        if (spec.importKind === "type") return UNKNOWN;
        const imported =
          spec.imported.type === AST_NODE_TYPES.Identifier
            ? spec.imported.name
            : spec.imported.value;
        return withMember({ kind: "module", module, path: [] }, imported);
      }
      return { kind: "module", module, path: [] };
    }
    const binding = this.constantBinding(id);
    if (!binding) {
      // `let client = options.client; if (!client) client = axios.create();`
      const values = assignedValues(variable);
      if (values === null) return UNKNOWN;
      return fallbackOrigin(values.map((value) => this.origin(value, depth + 1)));
    }
    let origin = this.origin(binding.init, depth + 1);
    for (const key of binding.keys) origin = withMember(origin, key);
    return origin;
  }
}

/**
 * What a value that may be one of several is, when all but one of them are unknown: a default
 * made in the file behind a value from outside (`opts.client || axios.create()`). Two known
 * origins must agree.
 */
function fallbackOrigin(origins: readonly Origin[]): Origin {
  const known = origins.filter((origin) => origin.kind !== "unknown");
  if (known.length === 0) return UNKNOWN;
  const first = known[0]!;
  return known.every((origin) => sameOrigin(origin, first)) ? first : UNKNOWN;
}

function sameOrigin(a: Origin, b: Origin): boolean {
  const parts = (origin: Origin): readonly unknown[] => {
    switch (origin.kind) {
      case "unknown":
        return ["unknown"];
      case "global":
        return ["global", ...origin.path];
      case "module":
        return ["module", origin.module, ...origin.path];
      case "result":
        return ["result", origin.call, ...origin.path];
    }
  };
  const left = parts(a);
  const right = parts(b);
  return left.length === right.length && left.every((part, i) => part === right[i]);
}

/** The values a `let` declared once (not a destructuring) takes: its initialiser and each `x = …`. */
function assignedValues(variable: Variable): Node[] | null {
  if (variable.defs.length !== 1) return null;
  const def = variable.defs[0]!;
  if (def.type !== DefinitionType.Variable || def.node.id.type !== AST_NODE_TYPES.Identifier)
    return null;
  const values: Node[] = def.node.init ? [def.node.init] : [];
  for (const ref of variable.references) {
    if (!ref.isWrite() || ref.init) continue;
    const parent = ref.identifier.parent;
    if (
      parent.type !== AST_NODE_TYPES.AssignmentExpression ||
      parent.left !== ref.identifier ||
      (parent.operator !== "=" && parent.operator !== "||=" && parent.operator !== "??=")
    )
      return null;
    values.push(parent.right);
  }
  return values.length > 0 ? values : null;
}

/** One call's value for a parameter: the argument, the default, or null for `undefined`. */
export interface CallerArgument {
  readonly call: TSESTree.CallExpression;
  readonly value: Node | null;
}

/** The calls of a function in its file, and whether others may call it from elsewhere. */
interface CallSites {
  readonly calls: readonly TSESTree.CallExpression[];
  /** Exported, or a method that is not private: callers in other files are possible. */
  readonly exported: boolean;
}

/** Every call of `fn` in the file, or null when `fn` has no name or is used other than called. */
function callSitesOf(
  resolver: Resolver,
  fn: TSESTree.FunctionDeclaration | TSESTree.FunctionExpression | TSESTree.ArrowFunctionExpression,
): CallSites | null {
  const parent = fn.parent;
  if (parent.type === AST_NODE_TYPES.MethodDefinition && parent.value === fn) {
    if (parent.static || parent.kind !== "method") return null;
    const exported =
      parent.key.type !== AST_NODE_TYPES.PrivateIdentifier && parent.accessibility !== "private";
    const name = parent.computed ? null : keyName(parent.key);
    const body = parent.parent;
    if (name === null) return null;
    const calls: TSESTree.CallExpression[] = [];
    const other: Node[] = [];
    walk(body, (node) => {
      if (
        node.type === AST_NODE_TYPES.MemberExpression &&
        node.object.type === AST_NODE_TYPES.ThisExpression &&
        !node.computed &&
        keyName(node.property) === name
      ) {
        if (node.parent.type === AST_NODE_TYPES.CallExpression && node.parent.callee === node)
          calls.push(node.parent);
        else other.push(node);
      }
      return other.length === 0;
    });
    return other.length > 0 || calls.length === 0 ? null : { calls, exported };
  }
  let name: TSESTree.Identifier | null = null;
  if (fn.type === AST_NODE_TYPES.FunctionDeclaration) name = fn.id;
  else if (
    parent.type === AST_NODE_TYPES.VariableDeclarator &&
    parent.init === fn &&
    parent.id.type === AST_NODE_TYPES.Identifier &&
    parent.parent.kind === "const"
  )
    name = parent.id;
  if (name === null) return null;
  const variable = resolver.variableOf(name);
  if (!variable) return null;
  const declaration = fn.type === AST_NODE_TYPES.FunctionDeclaration ? fn : parent.parent;
  let exported =
    declaration?.parent?.type === AST_NODE_TYPES.ExportNamedDeclaration ||
    declaration?.parent?.type === AST_NODE_TYPES.ExportDefaultDeclaration;
  const calls: TSESTree.CallExpression[] = [];
  for (const ref of variable.references) {
    const use = ref.identifier;
    if (use === name) continue;
    const up = use.parent;
    if (up.type === AST_NODE_TYPES.CallExpression && up.callee === use) calls.push(up);
    else if (up.type === AST_NODE_TYPES.ExportSpecifier) exported = true;
    else return null;
  }
  return calls.length === 0 ? null : { calls, exported };
}

function isInitWrite(
  ref: TSESLint.Scope.Reference,
  declarator: TSESTree.VariableDeclarator,
): boolean {
  return (
    ref.init === true &&
    declarator.range[0] <= ref.identifier.range[0] &&
    ref.identifier.range[1] <= declarator.range[1]
  );
}

/** The keys leading from a destructuring pattern's root to `target`, or null if nested oddly. */
function patternPath(pattern: TSESTree.Node, target: TSESTree.Identifier): string[] | null {
  if (pattern === target) return [];
  if (pattern.type === AST_NODE_TYPES.Identifier) return pattern === target ? [] : null;
  if (pattern.type === AST_NODE_TYPES.AssignmentPattern) return patternPath(pattern.left, target);
  if (pattern.type === AST_NODE_TYPES.ObjectPattern) {
    for (const prop of pattern.properties) {
      if (prop.type !== AST_NODE_TYPES.Property) continue;
      const key = propertyKey(prop);
      if (key === null) continue;
      const rest = patternPath(prop.value, target);
      if (rest !== null) return [key, ...rest];
    }
  }
  return null;
}

/**
 * The class body whose `this` is the `this` at `node`: arrow functions and methods keep the
 * class's `this`, any other function has its own, so there is none.
 */
export function enclosingClass(node: Node): TSESTree.ClassBody | null {
  let current: Node | undefined = node.parent;
  while (current && current.type !== AST_NODE_TYPES.ClassBody) {
    if (current.type === AST_NODE_TYPES.FunctionDeclaration) return null;
    if (
      current.type === AST_NODE_TYPES.FunctionExpression &&
      current.parent.type !== AST_NODE_TYPES.MethodDefinition &&
      current.parent.type !== AST_NODE_TYPES.Property
    )
      return null;
    current = current.parent;
  }
  return current ?? null;
}

/**
 * The single value assigned to `this.<name>` (or `this.#name`) in the class around `node`: a
 * class field initialiser, or one `this.<name> = …` statement in the constructor.
 */
export function thisPropertyValue(node: TSESTree.MemberExpression): Node | null {
  const name = thisMemberKey(node);
  const current = enclosingClass(node);
  if (name === null || !current) return null;
  const found: Node[] = [];
  for (const member of current.body) {
    if (
      member.type === AST_NODE_TYPES.PropertyDefinition &&
      !member.static &&
      (member.computed ? propertyKey(member) : keyName(member.key)) === name &&
      member.value
    ) {
      found.push(member.value);
    }
    if (
      member.type === AST_NODE_TYPES.MethodDefinition &&
      member.kind === "constructor" &&
      member.value.body
    ) {
      for (const statement of member.value.body.body) {
        if (statement.type !== AST_NODE_TYPES.ExpressionStatement) continue;
        const expr = statement.expression;
        if (
          expr.type === AST_NODE_TYPES.AssignmentExpression &&
          expr.operator === "=" &&
          expr.left.type === AST_NODE_TYPES.MemberExpression &&
          expr.left.object.type === AST_NODE_TYPES.ThisExpression &&
          thisMemberKey(expr.left) === name
        ) {
          found.push(expr.right);
        }
      }
    }
  }
  return found.length === 1 ? found[0]! : null;
}

/** The key `this.<key>` reads: a static name, or `#name` for a private one. */
function thisMemberKey(node: TSESTree.MemberExpression): string | null {
  return node.property.type === AST_NODE_TYPES.PrivateIdentifier
    ? keyName(node.property)
    : memberName(node);
}
