/**
 * Findings are placed from typed provenance: the inputs a derived value was computed from and
 * the position of an inherited section, never by reading the formula written for people.
 */
import { describe, expect, it } from "vitest";
import { analyze, contextFromDocuments } from "../../src/analyze/index.js";
import { main, type Io } from "../../src/cli/cli.js";
import { LineIndex } from "../../src/diagnostics/position.js";
import { loadYaml } from "../../src/language/parse.js";
import { checkTexts } from "../../src/program/check.js";
import type { ResolvedPolicy } from "../../src/model/resolved.js";
import { PACKAGE_ROOT } from "../../src/version.js";

const run = async (...args: string[]) => {
  let stdout = "";
  const io: Io = {
    stdout: (t) => void (stdout += t),
    stderr: () => undefined,
    cwd: PACKAGE_ROOT,
    color: false,
  };
  const code = await main(["node", "resgen", ...args], io);
  return { code, stdout };
};

describe("a finding about a derived attempt timeout", () => {
  // capped at the total (50ms), the attempt timeout derived from p999 is under p99: RG208, at `100ms` (3:29)
  const text =
    "version: 1\ndependency: p\nlatency: { p99: 90ms, p999: 100ms }\nbulkhead: false\ntimeout: { total: 50ms }\noperations:\n  get: { method: GET, path: /a }\n";
  const doc = loadYaml("p.yaml", text);
  if (!doc.ok) throw new Error("fixture does not parse");
  const ctx = contextFromDocuments(new Map([["p.yaml", doc.source]]));
  const where = (policy: ResolvedPolicy) => {
    const found = analyze([policy], ctx).find((d) => d.code === "RG208");
    expect(found).toBeDefined();
    return new LineIndex(text).position(found!.span.start);
  };

  it("points at the latency entry it was derived from", () => {
    const policy = checkTexts([{ file: "p.yaml", text }]).policies[0]!;
    expect(policy.operations[0]!.provenance["timeout.attempt"]?.inputs?.map((i) => i.key)).toEqual([
      "latency.p999",
      "timeout.total",
    ]);
    expect(where(policy)).toEqual({ line: 3, column: 29 });
  });

  it("still points there when the formula is worded differently: the inputs decide, not the text", () => {
    const policy = checkTexts([{ file: "p.yaml", text }]).policies[0]!;
    const op = policy.operations[0]!;
    const reworded = {
      ...op,
      provenance: {
        ...op.provenance,
        "timeout.attempt": {
          ...op.provenance["timeout.attempt"]!,
          formula: "one and a half times the slowest healthy call",
        },
      },
    };
    expect(where({ ...policy, operations: [reworded] })).toEqual({ line: 3, column: 29 });
  });
});

describe("a breaker or bulkhead inherited from `defaults: { breaker: {}, bulkhead: {} }`", () => {
  const dir = "test/fixtures/analyze/defaults-sections";

  it("is reported at its key under defaults:, in the project file (RG212, RG214)", async () => {
    const r = await run("check", dir);
    const config = `${dir}/resgen.config.yaml`;
    // line 3 is `defaults: { breaker: {}, bulkhead: {} }`: breaker at column 13, bulkhead at 26
    expect(r.stdout).toMatch(new RegExp(`^${config}:3:13 warning RG212 `, "m"));
    expect(r.stdout).toMatch(new RegExp(`^${config}:3:26 warning RG214 `, "m"));
    expect(r.stdout).not.toMatch(/a\.yaml:1:1 /);
  });

  it("records the section's position in the model, for any reader", () => {
    const project = {
      configFile: "resgen.config.yaml",
      config: { version: 1 as const, defaults: { breaker: {}, bulkhead: {} } },
    };
    const policy = checkTexts(
      [
        {
          file: "a.yaml",
          text: "version: 1\ndependency: a\nlatency: { rps: 1 }\noperations:\n  get: { method: GET, path: /x }\n",
        },
      ],
      project,
    ).policies[0]!;
    expect(policy.provenance["breaker"]).toEqual({
      origin: "project",
      source: { file: "resgen.config.yaml", path: ["defaults", "breaker"] },
    });
    expect(policy.provenance["bulkhead"]).toEqual({
      origin: "project",
      source: { file: "resgen.config.yaml", path: ["defaults", "bulkhead"] },
    });
  });
});
