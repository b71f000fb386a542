/**
 * Writing an output folder: plan first, then apply. Only files whose bytes change are written
 * (atomically: a temporary file renamed over the old one), generated files that are no longer
 * produced are removed, nothing outside the folder is touched, and a file that does not carry
 * resgen's header is never overwritten or removed, except the temporary files a build killed
 * while writing left next to files it still generates.
 */
import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { isGenerated } from "./emit/header.js";

export type Change =
  | { readonly kind: "create" | "update"; readonly path: string; readonly content: string }
  | { readonly kind: "remove"; readonly path: string };

export interface Plan {
  /** The output folder, absolute. */
  readonly outDir: string;
  /** Writes and removals, by path relative to outDir, sorted. */
  readonly changes: readonly Change[];
  /** Files that would be written unchanged. */
  readonly unchanged: number;
  /** Paths (relative) where a file without resgen's header is in the way. */
  readonly conflicts: readonly string[];
  /** Paths (as given) that would resolve outside the output folder. */
  readonly escapes: readonly string[];
}

/** Whether `path` (relative) stays inside the folder once resolved. */
export function isInside(outDir: string, path: string): boolean {
  if (isAbsolute(path) || path.includes("\0")) return false;
  const rel = relative(outDir, resolve(outDir, path));
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
}

/**
 * Compares what resgen would write with what the folder holds. Reads only; never writes.
 * `owns` limits stale-file removal to the paths this build is responsible for (a build of some
 * targets leaves the files of the others alone); by default it owns the whole folder.
 */
export async function planWrite(outDir: string, files: ReadonlyMap<string, string>, owns: (path: string) => boolean = () => true): Promise<Plan> {
  const root = resolve(outDir);
  const changes: Change[] = [];
  const conflicts: string[] = [];
  const escapes: string[] = [];
  let unchanged = 0;
  // read every file that would be written at once, then compare in order
  const existingTexts = await Promise.all([...files.keys()].map((path) => (isInside(root, path) ? readIfExists(join(root, path)) : undefined)));
  let index = 0;
  for (const [path, content] of files) {
    const existing = existingTexts[index++];
    if (!isInside(root, path)) {
      escapes.push(path);
      continue;
    }
    if (existing === undefined) changes.push({ kind: "create", path, content });
    else if (existing === content) unchanged++;
    else if (!isGenerated(existing)) conflicts.push(path);
    else changes.push({ kind: "update", path, content });
  }
  for (const path of await listFiles(root)) {
    if (files.has(path)) continue;
    // a temporary file left by a build that was killed while writing `original`, complete or not
    const original = LEFTOVER.exec(path)?.[1];
    if (original !== undefined && files.has(original)) {
      changes.push({ kind: "remove", path });
      continue;
    }
    if (!owns(path)) continue;
    const text = await readIfExists(join(root, path));
    if (text !== undefined && isGenerated(text)) changes.push({ kind: "remove", path });
  }
  changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { outDir: root, changes, unchanged, conflicts: conflicts.sort(), escapes };
}

/** The name `applyPlan` writes a file under before renaming it over `path`. */
function temporaryName(path: string): string {
  return `${path}.${randomBytes(6).toString("hex")}.tmp`;
}

/** A name {@link temporaryName} makes; the group is the path it was for. */
const LEFTOVER = /^(.+)\.[0-9a-f]{12}\.tmp$/;

/** Applies a plan that has no conflicts or escapes. */
export async function applyPlan(plan: Plan): Promise<void> {
  if (plan.conflicts.length > 0 || plan.escapes.length > 0) throw new Error("internal: refusing to apply a plan with conflicts");
  for (const change of plan.changes) {
    const full = join(plan.outDir, change.path);
    if (change.kind === "remove") {
      await rm(full, { force: true });
      continue;
    }
    await mkdir(dirname(full), { recursive: true });
    const temp = temporaryName(full);
    try {
      await writeFile(temp, change.content);
      await rename(temp, full);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** Files under `root`, as forward-slash relative paths. Symbolic links are not followed. */
async function listFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw error;
    }
    for (const entry of entries) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile()) out.push(relative(root, full).split(sep).join("/"));
    }
  };
  await walk(root);
  return out.sort();
}
