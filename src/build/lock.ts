/**
 * One build at a time per output folder (docs/build.md, "Two builds at once"), across processes
 * and without a daemon: a build creates `.resgen-build.lock` in the folder with an exclusive
 * create, holding its pid, host and start, writes, and removes it. Another build waits for it,
 * saying so, up to a bound. A lock whose holder is gone (killed with SIGKILL, a crashed
 * machine's container) is stale and taken over: its pid no longer runs on this host, or runs a
 * process started at another time (the pid was reused), or is this process's own pid while this
 * process holds no such lock. A holder on another host cannot be seen from here: its lock is
 * waited for up to the bound while it is younger than 10 minutes, and the message says which host
 * and which file to remove; an older one is stale.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { link, mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { WriteError } from "./write.js";
import { failure } from "../source/read.js";

/** The lock's name inside the output folder. */
export const LOCK = ".resgen-build.lock";

/** What a lock file records about the build holding it. */
export interface LockHolder {
  readonly pid: number;
  readonly host: string;
  /** When the build took the lock, ISO 8601. */
  readonly since: string;
  /** Tells this holding apart from another of the same process. */
  readonly token: string;
  /** The process's start as the kernel records it (Linux), to tell a reused pid apart. */
  readonly started?: string | undefined;
}

/** Time, for the wait: the real one, or a test's. */
export interface LockClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export interface LockOptions {
  /** Longest wait for another build, in milliseconds (default five minutes). */
  readonly timeoutMs?: number;
  /** Told when the build starts waiting, then every few seconds while it waits. */
  readonly onWait?: (holder: LockHolder | undefined, waitedMs: number) => void;
  readonly clock?: LockClock;
}

export const DEFAULT_LOCK_TIMEOUT_MS = 5 * 60_000;
/** How often a waiting build says it still waits. */
const REPORT_EVERY_MS = 5_000;
/**
 * A lock from another host older than this is stale: no build writes for that long (a build of
 * 500 policies takes seconds), and its holder cannot be asked.
 */
const ELSEWHERE_MS = 10 * 60_000;
/** A lock file that is not whole (its holder died between creating and writing it) for this long is stale. */
const TORN_AFTER_MS = 10_000;

const realClock: LockClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** Tokens of the locks this process holds. */
const heldHere = new Set<string>();

/** The start of process `pid` as /proc records it (clock ticks since boot); undefined elsewhere. */
export function processStart(pid: number): string | undefined {
  try {
    const line = readFileSync(`/proc/${String(pid)}/stat`, "utf8");
    // the command name, in parentheses, may hold spaces: fields are counted after its end
    const fields = line.slice(line.lastIndexOf(")") + 2).split(" ");
    return fields[19]; // field 22, starttime
  } catch {
    return undefined;
  }
}

function parse(text: string): LockHolder | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockHolder> | null;
    if (
      value === null ||
      typeof value.pid !== "number" ||
      typeof value.host !== "string" ||
      typeof value.token !== "string"
    )
      return undefined;
    return {
      pid: value.pid,
      host: value.host,
      since: String(value.since),
      token: value.token,
      started: typeof value.started === "string" ? value.started : undefined,
    };
  } catch {
    return undefined;
  }
}

/** Whether the build `holder` names is certainly gone. */
export function isStale(holder: LockHolder): boolean {
  // a build on another host cannot be seen from here: its lock holds while a build could still be
  // writing, and no longer (a lock committed by mistake would otherwise stop every other machine)
  if (holder.host !== hostname()) return !(Date.now() - Date.parse(holder.since) < ELSEWHERE_MS);
  if (holder.pid === process.pid) return !heldHere.has(holder.token);
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    // EPERM: it runs, as another user
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
  const started = processStart(holder.pid);
  return holder.started !== undefined && started !== undefined && started !== holder.started;
}

/** Who holds the lock, in words. */
export function describeHolder(holder: LockHolder | undefined): string {
  if (holder === undefined) return "another build";
  const where = holder.host === hostname() ? "" : ` on ${holder.host}`;
  return `the build of pid ${String(holder.pid)}${where} (since ${holder.since})`;
}

/**
 * Takes the lock of `folder` (which exists), waiting for another build to finish; returns the
 * function that gives it back. Throws a {@link WriteError} when the wait passes its bound or
 * the lock cannot be written.
 */
export async function acquireLock(
  folder: string,
  options: LockOptions = {},
): Promise<() => Promise<void>> {
  const clock = options.clock ?? realClock;
  const timeoutMs = options.timeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  const path = join(folder, LOCK);
  const token = randomBytes(8).toString("hex");
  const me: LockHolder = {
    pid: process.pid,
    host: hostname(),
    since: new Date().toISOString(),
    token,
    started: processStart(process.pid),
  };
  const text = `${JSON.stringify(me)}\n`;
  const began = clock.now();
  let reported: number | undefined;
  let pause = 20;
  for (;;) {
    try {
      heldHere.add(token); // before the file exists, so this process never judges it stale
      await writeFile(path, text, { flag: "wx" });
      return () => release(path, token);
    } catch (error) {
      heldHere.delete(token);
      const code = (error as NodeJS.ErrnoException).code;
      // the folder went while this build waited (a build that made it and wrote nothing took
      // it back): made again, and the lock taken in it
      if (code === "ENOENT" && clock.now() - began < timeoutMs) {
        await mkdir(folder, { recursive: true }).catch(() => undefined);
        await clock.sleep(pause);
        continue;
      }
      if (code !== "EEXIST")
        throw new WriteError(path, `cannot take the build lock: ${failure(error)}`, true);
    }
    const seen = await readFile(path, "utf8").catch(() => undefined);
    if (seen === undefined) continue; // given back meanwhile
    const holder = parse(seen);
    const torn =
      holder === undefined &&
      (await stat(path).then(
        (s) => Date.now() - s.mtimeMs > TORN_AFTER_MS,
        () => false,
      ));
    if (torn || (holder !== undefined && isStale(holder))) {
      await takeOver(path, seen, token);
      continue;
    }
    const waited = clock.now() - began;
    if (waited >= timeoutMs)
      throw new WriteError(
        path,
        `${describeHolder(holder)} has been writing this folder for the ${String(Math.round(waited / 1_000))} s this build waited; if no build is running there, remove ${LOCK}`,
        true,
      );
    if (reported === undefined || waited - reported >= REPORT_EVERY_MS) {
      reported = waited;
      options.onWait?.(holder, waited);
    }
    await clock.sleep(pause);
    pause = Math.min(250, pause * 2);
  }
}

/**
 * Removes a stale lock whose text was `seen`. It is moved aside first (one rename wins among
 * builds doing this at once), and put back if it turns out to be another lock than the one
 * judged: a build that took the lock between the reading and the move keeps it.
 */
async function takeOver(path: string, seen: string, token: string): Promise<void> {
  const aside = `${path}.${token}.stale`;
  try {
    await rename(path, aside);
  } catch {
    return; // another build moved it first
  }
  const moved = await readFile(aside, "utf8").catch(() => undefined);
  if (moved !== undefined && moved !== seen) await link(aside, path).catch(() => undefined);
  await rm(aside, { force: true });
}

async function release(path: string, token: string): Promise<void> {
  heldHere.delete(token);
  const seen = await readFile(path, "utf8").catch(() => undefined);
  if (seen !== undefined && parse(seen)?.token === token) await rm(path, { force: true });
}
