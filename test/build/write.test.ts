/**
 * The writer's promises at every instant a build can die (docs/build.md): the folder compiles,
 * its record accepts every file on disk, and the next build completes it; a failure while
 * staging leaves the folder exactly as it was.
 */
import { cpSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { mkdir, rename, rm, rmdir, writeFile } from "node:fs/promises";
import { dirname, join, posix } from "node:path";
import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { build } from "../../src/build/build.js";
import {
  applyPlan,
  MANIFEST,
  WriteError,
  type Plan,
  type WriterFs,
} from "../../src/build/write.js";
import { exampleProject, readTree } from "./helpers.js";

let dir: string;
const out = () => join(dir, "src/generated");

beforeEach(() => {
  dir = exampleProject("resgen-write-");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A writer whose every call after the first `calls` fails, as if the process had died there. */
function dyingAfter(calls: number): WriterFs & { readonly made: number } {
  let made = 0;
  const step =
    <A extends unknown[], R>(f: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      if (made++ >= calls) throw Object.assign(new Error("killed"), { code: "EKILLED" });
      return f(...args);
    };
  return {
    get made() {
      return made;
    },
    mkdir: step(mkdir),
    writeFile: step(writeFile),
    rename: step(rename),
    rm: step(rm),
    rmdir: step(rmdir),
  };
}

/** The relative imports of the folder's modules that name no file in it: none means it compiles as far as files go. */
function danglingImports(tree: ReadonlyMap<string, string>): string[] {
  const dangling: string[] = [];
  for (const [path, text] of tree) {
    if (!path.endsWith(".ts")) continue;
    for (const [, spec] of text.matchAll(/from "(\.{1,2}\/[^"]+)\.js"/g)) {
      const target = posix.normalize(posix.join(posix.dirname(path), `${spec!}.ts`));
      if (!tree.has(target)) dangling.push(`${path} → ${target}`);
    }
  }
  return dangling;
}

/** Files on disk whose bytes the record does not accept: each would be refused as a hand edit. */
function unaccepted(tree: ReadonlyMap<string, string>): string[] {
  const record = JSON.parse(tree.get(MANIFEST) ?? '{"files":{}}') as {
    files: Record<string, string | string[]>;
  };
  return Object.entries(record.files)
    .filter(([path]) => tree.has(path))
    .filter(
      ([path, hashes]) =>
        ![hashes].flat().includes(createHash("sha256").update(tree.get(path)!).digest("hex")),
    )
    .map(([path]) => path);
}

/** Adds a dependency named `zzz` (sorted after everything, so a barrel written first would export it early) and drops one. */
async function planGrowingAndShrinking(): Promise<Plan> {
  const geocoder = readFileSync(join(dir, "resilience/geocoder.yaml"), "utf8");
  writeFileSync(
    join(dir, "resilience/zzz.yaml"),
    geocoder.replace("dependency: geocoder", "dependency: zzz"),
  );
  rmSync(join(dir, "resilience/inventory.yaml"));
  const planned = await build([], { cwd: dir, check: true });
  expect(planned.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  return planned.plans[0]!;
}

describe("a build killed at any instant", () => {
  it("leaves a folder whose imports all resolve and whose record accepts every file, and the next build completes it", async () => {
    await build([], { cwd: dir });
    const saved = join(dir, "saved");
    cpSync(out(), saved, { recursive: true });
    const plan = await planGrowingAndShrinking();
    expect(plan.changes.map((c) => `${c.kind} ${c.path}`)).toEqual(
      expect.arrayContaining(["create zzz.ts", "update index.ts", "remove inventory.ts"]),
    );
    await applyPlan(plan);
    const expected = readTree(out());

    const full = dyingAfter(Infinity);
    rmSync(out(), { recursive: true });
    cpSync(saved, out(), { recursive: true });
    await applyPlan(plan, full);
    let instants = 0;
    for (let calls = 0; calls < full.made; calls++, instants++) {
      rmSync(out(), { recursive: true });
      cpSync(saved, out(), { recursive: true });
      await expect(applyPlan(plan, dyingAfter(calls))).rejects.toThrow();
      const left = readTree(out());
      const modules = new Map([...left].filter(([path]) => !path.endsWith(".tmp")));
      expect(danglingImports(modules), `killed after ${calls} calls`).toEqual([]);
      expect(unaccepted(modules), `killed after ${calls} calls`).toEqual([]);
      const next = await build([], { cwd: dir });
      expect(
        next.diagnostics.filter((d) => d.severity === "error"),
        `killed after ${calls} calls`,
      ).toEqual([]);
      expect(readTree(out()), `killed after ${calls} calls`).toEqual(expected);
    }
    expect(instants).toBeGreaterThan(5);
  }, 60_000);
});

describe("a failure while staging", () => {
  it("removes what it staged and leaves the folder as it was", async () => {
    await build([], { cwd: dir });
    const before = readTree(out());
    const plan = await planGrowingAndShrinking();
    let writes = 0;
    const fullDisk: WriterFs = {
      mkdir,
      rename,
      rm,
      rmdir,
      writeFile: async (path, content, options) => {
        if (++writes === 3)
          throw Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC" });
        await writeFile(path, content, options);
      },
    };
    const failure = await applyPlan(plan, fullDisk).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(WriteError);
    expect(failure).toMatchObject({ reason: "no space left on the device", untouched: true });
    expect(dirname((failure as WriteError).path)).toContain(out());
    expect(readTree(out())).toEqual(before);
  });
});
