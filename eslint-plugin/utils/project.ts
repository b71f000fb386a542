import { createRequire } from "node:module";
import { AST_NODE_TYPES, type TSESTree } from "@typescript-eslint/types";
import type { ParserServicesWithTypeInformation, TSESLint } from "@typescript-eslint/utils";
import type * as TS from "typescript";
import { walk, type Node } from "./ast.js";
import { Resolver, resolverFor, type Origin } from "./resolve.js";

/**
 * What the rules ask the type checker once a user lints with type information
 * (`configs["recommended-type-checked"]`): the questions one file cannot answer. Everything here
 * is cached per program and bounded, so a lint run pays for each answer once:
 *
 * - `typedOrigin`: where a value the file does not pin down comes from, judged by its type (a
 *   `fetcher` typed as `typeof fetch`, a parameter typed `AxiosStatic`);
 * - `keyOfType`: whether an options object's type has a key, and whether it is optional;
 * - `followFunction`: the body of a function imported from another file of the project (or of
 *   the base constructor a `super(...)` call runs), parsed with the same parser so the syntactic
 *   analyses can read it;
 * - `packageOf`: the package a name's declaration is in, through a project's re-exports (cockatiel's
 *   `handleWhen` imported from a project module).
 *
 * docs/eslint-plugin.md ("With type information") lists what each rule asks.
 */
export interface Project {
  typedOrigin(node: Node): Origin;
  keyOfType(node: Node, key: string): "absent" | "optional" | "required" | null;
  followFunction(callee: Node): { resolver: Resolver; fn: FunctionLike } | null;
  /** The npm package that declares what a name refers to, through re-exports (`cockatiel`). */
  packageOf(node: Node): string | null;
}

type FunctionLike =
  TSESTree.FunctionDeclaration | TSESTree.FunctionExpression | TSESTree.ArrowFunctionExpression;

type Services = ParserServicesWithTypeInformation;
type Context = Readonly<TSESLint.RuleContext<string, readonly unknown[]>>;

/** Files of the project parsed to follow a declaration, per program; past it, stop following. */
const MAX_FOLLOWED_FILES = 64;
/** Largest file parsed to follow a declaration. */
const MAX_FOLLOWED_BYTES = 512 * 1024;

const UNKNOWN: Origin = { kind: "unknown" };
const FETCH: Origin = { kind: "global", path: ["fetch"] };

/** Modules whose exported types name the clients the rules understand. */
const TYPED_CLIENTS: ReadonlyArray<{
  readonly folder: RegExp;
  readonly names: ReadonlySet<string>;
  readonly origin: Origin;
}> = [
  {
    folder: /\/node_modules\/axios\//,
    names: new Set(["AxiosStatic"]),
    origin: { kind: "module", module: "axios", path: [] },
  },
  {
    folder: /\/node_modules\/got\//,
    names: new Set(["Got"]),
    origin: { kind: "module", module: "got", path: [] },
  },
];

/** Declaration files that define `fetch` and `Response`: the DOM lib, Node's, undici's, node-fetch's. */
const FETCH_DECLARATIONS =
  /(?:\/lib\.[\w.]+\.d\.ts|\/node_modules\/(?:@types\/node|undici-types|undici|node-fetch)\/.*\.d\.[cm]?ts)$/;

/**
 * The compiler, loaded with the first program: only typed linting, which has it installed,
 * gets here, so the plugin itself does not depend on it.
 */
let ts!: typeof TS;
let compilerLoaded = false;

const projects = new WeakMap<TS.Program, TypedProject>();
const typedResolvers = new WeakMap<object, Resolver>();

/**
 * The resolver a rule uses: type-aware when the rule's `useTypeInformation` option is on and the
 * parser supplied a program, otherwise the plain, shared one.
 */
export function resolverOf(context: Context, useTypes: boolean | undefined): Resolver {
  const sourceCode = context.sourceCode;
  const services = sourceCode.parserServices as Partial<Services> | undefined;
  if (useTypes !== true || !services?.program || !services.esTreeNodeToTSNodeMap)
    return resolverFor(sourceCode);
  let resolver = typedResolvers.get(sourceCode);
  if (!resolver) {
    const project = projectFor(services.program);
    resolver = new Resolver(sourceCode, project.forFile(services.esTreeNodeToTSNodeMap));
    typedResolvers.set(sourceCode, resolver);
  }
  return resolver;
}

function projectFor(program: TS.Program): TypedProject {
  if (!compilerLoaded) {
    ts = createRequire(import.meta.url)("typescript") as typeof TS;
    compilerLoaded = true;
  }
  let project = projects.get(program);
  if (!project) {
    project = new TypedProject(program);
    projects.set(program, project);
  }
  return project;
}

interface ParsedFile {
  readonly resolver: Resolver;
  /** Function nodes by where they start (`startOf`), to find a declaration's ESTree node. */
  readonly functions: ReadonlyMap<number, FunctionLike>;
}

type NodeMap = Services["esTreeNodeToTSNodeMap"];

class TypedProject {
  readonly program: TS.Program;
  readonly checker: TS.TypeChecker;
  readonly #parsed = new Map<string, ParsedFile | null>();
  readonly #fetchLike = new Map<TS.Type, boolean>();

  constructor(program: TS.Program) {
    this.program = program;
    this.checker = program.getTypeChecker();
  }

  /** The questions for one file, answered through its node map. */
  forFile(map: NodeMap): Project {
    return {
      typedOrigin: (node) => this.#typedOrigin(this.#tsNode(map, node)),
      keyOfType: (node, key) => this.#keyOfType(this.#tsNode(map, node), key),
      followFunction: (callee) => this.#follow(this.#tsNode(map, callee)),
      packageOf: (node) => this.#packageOf(this.#tsNode(map, node)),
    };
  }

  #packageOf(node: TS.Node | null): string | null {
    let symbol = node ? this.checker.getSymbolAtLocation(node) : undefined;
    if (!symbol) return null;
    if (symbol.getFlags() & ts.SymbolFlags.Alias) symbol = this.checker.getAliasedSymbol(symbol);
    const declaration = symbol.getDeclarations()?.[0];
    if (!declaration) return null;
    const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(fileOf(declaration));
    return match ? match[1]! : null;
  }

  #tsNode(map: NodeMap, node: Node): TS.Node | null {
    return map.has(node) ? map.get(node) : null;
  }

  #typedOrigin(node: TS.Node | null): Origin {
    if (!node) return UNKNOWN;
    const type = this.checker.getTypeAtLocation(node);
    if (this.#isFetchLike(type)) return FETCH;
    for (const part of this.#present(type)) {
      const symbol = part.aliasSymbol ?? part.getSymbol();
      if (!symbol) continue;
      for (const client of TYPED_CLIENTS) {
        if (!client.names.has(symbol.getName())) continue;
        if (symbol.getDeclarations()?.some((d) => client.folder.test(fileOf(d))))
          return client.origin;
      }
    }
    return UNKNOWN;
  }

  /** The members of a union that are not `undefined` or `null`. */
  #present(type: TS.Type): TS.Type[] {
    const parts = type.isUnion() ? type.types : [type];
    return parts.filter(
      (part) => (part.getFlags() & (ts.TypeFlags.Undefined | ts.TypeFlags.Null)) === 0,
    );
  }

  /**
   * A function type that is `fetch` itself: every call signature returns `Promise<Response>` with
   * `Response` from a declaration file, and no member is a function written in the project. A
   * project function with a body is a wrapper that may bound its own requests; its body is
   * checked where it calls fetch.
   */
  #isFetchLike(type: TS.Type): boolean {
    const known = this.#fetchLike.get(type);
    if (known !== undefined) return known;
    const parts = this.#present(type);
    const result =
      parts.length > 0 &&
      parts.every((part) => {
        const signatures = part.getCallSignatures();
        if (signatures.length === 0) return false;
        const declared = part.getSymbol()?.getDeclarations() ?? [];
        if (declared.some((d) => isFunctionWithBody(d) && !d.getSourceFile().isDeclarationFile))
          return false;
        return signatures.every((signature) => this.#returnsResponse(signature));
      });
    this.#fetchLike.set(type, result);
    return result;
  }

  #returnsResponse(signature: TS.Signature): boolean {
    const returned = signature.getReturnType();
    const symbol = returned.getSymbol();
    if (symbol?.getName() !== "Promise") return false;
    const [inner] = this.checker.getTypeArguments(returned as TS.TypeReference);
    const response = inner?.aliasSymbol ?? inner?.getSymbol();
    return (
      response?.getName() === "Response" &&
      (response.getDeclarations() ?? []).some((d) => FETCH_DECLARATIONS.test(fileOf(d)))
    );
  }

  #keyOfType(node: TS.Node | null, key: string): "absent" | "optional" | "required" | null {
    if (!node) return null;
    const type = this.checker.getTypeAtLocation(node);
    const parts = this.#present(type);
    if (parts.length === 0) return null;
    let optional = false;
    let present = false;
    for (const part of parts) {
      // `any`, `unknown`, type parameters and index signatures say nothing about one key.
      if (
        part.getFlags() & (ts.TypeFlags.Any | ts.TypeFlags.Unknown | ts.TypeFlags.TypeParameter) ||
        part.getStringIndexType() !== undefined ||
        // object types, and intersections of them (`Options & XOR<A, B>`), whose properties the
        // checker merges
        (part.getFlags() & (ts.TypeFlags.Object | ts.TypeFlags.Intersection)) === 0
      )
        return null;
      const property = part.getProperty(key);
      if (!property) {
        optional = true;
        continue;
      }
      present = true;
      if (property.getFlags() & ts.SymbolFlags.Optional) optional = true;
    }
    if (!present) return "absent";
    return optional ? "optional" : "required";
  }

  /** The ESTree function an imported or project-wide callee is declared as, in its own file. */
  #follow(node: TS.Node | null): { resolver: Resolver; fn: FunctionLike } | null {
    if (!node) return null;
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.SuperKeyword)
      return this.#read(this.checker.getResolvedSignature(node)?.declaration);
    let at = ts.isCallExpression(node) ? node.expression : node;
    if (ts.isPropertyAccessExpression(at)) at = at.name;
    let symbol = this.checker.getSymbolAtLocation(at);
    if (!symbol) return null;
    if (symbol.getFlags() & ts.SymbolFlags.Alias) symbol = this.checker.getAliasedSymbol(symbol);
    return this.#read(symbol.getDeclarations()?.[0]);
  }

  /** A declaration's function, parsed from its file when that is a source file of the project. */
  #read(declaration: TS.Declaration | undefined): { resolver: Resolver; fn: FunctionLike } | null {
    if (!declaration) return null;
    const target = functionOf(declaration);
    if (!target) return null;
    const file = target.getSourceFile();
    if (file.isDeclarationFile || /\/node_modules\//.test(file.fileName)) return null;
    const parsed = this.#parse(file);
    const fn = parsed?.functions.get(startOf(target, file));
    return parsed && fn ? { resolver: parsed.resolver, fn } : null;
  }

  #parse(file: TS.SourceFile): ParsedFile | null {
    const known = this.#parsed.get(file.fileName);
    if (known !== undefined) return known;
    let parsed: ParsedFile | null = null;
    if (this.#parsed.size < MAX_FOLLOWED_FILES && file.text.length <= MAX_FOLLOWED_BYTES) {
      const sourceCode = parseSource(file.text, file.fileName);
      if (sourceCode) {
        const functions = new Map<number, FunctionLike>();
        walk(sourceCode.ast, (node) => {
          if (
            node.type === AST_NODE_TYPES.FunctionDeclaration ||
            node.type === AST_NODE_TYPES.FunctionExpression ||
            node.type === AST_NODE_TYPES.ArrowFunctionExpression
          )
            functions.set(
              node.type === AST_NODE_TYPES.FunctionDeclaration && node.id
                ? node.id.range[0]
                : node.range[0],
              node,
            );
          return true;
        });
        // The followed file gets the same questions, so its own imports can be followed too.
        const fileProject = this.#fileProject(file);
        parsed = { resolver: new Resolver(sourceCode, fileProject), functions };
      }
    }
    this.#parsed.set(file.fileName, parsed);
    return parsed;
  }

  /**
   * A followed file has no ESTree-to-TS node map of its own: its typed questions stay
   * unanswered, while following its imports (by name, through its TS source file) still works.
   */
  #fileProject(file: TS.SourceFile): Project {
    return {
      typedOrigin: () => UNKNOWN,
      keyOfType: () => null,
      packageOf: () => null,
      followFunction: (callee) => {
        if (callee.type !== AST_NODE_TYPES.Identifier) return null;
        const found = findIdentifier(file, callee.range[0]);
        return found ? this.#follow(found) : null;
      },
    };
  }
}

function fileOf(declaration: TS.Declaration): string {
  return declaration.getSourceFile().fileName.replace(/\\/g, "/");
}

function isFunctionWithBody(node: TS.Node): boolean {
  return (
    (ts.isFunctionDeclaration(node) ||
      ts.isFunctionExpression(node) ||
      ts.isArrowFunction(node) ||
      ts.isMethodDeclaration(node)) &&
    node.body !== undefined
  );
}

/** `function f() {}`, or `const f = () => …` / `function () {}`: the function node itself. */
function functionOf(declaration: TS.Declaration): TS.FunctionLikeDeclaration | null {
  if (
    (ts.isFunctionDeclaration(declaration) || ts.isConstructorDeclaration(declaration)) &&
    declaration.body
  )
    return declaration;
  if (ts.isVariableDeclaration(declaration) && declaration.initializer) {
    let init: TS.Expression = declaration.initializer;
    while (ts.isParenthesizedExpression(init) || ts.isAsExpression(init)) init = init.expression;
    if (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) return init;
  }
  return null;
}

/**
 * Where a function starts, as both trees agree: a declaration at its name (TypeScript counts
 * `export` as part of it, ESTree wraps it), an expression at its first token, a constructor at
 * its parameters.
 */
function startOf(fn: TS.FunctionLikeDeclaration, file: TS.SourceFile): number {
  // ESTree's constructor is the function expression of its method: it starts at the `(`
  if (ts.isConstructorDeclaration(fn)) return fn.parameters.pos - 1;
  return ts.isFunctionDeclaration(fn) && fn.name ? fn.name.getStart(file) : fn.getStart(file);
}

function findIdentifier(file: TS.SourceFile, position: number): TS.Identifier | null {
  let found: TS.Identifier | null = null;
  const visit = (node: TS.Node): void => {
    if (found || position < node.getFullStart() || position >= node.getEnd()) return;
    if (ts.isIdentifier(node) && node.getStart(file) === position) found = node;
    else ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** The parser leaves `parent` to ESLint's traversal; a followed file is never traversed. */
function setParents(
  root: TSESTree.Node,
  keys: Readonly<Record<string, readonly string[] | undefined>>,
): void {
  const stack: TSESTree.Node[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    for (const key of keys[node.type] ?? []) {
      const value = (node as unknown as Record<string, unknown>)[key];
      for (const child of Array.isArray(value) ? (value as unknown[]) : [value]) {
        if (child && typeof (child as { type?: unknown }).type === "string") {
          (child as { parent: TSESTree.Node }).parent = node;
          stack.push(child as TSESTree.Node);
        }
      }
    }
  }
}

interface Parsers {
  readonly parseForESLint: (
    code: string,
    options: Record<string, unknown>,
  ) => {
    ast: TSESTree.Program;
    scopeManager: unknown;
    visitorKeys: unknown;
  };
  readonly SourceCode: new (config: Record<string, unknown>) => TSESLint.SourceCode;
}

let parsers: Parsers | null | undefined;

/**
 * A followed file parsed as ESLint would parse it, so `Resolver` reads it like the linted one.
 * The parser is the one typed linting already uses; it is loaded only when a rule follows a
 * declaration, so syntactic users need not install it.
 */
function parseSource(text: string, fileName: string): TSESLint.SourceCode | null {
  if (parsers === undefined) {
    try {
      const require = createRequire(import.meta.url);
      const { parseForESLint } = require("@typescript-eslint/parser") as Parsers;
      const { SourceCode } = require("eslint") as Parsers;
      parsers = { parseForESLint, SourceCode };
    } catch {
      parsers = null;
    }
  }
  if (!parsers) return null;
  try {
    const { ast, scopeManager, visitorKeys } = parsers.parseForESLint(text, {
      filePath: fileName,
      range: true,
      loc: true,
      tokens: true,
      comment: true,
      sourceType: "module",
      jsx: /\.[jt]sx$/.test(fileName),
    });
    setParents(ast, visitorKeys as Readonly<Record<string, readonly string[] | undefined>>);
    return new parsers.SourceCode({ text, ast, scopeManager, visitorKeys });
  } catch {
    return null;
  }
}
