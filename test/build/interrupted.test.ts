import { spawn } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { build } from "../../src/build/build.js";
import { PACKAGE_ROOT } from "../../src/version.js";
import { exampleProject, readTree } from "./helpers.js";

let dir: string;
const out = () => join(dir, "src/generated");

beforeEach(() => {
  dir = exampleProject("resgen-interrupted-");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const files = readTree;

/** Runs `resgen build` in `dir` and kills it (SIGKILL) `afterMs` after the output folder appears. */
function buildKilled(afterMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(PACKAGE_ROOT, "bin/resgen.js"), "build"], {
      cwd: dir,
      stdio: "ignore",
    });
    const started = Date.now();
    const watch = setInterval(() => {
      if (existsSync(out())) {
        clearInterval(watch);
        setTimeout(() => child.kill("SIGKILL"), afterMs);
      } else if (Date.now() - started > 30_000) {
        clearInterval(watch);
        child.kill("SIGKILL");
      }
    }, 1);
    child.on("error", reject);
    child.on("exit", () => {
      clearInterval(watch);
      resolve();
    });
  });
}

describe("a build that was interrupted", () => {
  it("removes the temporary files it left next to files it still generates, and nothing else", async () => {
    await build([], { cwd: dir });
    const clean = files(out());
    writeFileSync(join(out(), "payments.ts.0123456789ab.tmp"), "// Code gen"); // cut off mid-write
    mkdirSync(join(out(), "runtime"), { recursive: true });
    writeFileSync(join(out(), "runtime/stack.ts.abcdef012345.tmp"), clean.get("runtime/stack.ts")!); // written, not yet renamed
    writeFileSync(join(out(), "notes.ts.0123456789ab.tmp"), "mine"); // next to nothing resgen generates
    writeFileSync(join(out(), "payments.ts.tmp"), "mine"); // not a name resgen writes
    const result = await build([], { cwd: dir });
    expect(result.plans[0]?.changes).toEqual([
      { kind: "remove", path: "payments.ts.0123456789ab.tmp" },
      { kind: "remove", path: "runtime/stack.ts.abcdef012345.tmp" },
    ]);
    const after = files(out());
    expect(after.get("notes.ts.0123456789ab.tmp")).toBe("mine");
    expect(after.get("payments.ts.tmp")).toBe("mine");
    after.delete("notes.ts.0123456789ab.tmp");
    after.delete("payments.ts.tmp");
    expect(after).toEqual(clean);
  });

  it("leaves no file cut short under its own name when killed while writing, and the next build completes it", async () => {
    await build([], { cwd: dir });
    const expected = files(out());
    for (const afterMs of [0, 2, 10]) {
      rmSync(out(), { recursive: true, force: true });
      await buildKilled(afterMs);
      // every file under its final name is whole: renamed into place only once written
      for (const [path, text] of files(out())) {
        // staged files, and the lock of the killed build: the next build removes both
        if (path.endsWith(".tmp") || path === ".resgen-build.lock") continue;
        expect(text, path).toBe(expected.get(path));
      }
      const rebuilt = await build([], { cwd: dir });
      expect(rebuilt.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
      expect(files(out())).toEqual(expected);
    }
  }, 60_000);
});
