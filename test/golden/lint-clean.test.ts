/**
 * The generated code passes typescript-eslint's stock strictTypeChecked config, no rule changed,
 * and keeps every line within 100 columns (docs/build.md, "Guarantees of the generated code"):
 * clients, barrel and runtime of each golden scenario, linted with type information under the
 * strict tsconfig a project would use.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { ESLint } from "eslint";
import tseslint from "typescript-eslint";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build } from "../../src/build/build.js";
import { PACKAGE_ROOT } from "../../src/version.js";

const SCENARIOS = {
  checkout: "examples/checkout",
  hostile: "test/golden/hostile",
  shapes: "test/golden/shapes",
} as const;

const WIDTH = 100;

/** The strict settings of docs/build.md's guarantees, as a project's tsconfig.json. */
const TSCONFIG = {
  compilerOptions: {
    target: "ES2022",
    lib: ["ES2023"],
    module: "NodeNext",
    moduleResolution: "NodeNext",
    types: ["node"],
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    noImplicitOverride: true,
    verbatimModuleSyntax: true,
    skipLibCheck: true,
    noEmit: true,
  },
  include: ["**/*.ts"],
};

/** `scenario/path` of a generated file. */
function fileOf(dir: string, path: string): { scenario: string; file: string } {
  const [scenario = "", ...rest] = relative(dir, path).split(/[\\/]/);
  return { scenario, file: rest.join("/") };
}

describe("generated code", () => {
  let dir: string;
  let results: ESLint.LintResult[];

  beforeAll(async () => {
    // inside the package, so the generated code resolves @types/node from its node_modules
    const parent = join(PACKAGE_ROOT, "test/golden/__out__");
    mkdirSync(parent, { recursive: true });
    dir = mkdtempSync(join(parent, "lint-"));
    for (const [name, input] of Object.entries(SCENARIOS)) {
      const result = await build([input], {
        cwd: PACKAGE_ROOT,
        out: join(dir, name),
        allowOutsideProject: true,
      });
      expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    }
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(TSCONFIG));
    const eslint = new ESLint({
      cwd: dir,
      overrideConfigFile: true,
      overrideConfig: [
        ...tseslint.configs.strictTypeChecked,
        {
          languageOptions: {
            parserOptions: {
              project: "./tsconfig.json",
              tsconfigRootDir: dir,
              // one lint run per test file; under CI=true the parser would otherwise assume a
              // single run for the whole process
              disallowAutomaticSingleRunInference: true,
            },
          },
        },
      ],
    });
    results = await eslint.lintFiles(["**/*.ts"]);
  }, 180_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("covers clients, barrel and runtime of every scenario", () => {
    const files = results.map((r) => fileOf(dir, r.filePath));
    for (const scenario of Object.keys(SCENARIOS)) {
      const own = files.filter((f) => f.scenario === scenario).map((f) => f.file);
      expect(own).toContain("index.ts");
      expect(own).toContain("runtime/call.ts");
      expect(own.filter((f) => !f.startsWith("runtime/")).length).toBeGreaterThan(1);
    }
  });

  it("passes typescript-eslint's strictTypeChecked config unchanged", () => {
    const problems: string[] = [];
    for (const result of results) {
      const { scenario, file } = fileOf(dir, result.filePath);
      for (const m of result.messages)
        problems.push(`${scenario}/${file}:${m.line}:${m.column} ${m.ruleId ?? ""} ${m.message}`);
    }
    expect(problems).toEqual([]);
  });

  it(`keeps every line within ${WIDTH} columns`, () => {
    const long: string[] = [];
    for (const result of results) {
      const { scenario, file } = fileOf(dir, result.filePath);
      readFileSync(result.filePath, "utf8")
        .split("\n")
        .forEach((line, i) => {
          if (line.length > WIDTH)
            long.push(`${scenario}/${file}:${String(i + 1)} (${String(line.length)})`);
        });
    }
    expect(long).toEqual([]);
  });
});
