/**
 * The compiler's stages import one way only (docs/architecture.md, "Layers"): a module may import
 * its own folder and the layers below it, never a layer above, and never a sibling of its own
 * layer. Type-only imports count: a type pointing up is a dependency pointing up.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "../../src");

/** Bottom first. Folders on one row are siblings: none of them may import another. */
export const LAYERS: readonly (readonly string[])[] = [
  ["version.ts"],
  ["diagnostics"],
  ["source"],
  ["language"],
  ["openapi"],
  ["model"],
  ["analyze", "explain", "emit", "targets"],
  ["program"],
  ["build"],
  ["init", "tune", "chaos"],
  ["cli"],
  ["index.ts"],
];

/** The unit a file belongs to: its folder under src/, or the file itself at the top of src/. */
function unitOf(file: string): string {
  const [first] = relative(SRC, file).split(/[\\/]/);
  return first!;
}

function levelOf(unit: string): number {
  const level = LAYERS.findIndex((row) => row.includes(unit));
  if (level < 0)
    throw new Error(`src/${unit} is in no layer: add it to LAYERS and to docs/architecture.md`);
  return level;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sourceFiles(join(dir, e.name))
      : e.name.endsWith(".ts")
        ? [join(dir, e.name)]
        : [],
  );
}

/** Relative module specifiers of static, type-only, re-export and dynamic imports. */
export function importsOf(text: string): string[] {
  const specifiers: string[] = [];
  for (const m of text.matchAll(
    /(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']\s*\)/g,
  )) {
    const spec = m[1] ?? m[2]!;
    if (spec.startsWith(".")) specifiers.push(spec);
  }
  return specifiers;
}

export interface Violation {
  readonly from: string;
  readonly to: string;
  readonly why: "up" | "sideways";
}

/** Every import in `files` (path → text) that points up a layer or across to a sibling. */
export function violations(files: ReadonlyMap<string, string>): Violation[] {
  const found: Violation[] = [];
  for (const [file, text] of files) {
    const from = unitOf(file);
    for (const spec of importsOf(text)) {
      const target = resolve(dirname(file), spec).replace(/\.js$/, ".ts");
      if (relative(SRC, target).startsWith("..")) continue;
      const to = unitOf(target);
      if (to === from) continue;
      const [a, b] = [levelOf(from), levelOf(to)];
      if (b > a) found.push({ from: relative(SRC, file), to: relative(SRC, target), why: "up" });
      else if (b === a)
        found.push({ from: relative(SRC, file), to: relative(SRC, target), why: "sideways" });
    }
  }
  return found;
}

describe("layers", () => {
  const files = new Map(sourceFiles(SRC).map((f) => [f, readFileSync(f, "utf8")]));

  it("every module imports only its own folder and the layers below", () => {
    expect(violations(files)).toEqual([]);
  });

  it("an import that points up or sideways is reported", () => {
    const up = join(SRC, "diagnostics", "format.ts");
    const sideways = join(SRC, "emit", "client.ts");
    const planted = new Map([
      [up, 'import { check } from "../program/check.js";\n'],
      [
        sideways,
        'import type { Finding } from "../analyze/context.js";\nimport { x } from "./literal.js";\n',
      ],
    ]);
    expect(violations(planted)).toEqual([
      { from: "diagnostics/format.ts", to: "program/check.ts", why: "up" },
      { from: "emit/client.ts", to: "analyze/context.ts", why: "sideways" },
    ]);
  });

  it("reads static, type-only, re-export and dynamic imports", () => {
    const text = [
      'import { a } from "./a.js";',
      'import type {\n  B,\n} from "../b.js";',
      'export { c } from "./c.js";',
      'const d = await import("./d.js");',
      'import { e } from "node:fs";',
    ].join("\n");
    expect(importsOf(text)).toEqual(["./a.js", "../b.js", "./c.js", "./d.js"]);
  });

  it("every folder of src/ has a layer", () => {
    for (const unit of new Set([...files.keys()].map(unitOf)))
      expect(() => levelOf(unit)).not.toThrow();
  });
});
