import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const runtimeDir = join(root, "templates", "runtime");
const files = readdirSync(runtimeDir)
  .filter((f) => f.endsWith(".ts"))
  .map((f) => join(runtimeDir, f));

const strict = [
  "--strict",
  "--noUncheckedIndexedAccess",
  "--exactOptionalPropertyTypes",
  "--noEmit",
  "--skipLibCheck",
  "--types",
  "node",
  "--target",
  "ES2022",
  "--lib",
  "ES2023",
  "--isolatedModules",
  "--verbatimModuleSyntax",
];

function tsc(args: string[]): string {
  try {
    execFileSync(join(root, "node_modules", ".bin", "tsc"), [...strict, ...args, ...files], {
      cwd: root,
      encoding: "utf8",
    });
    return "";
  } catch (error) {
    return String((error as { stdout?: string }).stdout ?? error);
  }
}

describe("the runtime compiles as users will compile it", () => {
  it("has no test files in templates/runtime", () => {
    expect(files.filter((f) => /\.(test|spec)\.ts$/.test(f))).toEqual([]);
  });

  it("under module NodeNext", () => {
    expect(tsc(["--module", "NodeNext", "--moduleResolution", "NodeNext"])).toBe("");
  });

  it("under module ESNext with bundler resolution", () => {
    expect(tsc(["--module", "ESNext", "--moduleResolution", "bundler"])).toBe("");
  });
});
