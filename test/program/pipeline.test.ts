import { describe, expect, it } from "vitest";
import { checkProgram } from "../../src/program/pipeline.js";
import { MemoryHost } from "../../src/source/host.js";
import type { ReadOutcome } from "../../src/source/read.js";
import { runAsync, runSync } from "../../src/source/task.js";
import { DiagnosticSink, diagnostic, exitCode } from "../../src/diagnostics/diagnostic.js";

/** An in-memory host that counts the reads of each file. */
class CountingHost extends MemoryHost {
  readonly reads = new Map<string, number>();
  override readFile(file: string): ReadOutcome {
    this.reads.set(file, (this.reads.get(file) ?? 0) + 1);
    return super.readFile(file);
  }
}

const API =
  'openapi: 3.0.3\ninfo: { title: Shop, version: 1.0.0 }\npaths:\n  /items:\n    get:\n      operationId: list\n      responses:\n        "200": { description: OK, content: { application/json: { schema: { $ref: "./schemas.yaml#/Item" } } } }\n';
const SCHEMAS = "Item: { type: object, properties: { id: { type: string } } }\n";

describe("the check pipeline", () => {
  it("reads each file of an OpenAPI description once, however many policies name it", () => {
    const host = new CountingHost([
      ["resgen.config.yaml", "policies: resilience/*.yaml\n"],
      ["resilience/shop.yaml", "version: 1\ndependency: shop\nopenapi: ../api/api.yaml\n"],
      ["resilience/store.yaml", "version: 1\ndependency: store\nopenapi: ../api/api.yaml\n"],
      ["api/api.yaml", API],
      ["api/schemas.yaml", SCHEMAS],
    ]);
    const result = runSync(checkProgram(host, []));
    expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(result.policies.map((p) => p.dependency)).toEqual(["shop", "store"]);
    expect(
      [...host.reads.values()].every((n) => n === 1),
      JSON.stringify([...host.reads]),
    ).toBe(true);
    expect([...host.reads.keys()].sort()).toEqual([
      "/api/api.yaml",
      "/api/schemas.yaml",
      "/resgen.config.yaml",
      "/resilience/shop.yaml",
      "/resilience/store.yaml",
    ]);
  });

  it("finds a project's policies through the host's glob and applies its defaults", () => {
    const host = new MemoryHost([
      [
        "svc/resgen.config.yaml",
        "policies: [deps/*.yaml]\ndefaults: { timeout: { attempt: 300ms } }\n",
      ],
      [
        "svc/deps/a.yaml",
        "version: 1\ndependency: a\noperations:\n  get: { method: GET, path: /a }\n",
      ],
      [
        "svc/other/b.yaml",
        "version: 1\ndependency: b\noperations:\n  get: { method: GET, path: /b }\n",
      ],
    ]);
    const result = runSync(checkProgram(host, ["svc"]));
    expect(result.policies.map((p) => [p.file, p.operations[0]!.timeout.attemptMs])).toEqual([
      ["svc/deps/a.yaml", 300],
    ]);
    expect([...result.projects.keys()]).toEqual(["/svc/resgen.config.yaml"]);
  });

  it("reports an argument that matches nothing as RG114, with the usage exit status", () => {
    const result = runSync(checkProgram(new MemoryHost([]), ["nowhere/*.yaml"]));
    expect(result.unmatched).toEqual(["nowhere/*.yaml"]);
    expect(result.diagnostics.map((d) => [d.code, d.file, d.message])).toEqual([
      ["RG114", "nowhere/*.yaml", 'no policy files match "nowhere/*.yaml"'],
    ]);
    expect(exitCode(result.diagnostics)).toBe(2);
  });

  it("runs the same task over a host that answers with promises", async () => {
    const memory = new MemoryHost([
      [
        "p.yaml",
        "version: 1\ndependency: p\nretry: { maxAtempts: 3 }\noperations:\n  get: { method: GET, path: /x }\n",
      ],
    ]);
    // each answer a promise settled on a later tick, a throw a rejection (as an async function's)
    const onLaterTick =
      <A extends unknown[], R>(f: (...args: A) => R) =>
      (...args: A): Promise<R> =>
        Promise.resolve().then(() => f(...args));
    const slow = {
      cwd: memory.cwd,
      readFile: onLaterTick((file: string) => memory.readFile(file)),
      kind: onLaterTick((path: string) => memory.kind(path)),
      glob: onLaterTick((patterns: readonly string[], dir: string) => memory.glob(patterns, dir)),
      findProject: onLaterTick((dir: string) => memory.findProject(dir)),
      realpath: onLaterTick((path: string) => memory.realpath(path)),
      isInside: onLaterTick((root: string, file: string) => memory.isInside(root, file)),
    };
    const later = await runAsync(checkProgram(slow, ["p.yaml"]));
    expect(later.diagnostics).toEqual(runSync(checkProgram(memory, ["p.yaml"])).diagnostics);
    expect(later.diagnostics.map((d) => d.code)).toContain("RG101");
    expect(() => runSync(checkProgram(slow, ["p.yaml"]))).toThrow(/asynchronously/);
  });
});

describe("the diagnostic sink", () => {
  it("keeps one of each diagnostic by code, file, span and message, and sorts them", () => {
    const sink = new DiagnosticSink();
    const late = diagnostic("RG101", "b.yaml", { start: 9, end: 12 }, "unknown key");
    const early = diagnostic("RG104", "a.yaml", { start: 3, end: 5 }, "no unit");
    sink.report([late, early, { ...late }]);
    sink.report(diagnostic("RG101", "b.yaml", { start: 9, end: 14 }, "unknown key"));
    sink.report(diagnostic("RG101", "b.yaml", { start: 9, end: 12 }, "another message"));
    expect(
      sink.all().map((d) => `${d.file}:${d.span.start}-${d.span.end} ${d.code} ${d.message}`),
    ).toEqual([
      "a.yaml:3-5 RG104 no unit",
      "b.yaml:9-12 RG101 another message",
      "b.yaml:9-12 RG101 unknown key",
      "b.yaml:9-14 RG101 unknown key",
    ]);
  });
});

describe("exit codes", () => {
  const at = { start: 0, end: 0 };
  it("follow each code's exit category", () => {
    expect(exitCode([])).toBe(0);
    expect(exitCode([diagnostic("RG224", "p.yaml", at, "w")])).toBe(0);
    expect(exitCode([diagnostic("RG224", "p.yaml", at, "w")], { maxWarnings: 0 })).toBe(1);
    expect(exitCode([diagnostic("RG101", "p.yaml", at, "e")])).toBe(1);
    for (const code of ["RG004", "RG114", "RG117", "RG307", "RG417"] as const)
      expect(
        exitCode([diagnostic("RG101", "p.yaml", at, "e"), diagnostic(code, "p.yaml", at, "x")]),
        code,
      ).toBe(2);
    // the I/O codes that exit 1 today keep doing so
    for (const code of ["RG003", "RG115", "RG116", "RG601"] as const)
      expect(exitCode([diagnostic(code, "p.yaml", at, "x")]), code).toBe(1);
  });
});
