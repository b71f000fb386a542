/** Shared by the tests of the targets' notes: the checkout example's policies in a scratch project. */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../../src/cli/cli.js";
import { PACKAGE_ROOT } from "../../src/version.js";

/** A copy of examples/checkout's project file and policies; `config` rewrites the project file. */
export function checkoutProject(config: (text: string) => string = (t) => t): string {
  const dir = mkdtempSync(join(tmpdir(), "resgen-notes-"));
  const example = join(PACKAGE_ROOT, "examples/checkout");
  cpSync(join(example, "resilience"), join(dir, "resilience"), { recursive: true });
  const text = readFileSync(join(example, "resgen.config.yaml"), "utf8");
  writeFileSync(join(dir, "resgen.config.yaml"), config(text));
  return dir;
}

/** Runs `resgen build --target istio,linkerd,grpc` (and `extra`) in `dir`. */
export async function buildMesh(
  dir: string,
  extra: readonly string[] = [],
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(
    ["node", "resgen", "build", "--target", "istio,linkerd,grpc", "--check", ...extra],
    {
      stdout: (t) => (stdout += t),
      stderr: (t) => (stderr += t),
      cwd: dir,
      color: false,
    },
  );
  return { code, stdout, stderr };
}
