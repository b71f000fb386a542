/**
 * The runtime is read by its users during incidents (docs/runtime.md, "Files"): its modules form
 * a graph without cycles, type-only imports included, so each file can be read from its own
 * imports down, and every file says in its first line what it holds.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../src/version.js";

const DIR = join(PACKAGE_ROOT, "templates", "runtime");
const files = readdirSync(DIR)
  .filter((f) => f.endsWith(".ts"))
  .sort();

/** Runtime modules each module imports or re-exports from, `import type` and `export type` included. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const info = ts.preProcessFile(readFileSync(join(DIR, file), "utf8"), true, true);
    const targets = info.importedFiles
      .map((f) => f.fileName)
      .filter((name) => name.startsWith("./"))
      .map((name) => name.slice(2).replace(/\.js$/, ".ts"));
    graph.set(file, [...new Set(targets)].sort());
  }
  return graph;
}

/** Every cycle found by a depth-first walk, each as the path that closes it (`a.ts → b.ts → a.ts`). */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const found: string[] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (node: string): void => {
    const at = path.indexOf(node);
    if (at >= 0) {
      found.push([...path.slice(at), node].join(" → "));
      return;
    }
    if (done.has(node)) return;
    path.push(node);
    for (const next of graph.get(node) ?? []) visit(next);
    path.pop();
    done.add(node);
  };
  for (const node of graph.keys()) visit(node);
  return found;
}

describe("the runtime's modules", () => {
  it("import only modules that exist", () => {
    const graph = importGraph();
    const missing = [...graph].flatMap(([file, targets]) =>
      targets.filter((t) => !graph.has(t)).map((t) => `${file} → ${t}`),
    );
    expect(missing).toEqual([]);
  });

  it("form no import cycle, type-only imports included", () => {
    expect(cycles(importGraph())).toEqual([]);
  });

  it("finds a cycle when there is one", () => {
    const graph = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts"]],
      ["d.ts", ["a.ts"]],
    ]);
    expect(cycles(graph)).toEqual(["a.ts → b.ts → c.ts → a.ts"]);
  });

  it("each open with a one-line comment saying what the file holds", () => {
    const without = files.filter(
      (file) => !/^\/\/ \S.*\n/.test(readFileSync(join(DIR, file), "utf8")),
    );
    expect(without).toEqual([]);
  });
});
