import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkTexts } from "../src/program/check.js";
import { main } from "../src/cli/cli.js";
import { CODES, type Code } from "../src/diagnostics/codes.js";
import { checkExample, renderDiagnosticsDoc } from "../scripts/diagnostics-page.js";
import { loadYaml } from "../src/language/parse.js";
import { ProjectConfig } from "../src/language/schema.js";
import { validate } from "../src/language/validate.js";
import { PACKAGE_ROOT } from "../src/version.js";

describe("docs/diagnostics.md", () => {
  it("is generated from the codes table (run npm run docs)", () => {
    expect(readFileSync(join(PACKAGE_ROOT, "docs/diagnostics.md"), "utf8")).toBe(
      renderDiagnosticsDoc(),
    );
  });

  it("shows for each example exactly the code it documents", () => {
    for (const [code, info] of Object.entries(CODES) as [Code, { example?: string }][]) {
      if (info.example === undefined) continue;
      const codes = checkExample(code).map((d) => d.code);
      expect(codes, code).toEqual([code]);
    }
  });
});

/** YAML blocks of a markdown file that look like a policy or a project file. */
function yamlBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

describe("examples in the docs", () => {
  for (const doc of ["README.md", "docs/policy.md"]) {
    it(`every policy in ${doc} passes resgen check, analyzer included`, () => {
      const policies = yamlBlocks(readFileSync(join(PACKAGE_ROOT, doc), "utf8")).filter((y) =>
        /^dependency:/m.test(y),
      );
      expect(policies.length).toBeGreaterThan(0);
      for (const text of policies)
        expect(checkTexts([{ file: "doc.yaml", text }]).diagnostics).toEqual([]);
    });
  }

  // pages whose policies show one feature, so the analyzer's advice on the rest may stand; a
  // reader who copies one still gets a policy resgen accepts
  for (const doc of ["docs/store.md", "docs/runtime.md"]) {
    it(`every policy in ${doc} is one resgen accepts`, () => {
      const policies = yamlBlocks(readFileSync(join(PACKAGE_ROOT, doc), "utf8")).filter((y) =>
        /^dependency:/m.test(y),
      );
      expect(policies.length).toBeGreaterThan(0);
      for (const text of policies)
        expect(
          checkTexts([{ file: "doc.yaml", text }]).diagnostics.filter(
            (d) => d.severity === "error",
          ),
          text,
        ).toEqual([]);
    });
  }

  it("the project file in docs/policy.md is valid", () => {
    const projects = yamlBlocks(readFileSync(join(PACKAGE_ROOT, "docs/policy.md"), "utf8")).filter(
      (y) => /^policies:/m.test(y),
    );
    expect(projects).toHaveLength(1);
    const loaded = loadYaml("resgen.config.yaml", projects[0]!);
    expect(loaded.diagnostics).toEqual([]);
    expect(validate(ProjectConfig, loaded.source).diagnostics).toEqual([]);
  });
});

describe("command output quoted in the README", () => {
  it("the resgen explain block is what resgen explain prints", async () => {
    const readme = readFileSync(join(PACKAGE_ROOT, "README.md"), "utf8");
    const command =
      "$ npx resgen explain examples/checkout/resilience/payments.yaml --operation createCharge\n";
    const start = readme.indexOf(command);
    expect(start).toBeGreaterThan(0);
    const quoted = readme.slice(start + command.length, readme.indexOf("```", start));
    let stdout = "";
    const code = await main(
      [
        "node",
        "resgen",
        "explain",
        "examples/checkout/resilience/payments.yaml",
        "--operation",
        "createCharge",
      ],
      {
        stdout: (t) => void (stdout += t),
        stderr: () => undefined,
        cwd: PACKAGE_ROOT,
        color: false,
      },
    );
    expect(code).toBe(0);
    expect(quoted).toBe(stdout);
  });
});
