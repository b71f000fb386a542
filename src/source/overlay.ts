/**
 * Texts laid over the project on disk, as one host for the check pipeline (host.ts): `init`
 * checks the project as `resgen build` will read it once the new files exist, before it writes
 * any of them (docs/quickstart.md), and `tune` checks its tuned policies in place of the
 * committed ones before it writes any (docs/tune.md).
 */
import { basename, dirname, join, resolve } from "node:path";
import { fileSystemHost, MemoryHost, type Host } from "./host.js";

export function overlayHost(cwd: string, files: ReadonlyMap<string, string>): Host {
  const disk = fileSystemHost(cwd);
  const memory = new MemoryHost([...files].map(([path, text]) => [resolve(cwd, path), text]));
  const added = (path: string) => memory.kind(path) === "file";
  return {
    cwd: disk.cwd,
    readFile: (file) => (added(file) ? memory.readFile(file) : disk.readFile(file)),
    kind: (path) => memory.kind(path) ?? disk.kind(path),
    glob: async (patterns, dir) => {
      const found = new Set([...(await disk.glob(patterns, dir)), ...memory.glob(patterns, dir)]);
      return [...found].sort();
    },
    findProject: async (dir) => {
      const [onDisk, inMemory] = [await disk.findProject(dir), memory.findProject(dir)];
      // the nearer of the two governs, as the nearest resgen.config.yaml does on disk
      if (onDisk === undefined || inMemory === undefined) return onDisk ?? inMemory;
      return inMemory.length >= onDisk.length ? inMemory : onDisk;
    },
    realpath: async (path) =>
      (await disk.kind(path)) === undefined ? realpathOfNew(disk, path) : disk.realpath(path),
    isInside: (root, file) => disk.isInside(root, file),
  };
}

/** A path that does not exist yet, under the real path of its nearest folder that does. */
async function realpathOfNew(disk: Host, path: string): Promise<string> {
  const parent = dirname(path);
  if (parent === path) return path;
  const base =
    (await disk.kind(parent)) === undefined
      ? await realpathOfNew(disk, parent)
      : await disk.realpath(parent);
  return join(base, basename(path));
}
