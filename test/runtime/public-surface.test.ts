/**
 * The output's index.ts exports the runtime's public surface (templates/runtime/public.ts), not
 * its whole index: every runtime name a generated client's, middleware's or adapter's signature
 * refers to, the error guards, events and test doubles, and none of the building blocks. A
 * consumer that imports only from the output's index.ts compiles under tsc --strict, and
 * docs/runtime.md lists the surface.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build } from "../../src/build/build.js";
import { PACKAGE_ROOT } from "../../src/version.js";
import { compile } from "../helpers/tsc.js";

const OUT = join(PACKAGE_ROOT, "test", "runtime", "__out__", "public");
const SCENARIOS = {
  // HTTP clients, a service's middleware
  checkout: "examples/checkout",
  // a function transport, fallbacks (a provided one among them)
  shapes: "test/golden/shapes",
  // the OpenTelemetry adapter's exports
  otel: "test/telemetry/fixtures/otel",
} as const;

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : path.endsWith(".ts") ? [path] : [];
  });
}

function exportNames(checker: ts.TypeChecker, file: ts.SourceFile | undefined): Set<string> {
  const symbol = file === undefined ? undefined : checker.getSymbolAtLocation(file);
  return new Set(symbol === undefined ? [] : checker.getExportsOfModule(symbol).map((s) => s.name));
}

/**
 * The runtime names the public signatures of the barrel's non-runtime exports refer to: through
 * interfaces and type aliases transitively from client and service modules (what code using a
 * client names), directly from the telemetry adapter's functions. Function bodies are not read.
 */
function referencedRuntimeNames(out: string): {
  needed: Set<string>;
  barrel: Set<string>;
  index: Set<string>;
} {
  const files = filesUnder(out);
  const program = ts.createProgram(files, {
    strict: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    noEmit: true,
    skipLibCheck: true,
    types: ["node"],
  });
  const checker = program.getTypeChecker();
  const runtimeDir = join(out, "runtime") + sep;
  const inRuntime = (d: ts.Declaration): boolean =>
    d.getSourceFile().fileName.replace(/\//g, sep).startsWith(runtimeDir);
  const barrelFile = program.getSourceFile(join(out, "index.ts"));
  const barrel = exportNames(checker, barrelFile);
  const index = exportNames(checker, program.getSourceFile(join(out, "runtime", "index.ts")));
  const needed = new Set<string>();
  const walked = new Set<ts.Node>();

  const visit = (node: ts.Node, transitive: boolean): void => {
    if (
      ts.isFunctionDeclaration(node) ||
      ts.isMethodSignature(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isArrowFunction(node)
    ) {
      // the signature only: parameters, type parameters and the return type
      for (const p of node.typeParameters ?? []) visit(p, transitive);
      for (const p of node.parameters) if (p.type !== undefined) visit(p.type, transitive);
      if (node.type !== undefined) visit(node.type, transitive);
      return;
    }
    if (ts.isTypeReferenceNode(node) || ts.isExpressionWithTypeArguments(node)) {
      const name = ts.isTypeReferenceNode(node) ? node.typeName : node.expression;
      let symbol = checker.getSymbolAtLocation(ts.isQualifiedName(name) ? name.right : name);
      if (symbol !== undefined && symbol.flags & ts.SymbolFlags.Alias)
        symbol = checker.getAliasedSymbol(symbol);
      for (const d of symbol?.declarations ?? []) {
        if (inRuntime(d)) needed.add(symbol!.name);
        if (
          transitive &&
          (ts.isInterfaceDeclaration(d) || ts.isTypeAliasDeclaration(d)) &&
          !walked.has(d)
        ) {
          walked.add(d);
          visit(d, transitive);
        }
      }
    }
    ts.forEachChild(node, (child) => visit(child, transitive));
  };

  for (const name of barrel) {
    const symbol = checker
      .getExportsOfModule(checker.getSymbolAtLocation(barrelFile!)!)
      .find((s) => s.name === name)!;
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    for (const d of target.declarations ?? []) {
      if (inRuntime(d)) continue;
      const adapter = relative(out, d.getSourceFile().fileName).startsWith("telemetry");
      visit(d, !adapter);
    }
  }
  return { needed, barrel, index };
}

describe.each(Object.entries(SCENARIOS))("the output's index.ts of %s", (name, input) => {
  const out = join(OUT, name);
  let names: ReturnType<typeof referencedRuntimeNames>;

  beforeAll(async () => {
    rmSync(out, { recursive: true, force: true });
    const result = await build([input], { cwd: PACKAGE_ROOT, out, allowOutsideProject: true });
    expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    names = referencedRuntimeNames(out);
  }, 60_000);
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it("exports every runtime name the public signatures refer to", () => {
    expect(names.needed.size).toBeGreaterThan(5);
    const missing = [...names.needed]
      .filter((n) => names.index.has(n) && !names.barrel.has(n))
      .sort();
    expect(missing).toEqual([]);
  });

  it("exports none of the runtime's building blocks", () => {
    for (const internal of [
      "createDependency",
      "sendHttp",
      "CircuitBreaker",
      "Bulkhead",
      "Emitter",
      "StaleCache",
      "OperationSettings",
      "TimeWindow",
    ]) {
      expect(names.index.has(internal), internal).toBe(true);
      expect(names.barrel.has(internal), internal).toBe(false);
    }
  });
});

describe("a consumer of the output's index.ts", () => {
  const out = join(OUT, "consumer");
  beforeAll(async () => {
    rmSync(out, { recursive: true, force: true });
    const result = await build(["examples/checkout"], {
      cwd: PACKAGE_ROOT,
      out,
      allowOutsideProject: true,
    });
    expect(result.written).toBe(true);
    mkdirSync(out, { recursive: true });
    writeFileSync(
      join(out, "consumer.ts"),
      `import {
  createPaymentsClient,
  createVirtualClock,
  isCircuitOpenError,
  isHttpError,
  isResilienceError,
  isTimeoutError,
  withDeadline,
  type DependencyHealth,
  type HttpCallOptions,
  type PaymentsClient,
  type PaymentsClientConfig,
  type ResilienceError,
  type ResilienceEvent,
} from "./index.js";

const events: ResilienceEvent[] = [];
const config: PaymentsClientConfig = { baseUrl: "http://127.0.0.1:1", clock: createVirtualClock(), observer: (e) => events.push(e) };
const payments: PaymentsClient = createPaymentsClient(config);
const options: HttpCallOptions = { deadline: 250, headers: { authorization: "Bearer t" } };

export async function charge(): Promise<string> {
  try {
    const charge = await withDeadline(500, () => payments.getCharge({ chargeId: "ch_1" }, options));
    return charge.status;
  } catch (error) {
    if (isCircuitOpenError(error) || isTimeoutError(error)) return "unavailable";
    if (isHttpError(error)) return \`http \${error.status}\`;
    if (isResilienceError(error)) {
      const failure: ResilienceError = error;
      return failure.kind;
    }
    throw error;
  }
}

export const health = (): DependencyHealth => payments.health();
`,
    );
  }, 60_000);
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it("compiles under tsc --strict, importing only from index.ts", async () => {
    expect(await compile([join(out, "consumer.ts")], "NodeNext")).toBe("");
  }, 60_000);
});

describe("docs/runtime.md", () => {
  it("lists every name of the public surface", () => {
    const source = ts.createSourceFile(
      "public.ts",
      readFileSync(join(PACKAGE_ROOT, "templates", "runtime", "public.ts"), "utf8"),
      ts.ScriptTarget.ES2022,
    );
    const exported = source.statements.flatMap((s) =>
      ts.isExportDeclaration(s) && s.exportClause !== undefined && ts.isNamedExports(s.exportClause)
        ? s.exportClause.elements.map((e) => e.name.text)
        : [],
    );
    expect(exported.length).toBeGreaterThan(20);
    const docs = readFileSync(join(PACKAGE_ROOT, "docs", "runtime.md"), "utf8");
    const section = docs.slice(
      docs.indexOf("## Public surface"),
      docs.indexOf("\n## ", docs.indexOf("## Public surface") + 1),
    );
    expect(exported.filter((name) => !section.includes(`\`${name}\``))).toEqual([]);
  });
});
