/** What the build tests share: a copy of the example project, the CLI in-process, and file trees. */
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { main, type Io } from "../../src/cli/cli.js";
import { PACKAGE_ROOT } from "../../src/version.js";

/** A new temporary folder holding the example's project file and policies (nothing generated). */
export function exampleProject(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cpSync(
    join(PACKAGE_ROOT, "examples/checkout/resgen.config.yaml"),
    join(dir, "resgen.config.yaml"),
  );
  cpSync(join(PACKAGE_ROOT, "examples/checkout/resilience"), join(dir, "resilience"), {
    recursive: true,
  });
  return dir;
}

/** Runs `resgen ...args` in `cwd`, in this process; stdout and stderr are kept apart. */
export async function runCli(
  cwd: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const io: Io = {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    cwd,
    color: false,
  };
  const code = await main(["node", "resgen", ...args], io);
  return { code, stdout, stderr };
}

/** Every file below `root` (none when it does not exist), by forward-slash relative path. */
export function readTree(root: string): Map<string, string> {
  const found = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const full = join(d, e.name);
      if (e.isDirectory()) walk(full);
      else
        found.set(
          full
            .slice(root.length + 1)
            .split("\\")
            .join("/"),
          readFileSync(full, "utf8"),
        );
    }
  };
  if (existsSync(root)) walk(root);
  return found;
}

/** Replaces `from` (which must be there) with `to` in `dir/file`. */
export function editFile(dir: string, file: string, from: string, to: string): void {
  const path = join(dir, file);
  const text = readFileSync(path, "utf8");
  expect(text).toContain(from);
  writeFileSync(path, text.replace(from, to));
}
