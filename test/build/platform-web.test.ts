/**
 * `platform: web` (docs/platforms.md, "platform: web"): the output imports no `node:` module and
 * compiles with the DOM's types alone; what needs AsyncLocalStorage is refused at build time.
 * The calls themselves run on workerd without compatibility flags (test/platforms/workerd.test.ts).
 */
import { execFile } from "node:child_process";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build } from "../../src/build/build.js";
import { check } from "../../src/program/check.js";
import { PACKAGE_ROOT } from "../../src/version.js";

const exec = promisify(execFile);
const EXAMPLE = join(PACKAGE_ROOT, "examples", "checkout");
const DEPENDENCIES = ["geocoder.yaml", "inventory.yaml", "payments.yaml", "recommendations.yaml"];

let dir: string;

/** A project of the example's dependency policies, its project file with `extra` appended. */
function project(extra: string, files: readonly string[] = DEPENDENCIES): string {
  const root = mkdtempSync(join(tmpdir(), "resgen-web-"));
  const config = readFileSync(join(EXAMPLE, "resgen.config.yaml"), "utf8").replace(
    /^# yaml-language-server.*\n/,
    "",
  );
  writeFileSync(join(root, "resgen.config.yaml"), `${config}${extra}`);
  mkdirSync(join(root, "resilience"));
  for (const file of [...files, "payments.openapi.yaml"])
    copyFileSync(join(EXAMPLE, "resilience", file), join(root, "resilience", file));
  return root;
}

beforeAll(async () => {
  dir = project("platform: web\n");
  const result = await build([dir], { cwd: dir });
  expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  expect(result.written).toBe(true);
}, 60_000);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("platform: web", () => {
  it("writes runtime/ambient.ts from its web template, and no file imports a node: module", () => {
    const out = join(dir, "src", "generated");
    const ambient = readFileSync(join(out, "runtime", "ambient.ts"), "utf8");
    expect(ambient).toContain("(templates/runtime/ambient.web.ts)");
    const files = readdirSync(out, { recursive: true, encoding: "utf8" }).filter((f) =>
      f.endsWith(".ts"),
    );
    expect(files).toContain("runtime/deadline.ts");
    expect(files).not.toContain("runtime/ambient.web.ts");
    for (const file of files)
      expect(readFileSync(join(out, file), "utf8"), file).not.toMatch(/from "node:/);
  });

  it("compiles under tsc --strict with the DOM's types and no Node types", async () => {
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noUncheckedIndexedAccess: true,
          exactOptionalPropertyTypes: true,
          verbatimModuleSyntax: true,
          noEmit: true,
          target: "ES2022",
          module: "ESNext",
          moduleResolution: "bundler",
          lib: ["ES2023", "DOM"],
          types: [],
        },
        include: ["src/generated"],
      }),
    );
    const tsc = join(PACKAGE_ROOT, "node_modules", "typescript", "bin", "tsc");
    const run = await exec(process.execPath, [tsc, "-p", dir]).then(
      () => "",
      (error: unknown) => {
        const failed = error as { stdout?: string; message: string };
        return failed.stdout ?? failed.message;
      },
    );
    expect(run).toBe("");
  }, 60_000);

  it("refuses a service policy in the project (RG309), at its service name", async () => {
    const root = project("platform: web\n", [...DEPENDENCIES, "checkout-service.yaml"]);
    try {
      const checked = await check([root], { cwd: root });
      const refused = checked.diagnostics.filter((d) => d.code === "RG309");
      expect(refused).toHaveLength(1);
      expect(refused[0]!.file).toBe("resilience/checkout-service.yaml");
      const text = readFileSync(join(root, "resilience", "checkout-service.yaml"), "utf8");
      expect(text.slice(refused[0]!.span.start, refused[0]!.span.end)).toBe("checkout");
      expect(checked.services).toEqual([]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("refuses runtime: package with it (RG308), at its runtime setting", async () => {
    const root = project("platform: web\nruntime: package\n");
    try {
      const checked = await check([root], { cwd: root });
      const refused = checked.diagnostics.filter((d) => d.code === "RG308");
      expect(refused).toHaveLength(1);
      expect(refused[0]!.file).toBe("resgen.config.yaml");
      const text = readFileSync(join(root, "resgen.config.yaml"), "utf8");
      expect(text.slice(refused[0]!.span.start, refused[0]!.span.end)).toBe("package");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
