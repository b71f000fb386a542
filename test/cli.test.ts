import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { main, type Io } from "../src/cli/cli.js";
import { PACKAGE_ROOT } from "../src/version.js";

const run = async (...args: string[]) => {
  let stdout = "";
  let stderr = "";
  const io: Io = { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), cwd: PACKAGE_ROOT, color: false };
  const code = await main(["node", "resgen", ...args], io);
  return { code, stdout, stderr };
};

const THREE = "test/fixtures/check/three-problems.yaml";

describe("resgen check", () => {
  it("passes the bundled example and prints what it found", async () => {
    const r = await run("check", "examples/checkout");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("payments (examples/checkout/resilience/payments.yaml): essential, http, bulkhead 25");
    expect(r.stdout).toMatch(/createCharge +POST \/charges · attempt 500ms \/ total 2s · up to 3 attempts \(full jitter\) · key Idempotency-Key/);
    expect(r.stdout).toContain("checkout (examples/checkout/resilience/checkout-service.yaml): service, edge deadline 2s (max 5s)");
    expect(r.stdout.trimEnd().split("\n").at(-1)).toBe("5 policies checked: 0 errors, 0 warnings");
  });

  it("prints every line README.md shows for the bundled example", async () => {
    const readme = readFileSync(`${PACKAGE_ROOT}/README.md`, "utf8");
    const shown = /```console\n\$ npx resgen check examples\/checkout\n([^`]*)```/.exec(readme)?.[1];
    expect(shown).toBeDefined();
    const printed = (await run("check", "examples/checkout")).stdout.split("\n");
    for (const line of shown!.trimEnd().split("\n")) if (line !== "...") expect(printed, line).toContain(line);
  });

  it("reports a misspelled key, a unitless duration and a missing method at their positions", async () => {
    const r = await run("check", THREE);
    expect(r.code).toBe(1);
    const heads = r.stdout.split("\n").filter((l) => l.startsWith(THREE));
    expect(heads).toEqual([
      `${THREE}:3:21 error RG104 timeout.attempt: duration 250 has no unit`,
      `${THREE}:5:3 error RG101 unknown key "maxAtempts" in retry`,
      `${THREE}:10:3 error RG102 missing required key "method" in operation "createCharge" (transport: http needs a method and a path)`,
    ]);
    // a code frame with a caret under the node
    expect(r.stdout).toContain(" 5 |   maxAtempts: 3\n   |   ^^^^^^^^^^\n   = hint: did you mean \"maxAttempts\"?");
  });

  it("prints the same findings as JSON", async () => {
    const r = await run("check", THREE, "--format", "json");
    expect(r.code).toBe(1);
    const json = JSON.parse(r.stdout) as { diagnostics: { code: string; line: number; column: number }[]; summary: unknown };
    expect(json.diagnostics.map((d) => [d.code, d.line, d.column])).toEqual([
      ["RG104", 3, 21],
      ["RG101", 5, 3],
      ["RG102", 10, 3],
    ]);
    expect(json.summary).toEqual({ errors: 3, warnings: 0 });
  });

  it("prints SARIF 2.1.0 for code scanning", async () => {
    const r = await run("check", THREE, "--format", "sarif");
    expect(r.code).toBe(1);
    const sarif = JSON.parse(r.stdout);
    expect(sarif.version).toBe("2.1.0");
    const results = sarif.runs[0].results as { ruleId: string; ruleIndex: number; level: string; locations: { physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number; startColumn: number } } }[] }[];
    expect(results.map((x) => [x.ruleId, x.level, x.locations[0]!.physicalLocation.region.startLine, x.locations[0]!.physicalLocation.region.startColumn])).toEqual([
      ["RG104", "error", 3, 21],
      ["RG101", "error", 5, 3],
      ["RG102", "error", 10, 3],
    ]);
    const rules = sarif.runs[0].tool.driver.rules as { id: string }[];
    for (const x of results) expect(rules[x.ruleIndex]!.id).toBe(x.ruleId);
    expect(results[0]!.locations[0]!.physicalLocation.artifactLocation.uri).toBe(THREE);
  });

  it("RG004: a named file that does not exist is an I/O error (exit 2)", async () => {
    const r = await run("check", "test/fixtures/check/missing.yaml");
    expect(r.code).toBe(2);
    expect(r.stdout).toContain("test/fixtures/check/missing.yaml:1:1 error RG004 cannot read test/fixtures/check/missing.yaml: no such file");
  });

  it("RG113: two files declaring the same dependency", async () => {
    const r = await run("check", "test/fixtures/duplicate");
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('test/fixtures/duplicate/b.yaml:2:13 error RG113 dependency "search" is already declared in test/fixtures/duplicate/a.yaml');
  });

  it("RG114: a glob that matches nothing is a usage error (exit 2)", async () => {
    const r = await run("check", "test/fixtures/nowhere/*.yaml");
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('resgen: error RG114 no policy files match "test/fixtures/nowhere/*.yaml"\n');
  });

  it("reports problems in the project file at their position, and still checks the policies", async () => {
    const r = await run("check", "test/fixtures/bad-project");
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('test/fixtures/bad-project/resgen.config.yaml:4:28 error RG101 unknown key "backof" in defaults.retry');
    expect(r.stdout).toContain("1 policy checked: 1 error, 0 warnings");
  });

  it("refuses bad usage with exit code 2", async () => {
    expect((await run("check", "--format", "xml")).code).toBe(2);
    expect((await run("check", "--max-warnings", "-1")).code).toBe(2);
    expect((await run("frobnicate")).code).toBe(2);
    expect((await run("--version")).code).toBe(0);
  });

  it("runs as the installed binary", async () => {
    expect(existsSync(`${PACKAGE_ROOT}/dist/src/cli/cli.js`), "dist/ is built by npm ci (prepare)").toBe(true);
    const r = await promisify(execFile)(process.execPath, ["bin/resgen.js", "check", "examples/checkout", "--format", "json"], { cwd: PACKAGE_ROOT });
    expect(JSON.parse(r.stdout)).toEqual({ diagnostics: [], summary: { errors: 0, warnings: 0 } });
  });
});
