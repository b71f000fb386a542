import { describe, expect, it } from "vitest";
import { build } from "../../src/build/build.js";
import { PACKAGE_ROOT } from "../../src/version.js";

describe("examples/checkout/src/generated", () => {
  it("is committed up to date with the example's policies (resgen build --check)", async () => {
    const result = await build(["examples/checkout"], { cwd: PACKAGE_ROOT, check: true });
    expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    const stale = result.plans.flatMap((p) => [
      ...p.changes.map((c) => `${c.kind} ${c.path}`),
      ...(p.manifest.changed ? ["update .resgen-manifest.json"] : []),
    ]);
    expect(stale, "run: node bin/resgen.js build examples/checkout").toEqual([]);
  });
});
