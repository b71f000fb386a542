import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import tsParser from "@typescript-eslint/parser";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";
import plugin from "../../eslint-plugin/index.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const FIXTURE = join(REPO, "test/eslint-plugin/fixtures/naive-checkout");
const EXAMPLES = join(REPO, "examples");
const SOURCE = /\.(ts|js|mjs|cjs)$/;
/** The example's hand-written "before" variant, written badly on purpose to show the failure. */
const NAIVE_DEMO = /\/demo\/naive\.[cm]?[jt]s$/;

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && SOURCE.test(entry.name) && !entry.name.endsWith(".d.ts"))
    .map((entry) => join(entry.parentPath, entry.name))
    .filter((file) => !file.includes("/node_modules/"))
    .sort();
}

function eslint(): ESLint {
  return new ESLint({
    cwd: REPO,
    overrideConfigFile: true,
    overrideConfig: [
      { files: ["**/*.ts"], languageOptions: { parser: tsParser } },
      plugin.configs.recommended,
    ],
  });
}

/** `file:line rule` for every problem found, and for every `// expect: <rule>` marker. */
async function lintFound(files: string[]): Promise<string[]> {
  const results = await eslint().lintFiles(files);
  return results
    .flatMap((result) =>
      result.messages.map(
        (m) => `${relative(REPO, result.filePath)}:${m.line} ${m.ruleId ?? `fatal: ${m.message}`}`,
      ),
    )
    .sort();
}

function expectedMarkers(files: string[]): string[] {
  return files
    .flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .flatMap((text, index) => {
          const match = /\/\/ expect: ([a-z-]+(?:, [a-z-]+)*)\s*$/.exec(text);
          return match
            ? match[1]!
                .split(", ")
                .map((rule) => `${relative(REPO, file)}:${index + 1} resgen/${rule}`)
            : [];
        }),
    )
    .sort();
}

describe("configs.recommended on realistic code", () => {
  it("finds exactly the problems planted in the naive checkout service", async () => {
    const files = sourceFiles(FIXTURE);
    expect(files.length).toBeGreaterThanOrEqual(6);
    const expected = expectedMarkers(files);
    const rules = new Set(expected.map((line) => line.split(" ")[1]));
    expect(rules).toEqual(
      new Set([
        "resgen/require-timeout",
        "resgen/no-retry-non-idempotent",
        "resgen/retry-inside-breaker",
      ]),
    );
    expect(await lintFound(files)).toEqual(expected);
  });

  it("finds nothing in examples/, generated clients included", async () => {
    // Any .ts/.js under examples/ (generated clients in examples/**/generated/ included), except
    // the demo's deliberately naive variant, which the next test expects to be flagged.
    const files = sourceFiles(EXAMPLES).filter((file) => !NAIVE_DEMO.test(file));
    const found = files.length === 0 ? [] : await lintFound(files);
    expect(found).toEqual([]);
  });

  it("flags the example's deliberately naive demo, if it has one", async () => {
    const files = sourceFiles(EXAMPLES).filter((file) => NAIVE_DEMO.test(file));
    for (const file of files) {
      const found = await lintFound([file]);
      expect(found.length, `${relative(REPO, file)} is written the naive way`).toBeGreaterThan(0);
      for (const line of found)
        expect(line).toMatch(
          / resgen\/(require-timeout|no-retry-non-idempotent|retry-inside-breaker)$/,
        );
    }
  });
});
