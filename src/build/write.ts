/**
 * Writing an output folder: plan first, then apply (docs/build.md, docs/security.md).
 *
 * The folder's record, `.resgen-manifest.json`, lists every file the last build wrote there with
 * the hash of its bytes. It is what makes a build safe to run anywhere:
 * - a build removes only files the record names, so it never walks the tree, and a file it did
 *   not write (another package's, a user's) is never deleted;
 * - a file whose bytes differ from the record was edited by hand, and is neither overwritten nor
 *   removed unless forced;
 * - a file without resgen's header is never overwritten.
 *
 * Nothing is written through a symbolic link. Applying a plan stages every new text beside its
 * final name first, so a failure while writing (a full disk, a read-only folder) leaves the
 * folder as it was; then renames modules before the barrels that export them, removes files
 * no longer generated last, and keeps the record true at every instant in between, so the
 * folder compiles whenever the build is killed.
 */
import { createHash, randomBytes } from "node:crypto";
import { lstat, mkdir, readdir, readFile, rename, rm, rmdir, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, join, posix, resolve, sep } from "node:path";
import { isGenerated } from "../model/header.js";
import { failure, isWithin } from "../source/read.js";

/** The output folder's record of what resgen wrote there. */
export const MANIFEST = ".resgen-manifest.json";

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
  /** Paths (relative) where a file resgen did not generate is in the way. */
  readonly conflicts: readonly string[];
  /** Paths (relative) of generated files whose bytes differ from what the last build wrote. */
  readonly edited: readonly string[];
  /** Paths (relative to outDir, "." for the folder itself) that are symbolic links a write would go through. */
  readonly links: readonly string[];
  /** Paths (as given) that would resolve outside the output folder. */
  readonly escapes: readonly string[];
  /** The record the folder holds once the plan is applied, and whether that differs from the one it holds. */
  readonly manifest: { readonly content: string; readonly changed: boolean };
  /** The record as it was: path → accepted hashes (several while a build was under way). */
  readonly previous: ReadonlyMap<string, readonly string[]>;
}

/** An I/O failure while planning or applying, with the path it concerns (absolute). */
export class WriteError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
    /** Whether the folder was left exactly as it was (the failure came before anything was swapped in). */
    readonly untouched = false,
  ) {
    super(`${path}: ${reason}`);
  }
}

/** Whether `path` (relative) stays inside the folder once resolved. */
export function isInside(outDir: string, path: string): boolean {
  if (isAbsolute(path) || path.includes("\0")) return false;
  const full = resolve(outDir, path);
  return full !== resolve(outDir) && isWithin(outDir, full);
}

export interface PlanOptions {
  /**
   * Limits removal to the paths this build is responsible for (a build of some targets leaves
   * the files of the others alone); by default it owns the whole folder.
   */
  readonly owns?: (path: string) => boolean;
  /** Overwrite and remove generated files even when they were edited by hand. */
  readonly force?: boolean;
}

/** Compares what resgen would write with what the folder holds. Reads only; never writes. */
export async function planWrite(
  outDir: string,
  files: ReadonlyMap<string, string>,
  options: PlanOptions = {},
): Promise<Plan> {
  const root = resolve(outDir);
  const owns = options.owns ?? (() => true);
  const changes: Change[] = [];
  const conflicts: string[] = [];
  const edited: string[] = [];
  const escapes: string[] = [];
  let unchanged = 0;

  const wanted = new Map<string, string>();
  for (const [path, content] of files) {
    if (isInside(root, path) && path !== MANIFEST)
      wanted.set(posix.normalize(path.split(sep).join("/")), content);
    else escapes.push(path);
  }
  const links = await linksOnTheWay(root, [...wanted.keys()]);
  if (links.length > 0) return refused(root, { links, escapes });
  const folder = await lstat(root).catch(() => undefined);
  if (folder !== undefined && !folder.isDirectory())
    throw new WriteError(root, "it is a file, not a folder");

  const previous = await readManifest(root);
  const hashes = new Map<string, string>();
  // read every file that would be written at once, then compare in order
  const existingTexts = await Promise.all(
    [...wanted.keys()].map((path) => readIfFile(join(root, path))),
  );
  let index = 0;
  for (const [path, content] of wanted) {
    const existing = existingTexts[index++];
    hashes.set(path, digest(content));
    if (existing === undefined) changes.push({ kind: "create", path, content });
    else if (existing === content) unchanged++;
    else if (!isGenerated(existing) || (previous !== undefined && !previous.has(path)))
      conflicts.push(path);
    else if (
      !options.force &&
      previous !== undefined &&
      !previous.get(path)!.includes(digest(existing))
    )
      edited.push(path);
    else changes.push({ kind: "update", path, content });
  }

  // files the record names that this build no longer produces: removed if still as written
  const kept = new Map<string, string>();
  for (const [path, accepted] of previous ?? []) {
    if (wanted.has(path) || !isInside(root, path)) continue;
    if (!owns(path)) {
      kept.set(path, accepted[accepted.length - 1]!);
      continue;
    }
    const existing = await readIfFile(join(root, path));
    if (existing === undefined) continue;
    if (options.force || accepted.includes(digest(existing)))
      changes.push({ kind: "remove", path });
    else edited.push(path);
  }
  // temporary files a build killed while writing left next to files it still generates
  for (const path of await leftovers(root, wanted)) changes.push({ kind: "remove", path });

  changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const content = renderManifest(new Map([...kept, ...hashes]));
  const current = await readIfFile(join(root, MANIFEST));
  return {
    outDir: root,
    changes,
    unchanged,
    conflicts: conflicts.sort(),
    edited: edited.sort(),
    links,
    escapes,
    manifest: { content, changed: current !== content },
    previous: previous ?? new Map(),
  };
}

function refused(root: string, found: { links: string[]; escapes: string[] }): Plan {
  return {
    outDir: root,
    changes: [],
    unchanged: 0,
    conflicts: [],
    edited: [],
    links: found.links,
    escapes: found.escapes,
    manifest: { content: "", changed: false },
    previous: new Map(),
  };
}

/** Whether applying the plan would change nothing on disk. */
export function isUpToDate(plan: Plan): boolean {
  return plan.changes.length === 0 && !plan.manifest.changed;
}

/**
 * Applies a plan that has no conflicts, hand edits, links or escapes, in an order that keeps
 * the folder whole at every instant:
 * 1. every new text is written to a temporary file beside its final name; a failure here
 *    removes them all and leaves the folder untouched;
 * 2. the record is widened to accept both the old and the new bytes of every file;
 * 3. the temporary files are renamed into place: modules first, then the barrels (`index.ts`,
 *    deepest first) that export them;
 * 4. files no longer generated are removed (no barrel names them any more), and the folders
 *    that this leaves empty;
 * 5. the record is narrowed to what the folder now holds.
 */
export async function applyPlan(plan: Plan, fs: WriterFs = nodeFs): Promise<void> {
  const { mkdir, writeFile, rename, rm } = fs;
  if (
    plan.conflicts.length > 0 ||
    plan.edited.length > 0 ||
    plan.links.length > 0 ||
    plan.escapes.length > 0
  ) {
    throw new Error("internal: refusing to apply a plan with conflicts");
  }
  const writes = plan.changes
    .filter((c): c is Extract<Change, { content: string }> => c.kind !== "remove")
    .sort(renameOrder);
  const staged: { temp: string; full: string }[] = [];
  const created: string[] = []; // the first folder each mkdir made, to take back on failure
  try {
    for (const change of writes) {
      const full = join(plan.outDir, change.path);
      const made = await guard(full, () => mkdir(dirname(full), { recursive: true }));
      if (typeof made === "string") created.push(made);
      const temp = temporaryName(full);
      staged.push({ temp, full });
      await guard(full, () => writeFile(temp, change.content, { flag: "wx" }));
    }
    if (writes.length > 0) {
      const widened = new Map(plan.previous);
      for (const change of writes)
        widened.set(change.path, [
          ...(plan.previous.get(change.path) ?? []),
          digest(change.content),
        ]);
      await writeAtomically(fs, join(plan.outDir, MANIFEST), renderManifest(widened));
    }
  } catch (error) {
    await Promise.all(staged.map(({ temp }) => rm(temp, { force: true })));
    // the folders made for the staged files go too, the deepest first; rmdir removes only empty ones
    const made = new Set<string>();
    for (const { full } of staged) {
      for (
        let folder = dirname(full);
        created.some((top) => folder === top || folder.startsWith(top + sep));
        folder = dirname(folder)
      )
        made.add(folder);
    }
    for (const folder of [...made].sort((a, b) => b.length - a.length))
      await fs.rmdir(folder).catch(() => undefined);
    throw error instanceof WriteError ? new WriteError(error.path, error.reason, true) : error;
  }
  for (const { temp, full } of staged) await guard(full, () => rename(temp, full));
  const emptied = new Set<string>();
  for (const change of plan.changes) {
    if (change.kind !== "remove") continue;
    await guard(join(plan.outDir, change.path), () =>
      rm(join(plan.outDir, change.path), { force: true }),
    );
    for (let folder = dirname(change.path); folder !== "."; folder = dirname(folder))
      emptied.add(folder);
  }
  // the folders of removed files go too when nothing is left in them (runtime/ when a build
  // switches to `runtime: package`), the deepest first; rmdir removes only empty ones
  for (const folder of [...emptied].sort((a, b) => b.length - a.length))
    await fs.rmdir(join(plan.outDir, folder)).catch(() => undefined);
  if (plan.manifest.changed || plan.changes.length > 0)
    await writeAtomically(fs, join(plan.outDir, MANIFEST), plan.manifest.content);
}

/** The file-system calls that change the folder: the real ones, or a test's that fail on cue. */
export interface WriterFs {
  // functions, not methods: the writer calls them detached, as node:fs/promises allows
  readonly mkdir: (path: string, options: { recursive: true }) => Promise<unknown>;
  readonly writeFile: (path: string, content: string, options: { flag: "wx" }) => Promise<void>;
  readonly rename: (from: string, to: string) => Promise<void>;
  readonly rm: (path: string, options: { force: true }) => Promise<void>;
  readonly rmdir: (path: string) => Promise<void>;
}

const nodeFs: WriterFs = { mkdir, writeFile, rename, rm, rmdir };

/** Modules before barrels, and a deeper barrel before the one that re-exports it. */
function renameOrder(a: { path: string }, b: { path: string }): number {
  const barrel = (p: string) => posix.basename(p) === "index.ts";
  const depth = (p: string) => p.split("/").length;
  if (barrel(a.path) !== barrel(b.path)) return barrel(a.path) ? 1 : -1;
  if (barrel(a.path) && depth(a.path) !== depth(b.path)) return depth(b.path) - depth(a.path);
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0;
}

async function writeAtomically(fs: WriterFs, full: string, content: string): Promise<void> {
  const { writeFile, rename, rm } = fs;
  const temp = temporaryName(full);
  try {
    await guard(full, () => writeFile(temp, content, { flag: "wx" }));
    await guard(full, () => rename(temp, full));
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/** Runs an I/O step, turning its failure into a {@link WriteError} naming `path`. */
async function guard<T>(path: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof WriteError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new WriteError(
      path,
      code === "ENOSPC"
        ? "no space left on the device"
        : code === "EROFS"
          ? "read-only file system"
          : code === "EEXIST" || code === "ENOTDIR"
            ? "a file is where a folder should be"
            : failure(error),
    );
  }
}

/** The name `applyPlan` writes a file under before renaming it over `path`. */
function temporaryName(path: string): string {
  return `${path}.${randomBytes(6).toString("hex")}.tmp`;
}

/** A name {@link temporaryName} makes; the group is the path it was for. */
const LEFTOVER = /^(.+)\.[0-9a-f]{12}\.tmp$/;

/**
 * The temporary files beside the files this build generates (or beside its record), read from
 * only the folders those files are in: resgen never lists anything else.
 */
async function leftovers(root: string, wanted: ReadonlyMap<string, string>): Promise<string[]> {
  const folders = new Set([".", ...[...wanted.keys()].map((p) => posix.dirname(p))]);
  const found: string[] = [];
  for (const folder of [...folders].sort()) {
    let entries;
    try {
      entries = await readdir(join(root, folder), { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw new WriteError(join(root, folder), failure(error));
    }
    for (const entry of entries) {
      if (!entry.isFile()) continue;
      const path = folder === "." ? entry.name : `${folder}/${entry.name}`;
      const original = LEFTOVER.exec(path)?.[1];
      if (original !== undefined && (wanted.has(original) || original === MANIFEST))
        found.push(path);
    }
  }
  return found;
}

/**
 * The symbolic links among the output folder and the folders and files below it that `paths`
 * would be written to. Every part is looked at with lstat, so no link is followed to find another.
 */
async function linksOnTheWay(root: string, paths: readonly string[]): Promise<string[]> {
  const parts = new Set<string>(["."]);
  for (const path of [...paths, MANIFEST]) {
    const segments = path.split("/");
    for (let i = 1; i <= segments.length; i++) parts.add(segments.slice(0, i).join("/"));
  }
  const links: string[] = [];
  for (const part of [...parts].sort()) {
    if (links.some((link) => link === "." || part.startsWith(`${link}/`))) continue;
    try {
      if ((await lstat(join(root, part))).isSymbolicLink()) links.push(part);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR")
        throw new WriteError(join(root, part), failure(error));
    }
  }
  return links;
}

/** The record's text: deterministic, one file a line, sorted. */
function renderManifest(files: ReadonlyMap<string, string | readonly string[]>): string {
  const sorted = [...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const lines = sorted.map(
    ([path, hashes]) =>
      `    ${JSON.stringify(path)}: ${JSON.stringify(typeof hashes === "string" || hashes.length > 1 ? hashes : hashes[0])}`,
  );
  return `{\n  "//": "Written by resgen build: the files it generated in this folder, with the SHA-256 of each. Do not edit.",\n  "files": {\n${lines.join(",\n")}\n  }\n}\n`;
}

/** The record in `root`, path → accepted hashes; undefined when there is none or it is not one. */
async function readManifest(root: string): Promise<Map<string, string[]> | undefined> {
  const text = await readIfFile(join(root, MANIFEST));
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const files = (parsed as { files?: unknown } | null)?.files;
  if (typeof files !== "object" || files === null || Array.isArray(files)) return undefined;
  const record = new Map<string, string[]>();
  for (const [path, value] of Object.entries(files)) {
    const hashes =
      typeof value === "string"
        ? [value]
        : Array.isArray(value)
          ? value.filter((h): h is string => typeof h === "string")
          : [];
    if (hashes.length > 0) record.set(path, hashes);
  }
  return record;
}

function digest(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** The text of a regular file; undefined when there is nothing there. Anything else in the way is a WriteError. */
async function readIfFile(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    if (code === "EISDIR")
      throw new WriteError(path, "a folder is where a generated file should be");
    if (code === "ENOTDIR") throw new WriteError(path, "a file is where a folder should be");
    throw new WriteError(path, failure(error));
  }
}
