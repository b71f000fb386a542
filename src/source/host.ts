/**
 * Where the check pipeline gets its files from. Every question the pipeline asks about files
 * goes through a {@link Host}, so one pipeline serves the command line (the file system) and
 * tests or the docs generator (texts in memory), and a rule cannot apply to one and not the
 * other. The file-system host answers with promises and the in-memory host at once; the
 * pipeline is written once for both (src/source/task.ts).
 */
import { dirname, join, relative, resolve, sep } from "node:path";
import { realpath } from "node:fs/promises";
import { stat } from "node:fs/promises";
import { glob } from "tinyglobby";
import { CONFIG_FILE, findConfig } from "./inputs.js";
import {
  isWithin,
  MAX_DOCUMENT_BYTES,
  outsideProblem,
  readInput,
  tooLarge,
  type ReadOutcome,
} from "./read.js";
import type { Maybe } from "./task.js";

/** What a path names, as far as finding inputs is concerned. */
export type PathKind = "file" | "directory" | undefined;

/** The file operations the check pipeline needs. Paths are absolute. */
export interface Host {
  /** Directory relative arguments and displayed paths are relative to (absolute). */
  readonly cwd: string;
  /**
   * The text of `file`, or why it cannot be had, with the guarded reader's guarantees
   * (src/source/read.ts): regular files only, size checked before reading, at most the limit read.
   */
  readFile(file: string): Maybe<ReadOutcome>;
  /** Whether `path` is a file, a directory, or nothing. */
  kind(path: string): Maybe<PathKind>;
  /** The files below `dir` that match any of `patterns` (globs relative to `dir`), absolute. */
  glob(patterns: readonly string[], dir: string): Maybe<readonly string[]>;
  /** The nearest project file (resgen.config.yaml) in `dir` or above it. */
  findProject(dir: string): Maybe<string | undefined>;
  /** `path` with every symbolic link resolved; `path` itself when it does not exist. */
  realpath(path: string): Maybe<string>;
  /**
   * Whether `file`, its links resolved, lies inside `root` (its links resolved too). A file that
   * does not exist counts as inside: reading it then reports that it is missing.
   */
  isInside(root: string, file: string): Maybe<boolean>;
}

/** The host over the real file system: what `check` and `build` use. */
export function fileSystemHost(cwd: string = process.cwd()): Host {
  return {
    cwd: resolve(cwd),
    readFile: (file) => readInput(file),
    kind: async (path) => {
      try {
        const info = await stat(path);
        return info.isDirectory() ? "directory" : info.isFile() ? "file" : undefined;
      } catch {
        return undefined;
      }
    },
    glob: async (patterns, dir) =>
      (await glob([...patterns], { cwd: dir, absolute: true, onlyFiles: true })).map((f) =>
        resolve(f),
      ),
    findProject: (dir) => findConfig(dir),
    realpath: async (path) => {
      try {
        return await realpath(path);
      } catch {
        return path;
      }
    },
    isInside: async (root, file) => (await outsideProblem(file, root)) === undefined,
  };
}

/**
 * A host over texts in memory, by path (relative paths are taken from `cwd`, by default the
 * root of the file system). There are no links, so every path is its own real path. It answers
 * at once, so a task over it runs synchronously.
 */
export class MemoryHost implements Host {
  readonly cwd: string;
  private readonly files = new Map<string, string>();

  constructor(files: Iterable<readonly [string, string]>, cwd: string = resolve("/")) {
    this.cwd = resolve(cwd);
    for (const [path, text] of files) this.files.set(resolve(this.cwd, path), text);
  }

  readFile(file: string): ReadOutcome {
    const text = this.files.get(resolve(file));
    if (text === undefined) {
      return this.kind(file) === "directory"
        ? { problem: "it is a directory, not a regular file", code: "RG116" }
        : { problem: "no such file", code: "RG004" };
    }
    const size = Buffer.byteLength(text, "utf8");
    return size > MAX_DOCUMENT_BYTES
      ? { problem: tooLarge(size, MAX_DOCUMENT_BYTES), code: "RG003" }
      : { text };
  }

  kind(path: string): PathKind {
    const full = resolve(path);
    if (this.files.has(full)) return "file";
    const prefix = full.endsWith(sep) ? full : full + sep;
    for (const file of this.files.keys()) if (file.startsWith(prefix)) return "directory";
    return undefined;
  }

  glob(patterns: readonly string[], dir: string): string[] {
    const root = resolve(dir);
    const tests = patterns.map(globPattern);
    const matched: string[] = [];
    for (const file of this.files.keys()) {
      if (!isWithin(root, file)) continue;
      const rel = relative(root, file).split(sep).join("/");
      if (tests.some((test) => test.test(rel))) matched.push(file);
    }
    return matched.sort();
  }

  findProject(dir: string): string | undefined {
    let current = resolve(dir);
    for (;;) {
      const candidate = join(current, CONFIG_FILE);
      if (this.files.has(candidate)) return candidate;
      const parent = dirname(current);
      if (parent === current) return undefined;
      current = parent;
    }
  }

  realpath(path: string): string {
    return resolve(path);
  }

  isInside(root: string, file: string): boolean {
    return isWithin(resolve(root), resolve(file));
  }
}

/**
 * A glob as a regular expression over `/`-separated relative paths: `*` and `?` within one
 * segment, `**` across segments, `{a,b}` alternatives and `[...]` classes, which is what
 * policy globs use (docs/policy.md).
 */
function globPattern(pattern: string): RegExp {
  let out = "";
  let braces = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*" && pattern[i + 1] === "*") {
      const slash = pattern[i + 2] === "/";
      out += slash ? "(?:.*/)?" : ".*";
      i += slash ? 2 : 1;
    } else if (c === "*") out += "[^/]*";
    else if (c === "?") out += "[^/]";
    else if (c === "{") {
      braces++;
      out += "(?:";
    } else if (c === "}" && braces > 0) {
      braces--;
      out += ")";
    } else if (c === "," && braces > 0) out += "|";
    else if (c === "[") {
      const end = pattern.indexOf("]", i + 1);
      if (end < 0) out += "\\[";
      else {
        out += `[${pattern
          .slice(i + 1, end)
          .replace(/^!/, "^")
          .replace(/\\/g, "\\\\")}]`;
        i = end;
      }
    } else out += c.replace(/[.+^$()|\\/]/g, "\\$&");
  }
  return new RegExp(`^(?:\\./)?${out}$`);
}
