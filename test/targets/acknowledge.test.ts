/**
 * `targets.acknowledge` in the project file (docs/targets.md, "Acknowledging notes"): the listed
 * codes of the listed target are counted but not printed; JSON lists them apart, SARIF as
 * suppressed results; an entry that cannot be acknowledged is an error at the entry.
 */
import { rmSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { buildMesh, checkoutProject } from "./notes.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The example's project file with `targets:` appended. */
function project(targets: string): string {
  const dir = checkoutProject((text) => `${text}targets:\n${targets}`);
  dirs.push(dir);
  return dir;
}

/** Code and target of every diagnostic or group printed. */
const printed = (text: string) =>
  text.split("\n").flatMap((l) => {
    const m = / ?warning (RG\d+) (\w+)/.exec(l);
    return m ? [`${m[1]!} ${m[2]!}`] : [];
  });

describe("acknowledged target notes", () => {
  it("hides exactly the listed codes of the listed target, and counts them", async () => {
    const before = await buildMesh(project("  acknowledge: {}\n"));
    const dir = project("  acknowledge:\n    linkerd: [RG404, RG409]\n    istio: [RG405]\n");
    const after = await buildMesh(dir);
    const was = printed(before.stdout);
    const is = printed(after.stdout);
    const hidden = (code: string) =>
      code === "RG404 linkerd" || code === "RG409 linkerd" || code === "RG405 istio";
    expect(is).toEqual(was.filter((c) => !hidden(c)));
    // the same codes of the other targets are still printed
    expect(is).toContain("RG404 grpc");
    expect(is).toContain("RG409 istio");
    expect(is).toContain("RG405 linkerd");
    // 4 bulkheads and 10 retry conditions for linkerd, 2 fallbacks for istio
    expect(after.stdout).toContain(
      "\n0 errors, 55 warnings (16 acknowledged in resgen.config.yaml)\n",
    );
  });

  it("leaves acknowledged notes out of --max-warnings", async () => {
    const dir = project(
      "  acknowledge:\n    linkerd: [RG402, RG404, RG405, RG406, RG407, RG408, RG409, RG410, RG411, RG412, RG413, RG414]\n" +
        "    istio: [RG402, RG404, RG405, RG406, RG408, RG409, RG410, RG411, RG413, RG414]\n" +
        "    grpc: [RG401, RG402, RG404, RG405, RG409, RG410, RG412, RG414]\n",
    );
    const result = await buildMesh(dir, ["--max-warnings", "0", "--format", "json"]);
    const json = JSON.parse(result.stdout) as {
      diagnostics: unknown[];
      acknowledged: { code: string; acknowledgedAt: { file: string; line: number } }[];
      summary: { errors: number; warnings: number; acknowledged: number };
    };
    expect(json.diagnostics).toEqual([]);
    expect(json.summary).toEqual({ errors: 0, warnings: 0, acknowledged: 71 });
    expect(json.acknowledged).toHaveLength(71);
    const rg404 = json.acknowledged.find((a) => a.code === "RG404");
    expect(rg404?.acknowledgedAt.file).toBe("resgen.config.yaml");
    expect(rg404?.acknowledgedAt.line).toBeGreaterThan(20);
  });

  it("marks acknowledged notes as suppressed in SARIF, at the entry", async () => {
    const dir = project("  acknowledge:\n    linkerd: [RG404]\n");
    const sarif = JSON.parse((await buildMesh(dir, ["--format", "sarif"])).stdout) as {
      runs: {
        results: {
          ruleId: string;
          suppressions?: {
            kind: string;
            status: string;
            location: { physicalLocation: { region: { startLine: number; startColumn: number } } };
          }[];
        }[];
      }[];
    };
    const results = sarif.runs[0]!.results;
    expect(results).toHaveLength(71);
    const suppressed = results.filter((r) => r.suppressions);
    expect(suppressed.map((r) => r.ruleId)).toEqual(["RG404", "RG404", "RG404", "RG404"]);
    const [s] = suppressed[0]!.suppressions!;
    expect(s).toMatchObject({ kind: "external", status: "accepted" });
    // `targets:` is appended after the example's 22 lines: `    linkerd: [RG404]` is line 25
    expect(s!.location.physicalLocation.region).toMatchObject({ startLine: 25, startColumn: 15 });
  });

  it("reports an error code, an unknown code and another stage's code at the entry", async () => {
    const dir = project("  acknowledge:\n    grpc: [RG404, RG415, RG999]\n    istio: [RG226]\n");
    const result = await buildMesh(dir);
    expect(result.code).toBe(1);
    const lines = result.stdout.split("\n").filter((l) => l.includes(" error "));
    expect(lines).toEqual([
      'resgen.config.yaml:25:19 error RG107 "RG415" cannot be acknowledged for istio: it is an error, and errors cannot be acknowledged'.replace(
        "istio",
        "grpc",
      ),
      'resgen.config.yaml:25:26 error RG107 "RG999" cannot be acknowledged for grpc: it is not a resgen code',
      'resgen.config.yaml:26:13 error RG107 "RG226" cannot be acknowledged for istio: it is not a note of the targets; only the warnings of resgen build --target can be acknowledged',
    ]);
  });

  it("refuses a target it does not know", async () => {
    const dir = project("  acknowledge:\n    envoy: [RG404]\n");
    const result = await buildMesh(dir);
    expect(result.stdout).toMatch(/resgen\.config\.yaml:25:5 error RG101 unknown key "envoy"/);
  });
});
