import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { build } from "../../src/build/build.js";
import { editFile, exampleProject, readTree, runCli } from "./helpers.js";

// The example project: four dependency policies and one service policy, five emitted modules.
const MODULES = 5;

let dir: string;
let cache: string;
const out = () => join(dir, "src/generated");

beforeEach(() => {
  dir = exampleProject("resgen-cache-");
  cache = join(dir, "emit-cache.json");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const edit = (file: string, from: string, to: string) => editFile(dir, file, from, to);
const files = readTree;
const cli = async (...args: string[]) => {
  const { code, stdout, stderr } = await runCli(dir, ...args);
  return { code, stdout: stdout + stderr };
};

describe("the emit cache", () => {
  it("lets a rebuild reuse every unchanged module, byte for byte what emitting it gives", async () => {
    const cold = await build([], { cwd: dir, cache });
    expect(cold.modules).toEqual({ reused: 0, emitted: MODULES });
    const warm = await build([], { cwd: dir, cache });
    expect(warm.modules).toEqual({ reused: MODULES, emitted: 0 });
    expect(warm.plans[0]?.changes).toEqual([]);
    const cached = files(out());
    rmSync(out(), { recursive: true });
    const fresh = await build([], { cwd: dir, cache: false });
    expect(fresh.modules).toEqual({ reused: 0, emitted: MODULES });
    expect(files(out())).toEqual(cached);
  });

  it("emits again only the module whose policy changed", async () => {
    await build([], { cwd: dir, cache });
    edit("resilience/inventory.yaml", "timeout: { total: 1s }", "timeout: { total: 900ms }");
    const rebuilt = await build([], { cwd: dir, cache });
    expect(rebuilt.modules).toEqual({ reused: MODULES - 1, emitted: 1 });
    expect(rebuilt.plans[0]?.changes.map((c) => c.path)).toEqual(["inventory.ts"]);
    expect(readFileSync(join(out(), "inventory.ts"), "utf8")).toContain("totalMs: 900");
  });

  it("emits every client again when the project's telemetry setting changes", async () => {
    await build([], { cwd: dir, cache });
    writeFileSync(join(dir, "resgen.config.yaml"), readFileSync(join(dir, "resgen.config.yaml"), "utf8") + "telemetry: opentelemetry\n");
    const rebuilt = await build([], { cwd: dir, cache });
    // the four clients install the adapter; the service module does not depend on the setting
    expect(rebuilt.modules).toEqual({ reused: 1, emitted: MODULES - 1 });
    expect(readFileSync(join(out(), "payments.ts"), "utf8")).toContain("installOpenTelemetry");
  });

  it("does not trust a generated module edited by hand: --check reports it and a forced build restores it", async () => {
    await build([], { cwd: dir, cache });
    const path = join(out(), "payments.ts");
    const generated = readFileSync(path, "utf8");
    writeFileSync(path, generated.replace("export function", "// edited\nexport function"));
    const checked = await cli("build", "--check");
    expect(checked.code).toBe(1);
    expect(checked.stdout).toContain("src/generated/payments.ts:1:1 error RG306 src/generated/payments.ts was edited by hand");
    const restored = await build([], { cwd: dir, cache, force: true });
    expect(restored.modules.emitted).toBe(1);
    expect(readFileSync(path, "utf8")).toBe(generated);
  });

  it("ignores a corrupt or foreign cache file, and replaces it", async () => {
    writeFileSync(cache, "{ not json");
    expect((await build([], { cwd: dir, cache })).modules).toEqual({ reused: 0, emitted: MODULES });
    expect(JSON.parse(readFileSync(cache, "utf8"))).toMatchObject({ fingerprint: expect.any(String) });
    writeFileSync(cache, JSON.stringify({ fingerprint: "another resgen", folders: {} }));
    expect((await build([], { cwd: dir, cache })).modules).toEqual({ reused: 0, emitted: MODULES });
    // this resgen's fingerprint, with records mangled by hand: each bad one is a miss
    const stored = JSON.parse(readFileSync(cache, "utf8")) as { folders: Record<string, Record<string, unknown>> };
    const modules = Object.values(stored.folders)[0]!;
    modules["payments.ts"] = null;
    modules["inventory.ts"] = ["only one"];
    modules["geocoder.ts"] = 42;
    writeFileSync(cache, JSON.stringify(stored));
    expect((await build([], { cwd: dir, cache })).modules).toEqual({ reused: MODULES - 3, emitted: 3 });
    expect((await build([], { cwd: dir, cache })).modules).toEqual({ reused: MODULES, emitted: 0 });
  });

  it("lives in the nearest node_modules by default, and --no-cache neither reads nor writes it", async () => {
    const stored = join(dir, "node_modules/.cache/resgen/emit.json");
    expect((await cli("build")).code).toBe(0);
    expect(existsSync(stored)).toBe(false); // no node_modules: no cache
    mkdirSync(join(dir, "node_modules"));
    expect((await cli("build")).code).toBe(0);
    expect(existsSync(stored)).toBe(true);
    rmSync(stored);
    expect((await cli("build", "--no-cache")).code).toBe(0);
    expect(existsSync(stored)).toBe(false);
  });
});

describe("the emit cache's record", () => {
  const recorded = () => {
    const stored = JSON.parse(readFileSync(cache, "utf8")) as { folders: Record<string, Record<string, unknown>> };
    return Object.values(stored.folders).flatMap((modules) => Object.keys(modules)).sort();
  };

  it("forgets a module that is no longer generated, and is not rewritten by a build that changes nothing", async () => {
    await build([], { cwd: dir, cache });
    expect(recorded()).toEqual(["checkout-service.ts", "geocoder.ts", "inventory.ts", "payments.ts", "recommendations.ts"]);
    rmSync(join(dir, "resilience/geocoder.yaml"));
    await build([], { cwd: dir, cache });
    expect(recorded()).toEqual(["checkout-service.ts", "inventory.ts", "payments.ts", "recommendations.ts"]);
    // the cache is replaced by renaming a new file over it, so an unwritten cache keeps its inode
    const file = statSync(cache).ino;
    expect((await build([], { cwd: dir, cache })).modules).toEqual({ reused: MODULES - 1, emitted: 0 });
    expect(statSync(cache).ino).toBe(file);
  });
});

describe("the emit cache shared by two projects", () => {
  it("keeps the other project's record when both build at once", async () => {
    const other = join(dir, "other");
    mkdirSync(other);
    cpSync(join(dir, "resgen.config.yaml"), join(other, "resgen.config.yaml"));
    cpSync(join(dir, "resilience"), join(other, "resilience"), { recursive: true });
    await Promise.all([build([], { cwd: dir, cache }), build([], { cwd: other, cache })]);
    const stored = JSON.parse(readFileSync(cache, "utf8")) as { folders: Record<string, unknown> };
    expect(Object.keys(stored.folders).sort()).toEqual([join(dir, "src/generated"), join(other, "src/generated")].sort());
    expect((await build([], { cwd: other, cache })).modules).toEqual({ reused: MODULES, emitted: 0 });
    expect((await build([], { cwd: dir, cache })).modules).toEqual({ reused: MODULES, emitted: 0 });
  });
});
