/**
 * Finding the inputs: which policy files a command means, and which project file governs each.
 * Reading the files themselves is src/source/read.ts's job.
 */
import { existsSync, realpathSync, statSync } from "node:fs";
import { isWithin } from "./read.js";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { glob } from "tinyglobby";

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
 * Expands command-line arguments:
 * - none: the project file in the working directory or above, else `resilience/*.yaml`;
 * - a directory with a project file: that project's policies;
 * - another directory: the `*.yaml` and `*.yml` files in it;
 * - a file: itself, governed by the nearest project file;
 * - anything else: a glob relative to the working directory.
 * `projectGlobs` gives the policy globs of project files (read by the caller, which validates them).
 */
export async function expandInputs(
  args: readonly string[],
  cwd: string,
  projectGlobs: (configFile: string) => Promise<readonly string[]>,
  options: { readonly allowOutsideProject?: boolean } = {},
): Promise<Inputs> {
  const files = new Map<string, string | undefined>();
  const projects = new Set<string>();
  const unmatched: string[] = [];
  const missing: string[] = [];
  const outside: { file: string; config: string }[] = [];
  const outsideGlobs: { glob: string; config: string }[] = [];
  const addProject = async (configFile: string) => {
    projects.add(configFile);
    const root = dirname(configFile);
    let globs = await projectGlobs(configFile);
    if (!options.allowOutsideProject) {
      // a glob that climbs out of the project is refused before it is walked: `/**/*.yaml` would
      // otherwise read the whole machine before a single match could be refused
      for (const pattern of globs.filter(leavesProject)) outsideGlobs.push({ glob: pattern, config: configFile });
      globs = globs.filter((pattern) => !leavesProject(pattern));
      if (globs.length === 0) return 1;
    }
    const matched = await glob([...globs], { cwd: root, absolute: true, onlyFiles: true });
    const realRoot = realpathOr(root);
    for (const f of matched) {
      const file = resolve(f);
      if (file === configFile) continue;
      if (!options.allowOutsideProject && !isWithin(realRoot, realpathOr(file))) outside.push({ file, config: configFile });
      else files.set(file, configFile);
    }
    return matched.length;
  };

  if (args.length === 0) {
    const config = findConfig(cwd);
    if (config) {
      if ((await addProject(config)) === 0) unmatched.push(relative(cwd, config) || CONFIG_FILE);
    } else {
      const matched = await glob([DEFAULT_POLICY_GLOB], { cwd, absolute: true, onlyFiles: true });
      for (const f of matched) files.set(resolve(f), undefined);
      if (matched.length === 0) unmatched.push(DEFAULT_POLICY_GLOB);
    }
  }

  for (const arg of args) {
    const full = isAbsolute(arg) ? arg : resolve(cwd, arg);
    const stat = statOrUndefined(full);
    if (stat?.isDirectory()) {
      const config = join(full, CONFIG_FILE);
      if (existsSync(config)) {
        if ((await addProject(config)) === 0) unmatched.push(arg);
        continue;
      }
      const matched = await glob(["*.yaml", "*.yml"], { cwd: full, absolute: true, onlyFiles: true });
      const policies = matched.filter((f) => !f.endsWith(sep + CONFIG_FILE) && !f.endsWith("/" + CONFIG_FILE));
      for (const f of policies) files.set(resolve(f), findConfig(dirname(f)));
      if (policies.length === 0) unmatched.push(arg);
    } else if (stat?.isFile()) {
      if (full.endsWith(sep + CONFIG_FILE) || full.endsWith("/" + CONFIG_FILE)) {
        if ((await addProject(full)) === 0) unmatched.push(arg);
      } else {
        files.set(full, findConfig(dirname(full)));
      }
    } else {
      if (!/[*?[\]{}]/.test(arg)) {
        missing.push(full);
        continue;
      }
      const matched = await glob([arg], { cwd, absolute: true, onlyFiles: true });
      for (const f of matched) files.set(resolve(f), findConfig(dirname(f)));
      if (matched.length === 0) unmatched.push(arg);
    }
  }
  for (const config of new Set(files.values())) if (config) projects.add(config);
  const policies = [...files.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([file, config]) => ({ file, config }));
  outside.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  return { policies, projects: [...projects].sort(), unmatched, missing, outside, outsideGlobs };
}

/** Whether a glob can match outside the folder it is read from: absolute, or with a `..` segment anywhere (braces included). */
function leavesProject(pattern: string): boolean {
  return isAbsolute(pattern) || /^[\\/]|^[A-Za-z]:/.test(pattern) || pattern.split(/[\\/{},]/).some((segment) => segment === "..");
}

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function statOrUndefined(path: string) {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/** A path as shown to users: relative to the working directory, with forward slashes. */
export function displayPath(file: string, cwd: string): string {
  const rel = relative(cwd, file);
  const shown = rel === "" ? file : rel.startsWith("..") && isAbsolute(file) && rel.split(sep).filter((s) => s === "..").length > 3 ? file : rel;
  return shown.split(sep).join("/");
}
