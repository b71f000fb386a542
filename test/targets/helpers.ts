/** Shared by the target tests: builds a project for some targets into a scratch folder. */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { build, type BuildResult } from "../../src/build.js";
import type { TargetName } from "../../src/targets/index.js";
import { PACKAGE_ROOT } from "../../src/version.js";

export const OUT = join(PACKAGE_ROOT, "test/targets/__out__");

export async function buildTargets(input: string, targets: readonly TargetName[], name: string): Promise<BuildResult> {
  const out = join(OUT, name);
  rmSync(out, { recursive: true, force: true });
  return build([input], { cwd: PACKAGE_ROOT, out, targets, check: true });
}

/** The files a build would write, by path. */
export function emitted(result: BuildResult): Map<string, string> {
  const files = new Map<string, string>();
  for (const plan of result.plans) for (const c of plan.changes) if (c.kind !== "remove") files.set(c.path, c.content);
  return files;
}

/** Where the published mesh schemas are: ../shared/schemas next to the repository. */
export const SHARED_SCHEMAS = join(PACKAGE_ROOT, "..", "shared", "schemas");
