/**
 * `build`: check, emit, then plan and (unless checking) apply the writes of every output folder.
 * Errors from checking stop the build before anything is written.
 */
import { watch as watchFs, type FSWatcher } from "node:fs";
import { lstat, mkdir, rmdir } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { check, type CheckResult } from "../program/check.js";
import {
  countBySeverity,
  diagnostic,
  DiagnosticSink,
  type Acknowledged,
  type Diagnostic,
} from "../diagnostics/diagnostic.js";
import { acknowledgedCodes, acknowledgementAt } from "../program/acknowledge.js";
import { emitOutputFolder, type EmitContext } from "../emit/index.js";
import type { ProjectConfigInput } from "../language/schema.js";
import type { ResolvedPolicy } from "../model/resolved.js";
import type { ResolvedService } from "../model/service.js";
import { displayPath } from "../source/inputs.js";
import { applyPlan, planWrite, WriteError, type Plan, type WriterFs } from "./write.js";
import { acquireLock, describeHolder, type LockOptions } from "./lock.js";
import { failure, isWithin } from "../source/read.js";
import { contextFromDocuments } from "../analyze/index.js";
import { emitTargets, ownedBy, type TargetName } from "../targets/index.js";

export const DEFAULT_OUT = "src/generated";

export interface BuildOptions {
  /** Directory relative arguments and displayed paths start from. Defaults to process.cwd(). */
  readonly cwd?: string;
  /** Output folder for every policy, overriding the project files' `out`. */
  readonly out?: string;
  /** Compare only; write nothing (for CI). */
  readonly check?: boolean;
  /** What to generate: the TypeScript clients (ts, the default) and/or mesh configuration (docs/targets.md). */
  readonly targets?: readonly TargetName[];
  /** Overwrite and remove generated files even where they were edited by hand (RG306). */
  readonly force?: boolean;
  /**
   * Read inputs outside the project root, and write an output folder that is outside the
   * project, or is its root or an ancestor of it (RG115, RG304; docs/security.md).
   */
  readonly allowOutsideProject?: boolean;
  /**
   * Told when another build is writing one of the output folders and this one waits for it
   * (docs/build.md, "Two builds at once"), then every few seconds while it waits.
   */
  readonly onLockWait?: (message: string) => void;
  /** The bound of that wait (default five minutes), and for tests the clock it is measured on. */
  readonly lock?: Pick<LockOptions, "timeoutMs" | "clock">;
  /** The file-system calls that write the folders: the real ones, or a test's. */
  readonly writer?: WriterFs;
}

export interface BuildResult {
  readonly checked: CheckResult;
  /** Every diagnostic, including those of the write plans (conflicts, escapes); not the acknowledged ones. */
  readonly diagnostics: readonly Diagnostic[];
  /**
   * The targets' notes the project file acknowledges (docs/targets.md, "Acknowledging notes"):
   * counted, not printed, and not part of `diagnostics` (so not of the exit code either).
   */
  readonly acknowledged: readonly Acknowledged[];
  /** One plan per output folder; empty when checking found errors. */
  readonly plans: readonly Plan[];
  /** Whether files were written (false with `check`, or when errors stopped the build). */
  readonly written: boolean;
}

export async function build(
  paths: readonly string[],
  options: BuildOptions = {},
): Promise<BuildResult> {
  const cwd = options.cwd ?? process.cwd();
  const targets: readonly TargetName[] =
    options.targets && options.targets.length > 0 ? options.targets : ["ts"];
  const checked = await check(paths, {
    cwd,
    allowOutsideProject: options.allowOutsideProject === true,
  });
  const stop = (diagnostics: readonly Diagnostic[]): BuildResult => ({
    checked,
    diagnostics,
    acknowledged: [],
    plans: [],
    written: false,
  });
  if (checked.unmatched.length > 0 || countBySeverity(checked.diagnostics).errors > 0)
    return stop(checked.diagnostics);

  // group by output folder: policies of one folder are emitted together (one barrel, one runtime)
  const groups = new Map<
    string,
    { policies: ResolvedPolicy[]; sources: Map<ResolvedPolicy, string> }
  >();
  /** How each output folder is emitted: the settings of the first project file that writes there. */
  const emitSettings = new Map<string, Pick<EmitContext, "telemetry" | "runtime" | "platform">>();
  const settle = (outDir: string, project: { config: ProjectConfigInput } | undefined) => {
    if (emitSettings.has(outDir)) return;
    const config = project?.config;
    emitSettings.set(outDir, {
      telemetry: config?.telemetry,
      runtime: config?.runtime,
      platform: config?.platform,
    });
  };
  /**
   * The output folder of a policy or service file, its project, and its path as headers name it.
   * An absolute `out` is honoured as written: resolved, never joined under the project.
   */
  const place = (file: string) => {
    const input = checked.files.get(file);
    const config = input?.config;
    const root = config ? dirname(config) : cwd;
    const project = config ? checked.projects.get(config) : undefined;
    const outDir = resolve(
      options.out !== undefined
        ? resolve(cwd, options.out)
        : resolve(root, project?.config.out ?? DEFAULT_OUT),
    );
    return {
      outDir,
      root,
      config,
      project,
      sourcePath: relative(root, input?.absolute ?? file)
        .split(sep)
        .join("/"),
    };
  };
  // every stage reports into one sink, which keeps one of each and sorts them
  const sink = new DiagnosticSink();
  sink.report(checked.diagnostics);
  /** Output folders already judged, so each is reported once. */
  const judged = new Set<string>();
  const refuseFolder = (where: ReturnType<typeof place>) => {
    if (options.allowOutsideProject || judged.has(where.outDir)) return;
    judged.add(where.outDir);
    const problem = folderProblem(where.outDir, where.root);
    if (problem === undefined) return;
    const shown = displayPath(where.outDir, cwd) || ".";
    const message = `the output folder ${shown} is ${problem}; a build owns its output folder, so it must be a folder of its own inside the project`;
    const hint =
      "set `out` to a folder such as src/generated, or pass --allow-outside-project where this is intended";
    const configShown = where.config === undefined ? undefined : displayPath(where.config, cwd);
    const source = configShown === undefined ? undefined : checked.documents.get(configShown);
    if (
      options.out === undefined &&
      source !== undefined &&
      configShown !== undefined &&
      where.project?.config.out !== undefined
    ) {
      sink.report(diagnostic("RG304", configShown, source.spanOf(["out"]), message, hint));
    } else {
      checked.sources.set(shown, "");
      sink.report(
        diagnostic(
          "RG304",
          shown,
          { start: 0, end: 0 },
          options.out === undefined ? message : `--out ${options.out}: ${message}`,
          hint,
        ),
      );
    }
  };
  for (const policy of checked.policies) {
    const where = place(policy.file);
    refuseFolder(where);
    const { outDir, project, sourcePath } = where;
    let group = groups.get(outDir);
    if (!group) groups.set(outDir, (group = { policies: [], sources: new Map() }));
    group.policies.push(policy);
    settle(outDir, project);
    group.sources.set(policy, sourcePath);
  }

  // service policies go to the output folder of their project, next to its clients
  const services = new Map<string, { service: ResolvedService; sourcePath: string }[]>();
  for (const service of checked.services) {
    const where = place(service.file);
    refuseFolder(where);
    const { outDir, project, sourcePath } = where;
    settle(outDir, project);
    if (!groups.has(outDir)) groups.set(outDir, { policies: [], sources: new Map() });
    let list = services.get(outDir);
    if (!list) services.set(outDir, (list = []));
    list.push({ service, sourcePath });
  }

  if (sink.hasErrors()) return stop(sink.all());

  // one build at a time writes a folder: this one waits for another that is writing it, from
  // planning to the last rename, so neither takes the other's staged files for leftovers
  let unlock: () => Promise<void> = () => Promise.resolve();
  if (!options.check) {
    try {
      unlock = await lockFolders([...groups.keys()], options, cwd);
    } catch (error) {
      sink.report(writeFailure(error, cwd, checked));
      return stop(sink.all());
    }
  }
  try {
    return await planAndApply();
  } finally {
    await unlock();
  }

  async function planAndApply(): Promise<BuildResult> {
    /**
     * The entry of the project file that acknowledges a target's warning, if any: the project of
     * the file the warning points into (a policy, or the project file itself), else the project
     * of the output folder's policies when they share one.
     */
    const acknowledgement = (
      d: Diagnostic,
      policies: readonly ResolvedPolicy[],
    ): Acknowledged | undefined => {
      if (d.severity !== "warning" || d.note === undefined) return undefined;
      const configs = new Set(policies.map((p) => checked.files.get(p.file)?.config));
      const config =
        checked.files.get(d.file)?.config ??
        [...checked.projects.keys()].find((c) => displayPath(c, cwd) === d.file) ??
        (configs.size === 1 ? [...configs][0] : undefined);
      const project = config === undefined ? undefined : checked.projects.get(config);
      if (config === undefined || project === undefined) return undefined;
      if (!acknowledgedCodes(project.config).get(d.note.target)?.has(d.code)) return undefined;
      const file = displayPath(config, cwd);
      const source = checked.documents.get(file);
      const span = source && acknowledgementAt(project.config, source, d.note.target, d.code);
      return span ? { diagnostic: d, file, span } : undefined;
    };
    const acknowledged: Acknowledged[] = [];
    const plans: Plan[] = [];
    for (const [outDir, group] of [...groups].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const sourcePath = (p: ResolvedPolicy) => group.sources.get(p) ?? p.file;
      const clients = targets.includes("ts")
        ? emitOutputFolder(group.policies, {
            services: services.get(outDir),
            sourcePath,
            ...emitSettings.get(outDir),
          })
        : [];
      const files = new Map(clients);
      const mesh = emitTargets(group.policies, targets, {
        locate: contextFromDocuments(checked.documents),
        sourcePath,
      });
      for (const [path, text] of mesh.files) files.set(path, text);
      for (const d of mesh.diagnostics) {
        const entry = acknowledgement(d, group.policies);
        if (entry) acknowledged.push(entry);
        else sink.report(d);
      }
      let plan: Plan;
      try {
        plan = await planWrite(outDir, files, {
          owns: ownedBy(targets),
          force: options.force === true,
        });
      } catch (error) {
        // planning only reads: whatever failed, nothing was changed
        sink.report(
          writeFailure(
            error instanceof WriteError ? new WriteError(error.path, error.reason, true) : error,
            cwd,
            checked,
          ),
        );
        return { ...stop(sink.all()), acknowledged, plans };
      }
      plans.push(plan);
      const at = (path: string) => {
        const shown = displayPath(join(outDir, path), cwd);
        checked.sources.set(shown, "");
        return shown;
      };
      for (const path of plan.conflicts) {
        const shown = at(path);
        sink.report(
          diagnostic(
            "RG302",
            shown,
            { start: 0, end: 0 },
            `${shown} exists and was not generated by resgen; refusing to overwrite it`,
            "move the file, or set another `out` folder",
          ),
        );
      }
      for (const path of plan.edited) {
        const shown = at(path);
        const removing = !files.has(path);
        sink.report(
          diagnostic(
            "RG306",
            shown,
            { start: 0, end: 0 },
            `${shown} was edited by hand since resgen wrote it; refusing to ${removing ? "remove" : "overwrite"} it`,
            "move the change into the policy or undo it; `resgen build --force` overwrites it",
          ),
        );
      }
      for (const path of plan.links) {
        const shown = at(path);
        sink.report(
          diagnostic(
            "RG305",
            shown,
            { start: 0, end: 0 },
            `${shown} is a symbolic link; resgen never writes through one`,
            "remove the link, or set `out` to a real folder",
          ),
        );
      }
      for (const path of plan.escapes) {
        sink.report(
          diagnostic(
            "RG303",
            displayPath(outDir, cwd),
            { start: 0, end: 0 },
            `"${path}" would be written outside the output folder`,
          ),
        );
      }
    }
    const sorted = sink.all();
    acknowledged.sort(
      (a, b) =>
        compare(a.diagnostic.file, b.diagnostic.file) ||
        a.diagnostic.span.start - b.diagnostic.span.start ||
        compare(a.diagnostic.code, b.diagnostic.code) ||
        compare(a.diagnostic.message, b.diagnostic.message),
    );
    if (options.check || countBySeverity(sorted).errors > 0)
      return { checked, diagnostics: sorted, acknowledged, plans, written: false };
    for (const plan of plans) {
      try {
        await applyPlan(plan, options.writer);
      } catch (error) {
        sink.report(writeFailure(error, cwd, checked));
        return { checked, diagnostics: sink.all(), acknowledged, plans, written: false };
      }
    }
    return { checked, diagnostics: sorted, acknowledged, plans, written: true };
  }
}

/**
 * Takes the lock of every output folder, in order (so two builds of overlapping folders never
 * wait for each other in a circle), making a folder that does not exist yet; returns what gives
 * them back, and removes a folder it made when nothing was written into it. A folder that is a
 * symbolic link, or not a folder, is left alone: the plan refuses it and writes nothing there.
 */
async function lockFolders(
  folders: readonly string[],
  options: BuildOptions,
  cwd: string,
): Promise<() => Promise<void>> {
  const held: { release: () => Promise<void>; folder: string; made: string | undefined }[] = [];
  const unlock = async () => {
    for (const { release, folder, made } of held.reverse()) {
      await release();
      if (made === undefined) continue;
      // the folders made for the lock, when the build left them empty; rmdir removes only those
      for (let at = folder; at.length >= made.length; at = dirname(at))
        if (
          !(await rmdir(at).then(
            () => true,
            () => false,
          ))
        )
          break;
    }
  };
  try {
    for (const folder of [...folders].sort()) {
      const info = await lstat(folder).catch(() => undefined);
      if (info !== undefined && (info.isSymbolicLink() || !info.isDirectory())) continue;
      let made: string | undefined;
      if (info === undefined)
        try {
          made = (await mkdir(folder, { recursive: true })) ?? undefined;
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          const reason =
            code === "EEXIST" || code === "ENOTDIR"
              ? "a file is where a folder should be"
              : failure(error);
          throw new WriteError(folder, reason, true);
        }
      const shown = displayPath(folder, cwd) || ".";
      let told = false;
      const release = await acquireLock(folder, {
        ...options.lock,
        onWait: (holder, waitedMs) => {
          const who = `${describeHolder(holder)} to finish writing ${shown}`;
          const seconds = String(Math.round(waitedMs / 1_000));
          options.onLockWait?.(
            told ? `still waiting for ${who} (${seconds} s)` : `waiting for ${who}`,
          );
          told = true;
        },
      }).catch(async (error: unknown) => {
        if (made !== undefined) await rmdir(folder).catch(() => undefined);
        throw error;
      });
      held.push({ release, folder, made });
    }
  } catch (error) {
    await unlock();
    throw error;
  }
  return unlock;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Why an output folder may not be used (RG304), or undefined when it may. */
function folderProblem(outDir: string, root: string): string | undefined {
  if (!isWithin(root, outDir))
    return isWithin(outDir, root) ? "an ancestor of the project root" : "outside the project";
  if (relative(root, outDir) === "") return "the project root";
  return undefined;
}

/** An I/O failure of the writer as a diagnostic (RG307: exit code 2); anything else is a bug, rethrown. */
function writeFailure(error: unknown, cwd: string, checked: CheckResult): Diagnostic {
  if (!(error instanceof WriteError)) throw error;
  const shown = displayPath(error.path, cwd);
  checked.sources.set(shown, "");
  return diagnostic(
    "RG307",
    shown,
    { start: 0, end: 0 },
    `cannot write ${shown}: ${error.reason}${error.untouched ? "; the output folder was left as it was" : ""}`,
  );
}

/**
 * Rebuilds whenever a policy or project file changes, until `signal` aborts. Watches the folders
 * that hold the inputs (new policy files matching a glob are picked up on the next rebuild).
 */
export async function watchBuild(
  paths: readonly string[],
  options: BuildOptions,
  onBuild: (result: BuildResult) => void,
  signal: AbortSignal,
): Promise<void> {
  const cwd = options.cwd ?? process.cwd();
  let watchers: FSWatcher[] = [];
  let timer: NodeJS.Timeout | undefined;
  let running = Promise.resolve();

  const rewatch = (result: BuildResult) => {
    for (const w of watchers) w.close();
    const dirs = new Set<string>();
    for (const { absolute, config } of result.checked.files.values()) {
      dirs.add(dirname(absolute));
      if (config) dirs.add(dirname(config));
    }
    for (const config of result.checked.projects.keys()) dirs.add(dirname(config));
    // and the OpenAPI documents policies read (YAML or JSON), wherever they are
    for (const shown of result.checked.documents.keys()) dirs.add(dirname(resolve(cwd, shown)));
    if (dirs.size === 0) dirs.add(resolve(cwd));
    watchers = [...dirs].map((dir) =>
      watchFs(dir, (_event, name) => {
        if (name !== null && !/\.(ya?ml|json)$/.test(name)) return;
        if (timer) clearTimeout(timer);
        // editors write a file in several steps: wait for them to settle
        timer = setTimeout(() => void (running = running.then(once)), 50);
      }),
    );
  };
  const once = async () => {
    if (signal.aborted) return;
    const result = await build(paths, { ...options, check: false });
    onBuild(result);
    // the build took time: the signal may have been aborted meanwhile
    if (!(signal.aborted as boolean)) rewatch(result);
  };

  await new Promise<void>((resolveDone) => {
    const stop = () => {
      if (timer) clearTimeout(timer);
      for (const w of watchers) w.close();
      void running.then(() => resolveDone());
    };
    if (signal.aborted) {
      stop();
      return;
    }
    signal.addEventListener("abort", stop, { once: true });
    running = running.then(once);
  });
}
