import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { join } from "node:path";
import { PACKAGE_ROOT } from "../../src/version.js";

const exec = promisify(execFile);

/** The strictest settings docs/build.md ("Guarantees of the generated code") promises generated code compiles under. */
const STRICT = [
  "--noEmit",
  "--strict",
  "--noUncheckedIndexedAccess",
  "--exactOptionalPropertyTypes",
  "--noImplicitOverride",
  "--noUnusedLocals",
  "--noUnusedParameters",
  "--verbatimModuleSyntax",
  "--isolatedModules",
  "--target",
  "ES2022",
  "--types",
  "node",
  "--skipLibCheck",
];

export const MODULE_MODES = {
  NodeNext: ["--module", "NodeNext", "--moduleResolution", "NodeNext", "--lib", "ES2023"],
  // bundler projects usually target browsers too, so the DOM's fetch types are loaded alongside Node's
  bundler: ["--module", "ESNext", "--moduleResolution", "bundler", "--lib", "ES2023,DOM"],
} as const;

/** Runs tsc over `files` in strict mode; resolves to its diagnostics output ("" when clean). */
export async function compile(
  files: readonly string[],
  mode: keyof typeof MODULE_MODES,
): Promise<string> {
  const tsc = join(PACKAGE_ROOT, "node_modules", "typescript", "bin", "tsc");
  try {
    await exec(process.execPath, [tsc, ...STRICT, ...MODULE_MODES[mode], ...files], {
      cwd: PACKAGE_ROOT,
      maxBuffer: 16 * 1024 * 1024,
    });
    return "";
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    return `${e.stdout ?? ""}${e.stderr ?? ""}` || e.message;
  }
}
