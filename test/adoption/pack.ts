// Packing the package as `npm publish` would, for the tests that look at what a user installs.
import { execFile } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { PACKAGE_ROOT } from "../../src/version.js";

const run = promisify(execFile);

/** What `npm pack --json` says of one tarball. */
interface PackInfo {
  readonly filename: string;
  readonly files: readonly { readonly path: string }[];
}

/** The compiled entry points: the CLI's (bin/resgen.js imports it) and the ESLint plugin's. */
const ENTRY_POINTS = ["dist/src/cli/cli.js", "dist/eslint-plugin/index.js"];

function newestSource(): number {
  const files = ["src", "eslint-plugin"].flatMap((dir) =>
    readdirSync(join(PACKAGE_ROOT, dir), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
      .map((entry) => join(entry.parentPath, entry.name)),
  );
  files.push(join(PACKAGE_ROOT, "package.json"), join(PACKAGE_ROOT, "tsconfig.build.json"));
  return Math.max(...files.map((file) => statSync(file).mtimeMs));
}

/**
 * Builds dist/ when an entry point is missing or older than a source. `npm test` builds first, so
 * within a run this does nothing and no test rewrites dist/ while another reads it.
 */
export async function buildIfStale(): Promise<void> {
  const newest = newestSource();
  const fresh = ENTRY_POINTS.every((file) => {
    const path = join(PACKAGE_ROOT, file);
    return existsSync(path) && statSync(path).mtimeMs >= newest;
  });
  if (fresh) return;
  await run("npm", ["run", "build"], { cwd: PACKAGE_ROOT, timeout: 180_000 });
}

/**
 * Packs the package into `destination` and returns the tarball's path and the files it holds.
 * Scripts are skipped because {@link buildIfStale} has built dist/ already; `prepack` builds it
 * the same way for `npm pack` and `npm publish`.
 */
export async function pack(destination: string): Promise<{ tarball: string; files: string[] }> {
  await buildIfStale();
  const { stdout } = await run(
    "npm",
    ["pack", "--ignore-scripts", "--json", "--pack-destination", destination],
    { cwd: PACKAGE_ROOT, timeout: 60_000 },
  );
  const [info] = JSON.parse(stdout) as PackInfo[];
  return { tarball: join(destination, info!.filename), files: info!.files.map((f) => f.path) };
}

/** The files `npm pack` would put in the tarball (package.json "files"), without packing. */
export async function shippedFiles(): Promise<string[]> {
  const { stdout } = await run("npm", ["pack", "--dry-run", "--ignore-scripts", "--json"], {
    cwd: PACKAGE_ROOT,
    timeout: 60_000,
  });
  const [info] = JSON.parse(stdout) as PackInfo[];
  return info!.files.map((f) => f.path);
}
