import { execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it, vi } from "vitest";
import { main, type Io } from "../src/cli/cli.js";
import { PACKAGE_ROOT } from "../src/version.js";
import { EMITTERS } from "../src/targets/index.js";

const runIn = async (cwd: string, ...args: string[]) => {
  let stdout = "";
  let stderr = "";
  const io: Io = {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    cwd,
    color: false,
  };
  const code = await main(["node", "resgen", ...args], io);
  return { code, stdout, stderr };
};
const run = (...args: string[]) => runIn(PACKAGE_ROOT, ...args);

const THREE = "test/fixtures/check/three-problems.yaml";

describe("resgen check", () => {
  it("passes the bundled example and prints what it found", async () => {
    const r = await run("check", "examples/checkout");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      "payments (examples/checkout/resilience/payments.yaml): essential, http, bulkhead 25",
    );
    expect(r.stdout).toMatch(
      /createCharge +POST \/charges · attempt 500ms \/ total 2s · up to 3 attempts \(full jitter\) · key Idempotency-Key/,
    );
    expect(r.stdout).toContain(
      "checkout (examples/checkout/resilience/checkout-service.yaml): service, edge deadline 2s (max 5s)",
    );
    expect(r.stdout.trimEnd().split("\n").at(-1)).toBe("5 policies checked: 0 errors, 0 warnings");
  });

  it("prints every line README.md shows for the bundled example", async () => {
    const readme = readFileSync(`${PACKAGE_ROOT}/README.md`, "utf8");
    const shown = /```console\n\$ npx resgen check examples\/checkout\n([^`]*)```/.exec(
      readme,
    )?.[1];
    expect(shown).toBeDefined();
    const printed = (await run("check", "examples/checkout")).stdout.split("\n");
    for (const line of shown!.trimEnd().split("\n"))
      if (line !== "...") expect(printed, line).toContain(line);
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
    expect(r.stdout).toContain(
      ' 5 |   maxAtempts: 3\n   |   ^^^^^^^^^^\n   = hint: did you mean "maxAttempts"?',
    );
  });

  it("prints the same findings as JSON", async () => {
    const r = await run("check", THREE, "--format", "json");
    expect(r.code).toBe(1);
    const json = JSON.parse(r.stdout) as {
      diagnostics: { code: string; line: number; column: number }[];
      summary: unknown;
    };
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
    const sarif = JSON.parse(r.stdout) as {
      version: string;
      runs: {
        results: {
          ruleId: string;
          ruleIndex: number;
          level: string;
          locations: {
            physicalLocation: {
              artifactLocation: { uri: string };
              region: { startLine: number; startColumn: number };
            };
          }[];
        }[];
        tool: { driver: { rules: { id: string }[] } };
      }[];
    };
    expect(sarif.version).toBe("2.1.0");
    const results = sarif.runs[0]!.results;
    expect(
      results.map((x) => [
        x.ruleId,
        x.level,
        x.locations[0]!.physicalLocation.region.startLine,
        x.locations[0]!.physicalLocation.region.startColumn,
      ]),
    ).toEqual([
      ["RG104", "error", 3, 21],
      ["RG101", "error", 5, 3],
      ["RG102", "error", 10, 3],
    ]);
    const rules = sarif.runs[0]!.tool.driver.rules;
    for (const x of results) expect(rules[x.ruleIndex]!.id).toBe(x.ruleId);
    expect(results[0]!.locations[0]!.physicalLocation.artifactLocation.uri).toBe(THREE);
  });

  it("RG004: a named file that does not exist is an I/O error (exit 2)", async () => {
    const r = await run("check", "test/fixtures/check/missing.yaml");
    expect(r.code).toBe(2);
    expect(r.stdout).toContain(
      "test/fixtures/check/missing.yaml:1:1 error RG004 cannot read test/fixtures/check/missing.yaml: no such file",
    );
  });

  it("RG113: two files declaring the same dependency", async () => {
    const r = await run("check", "test/fixtures/duplicate");
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      'test/fixtures/duplicate/b.yaml:2:13 error RG113 dependency "search" is already declared in test/fixtures/duplicate/a.yaml',
    );
  });

  it("RG114: a glob that matches nothing is a usage error (exit 2)", async () => {
    const r = await run("check", "test/fixtures/nowhere/*.yaml");
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'resgen: error RG114 no policy files match "test/fixtures/nowhere/*.yaml"\n',
    );
  });

  it("reports problems in the project file at their position, and still checks the policies", async () => {
    const r = await run("check", "test/fixtures/bad-project");
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      'test/fixtures/bad-project/resgen.config.yaml:4:28 error RG101 unknown key "backof" in defaults.retry',
    );
    expect(r.stdout).toContain("1 policy checked: 1 error, 0 warnings");
  });

  it("refuses bad usage with exit code 2", async () => {
    expect((await run("check", "--format", "xml")).code).toBe(2);
    expect((await run("check", "--max-warnings", "-1")).code).toBe(2);
    expect((await run("frobnicate")).code).toBe(2);
    expect((await run("--version")).code).toBe(0);
  });

  it("shows one default for --target in build --help", async () => {
    const r = await run("build", "--help");
    const help = (r.stdout + r.stderr).replace(/\s+/g, " ");
    expect(help).toContain("grpc (default: ts)");
    expect(help).not.toContain("(default: [])");
  });

  it("runs as the installed binary", async () => {
    expect(
      existsSync(`${PACKAGE_ROOT}/dist/src/cli/cli.js`),
      "dist/ is built by npm test before the tests run",
    ).toBe(true);
    const r = await promisify(execFile)(
      process.execPath,
      ["bin/resgen.js", "check", "examples/checkout", "--format", "json"],
      { cwd: PACKAGE_ROOT },
    );
    expect(JSON.parse(r.stdout)).toEqual({ diagnostics: [], summary: { errors: 0, warnings: 0 } });
  });

  it("ends quietly, with its own exit code, when the reader of its output has gone (| head)", async () => {
    // the reader closes its end before resgen prints: every write meets a closed pipe
    const child = spawn(
      process.execPath,
      ["bin/resgen.js", "explain", "examples/checkout/resilience/payments.yaml"],
      {
        cwd: PACKAGE_ROOT,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    child.stdout.destroy();
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((done) => child.on("close", done));
    expect(stderr).toBe("");
    expect(code).toBe(0);
  });
});

interface JsonReport {
  diagnostics: {
    code: string;
    severity: string;
    file: string;
    line: number;
    column: number;
    message: string;
  }[];
  summary: { errors: number; warnings: number };
}

describe("--format json on failure", () => {
  const dirs: string[] = [];
  const folder = () => {
    const dir = mkdtempSync(join(tmpdir(), "resgen-cli-"));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    vi.restoreAllMocks();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("writes JSON for a glob that matches nothing, and nothing on stderr (exit 2)", async () => {
    const r = await run("check", "test/fixtures/nowhere/*.yaml", "--format", "json");
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("");
    const json = JSON.parse(r.stdout) as JsonReport;
    expect(json.diagnostics.map((d) => [d.code, d.file, d.line, d.column, d.message])).toEqual([
      [
        "RG114",
        "test/fixtures/nowhere/*.yaml",
        1,
        1,
        'no policy files match "test/fixtures/nowhere/*.yaml"',
      ],
    ]);
    expect(json.summary).toEqual({ errors: 1, warnings: 0 });
  });

  it("writes JSON for a missing file, for check and for build (exit 2)", async () => {
    for (const command of ["check", "build"]) {
      const r = await run(command, "test/fixtures/check/missing.yaml", "--format", "json");
      expect(r.code, command).toBe(2);
      expect(
        (JSON.parse(r.stdout) as JsonReport).diagnostics.map((d) => d.code),
        command,
      ).toEqual(["RG004"]);
    }
  });

  it("writes JSON for a project file that cannot be read", async () => {
    const dir = folder();
    mkdirSync(join(dir, "resgen.config.yaml"));
    mkdirSync(join(dir, "resilience"));
    writeFileSync(
      join(dir, "resilience/stock.yaml"),
      "version: 1\ndependency: stock\ntimeout: { attempt: 300ms }\noperations:\n  get: { method: GET, path: /stock }\n",
    );
    const r = await runIn(dir, "check", ".", "--format", "json");
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("");
    const json = JSON.parse(r.stdout) as JsonReport;
    expect(
      json.diagnostics
        .filter((d) => d.severity === "error")
        .map((d) => [d.code, d.file, d.message]),
    ).toEqual([
      [
        "RG116",
        "resgen.config.yaml",
        "cannot read resgen.config.yaml: it is a directory, not a regular file",
      ],
    ]);
  });

  it("writes JSON for explain's usage errors (exit 2)", async () => {
    const many = await run("explain", "examples/checkout", "--format", "json");
    expect(many.code).toBe(2);
    expect(many.stderr).toBe("");
    expect(
      (JSON.parse(many.stdout) as JsonReport).diagnostics.map((d) => [d.code, d.file]),
    ).toEqual([["RG117", "examples/checkout"]]);
    const unknown = await run(
      "explain",
      "examples/checkout/resilience/payments.yaml",
      "--operation",
      "refund",
      "--format",
      "json",
    );
    expect(unknown.code).toBe(2);
    expect((JSON.parse(unknown.stdout) as JsonReport).diagnostics.map((d) => d.message)).toEqual([
      'payments has no operation "refund"; it has getCharge, createCharge',
    ]);
  });

  it("reports a target that crashes as RG417, without a stack trace, and writes nothing", async () => {
    const dir = folder();
    mkdirSync(join(dir, "resilience"));
    writeFileSync(
      join(dir, "resilience/stock.yaml"),
      "version: 1\ndependency: stock\ntimeout: { attempt: 300ms }\noperations:\n  get: { method: GET, path: /stock }\n",
    );
    vi.spyOn(EMITTERS, "istio").mockImplementation(() => {
      throw new Error("boom");
    });
    for (const fmt of ["json", "pretty"]) {
      const r = await runIn(dir, "build", "--target", "ts,istio", "--format", fmt);
      expect(r.code, fmt).toBe(2);
      expect(r.stderr, fmt).toBe("");
      expect(r.stdout, fmt).not.toMatch(/\n\s+at /);
      expect(r.stdout, fmt).toContain(
        "the istio target failed on these policies (boom); nothing is written",
      );
      if (fmt === "json")
        expect(
          (JSON.parse(r.stdout) as JsonReport).diagnostics.map((d) => [d.code, d.file, d.line]),
        ).toContainEqual(["RG417", "resilience/stock.yaml", 2]);
    }
    expect(existsSync(join(dir, "src/generated"))).toBe(false);
  });
});
