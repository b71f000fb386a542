/**
 * Finding the inputs: which policy files a command means, and which project file governs each.
 * Every question about files goes to a host (src/source/host.ts); reading the files themselves
 * is src/source/read.ts's job.
 */
import { existsSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import type { Host } from "./host.js";
import { wait, type Task } from "./task.js";

export const CONFIG_FILE = "resgen.config.yaml";
export const DEFAULT_POLICY_GLOB = "resilience/*.yaml";

/** The nearest resgen.config.yaml in `dir` or above it. */
export function findConfig(dir: string): string | undefined {
  let current = resolve(dir);
  for (;;) {
    const candidate = join(current, CONFIG_FILE);
    if (existsSync(candidate)) return candidate;
    const parent = dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

export interface Inputs {
  /** Policy files, absolute, sorted, each with the project file that governs it (if any). */
  readonly policies: readonly { readonly file: string; readonly config: string | undefined }[];
  /** Project files whose `policies:` glob must be read before the policy list is complete. */
  readonly projects: readonly string[];
  /** Globs, directories or projects that matched no policy file. */
  readonly unmatched: readonly string[];
  /** Arguments naming a file that does not exist, absolute. */
  readonly missing: readonly string[];
  /**
   * Files a project's policy glob matched outside the project's folder (`../secret/*.yaml`, an
   * absolute glob, a link out of it), with that project file: refused, never read.
   */
  readonly outside: readonly { readonly file: string; readonly config: string }[];
  /** Policy globs of a project that climb out of it (absolute, or with a `..` segment): refused, never walked. */
  readonly outsideGlobs: readonly { readonly glob: string; readonly config: string }[];
}

/**
 * Expands command-line arguments, asking `host` about the files:
 * - none: the project file in the working directory or above, else `resilience/*.yaml`;
 * - a directory with a project file: that project's policies;
 * - another directory: the `*.yaml` and `*.yml` files in it;
 * - a file: itself, governed by the nearest project file;
 * - anything else: a glob relative to the working directory.
 * `projectGlobs` gives the policy globs of project files (read by the caller, which validates them).
 */
export function* expandInputs(
  host: Host,
  args: readonly string[],
  projectGlobs: (configFile: string) => Task<readonly string[]>,
  options: { readonly allowOutsideProject?: boolean } = {},
): Task<Inputs> {
  const cwd = host.cwd;
  const files = new Map<string, string | undefined>();
  const projects = new Set<string>();
  const unmatched: string[] = [];
  const missing: string[] = [];
  const outside: { file: string; config: string }[] = [];
  const outsideGlobs: { glob: string; config: string }[] = [];
  const isConfig = (file: string) =>
    file.endsWith(sep + CONFIG_FILE) || file.endsWith("/" + CONFIG_FILE);
  function* addProject(configFile: string): Task<number> {
    projects.add(configFile);
    const root = dirname(configFile);
    let globs = yield* projectGlobs(configFile);
    if (!options.allowOutsideProject) {
      // a glob that climbs out of the project is refused before it is walked: `/**/*.yaml` would
      // otherwise read the whole machine before a single match could be refused
      for (const pattern of globs.filter(leavesProject))
        outsideGlobs.push({ glob: pattern, config: configFile });
      globs = globs.filter((pattern) => !leavesProject(pattern));
      if (globs.length === 0) return 1;
    }
    const matched = yield* wait(host.glob(globs, root));
    for (const file of matched) {
      if (file === configFile) continue;
      if (!options.allowOutsideProject && !(yield* wait(host.isInside(root, file))))
        outside.push({ file, config: configFile });
      else files.set(file, configFile);
    }
    return matched.length;
  }
  function* governed(matched: readonly string[]): Task<void> {
    for (const file of matched) files.set(file, yield* wait(host.findProject(dirname(file))));
  }

  if (args.length === 0) {
    const config = yield* wait(host.findProject(cwd));
    if (config) {
      if ((yield* addProject(config)) === 0) unmatched.push(relative(cwd, config) || CONFIG_FILE);
    } else {
      const matched = yield* wait(host.glob([DEFAULT_POLICY_GLOB], cwd));
      for (const file of matched) files.set(file, undefined);
      if (matched.length === 0) unmatched.push(DEFAULT_POLICY_GLOB);
    }
  }

  for (const arg of args) {
    const full = isAbsolute(arg) ? arg : resolve(cwd, arg);
    const kind = yield* wait(host.kind(full));
    if (kind === "directory") {
      const config = join(full, CONFIG_FILE);
      if ((yield* wait(host.kind(config))) !== undefined) {
        if ((yield* addProject(config)) === 0) unmatched.push(arg);
        continue;
      }
      const policies = (yield* wait(host.glob(["*.yaml", "*.yml"], full))).filter(
        (f) => !isConfig(f),
      );
      yield* governed(policies);
      if (policies.length === 0) unmatched.push(arg);
    } else if (kind === "file") {
      if (isConfig(full)) {
        if ((yield* addProject(full)) === 0) unmatched.push(arg);
      } else {
        yield* governed([full]);
      }
    } else {
      if (!/[*?[\]{}]/.test(arg)) {
        missing.push(full);
        continue;
      }
      const matched = yield* wait(host.glob([arg], cwd));
      yield* governed(matched);
      if (matched.length === 0) unmatched.push(arg);
    }
  }
  for (const config of new Set(files.values())) if (config) projects.add(config);
  const policies = [...files.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([file, config]) => ({ file, config }));
  outside.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  return { policies, projects: [...projects].sort(), unmatched, missing, outside, outsideGlobs };
}

/** Whether a glob can match outside the folder it is read from: absolute, or with a `..` segment anywhere (braces included). */
function leavesProject(pattern: string): boolean {
  return (
    isAbsolute(pattern) ||
    /^[\\/]|^[A-Za-z]:/.test(pattern) ||
    pattern.split(/[\\/{},]/).some((segment) => segment === "..")
  );
}

/** A path as shown to users: relative to the working directory, with forward slashes. */
export function displayPath(file: string, cwd: string): string {
  const rel = relative(cwd, file);
  const shown =
    rel === ""
      ? file
      : rel.startsWith("..") &&
          isAbsolute(file) &&
          rel.split(sep).filter((s) => s === "..").length > 3
        ? file
        : rel;
  return shown.split(sep).join("/");
}
