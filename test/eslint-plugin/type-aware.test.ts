import { join } from "node:path";
import { fileURLToPath } from "node:url";
import tsParser from "@typescript-eslint/parser";
import { ESLint, type Linter } from "eslint";
import { describe, expect, it } from "vitest";
import plugin from "../../eslint-plugin/index.js";

const FIXTURE = fileURLToPath(new URL("./fixtures/typed/", import.meta.url));
const SERVICE = join(FIXTURE, "service.ts");

async function lint(
  config: Linter.Config,
  typed: boolean,
  show: (m: Linter.LintMessage) => string = (m) => `${m.line}:${m.column} ${m.ruleId ?? m.message}`,
): Promise<string[]> {
  const eslint = new ESLint({
    cwd: FIXTURE,
    overrideConfigFile: true,
    overrideConfig: [
      {
        files: ["**/*.ts"],
        languageOptions: {
          parser: tsParser,
          parserOptions: typed
            ? {
                project: "./tsconfig.json",
                tsconfigRootDir: FIXTURE,
                // Each test is its own lint run of the same file; under CI=true the parser would
                // assume one run per process and not rebuild the program for the second.
                disallowAutomaticSingleRunInference: true,
              }
            : {},
        },
      },
      config,
    ],
  });
  const [result] = await eslint.lintFiles([SERVICE]);
  return result!.messages.map(show);
}

describe("configs['recommended-type-checked']", () => {
  it("recognises a generated client passed as a parameter from its type", async () => {
    expect(await lint(plugin.configs["recommended-type-checked"], true)).toEqual([
      "6:37 resgen/retry-inside-breaker",
    ]);
  });

  it("names the client it found by its type, not a repeated placeholder", async () => {
    const [message] = await lint(
      plugin.configs["recommended-type-checked"],
      true,
      (m) => m.message,
    );
    expect(message).toContain("a resgen-generated client (inventory)");
  });

  it("stays syntactic without type information, even when the option is on", async () => {
    expect(await lint(plugin.configs["recommended-type-checked"], false)).toEqual([]);
  });

  it("does not use type information under configs.recommended", async () => {
    expect(await lint(plugin.configs.recommended, true)).toEqual([]);
  });
});
