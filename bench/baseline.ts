// The runtime as of an earlier revision, loaded into the benchmark's process next to the current
// one, so that `npm run bench` can time the same calls through both in one run
// (docs/performance.md, "Against the runtime before the features").
//
// The revision's templates/runtime is read out of git (`git ls-tree` and `git show`) into a
// folder of its own under os.tmpdir(), named by the commit's full hash and reused when it is
// already complete, and imported from there: tsx compiles its .ts files as it does the current
// runtime's.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import type { DependencySettings, OperationSettings } from "../templates/runtime/index.js";

/**
 * The last commit before the first of the features that must leave the unconfigured happy path
 * as it was (classify hooks, d8eebfd; then manual breaker control, open-duration backoff,
 * snapshots, coalescing and the rate limit).
 */
export const DEFAULT_BASELINE = "68262f1";

const RUNTIME = "templates/runtime";
/** Written last: a folder without it is an extraction that did not finish. */
const COMPLETE = ".complete";

/**
 * The part of a runtime's surface the comparison uses, which both versions have: settings that
 * are valid in both (nothing configured that the baseline does not know) and `call`.
 */
export interface ComparableRuntime {
  createDependency(settings: DependencySettings): {
    call(operation: OperationSettings, fn: () => Promise<number>): Promise<unknown>;
  };
}

export type Baseline =
  | {
      readonly ok: true;
      /** The revision as given (`--baseline`). */
      readonly rev: string;
      /** Its full commit hash. */
      readonly commit: string;
      /** Its subject line. */
      readonly subject: string;
      /** The folder holding its templates/runtime. */
      readonly dir: string;
      /** Whether the folder was already there from an earlier run. */
      readonly reused: boolean;
      readonly runtime: ComparableRuntime;
    }
  | { readonly ok: false; readonly rev: string; readonly reason: string };

function git(
  cwd: string,
  argv: readonly string[],
): { ok: true; out: string } | { ok: false; why: string } {
  const r = spawnSync("git", argv, { cwd, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (r.error !== undefined) return { ok: false, why: `git could not run (${r.error.message})` };
  if (r.status !== 0) {
    const message = r.stderr.trim().split("\n")[0] ?? "";
    return { ok: false, why: `git ${argv[0]!} failed: ${message || `exit ${String(r.status)}`}` };
  }
  return { ok: true, out: r.stdout };
}

/**
 * Loads templates/runtime as of `rev` from the repository at `repo`; never throws for a missing
 * git, a revision this clone lacks (a shallow clone) or a revision without the runtime, but says
 * why in `reason`.
 */
export async function loadBaseline(repo: string, rev: string): Promise<Baseline> {
  const skip = (reason: string): Baseline => ({ ok: false, rev, reason });
  const resolved = git(repo, ["rev-parse", "--verify", "--quiet", `${rev}^{commit}`]);
  if (!resolved.ok) {
    const shallow = git(repo, ["rev-parse", "--is-shallow-repository"]);
    const hint = shallow.ok && shallow.out.trim() === "true" ? " (this clone is shallow)" : "";
    return skip(
      resolved.why.startsWith("git could not run")
        ? resolved.why
        : `revision ${rev} is not in this repository${hint}`,
    );
  }
  const commit = resolved.out.trim();
  const subject = git(repo, ["log", "-1", "--format=%s", commit]);
  const dir = join(tmpdir(), `resgen-baseline-${commit}`);
  let reused = true;
  if (!existsSync(join(dir, COMPLETE))) {
    reused = false;
    const listed = git(repo, ["ls-tree", "-r", "-z", "--name-only", commit, "--", RUNTIME]);
    if (!listed.ok) return skip(listed.why);
    const files = listed.out.split("\0").filter((name) => name.endsWith(".ts"));
    if (!files.includes(`${RUNTIME}/index.ts`)) return skip(`${rev} has no ${RUNTIME}/index.ts`);
    // extracted beside the final folder and renamed into place, so a run stopped halfway (or
    // two runs at once) never leaves a folder that looks complete and is not
    const partial = `${dir}.${String(process.pid)}.partial`;
    rmSync(partial, { recursive: true, force: true });
    for (const file of files) {
      const shown = git(repo, ["show", `${commit}:${file}`]);
      if (!shown.ok) {
        rmSync(partial, { recursive: true, force: true });
        return skip(shown.why);
      }
      mkdirSync(dirname(join(partial, file)), { recursive: true });
      writeFileSync(join(partial, file), shown.out);
    }
    // the runtime is ES modules; without this, the folder (outside any package) would be CommonJS
    writeFileSync(join(partial, "package.json"), `${JSON.stringify({ type: "module" })}\n`);
    writeFileSync(join(partial, COMPLETE), `${commit}\n`);
    if (existsSync(join(dir, COMPLETE))) {
      // another run finished the same extraction meanwhile: keep its folder
      rmSync(partial, { recursive: true, force: true });
    } else {
      rmSync(dir, { recursive: true, force: true });
      renameSync(partial, dir);
    }
  }
  const runtime = (await import(
    pathToFileURL(join(dir, RUNTIME, "index.ts")).href
  )) as ComparableRuntime;
  if (typeof runtime.createDependency !== "function")
    return skip(`${rev}'s runtime has no createDependency`);
  return {
    ok: true,
    rev,
    commit,
    subject: subject.ok ? subject.out.trim() : "",
    dir,
    reused,
    runtime,
  };
}
