/**
 * The ESLint configs README.md and docs/eslint-plugin.md ("Configure") tell users to write, taken
 * verbatim, must lint `.ts` files as written: each is saved as eslint.config.js in a scratch
 * project whose `resgen` is this checkout, and ESLint, run there, must report the fetch without a
 * timeout in a TypeScript file.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ESLint } from "eslint";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../src/version.js";
import { buildIfStale } from "./pack.js";

const scratch = mkdtempSync(join(tmpdir(), "resgen-readme-eslint-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
// the config imports resgen/eslint-plugin, which resolves to the compiled plugin in dist/
beforeAll(() => buildIfStale(), 180_000);

/** The ```js blocks of `markdown` that start with `// eslint.config.js`. */
function eslintConfigs(markdown: string): string[] {
  return [...markdown.matchAll(/```js\n(\/\/ eslint\.config\.js\n[\s\S]*?)```/g)].map((m) => m[1]!);
}

/** The first ```js block of a section of `markdown`. */
function firstBlockOf(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n${heading}\n`);
  expect(start, heading).toBeGreaterThan(0);
  const block = /```js\n([\s\S]*?)```/.exec(markdown.slice(start))?.[1];
  expect(block).toBeDefined();
  return block!;
}

const CLIENT = `export async function getStock(sku: string): Promise<unknown> {
  const response = await fetch("https://inventory.internal/items/" + sku);
  return response.json();
}
`;

let count = 0;
/** A scratch project with `config` as its eslint.config.js and a TypeScript file that calls fetch. */
function projectWith(config: string): string {
  const dir = join(scratch, `p${++count}`);
  mkdirSync(join(dir, "src"), { recursive: true });
  mkdirSync(join(dir, "node_modules/@typescript-eslint"), { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module", private: true }));
  writeFileSync(join(dir, "eslint.config.js"), config);
  writeFileSync(join(dir, "src/client.ts"), CLIENT);
  // resgen is this checkout; what the snippets import besides comes from its node_modules
  symlinkSync(PACKAGE_ROOT, join(dir, "node_modules/resgen"), "dir");
  for (const name of ["eslint", "@typescript-eslint/parser"])
    symlinkSync(join(PACKAGE_ROOT, "node_modules", name), join(dir, "node_modules", name), "dir");
  return dir;
}

/** ESLint run over the project as `npx eslint .` would: the files it linted and the rules that fired in each. */
async function lint(dir: string): Promise<Record<string, string[]>> {
  const results = await new ESLint({ cwd: dir }).lintFiles(["."]);
  return Object.fromEntries(
    results.map((r) => [
      r.filePath.slice(dir.length + 1),
      r.messages.map((m) => `${m.line}:${m.column} ${m.ruleId ?? m.message}`),
    ]),
  );
}

describe("the ESLint configs in the docs lint .ts files as written", () => {
  const readme = readFileSync(join(PACKAGE_ROOT, "README.md"), "utf8");
  const configs = eslintConfigs(readme);
  const plugin = firstBlockOf(
    readFileSync(join(PACKAGE_ROOT, "docs/eslint-plugin.md"), "utf8"),
    "## Configure",
  );
  const snippets: [string, string][] = [
    ...configs.map((c, i): [string, string] => [`README.md, eslint.config.js block ${i + 1}`, c]),
    ["docs/eslint-plugin.md, Configure", plugin],
  ];

  it("the README has its eslint.config.js blocks", () => {
    // "Use it in your service" and "The ESLint plugin"
    expect(configs).toHaveLength(2);
  });

  for (const [where, config] of snippets) {
    it(`${where}: reports the fetch without a timeout in src/client.ts`, async () => {
      const found = await lint(projectWith(config));
      expect(found["src/client.ts"]).toEqual(["2:26 resgen/require-timeout"]);
    });
  }

  it("the config with no files entry, as the README had it, lints no .ts file at all", async () => {
    const found = await lint(
      projectWith(
        'import resgen from "resgen/eslint-plugin";\n\nexport default [resgen.configs.recommended];\n',
      ),
    );
    expect(Object.keys(found)).toEqual(["eslint.config.js"]);
  });
});
