/**
 * Two builds of one project at once (docs/build.md, "Two builds at once"): a `--watch` and a
 * manual build, two CI steps. One waits for the other; both succeed; no file is left behind
 * that neither generates. A build killed while holding the folder never blocks the next one.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { mkdir, rename, rm, rmdir, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { build, type BuildResult } from "../../src/build/build.js";
import { acquireLock, LOCK, processStart } from "../../src/build/lock.js";
import type { WriterFs } from "../../src/build/write.js";
import { PACKAGE_ROOT } from "../../src/version.js";
import { exampleProject, readTree } from "./helpers.js";

let dir: string;
const out = () => join(dir, "src/generated");
const children: ChildProcess[] = [];

beforeEach(() => {
  dir = exampleProject("resgen-concurrent-");
});
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

const errors = (result: BuildResult) =>
  result.diagnostics.filter((d) => d.severity === "error").map((d) => `${d.code} ${d.message}`);

/** The tree a build of the project writes on its own, from scratch. */
async function expectedTree(): Promise<Map<string, string>> {
  rmSync(out(), { recursive: true, force: true });
  expect(errors(await build([], { cwd: dir }))).toEqual([]);
  const tree = readTree(out());
  rmSync(out(), { recursive: true, force: true });
  return tree;
}

/** A clock that jumps by each pause: a wait passes its bound without real time passing. */
function jumpingClock() {
  let now = 0;
  return {
    now: () => now,
    sleep: (ms: number) => {
      now += ms;
      return Promise.resolve();
    },
  };
}

/** A writer that stops at its first rename (every file staged, none in place) until let go. */
function pausedAtFirstRename() {
  let reached!: () => void;
  let letGo!: () => void;
  const atRename = new Promise<void>((resolve) => (reached = resolve));
  const released = new Promise<void>((resolve) => (letGo = resolve));
  let first = true;
  const writer: WriterFs = {
    mkdir,
    writeFile,
    rm,
    rmdir,
    rename: async (from, to) => {
      if (first) {
        first = false;
        reached();
        await released;
      }
      await rename(from, to);
    },
  };
  return { writer, atRename, letGo };
}

/** A process that holds the lock of `folder` (as a build does) until killed; resolves once held. */
function lockHolder(folder: string): Promise<ChildProcess> {
  const lockModule = join(PACKAGE_ROOT, "dist/src/build/lock.js");
  const script = `import { acquireLock } from ${JSON.stringify(lockModule)};
await acquireLock(${JSON.stringify(folder)});
process.stdout.write("held\\n");
setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("held")) resolve(child);
    });
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`the lock holder exited (${String(code)})`)));
  });
}

describe("two builds at once in one process", () => {
  it("a build that starts while another has staged its files waits for it; both succeed, nothing stray", async () => {
    const expected = await expectedTree();
    const first = pausedAtFirstRename();
    const a = build([], { cwd: dir, writer: first.writer });
    await first.atRename;
    // the first build's staged files are on disk, under temporary names
    const staged = [...readTree(out()).keys()].filter((p) => p.endsWith(".tmp"));
    expect(staged.length).toBeGreaterThan(5);

    const waits: string[] = [];
    let waiting!: () => void;
    const told = new Promise<string>((resolve) => (waiting = () => resolve("waiting")));
    const b = build([], {
      cwd: dir,
      onLockWait: (message) => {
        waits.push(message);
        waiting();
      },
    });
    let outcome: string;
    try {
      outcome = await Promise.race([told, b.then(() => "finished")]);
      // while the second waits, the first build's staged files stay where they are
      for (const path of staged) expect(existsSync(join(out(), path)), path).toBe(true);
    } finally {
      first.letGo();
    }
    const [resultA, resultB] = await Promise.all([a, b]);
    expect(outcome).toBe("waiting");
    expect(waits[0]).toMatch(
      new RegExp(
        `^waiting for the build of pid ${String(process.pid)} \\(since .+\\) to finish writing src/generated$`,
      ),
    );
    expect(errors(resultA)).toEqual([]);
    expect(errors(resultB)).toEqual([]);
    expect(resultA.written && resultB.written).toBe(true);
    expect(readTree(out())).toEqual(expected);
  });

  it("a build waiting longer than its bound stops with RG307, naming the holder, and writes nothing", async () => {
    await expectedTree();
    const first = pausedAtFirstRename();
    const a = build([], { cwd: dir, writer: first.writer });
    await first.atRename;
    const clock = jumpingClock();
    const messages: string[] = [];
    const b = await build([], {
      cwd: dir,
      lock: { timeoutMs: 60_000, clock },
      onLockWait: (m) => messages.push(m),
    }).finally(() => first.letGo());
    expect(errors(b)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^RG307 cannot write src/generated/${LOCK.replaceAll(".", "\\.")}: the build of pid ${String(process.pid)} \\(since .+\\) has been writing this folder for the 60 s this build waited; if no build is running there, remove ${LOCK.replaceAll(".", "\\.")}; the output folder was left as it was$`,
        ),
      ),
    ]);
    expect(b.written).toBe(false);
    // it said so at once, then every five seconds of its clock
    expect(messages[0]).toMatch(/^waiting for the build of pid/);
    expect(messages[1]).toMatch(/^still waiting for the build of pid .+ \(5 s\)$/);
    expect(messages.length).toBe(12);
    expect(errors(await a)).toEqual([]);
  });
});

describe("two resgen processes at once", () => {
  it("resgen build run twice at once, several times: both exit 0, the folder is whole, nothing stray", async () => {
    const expected = await expectedTree();
    const run = () =>
      new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
        const child = spawn(process.execPath, [join(PACKAGE_ROOT, "bin/resgen.js"), "build"], {
          cwd: dir,
          stdio: ["ignore", "ignore", "pipe"],
        });
        children.push(child);
        let stderr = "";
        child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
        const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
        child.on("error", reject);
        child.on("exit", (code) => {
          clearTimeout(timer);
          resolve({ code, stderr });
        });
      });
    for (let round = 0; round < 4; round++) {
      // from scratch, so both have every file to write
      rmSync(out(), { recursive: true, force: true });
      const [one, two] = await Promise.all([run(), run()]);
      expect(one, `round ${String(round)}`).toMatchObject({ code: 0 });
      expect(two, `round ${String(round)}`).toMatchObject({ code: 0 });
      expect(readTree(out()), `round ${String(round)}`).toEqual(expected);
    }
  }, 120_000);
});

describe("a build killed while holding the folder", () => {
  it("blocks the next build only while it lives: killed with SIGKILL, the waiting build proceeds", async () => {
    const expected = await expectedTree();
    await mkdir(out(), { recursive: true });
    const holder = await lockHolder(out());
    const held = JSON.parse(readFileSync(join(out(), LOCK), "utf8")) as { pid: number };
    expect(held.pid).toBe(holder.pid);
    const waits: string[] = [];
    const next = build([], {
      cwd: dir,
      onLockWait: (message) => {
        waits.push(message);
        if (waits.length === 1) holder.kill("SIGKILL");
      },
    });
    const result = await next;
    expect(waits[0]).toMatch(new RegExp(`^waiting for the build of pid ${String(holder.pid)} `));
    expect(errors(result)).toEqual([]);
    expect(readTree(out())).toEqual(expected);
  }, 30_000);

  it("a lock left by a build that is gone is taken over at once, and removed", async () => {
    const expected = await expectedTree();
    await mkdir(out(), { recursive: true });
    const gone = spawn(process.execPath, ["-e", ""]);
    const pid = gone.pid!;
    await new Promise((resolve) => gone.on("exit", resolve));
    const stale = (holder: object) =>
      writeFileSync(join(out(), LOCK), JSON.stringify({ host: hostname(), since: "x", ...holder }));
    for (const holder of [
      { pid, token: "a" }, // its process has ended
      { pid: process.pid, token: "b" }, // this process's pid, a lock this process does not hold
      // a running process (this one's parent) that started at another time: the pid was reused
      { pid: process.ppid, token: "c", started: `${processStart(process.ppid) ?? "0"}1` },
    ]) {
      stale(holder);
      const waits: string[] = [];
      const result = await build([], { cwd: dir, onLockWait: (m) => waits.push(m) });
      expect(waits, JSON.stringify(holder)).toEqual([]);
      expect(errors(result)).toEqual([]);
      expect(readTree(out())).toEqual(expected);
    }
  });

  it("a lock from another host is waited for while a build could still hold it, and taken over after 10 minutes (a lock committed by mistake)", async () => {
    const expected = await expectedTree();
    await mkdir(out(), { recursive: true });
    const elsewhere = (sinceMs: number) =>
      writeFileSync(
        join(out(), LOCK),
        JSON.stringify({
          pid: 1,
          host: `${hostname()}-elsewhere`,
          since: new Date(Date.now() - sinceMs).toISOString(),
          token: "elsewhere",
        }),
      );
    const clock = jumpingClock();
    elsewhere(60_000);
    const young = await build([], { cwd: dir, lock: { timeoutMs: 1_000, clock } });
    expect(errors(young)).toEqual([expect.stringMatching(/^RG307 .* on .*-elsewhere \(since/)]);
    elsewhere(11 * 60_000);
    const waits: string[] = [];
    const result = await build([], { cwd: dir, onLockWait: (m) => waits.push(m) });
    expect(waits).toEqual([]);
    expect(errors(result)).toEqual([]);
    expect(readTree(out())).toEqual(expected);
  });

  it("a lock file its holder died before filling is taken over once it is 10 s old, not before", async () => {
    const expected = await expectedTree();
    await mkdir(out(), { recursive: true });
    writeFileSync(join(out(), LOCK), ""); // created, not yet written
    const clock = jumpingClock();
    const young = await build([], { cwd: dir, lock: { timeoutMs: 1_000, clock } });
    expect(errors(young)).toEqual([
      expect.stringMatching(/^RG307 .*another build has been writing/),
    ]);
    const old = (Date.now() - 11_000) / 1_000;
    utimesSync(join(out(), LOCK), old, old);
    const result = await build([], { cwd: dir });
    expect(errors(result)).toEqual([]);
    expect(readTree(out())).toEqual(expected);
  });

  it("a folder removed while a build waits for its lock (its maker wrote nothing) is made again", async () => {
    const folder = join(dir, "made-by-another");
    await mkdir(folder);
    const release = await acquireLock(folder);
    let waited!: () => void;
    const waiting = new Promise<void>((resolve) => (waited = resolve));
    const second = acquireLock(folder, { onWait: () => waited() });
    await waiting;
    await release();
    await rmdir(folder);
    const releaseSecond = await second;
    expect(existsSync(join(folder, LOCK))).toBe(true);
    await releaseSecond();
    expect(readTree(folder)).toEqual(new Map());
  });
});
