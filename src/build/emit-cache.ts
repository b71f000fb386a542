/**
 * The emit cache: a rebuild reuses a client module whose inputs have not changed since the
 * build that wrote it, instead of emitting it again (emission is most of a build's time).
 *
 * A module is reused only when both hold:
 * - its inputs (the resolved policy, its header, the project's telemetry setting) hash to the
 *   key recorded when it was last emitted, by an emitter with the same fingerprint (resgen's
 *   version, the compiler ts-morph prints with, and the emitter's own code);
 * - the file in the output folder still hashes to what that build produced (so a hand edit, a
 *   checkout of other output or a deleted file is a miss, and `--check` still sees the drift).
 * The emitter is deterministic, so a reused module is byte-for-byte what emitting it would give.
 *
 * The cache is one JSON file, by default `node_modules/.cache/resgen/emit.json` above the
 * working directory. A missing, unreadable or foreign cache file is ignored (everything is
 * emitted); it is replaced atomically, keeping the folders other builds recorded meanwhile.
 */
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ts } from "ts-morph";
import { VERSION } from "../version.js";
import { isInside } from "./write.js";

import type { ModuleMemo } from "../emit/index.js";

export type { ModuleMemo };

export interface EmitCache {
  /** The memo for one output folder (absolute). */
  folder(outDir: string): ModuleMemo;
  /** Modules reused and emitted so far. */
  readonly stats: { readonly reused: number; readonly emitted: number };
  /** Writes the cache file if anything changed. Failing to write it never fails a build. */
  save(): void;
}

interface CacheFile {
  readonly fingerprint: string;
  /** By output folder, then by module path: [inputs key, hash of the file's text]. */
  readonly folders: Record<string, Record<string, [string, string]>>;
}

/** The cache file above `cwd`: in the nearest `node_modules`, or `undefined` when there is none. */
export function defaultCacheFile(cwd: string): string | undefined {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    if (existsSync(join(dir, "node_modules"))) return join(dir, "node_modules", ".cache", "resgen", "emit.json");
    if (dirname(dir) === dir) return undefined;
  }
}

/** Opens the cache stored in `file`. */
export function openEmitCache(file: string): EmitCache {
  const fingerprint = emitterFingerprint();
  const folders = new Map(Object.entries(readFolders(file, fingerprint)).map(([dir, modules]) => [dir, new Map(Object.entries(modules))]));
  let changed = false;
  /** The folders this build emitted into, with their records before and after. */
  const rebuilt: { dir: string; before: ReadonlyMap<string, unknown>; after: ReadonlyMap<string, unknown> }[] = [];
  const stats = { reused: 0, emitted: 0 };

  return {
    stats,
    folder(outDir) {
      // the folder's record is rebuilt from what this build emits or reuses, so modules no longer
      // generated (a policy deleted or renamed) leave it
      const previous = folders.get(outDir) ?? new Map<string, [string, string]>();
      const entries = new Map<string, [string, string]>();
      folders.set(outDir, entries);
      rebuilt.push({ dir: outDir, before: previous, after: entries });
      return (path, inputs, emit) => {
        const key = inputsKey(inputs);
        const entry = previous.get(path);
        if (key !== undefined && entry !== undefined && entry[0] === key && isInside(outDir, path)) {
          const text = readIfExists(join(outDir, path));
          if (text !== undefined && hash(text) === entry[1]) {
            stats.reused++;
            entries.set(path, entry);
            return text;
          }
        }
        const text = emit();
        stats.emitted++;
        if (key !== undefined) entries.set(path, [key, hash(text)]);
        changed = true;
        return text;
      };
    },
    save() {
      // with nothing emitted, a folder's record changed only if some module was not produced again
      if (!changed && rebuilt.every(({ before, after }) => before.size === after.size)) return;
      // Another build may have saved since this one opened the file (a monorepo building its
      // packages in parallel): keep its folders, and replace only the ones this build made.
      const mine = new Set(rebuilt.map((r) => r.dir));
      const others = Object.entries(readFolders(file, fingerprint)).filter(([dir]) => !mine.has(dir));
      const data: CacheFile = {
        fingerprint,
        folders: Object.fromEntries([...others, ...[...mine].map((dir) => [dir, Object.fromEntries(folders.get(dir) ?? [])] as const)].sort(([a], [b]) => (a < b ? -1 : 1))),
      };
      // read, merge and replace without yielding, so builds in one process cannot interleave here
      const temporary = `${file}.${randomBytes(6).toString("hex")}.tmp`;
      try {
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(temporary, JSON.stringify(data));
        renameSync(temporary, file);
        changed = false;
        rebuilt.length = 0;
      } catch {
        // a read-only or vanished cache folder only costs the next build its speed
        rmSync(temporary, { force: true });
      }
    },
  };
}

/** The folders recorded in `file` by an emitter with `fingerprint`; none if it is missing, unreadable or foreign. */
function readFolders(file: string, fingerprint: string): CacheFile["folders"] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return {}; // no cache yet, or one that cannot be read: start empty
  }
  const stored = parsed as { fingerprint?: unknown; folders?: unknown } | null;
  if (stored?.fingerprint !== fingerprint || !isRecord(stored.folders)) return {};
  // keep only well-formed records: anything else is a miss, never a crash
  const folders: CacheFile["folders"] = {};
  for (const [dir, modules] of Object.entries(stored.folders)) {
    if (!isRecord(modules)) continue;
    const kept: Record<string, [string, string]> = {};
    for (const [path, entry] of Object.entries(modules)) {
      if (Array.isArray(entry) && entry.length === 2 && typeof entry[0] === "string" && typeof entry[1] === "string") kept[path] = [entry[0], entry[1]];
    }
    folders[dir] = kept;
  }
  return folders;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

let fingerprintMemo: string | undefined;

/** resgen's version, the TypeScript that ts-morph prints with, and the code of the emitter and the model it reads. */
function emitterFingerprint(): string {
  if (fingerprintMemo !== undefined) return fingerprintMemo;
  const src = join(dirname(fileURLToPath(import.meta.url)), "..");
  const digest = createHash("sha256").update(`${VERSION}\0${ts.version}\0`);
  for (const folder of ["emit", "model"]) {
    for (const name of readdirSync(join(src, folder)).sort()) {
      if (/\.[cm]?[jt]s$/.test(name) && !name.endsWith(".d.ts")) digest.update(`${folder}/${name}`).update("\0").update(readFileSync(join(src, folder, name))).update("\0");
    }
  }
  return (fingerprintMemo = digest.digest("base64url"));
}

/** A key for plain-data inputs, or `undefined` when they cannot be written as JSON faithfully. */
function inputsKey(inputs: unknown): string | undefined {
  try {
    // JSON writes Infinity and NaN as null: spell numbers that JSON cannot hold so they stay distinct
    return hash(JSON.stringify(inputs, (_key, value: unknown) => (typeof value === "number" && !Number.isFinite(value) ? `\0${value}` : value)));
  } catch {
    return undefined;
  }
}

function hash(text: string): string {
  return createHash("sha256").update(text).digest("base64url");
}

function readIfExists(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}
