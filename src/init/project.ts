/**
 * What `init` needs to know about the project it scaffolds: which of ESLint and prettier it uses
 * (a dependency in package.json, or a config file), and whether its `.js` files are ES modules.
 * Ignore entries are added only for the tools a project uses (docs/quickstart.md).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { readInput } from "../source/read.js";

export interface ProjectTools {
  /** The flat config file found (eslint.config.js, …), if any. */
  readonly eslintConfig: string | undefined;
  /** A legacy config (.eslintrc*, or `eslintConfig` in package.json), which the plugin cannot join. */
  readonly eslintLegacy: string | undefined;
  /** ESLint is a dependency, or has a config. */
  readonly eslint: boolean;
  /** prettier is a dependency, or has a config or an ignore file. */
  readonly prettier: boolean;
  /** Dependencies and devDependencies of package.json, by name. */
  readonly dependencies: ReadonlySet<string>;
  /** Whether package.json says `"type": "module"`, so eslint.config.js may be an ES module. */
  readonly esm: boolean;
}

const ESLINT_FLAT = ["js", "mjs", "cjs", "ts", "mts", "cts"].map((e) => `eslint.config.${e}`);
const ESLINT_LEGACY = [
  ".eslintrc",
  ...["js", "cjs", "yaml", "yml", "json"].map((e) => `.eslintrc.${e}`),
];
const PRETTIER_FILES = [
  ".prettierrc",
  ".prettierignore",
  ...["json", "yml", "yaml", "json5", "js", "cjs", "mjs", "ts", "cts", "mts", "toml"].map(
    (e) => `.prettierrc.${e}`,
  ),
  ...["js", "cjs", "mjs", "ts", "cts", "mts"].map((e) => `prettier.config.${e}`),
];

export async function detectTools(dir: string): Promise<ProjectTools> {
  const pkg = await readPackageJson(join(dir, "package.json"));
  const dependencies = new Set([...keys(pkg["dependencies"]), ...keys(pkg["devDependencies"])]);
  const present = (names: readonly string[]) => names.find((n) => existsSync(join(dir, n)));
  const eslintConfig = present(ESLINT_FLAT);
  const eslintLegacy = present(ESLINT_LEGACY) ?? (pkg["eslintConfig"] ? "package.json" : undefined);
  return {
    eslintConfig,
    eslintLegacy,
    eslint: dependencies.has("eslint") || eslintConfig !== undefined || eslintLegacy !== undefined,
    prettier:
      dependencies.has("prettier") || "prettier" in pkg || present(PRETTIER_FILES) !== undefined,
    dependencies,
    esm: pkg["type"] === "module",
  };
}

/** package.json as an object; an empty one when there is none or it is not a JSON object. */
async function readPackageJson(file: string): Promise<Record<string, unknown>> {
  if (!existsSync(file)) return {};
  const read = await readInput(file);
  if (!("text" in read)) return {};
  try {
    const value: unknown = JSON.parse(read.text);
    return isRecord(value) ? value : {};
  } catch {
    return {};
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function keys(value: unknown): string[] {
  return isRecord(value) ? Object.keys(value) : [];
}
