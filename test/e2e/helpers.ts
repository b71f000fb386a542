/**
 * Shared by the end-to-end tests: build policies into test/e2e/__out__/<name>, import the
 * generated barrel, and small promise helpers that never leave timers behind.
 */
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "../../src/build/build.js";
import { isResilienceError, type ResilienceError } from "../../templates/runtime/index.js";

export const repoRoot = resolve(fileURLToPath(new URL("../..", import.meta.url)));

/**
 * Builds `paths` (relative to the repository root) into `test/e2e/__out__/<name>` and imports
 * its `index.ts`. Throws with the diagnostics when the build reports errors.
 */
export async function buildAndImport<M>(name: string, paths: readonly string[]): Promise<M> {
  const out = join("test", "e2e", "__out__", name);
  const result = await build(paths, { cwd: repoRoot, out, allowOutsideProject: true });
  const errors = result.diagnostics.filter((d) => d.severity === "error");
  if (!result.written || errors.length > 0) {
    throw new Error(
      `build of ${paths.join(", ")} failed:\n${result.diagnostics.map((d) => `${d.code} ${d.message}`).join("\n")}`,
    );
  }
  return (await import(pathToFileURL(join(repoRoot, out, "index.ts")).href)) as M;
}

/** The error a call rejected with; fails when the call resolved or threw something else. */
export async function failureOf(call: Promise<unknown>): Promise<ResilienceError> {
  let value: unknown;
  try {
    value = await call;
  } catch (error) {
    if (isResilienceError(error)) return error;
    throw error;
  }
  throw new Error(`expected the call to fail, it returned ${JSON.stringify(value)}`);
}

/**
 * Resolves to what `promise` settles to, or rejects once `boundMs` has passed without it
 * settling. Used where a bug would make a call hang forever; the bound is generous.
 */
export async function settlesWithin<T>(promise: Promise<T>, boundMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not settle within ${boundMs} ms`)), boundMs);
  });
  try {
    return await Promise.race([promise, bound]);
  } finally {
    clearTimeout(timer);
  }
}
