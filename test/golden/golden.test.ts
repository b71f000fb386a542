/**
 * Golden files: the modules generated for each scenario are compared byte for byte with the
 * committed expected output (update with `npx vitest run test/golden -u` and review the diff),
 * and everything generated, runtime included, is compiled by tsc in strict mode under both
 * module resolutions.
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, type BuildResult } from "../../src/build/build.js";
import { WIDTH } from "../../src/emit/printer.js";
import { header } from "../../src/model/header.js";
import { PACKAGE_ROOT } from "../../src/version.js";
import { compile, MODULE_MODES } from "../helpers/tsc.js";

const SCENARIOS = {
  checkout: "examples/checkout",
  hostile: "test/golden/hostile",
  shapes: "test/golden/shapes",
} as const;

const OUT = join(PACKAGE_ROOT, "test/golden/__out__");

describe.each(Object.entries(SCENARIOS))("scenario %s", (name, input) => {
  const out = join(OUT, name);
  let result: BuildResult;

  beforeAll(async () => {
    rmSync(out, { recursive: true, force: true });
    result = await build([input], { cwd: PACKAGE_ROOT, out, allowOutsideProject: true });
  });
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it("builds without errors", () => {
    expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(result.written).toBe(true);
  });

  it("emits the expected client modules and barrel", async () => {
    const plan = result.plans[0]!;
    const modules = plan.changes.filter(
      (c) => c.kind !== "remove" && !c.path.startsWith("runtime/"),
    );
    expect(modules.length).toBeGreaterThan(1);
    for (const change of modules) {
      if (change.kind === "remove") continue;
      await expect(change.content).toMatchFileSnapshot(`./expected/${name}/${change.path}`);
    }
  });

  it("keeps every line of the generated modules within the printer's width", () => {
    for (const change of result.plans[0]!.changes) {
      if (change.kind === "remove" || change.path.startsWith("runtime/")) continue;
      const long = change.content.split("\n").filter((line) => line.length > WIDTH);
      expect(long, change.path).toEqual([]);
    }
  });

  it("copies the runtime byte for byte behind the header", () => {
    const runtime = result.plans[0]!.changes.filter((c) => c.path.startsWith("runtime/"));
    expect(runtime.length).toBeGreaterThan(5);
    for (const change of runtime) {
      if (change.kind === "remove") continue;
      const file = change.path.slice("runtime/".length);
      const template = readFileSync(join(PACKAGE_ROOT, "templates/runtime", file), "utf8");
      expect(change.content).toBe(
        `${header(`its runtime (templates/runtime/${file})`)}\n${template}`,
      );
    }
  });

  it.each(Object.keys(MODULE_MODES) as (keyof typeof MODULE_MODES)[])(
    "compiles under tsc --strict with %s resolution",
    async (mode) => {
      const files = result.plans[0]!.changes.filter((c) => c.kind !== "remove").map((c) =>
        join(out, c.path),
      );
      expect(await compile(files, mode)).toBe("");
    },
  );
});
