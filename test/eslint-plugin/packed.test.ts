import { execFile } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const REPO = fileURLToPath(new URL("../../", import.meta.url));

/** Packages the scratch project borrows from this repository, by symlink (no registry access). */
const LINKED = ["eslint", "@typescript-eslint", "typescript"];

const PLANTED = [
  'import axios from "axios";',
  'import pRetry from "p-retry";',
  'import CircuitBreaker from "opossum";',
  "",
  'export const load = () => axios.get("/stock");',
  'export const order = (body) => pRetry(() => fetch("/orders", { method: "POST", body, signal: AbortSignal.timeout(1000) }));',
  "const breaker = new CircuitBreaker(send);",
  "export const send2 = (x) => pRetry(() => breaker.fire(x));",
  "",
].join("\n");

interface EslintFileResult {
  readonly filePath: string;
  readonly messages: readonly {
    ruleId: string | null;
    line: number;
    column: number;
    message: string;
  }[];
}

/** Newest modification time of the plugin's sources (and the version module it imports). */
function newestSource(): number {
  const files = readdirSync(join(REPO, "eslint-plugin"), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
    .map((entry) => join(entry.parentPath, entry.name));
  files.push(join(REPO, "src/version.ts"), join(REPO, "package.json"));
  return Math.max(...files.map((file) => statSync(file).mtimeMs));
}

/**
 * Builds dist/ when it is missing or older than the plugin's sources (`npm test` builds it before
 * the tests run), tolerating errors in files outside the plugin, which tsc still emits.
 */
async function buildIfNeeded(): Promise<void> {
  const built = join(REPO, "dist/eslint-plugin/index.js");
  if (existsSync(built) && statSync(built).mtimeMs >= newestSource()) return;
  try {
    await run("npx", ["tsc", "-p", "tsconfig.build.json"], { cwd: REPO, timeout: 120_000 });
  } catch (error) {
    const output = (error as { stdout?: string }).stdout ?? "";
    const ours = output.split("\n").filter((line) => line.startsWith("eslint-plugin/"));
    if (ours.length > 0 || !existsSync(join(REPO, "dist/eslint-plugin/index.js")))
      throw new Error(`build failed:\n${output}`);
  }
}

describe("the packed tarball", () => {
  let scratch = "";
  let results: EslintFileResult[] = [];
  let packedFiles: string[] = [];

  beforeAll(async () => {
    await buildIfNeeded();
    scratch = mkdtempSync(join(tmpdir(), "resgen-packed-"));
    const packDir = join(scratch, "pack");
    mkdirSync(packDir);
    const { stdout } = await run(
      "npm",
      ["pack", "--ignore-scripts", "--json", "--pack-destination", packDir],
      { cwd: REPO, timeout: 60_000 },
    );
    const [info] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
    packedFiles = info!.files.map((f) => f.path);

    const project = join(scratch, "project");
    const installed = join(project, "node_modules", "resgen");
    mkdirSync(installed, { recursive: true });
    await run("tar", [
      "-xzf",
      join(packDir, info!.filename),
      "-C",
      installed,
      "--strip-components=1",
    ]);
    for (const name of LINKED) {
      symlinkSync(join(REPO, "node_modules", name), join(project, "node_modules", name), "dir");
    }
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({ name: "scratch", private: true, type: "module" }),
    );
    writeFileSync(
      join(project, "eslint.config.js"),
      'import resgen from "resgen/eslint-plugin";\nexport default [resgen.configs.recommended];\n',
    );
    mkdirSync(join(project, "src"));
    writeFileSync(join(project, "src", "checkout.js"), PLANTED);

    const eslintBin = join(project, "node_modules", "eslint", "bin", "eslint.js");
    const lint = await run(process.execPath, [eslintBin, "--format", "json", "src"], {
      cwd: project,
      timeout: 60_000,
    }).catch((error: unknown) => {
      // ESLint exits 1 when it finds problems, which is what this test plants.
      const failed = error as { stdout?: string; code?: number };
      if (failed.code !== 1) throw error;
      return { stdout: failed.stdout ?? "" };
    });
    results = JSON.parse(lint.stdout) as EslintFileResult[];
  }, 180_000);

  afterAll(() => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it("ships the compiled plugin and the rule docs, without tests", () => {
    expect(packedFiles).toContain("dist/eslint-plugin/index.js");
    expect(packedFiles).toContain("dist/eslint-plugin/index.d.ts");
    for (const rule of ["require-timeout", "no-retry-non-idempotent", "retry-inside-breaker"]) {
      expect(packedFiles).toContain(`dist/eslint-plugin/rules/${rule}.js`);
      expect(packedFiles).toContain(`eslint-plugin/docs/${rule}.md`);
    }
    expect(packedFiles.filter((f) => f.includes(".test."))).toEqual([]);
  });

  it("reports the three planted problems with file, line and column through resgen/eslint-plugin", () => {
    expect(results).toHaveLength(1);
    const [file] = results;
    expect(file!.filePath).toBe(join(scratch, "project", "src", "checkout.js"));
    const found = file!.messages.map(
      (m) => `src/checkout.js:${m.line}:${m.column} ${m.ruleId ?? m.message}`,
    );
    expect(found).toEqual([
      "src/checkout.js:5:27 resgen/require-timeout",
      "src/checkout.js:6:45 resgen/no-retry-non-idempotent",
      "src/checkout.js:8:42 resgen/retry-inside-breaker",
    ]);
  });

  it("ships type declarations a TypeScript config can use", async () => {
    const project = join(scratch, "project");
    writeFileSync(
      join(project, "check.ts"),
      [
        'import { defineConfig } from "eslint/config";',
        'import resgen, { rules } from "resgen/eslint-plugin";',
        "export default defineConfig([resgen.configs.recommended]);",
        "const recommended: object = resgen.configs.recommended;",
        'const typed: object = resgen.configs["recommended-type-checked"];',
        "const names: string[] = Object.keys(rules);",
        "const version: string = resgen.meta.version;",
        "// Fails as unused if the declarations degrade to `any`:",
        "// @ts-expect-error there is no such config",
        "resgen.configs.strict;",
        "export { recommended, typed, names, version };",
        "",
      ].join("\n"),
    );
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: "NodeNext",
          moduleResolution: "NodeNext",
          noEmit: true,
          skipLibCheck: true,
          types: [],
        },
        files: ["check.ts"],
      }),
    );
    const tsc = join(project, "node_modules", "typescript", "bin", "tsc");
    const result = await run(process.execPath, [tsc, "-p", "."], {
      cwd: project,
      timeout: 60_000,
    }).then(
      () => "",
      (error: unknown) => (error as { stdout?: string }).stdout ?? "tsc failed",
    );
    expect(result).toBe("");
  }, 90_000);

  it("leaves no scratch files in the repository", () => {
    expect(readdirSync(REPO).filter((f) => f.endsWith(".tgz"))).toEqual([]);
  });
});
