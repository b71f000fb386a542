/**
 * What a user gets from `npm install resgen` for the CLI alone (docs/build.md, "Install"): the
 * packed tarball installed into an empty project with the registry's dependencies, as npm
 * installs a published package. ESLint, TypeScript and typescript-eslint are optional peers of the
 * ESLint plugin, so none of them may come along.
 */
import { execFile } from "node:child_process";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PACKAGE_ROOT, VERSION } from "../../src/version.js";
import { pack } from "./pack.js";

const run = promisify(execFile);

/** The most the CLI's install may weigh: 35 MB of files under node_modules. */
const MAX_INSTALLED_BYTES = 35_000_000;

/** Scripts npm runs when it installs a package: a user would run them on every install. */
const INSTALL_SCRIPTS = ["preinstall", "install", "postinstall", "prepare"];

/**
 * The environment of `npm test` without what npm adds for its own script (the project's
 * prefix and package fields), so the scratch install sees only the user's npm configuration.
 */
function userEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^npm_(package_|lifecycle_|config_local_prefix$)/i.test(name) || name === "INIT_CWD")
      continue;
    env[name] = value;
  }
  return { ...env, npm_config_update_notifier: "false" };
}

/** Bytes of every regular file below `dir`; symbolic links are not followed. */
function installedBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) total += lstatSync(join(entry.parentPath, entry.name)).size;
  }
  return total;
}

describe("installing the packed tarball for the CLI alone", () => {
  let scratch = "";
  let project = "";
  let packages: string[] = [];
  let bytes = 0;

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), "resgen-install-"));
    const packDir = join(scratch, "pack");
    mkdirSync(packDir);
    const { tarball } = await pack(packDir);

    project = join(scratch, "project");
    mkdirSync(project);
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({ name: "scratch", version: "1.0.0", private: true }),
    );
    await run(
      "npm",
      ["install", "--omit=dev", "--no-audit", "--no-fund", "--prefer-offline", tarball],
      { cwd: project, env: userEnvironment(), timeout: 240_000 },
    );

    // npm's record of what it installed: one entry per package, at any depth.
    const lock = JSON.parse(
      readFileSync(join(project, "node_modules", ".package-lock.json"), "utf8"),
    ) as { packages: Record<string, unknown> };
    packages = Object.keys(lock.packages).filter((key) => key.startsWith("node_modules/"));
    bytes = installedBytes(join(project, "node_modules"));
    console.log(
      `npm install <resgen tarball> --omit=dev: ${packages.length} packages, ` +
        `${(bytes / 1_000_000).toFixed(1)} MB in node_modules`,
    );
  }, 300_000);

  afterAll(() => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it("installs neither ESLint nor TypeScript", () => {
    expect(existsSync(join(project, "node_modules", "eslint"))).toBe(false);
    expect(existsSync(join(project, "node_modules", "typescript"))).toBe(false);
    // Nor anywhere deeper, nor typescript-eslint's packages that need them.
    const names = packages.map((key) => key.slice(key.lastIndexOf("node_modules/") + 13));
    const heavy = ["eslint", "typescript", "@typescript-eslint/utils", "@typescript-eslint/parser"];
    expect(names.filter((name) => heavy.includes(name))).toEqual([]);
  });

  it(`keeps node_modules within ${MAX_INSTALLED_BYTES / 1_000_000} MB`, () => {
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThanOrEqual(MAX_INSTALLED_BYTES);
  });

  it("runs the installed binary: npx resgen --version (never fetched: --no)", async () => {
    const { stdout } = await run("npx", ["--no", "--", "resgen", "--version"], {
      cwd: project,
      env: userEnvironment(),
      timeout: 60_000,
    });
    expect(stdout.trim()).toBe(VERSION);
  });

  it("loads the ESLint plugin's module without ESLint or typescript-eslint installed", async () => {
    const { stdout } = await run(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        'const { default: p } = await import("resgen/eslint-plugin"); console.log(Object.keys(p.rules).join(" "));',
      ],
      { cwd: project, timeout: 60_000 },
    );
    expect(stdout.trim()).toBe("require-timeout no-retry-non-idempotent retry-inside-breaker");
  });

  it("runs no script of resgen's at install time, and still builds dist/ when packed", () => {
    const installed = JSON.parse(
      readFileSync(join(project, "node_modules", "resgen", "package.json"), "utf8"),
    ) as { scripts?: Record<string, string> };
    const scripts = installed.scripts ?? {};
    expect(INSTALL_SCRIPTS.filter((name) => name in scripts)).toEqual([]);
    expect(
      existsSync(join(project, "node_modules", "resgen", "dist", "src", "cli", "cli.js")),
    ).toBe(true);
    const own = JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    };
    expect(own.scripts["prepack"]).toBe("npm run build");
  });
});
