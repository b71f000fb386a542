/**
 * Reading an input file without trusting it. Every file `check` reads (policies, project files,
 * OpenAPI documents and the files their `$ref`s reach) comes through here, so a path written by
 * a policy or description author cannot make resgen read, and then print, something else:
 *
 * - the file, with every symbolic link resolved, must lie inside the project root it is read for
 *   ({@link outsideProblem}, which the caller skips where outside files are allowed);
 * - it must be a regular file (not a FIFO, which would block for ever, nor a device such as
 *   `/dev/urandom`, which never ends), and its size is checked before a byte is read;
 * - it is opened without blocking and checked again on the open descriptor, so a file swapped
 *   for something else between the two checks is refused too; then at most the limit is read.
 *
 * docs/security.md lists these guarantees with the tests that prove them.
 */
import { constants } from "node:fs";
import { open, realpath, stat } from "node:fs/promises";
import { isAbsolute, relative } from "node:path";

/** Largest policy or project file accepted. Policies are small; anything bigger is a mistake or an attack. */
export const MAX_DOCUMENT_BYTES = 1024 * 1024;

/** The code that reports a file not read: RG004 unreadable, RG115 outside the project, RG116 not a regular file, RG003 too large. */
export type ReadCode = "RG003" | "RG004" | "RG115" | "RG116";

export type ReadOutcome =
  { readonly text: string } | { readonly problem: string; readonly code: ReadCode };

/** Whether `path` is `root` itself or below it (both absolute, links already resolved). */
export function isWithin(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/**
 * Whether `file`, its symbolic links resolved, lies inside `root`: undefined when it does (or
 * does not exist, which reading it then reports), else the problem. Nothing is read.
 */
export async function outsideProblem(file: string, root: string): Promise<ReadOutcome | undefined> {
  let real: string;
  try {
    real = await realpath(file);
  } catch {
    return undefined;
  }
  return isWithin(await realpathOr(root), real)
    ? undefined
    : { problem: "it is outside the project", code: "RG115" };
}

/** Reads `file` as UTF-8 if it is a regular file within the size limit. */
export async function readInput(
  file: string,
  maxBytes: number = MAX_DOCUMENT_BYTES,
): Promise<ReadOutcome> {
  try {
    const real = await realpath(file);
    const info = await stat(real);
    if (!info.isFile())
      return { problem: `it is ${kind(info)}, not a regular file`, code: "RG116" };
    if (info.size > maxBytes) return { problem: tooLarge(info.size, maxBytes), code: "RG003" };
    // O_NONBLOCK: should the path have become a FIFO since the stat, opening it does not wait for a writer
    const handle = await open(real, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const opened = await handle.stat();
      if (!opened.isFile())
        return { problem: `it is ${kind(opened)}, not a regular file`, code: "RG116" };
      if (opened.size > maxBytes)
        return { problem: tooLarge(opened.size, maxBytes), code: "RG003" };
      // one byte past the limit tells a file that grew since the stat from one that is exactly at it
      const buffer = Buffer.alloc(Math.min(opened.size, maxBytes) + 1);
      let length = 0;
      for (;;) {
        const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
        if (bytesRead === 0) break;
        length += bytesRead;
        if (length === buffer.length) break;
      }
      if (length > maxBytes) return { problem: tooLarge(length, maxBytes), code: "RG003" };
      return { text: buffer.toString("utf8", 0, length) };
    } finally {
      await handle.close();
    }
  } catch (error) {
    return { problem: failure(error), code: "RG004" };
  }
}

async function realpathOr(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    return path;
  }
}

/** Why a file of `size` bytes is refused, in words (RG003). */
export function tooLarge(size: number, maxBytes: number): string {
  return `it is ${size} bytes or more, over the ${maxBytes} byte limit`;
}

function kind(info: {
  isDirectory(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
}): string {
  if (info.isDirectory()) return "a directory";
  if (info.isFIFO()) return "a FIFO";
  if (info.isSocket()) return "a socket";
  if (info.isCharacterDevice() || info.isBlockDevice()) return "a device";
  return "not a regular file";
}

/** Why a file could not be read, in words. */
export function failure(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case "ENOENT":
      return "no such file";
    case "EISDIR":
      return "it is a directory";
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "ELOOP":
      return "too many symbolic links";
    case "ENOTDIR":
      return "a part of the path is not a folder";
    default:
      return code ?? String(error);
  }
}
