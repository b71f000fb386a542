/**
 * The command line: commander wiring and output, nothing else. The exit code follows the exit
 * category of the codes reported (src/diagnostics/codes.ts, docs/build.md): 0 clean (warnings
 * allowed unless --max-warnings says otherwise), 1 errors found, 2 usage or I/O error. With
 * `--format json` (or sarif) every outcome a command reaches is written in that format.
 */
import { basename, dirname, resolve } from "node:path";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { build, watchBuild, type BuildResult } from "../build/build.js";
import { check, type CheckResult } from "../program/check.js";
import {
  explain,
  renderExplainJson,
  renderExplainText,
  reportFindings,
  sourceLocator,
} from "../explain/explain.js";
import { displayPath } from "../source/inputs.js";
import { readInput } from "../source/read.js";
import { withOverrides } from "../explain/overrides.js";
import { dependencySettings, operationSettings } from "../emit/client.js";
import {
  parseOverrides,
  ReconfigurationError,
  validateReconfiguration,
} from "../../templates/runtime/reconfigure.js";
import type { DependencySettings } from "../../templates/runtime/stack.js";
import type { OperationSettings } from "../../templates/runtime/operation.js";
import { MANIFEST } from "../build/write.js";
import {
  countBySeverity,
  diagnostic,
  exitCode,
  type Diagnostic,
} from "../diagnostics/diagnostic.js";
import { FORMATS, format, SourceTexts, type Format } from "../diagnostics/format.js";
import { formatMs, parseDuration } from "../language/durations.js";
import type { ResolvedOperation, ResolvedPolicy } from "../model/resolved.js";
import { VERSION } from "../version.js";
import { describeService } from "../model/service.js";
import { clientNames } from "../model/names.js";
import { camelCase } from "../model/identifiers.js";
import { applyInit, planInit, type InitPlan } from "../init/init.js";
import { parseTargets, TARGETS, type TargetName } from "../targets/index.js";
import {
  DEFAULT_DEPENDENCY_LABEL,
  DEFAULT_METRIC,
  DEFAULT_MIN_SAMPLES,
  DEFAULT_OPERATION_LABEL,
  tune,
  writeTuned,
  type TuneResult,
} from "../tune/tune.js";
import { renderTune } from "../tune/report.js";
import { chaos, DEFAULT_SEED } from "../chaos/chaos.js";
import { DEFAULT_CALLS } from "../chaos/drills.js";
import { renderChaosJson, renderChaosText } from "../chaos/report.js";

export interface Io {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly cwd: string;
  readonly color: boolean;
  /** Ends `build --watch` (tests); the CLI otherwise stops on SIGINT or SIGTERM. */
  readonly signal?: AbortSignal;
  /** The time `build --watch` stamps its rebuilds with (tests); the system clock otherwise. */
  readonly now?: () => Date;
}

const defaultIo = (): Io => ({
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  cwd: process.cwd(),
  // Node's types declare isTTY a boolean, but it is undefined when stdout is a pipe or a file
  color: ((process.stdout.isTTY as boolean | undefined) ?? false) && !process.env["NO_COLOR"],
});

/** Runs the CLI on `argv` (as process.argv: node, script, args...) and returns the exit code. */
export async function main(argv: readonly string[], io: Io = defaultIo()): Promise<number> {
  let exitCode = 0;
  const program = new Command()
    .name("resgen")
    .description(
      "Compile resilience policies (YAML) into typed TypeScript clients, and check them.",
    )
    .version(VERSION)
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError();

  program
    .command("check")
    .description("Validate policies and report every problem with file:line:col.")
    .argument("[paths...]", "policy files, directories or globs (default: the project's policies)")
    .addOption(
      new Option("-f, --format <format>", "output format").choices(FORMATS).default("pretty"),
    )
    .option("--max-warnings <n>", "exit 1 when there are more warnings than this", parseCount)
    .option(
      "--allow-outside-project",
      "read policies, OpenAPI documents and $refs outside the project root too",
    )
    .action(
      async (
        paths: string[],
        opts: { format: Format; maxWarnings?: number; allowOutsideProject?: boolean },
      ) => {
        const result = await check(paths, {
          cwd: io.cwd,
          allowOutsideProject: opts.allowOutsideProject === true,
        });
        exitCode = report(result, opts.format, opts.maxWarnings, io);
      },
    );

  program
    .command("build")
    .description(
      "Generate a typed client per dependency, plus the runtime, into the output folder.",
    )
    .argument("[paths...]", "policy files, directories or globs (default: the project's policies)")
    .option(
      "-o, --out <dir>",
      "output folder (default: `out` of resgen.config.yaml, else src/generated)",
    )
    .option("--check", "write nothing; exit 1 if any generated file is missing, stale or left over")
    .option(
      "-w, --watch",
      "rebuild when a policy or project file changes; report problems without exiting",
    )
    .addOption(
      new Option("-f, --format <format>", "format of diagnostics")
        .choices(FORMATS)
        .default("pretty"),
    )
    .option("--max-warnings <n>", "exit 1 when there are more warnings than this", parseCount)
    .addOption(
      new Option(
        "-t, --target <targets>",
        `what to generate, repeatable or comma-separated: ${TARGETS.join(", ")}`,
      )
        .argParser(collectTargets)
        .default([], "ts"),
    )
    .option("--force", "overwrite or remove generated files even where they were edited by hand")
    .option(
      "--allow-outside-project",
      "read inputs and write the output folder outside the project root too",
    )
    .action(
      async (
        paths: string[],
        opts: {
          out?: string;
          check?: boolean;
          watch?: boolean;
          format: Format;
          maxWarnings?: number;
          target: TargetName[];
          force?: boolean;
          allowOutsideProject?: boolean;
        },
      ) => {
        const options = {
          cwd: io.cwd,
          ...(opts.out === undefined ? {} : { out: opts.out }),
          check: opts.check === true,
          targets: opts.target,
          force: opts.force === true,
          allowOutsideProject: opts.allowOutsideProject === true,
          // another build writing the same folder: say why this one waits (docs/build.md)
          onLockWait: (message: string) => io.stderr(`resgen: ${message}\n`),
        };
        if (opts.watch) {
          const controller = new AbortController();
          const stop = () => controller.abort();
          process.once("SIGINT", stop);
          process.once("SIGTERM", stop);
          // the watch's own lines go where the build's summary goes (stderr with --format json)
          const log = opts.format === "pretty" ? io.stdout : io.stderr;
          const now = io.now ?? (() => new Date());
          let watched: number | undefined;
          await watchBuild(
            paths,
            options,
            (result) => {
              if (watched !== undefined) log(`[${clockTime(now())}] rebuilt after a change\n`);
              reportBuild(result, opts, io);
              const count = watchedFiles(result, io.cwd);
              if (count !== watched)
                log(`watching ${count} file${count === 1 ? "" : "s"} (Ctrl-C stops)\n`);
              watched = count;
            },
            io.signal ?? controller.signal,
          );
          process.off("SIGINT", stop);
          process.off("SIGTERM", stop);
          return;
        }
        exitCode = reportBuild(await build(paths, options), opts, io);
      },
    );

  program
    .command("explain")
    .description(
      "Print a policy's resolved stack, where every value came from, and its worst case.",
    )
    .argument("<policy>", "one policy file")
    .option("--operation <name>", "only this operation")
    .option(
      "--overrides <file>",
      "a JSON overrides document (as the client's overrides option takes): show the stack after it",
    )
    .addOption(
      new Option("-f, --format <format>", "output format")
        .choices(["text", "json"])
        .default("text"),
    )
    .option(
      "--allow-outside-project",
      "read OpenAPI documents and $refs outside the project root too",
    )
    .action(
      async (
        file: string,
        opts: {
          operation?: string;
          overrides?: string;
          format: "text" | "json";
          allowOutsideProject?: boolean;
        },
      ) => {
        exitCode = await runExplain(file, opts, io);
      },
    );

  program
    .command("tune")
    .description(
      "Derive each policy's latency (p50, p95, p99, p999, rps) from a histogram export, and show what changes.",
    )
    .argument("[paths...]", "policy files, directories or globs (default: the project's policies)")
    .requiredOption(
      "--from <export>",
      "Prometheus text-format or OTLP JSON metrics export with duration histograms; repeat it for the exports of several replicas, which are added up",
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    )
    .addOption(
      new Option(
        "--rps <which>",
        "write latency.rps as the rate one replica sees (per-replica) or the whole fleet's (fleet)",
      )
        .choices(["per-replica", "fleet"])
        .default("per-replica"),
    )
    .option(
      "--replicas <n>",
      "the replicas the exports cover, when they cannot tell (default: counted by file, exposition and instance label)",
      parsePositive,
    )
    .option("--write", "apply the new latency to the policy files (nothing is written on an error)")
    .option(
      "--window <duration>",
      "the period the counters of a Prometheus export cover, for rps (e.g. 10m)",
      parseWindow,
    )
    .option(
      "--min-samples <n>",
      `leave a dependency with fewer successful observations unchanged (default: ${DEFAULT_MIN_SAMPLES})`,
      parseCount,
    )
    .option("--metric <name>", `the histogram to read (default: ${DEFAULT_METRIC})`)
    .option(
      "--dependency-label <label>",
      `the label naming the dependency (default: ${DEFAULT_DEPENDENCY_LABEL})`,
    )
    .option(
      "--operation-label <label>",
      `the label naming the operation (default: ${DEFAULT_OPERATION_LABEL})`,
    )
    .option(
      "--allow-outside-project",
      "read policies, OpenAPI documents and $refs outside the project root too",
    )
    .action(async (paths: string[], opts: TuneFlags) => {
      exitCode = await runTune(paths, opts, io);
    });

  program
    .command("chaos")
    .description(
      "Drill each policy against a local fault server (slow, down, 503 with Retry-After, flapping, partial) and check its promises.",
    )
    .argument("[paths...]", "policy files, directories or globs (default: the project's policies)")
    .option("--operation <name>", "only this operation of each policy that has it")
    .option(
      "--calls <n>",
      `calls a drill makes (default: ${DEFAULT_CALLS}; flapping makes enough to fill the breaker's window)`,
      parsePositive,
    )
    .option(
      "--seed <n>",
      `seed of the faults and the jitter (default: ${DEFAULT_SEED})`,
      parseCount,
    )
    .addOption(
      new Option("-f, --format <format>", "output format")
        .choices(["text", "json"])
        .default("text"),
    )
    .option(
      "--allow-outside-project",
      "read policies, OpenAPI documents and $refs outside the project root too",
    )
    .action(async (paths: string[], opts: ChaosFlags) => {
      exitCode = await runChaos(paths, opts, io);
    });

  program
    .command("init")
    .description(
      "Scaffold resgen in a project: resgen.config.yaml, a first policy, ESLint and git settings.",
    )
    .option("--dir <path>", "the project folder, which must exist (default: the working directory)")
    .option("--openapi <file>", "make the first policy from this OpenAPI description")
    .option("--base-url <url>", "make a hand-written first policy with one GET operation")
    .option("--name <dependency>", "the dependency's name (default: from the URL or the file name)")
    .addOption(
      new Option(
        "--runtime <where>",
        "vendored: write the runtime into the output folder; package: import it from resgen",
      ).choices(["vendored", "package"]),
    )
    .addOption(
      new Option("--platform <platform>", "web: build for hosts without AsyncLocalStorage").choices(
        ["node", "web"],
      ),
    )
    .action(async (opts: InitFlags) => {
      exitCode = await runInit(opts, io);
    });

  try {
    await program.parseAsync([...argv]);
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version exit through here with code 0
      return error.exitCode === 0 ? 0 : 2;
    }
    io.stderr(
      `resgen: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return 2;
  }
  return exitCode;
}

function reportBuild(
  result: BuildResult,
  opts: { check?: boolean; format: Format; maxWarnings?: number },
  io: Io,
): number {
  const checked = result.checked;
  if (checked.unmatched.length > 0) return report(checked, opts.format, opts.maxWarnings, io);
  const acknowledged = result.acknowledged;
  if (opts.format !== "pretty") {
    io.stdout(format(opts.format, result.diagnostics, checked.sources, { acknowledged }));
  } else if (result.diagnostics.length > 0 || acknowledged.length > 0) {
    io.stdout(
      format("pretty", result.diagnostics, checked.sources, { color: io.color, acknowledged }),
    );
  }
  const { errors } = countBySeverity(result.diagnostics);
  if (errors > 0) {
    if (opts.format === "pretty")
      io.stdout(
        result.plans.length === 0
          ? "nothing written: fix the errors above first\n"
          : "nothing written\n",
      );
    return exitCode(result.diagnostics);
  }
  const log = opts.format === "pretty" ? io.stdout : io.stderr;
  let stale = 0;
  for (const plan of result.plans) {
    const where = displayPath(plan.outDir, io.cwd);
    const counts = { create: 0, update: 0, remove: 0 };
    for (const change of plan.changes) {
      counts[change.kind]++;
      if (opts.check)
        log(
          `${where}/${change.path}: ${change.kind === "create" ? "missing" : change.kind === "update" ? "out of date" : "no longer generated"}\n`,
        );
    }
    stale += plan.changes.length;
    if (opts.check && plan.manifest.changed && plan.changes.length === 0) {
      // the folder's record of what resgen wrote (docs/build.md) is generated output too
      log(`${where}/${MANIFEST}: ${plan.previous.size === 0 ? "missing" : "out of date"}\n`);
      stale++;
    }
    if (!opts.check) {
      log(
        `${where}: ${counts.create} written, ${counts.update} updated, ${counts.remove} removed, ${plan.unchanged} unchanged\n`,
      );
    }
  }
  if (opts.check) {
    log(
      stale === 0
        ? "generated code is up to date\n"
        : `${stale} generated file${stale === 1 ? " is" : "s are"} not up to date: run resgen build\n`,
    );
    if (stale > 0) return 1;
  }
  return exitCode(result.diagnostics, { maxWarnings: opts.maxWarnings });
}

/**
 * `policy` after the overrides document in `file`, checked by the runtime's validator against
 * the settings the client is generated with; the problems when it is refused or unreadable.
 */
async function overriddenPolicy(
  policy: ResolvedPolicy,
  file: string,
  cwd: string,
): Promise<{ readonly policy: ResolvedPolicy } | { readonly problems: readonly string[] }> {
  const read = await readInput(resolve(cwd, file));
  if ("problem" in read) return { problems: [`cannot read it: ${read.problem}`] };
  let document: unknown;
  try {
    document = parseOverrides(read.text, file);
  } catch (error) {
    return { problems: error instanceof ReconfigurationError ? error.problems : [String(error)] };
  }
  const http = policy.transport === "http";
  const current = {
    // the literals the client is generated with: the runtime's types by construction
    dependency: dependencySettings(policy) as DependencySettings,
    operations: Object.fromEntries(
      policy.operations.map((op) => [op.name, operationSettings(op, http) as OperationSettings]),
    ),
  };
  const verdict = validateReconfiguration(current, document);
  if (!verdict.ok) return { problems: verdict.problems };
  return { policy: withOverrides(policy, verdict.settings, verdict.changed, file) };
}

async function runExplain(
  file: string,
  opts: {
    operation?: string;
    overrides?: string;
    format: "text" | "json";
    allowOutsideProject?: boolean;
  },
  io: Io,
): Promise<number> {
  const result = await check([file], {
    cwd: io.cwd,
    allowOutsideProject: opts.allowOutsideProject === true,
  });
  /** Prints why explain cannot go on, as the diagnostics JSON with --format json, and returns the exit code. */
  const refuse = (diagnostics: readonly Diagnostic[], sources: SourceTexts): number => {
    io.stdout(
      format(opts.format === "json" ? "json" : "pretty", diagnostics, sources, { color: io.color }),
    );
    return exitCode(diagnostics);
  };
  /** A usage error of explain (RG117): a line on stderr, or the diagnostics JSON. */
  const misuse = (message: string): number => {
    if (opts.format !== "json") {
      io.stderr(`resgen: ${message}\n`);
      return 2;
    }
    const sources = new SourceTexts();
    sources.set(file, "");
    return refuse([diagnostic("RG117", file, { start: 0, end: 0 }, message)], sources);
  };
  if (exitCode(result.diagnostics) === 2 && result.unmatched.length === 0)
    return refuse(result.diagnostics, result.sources);
  if (result.unmatched.length > 0 || result.fileCount !== 1)
    return misuse(`explain takes exactly one policy file; "${file}" matches ${result.fileCount}`);
  const policy = result.policies[0];
  if (countBySeverity(result.diagnostics).errors > 0 || !policy)
    return refuse(result.diagnostics, result.sources);
  if (opts.operation !== undefined && !policy.operations.some((o) => o.name === opts.operation)) {
    return misuse(
      `${policy.dependency} has no operation "${opts.operation}"; it has ${policy.operations.map((o) => o.name).join(", ")}`,
    );
  }
  let effective = policy;
  if (opts.overrides !== undefined) {
    const overridden = await overriddenPolicy(policy, opts.overrides, io.cwd);
    if ("problems" in overridden) {
      io.stderr(
        `resgen: ${opts.overrides} refused for ${policy.dependency}:\n` +
          overridden.problems.map((p) => `  - ${p}\n`).join(""),
      );
      return 1;
    }
    effective = overridden.policy;
  }
  const report = explain(effective, {
    ...(opts.operation === undefined ? {} : { operation: opts.operation }),
    where: sourceLocator(result.documents, result.sources),
    // one file is checked, so `calls:` naming another policy is not a finding here
    findings: reportFindings(
      result.diagnostics.filter((d) => d.code !== "RG221"),
      result.sources,
    ),
  });
  io.stdout(opts.format === "json" ? renderExplainJson(report) : renderExplainText(report));
  return 0;
}

/** The options of `resgen tune`, as commander parses them. */
interface TuneFlags {
  from: string[];
  rps: "per-replica" | "fleet";
  replicas?: number;
  write?: boolean;
  window?: number;
  minSamples?: number;
  metric?: string;
  dependencyLabel?: string;
  operationLabel?: string;
  allowOutsideProject?: boolean;
}

/** `resgen tune`: the report, then what was written; exit 1 on any error, with nothing written. */
async function runTune(paths: string[], opts: TuneFlags, io: Io): Promise<number> {
  const result = await tune(paths, {
    cwd: io.cwd,
    from: opts.from,
    rps: opts.rps,
    ...(opts.replicas === undefined ? {} : { replicas: opts.replicas }),
    ...(opts.metric === undefined ? {} : { metric: opts.metric }),
    ...(opts.dependencyLabel === undefined ? {} : { dependencyLabel: opts.dependencyLabel }),
    ...(opts.operationLabel === undefined ? {} : { operationLabel: opts.operationLabel }),
    ...(opts.window === undefined ? {} : { windowMs: opts.window }),
    ...(opts.minSamples === undefined ? {} : { minSamples: opts.minSamples }),
    allowOutsideProject: opts.allowOutsideProject === true,
  });
  if (result.committed.unmatched.length > 0)
    return report(result.committed, "pretty", undefined, io);
  io.stdout(renderTune(result, { color: io.color, write: opts.write === true }));
  const changed = result.policies.filter((p) => p.tuned !== p.text).length;
  if (result.exit !== 0) {
    io.stdout(`nothing written: ${tuneErrors(result)}\n`);
    return result.exit;
  }
  if (opts.write !== true) {
    io.stdout(
      changed === 0
        ? "every latency is as observed: nothing to write\n"
        : `nothing written: pass --write to apply the change${changed === 1 ? "" : "s"} to ${changed} polic${changed === 1 ? "y" : "ies"}\n`,
    );
    return 0;
  }
  const written = await writeTuned(result, io.cwd);
  if ("error" in written) {
    io.stderr(`resgen: ${written.error}\n`);
    return 2;
  }
  io.stdout(
    written.written.length === 0
      ? "every latency is as observed: nothing to write\n"
      : written.written.map((f) => `wrote ${f}\n`).join(""),
  );
  return 0;
}

/**
 * What stopped a tune run from writing, counted from what its report printed: the export's
 * errors and the analyzer's, so the summary names nothing the report did not show.
 */
function tuneErrors(result: TuneResult): string {
  const inExport = result.problems.filter((p) => p.severity === "error").length;
  const checked = result.tunedCheck ?? result.committed;
  const inPolicies = countBySeverity(checked.diagnostics).errors;
  const parts = [
    ...(inExport > 0 ? [`${String(inExport)} in the export`] : []),
    ...(inPolicies > 0
      ? [`${String(inPolicies)} in the ${result.tunedCheck ? "tuned " : ""}policies`]
      : []),
  ];
  const n = inExport + inPolicies;
  if (n === 0) return "the run did not complete";
  return `fix the ${n === 1 ? "error" : `${String(n)} errors`} above first (${parts.join(", ")})`;
}

/** The options of `resgen chaos`, as commander parses them. */
interface ChaosFlags {
  operation?: string;
  calls?: number;
  seed?: number;
  format: "text" | "json";
  allowOutsideProject?: boolean;
}

/** `resgen chaos`: the drills' report; exit 1 when a promise broke, so CI can run it. */
async function runChaos(paths: string[], opts: ChaosFlags, io: Io): Promise<number> {
  const result = await chaos(paths, {
    cwd: io.cwd,
    ...(opts.operation === undefined ? {} : { operation: opts.operation }),
    ...(opts.calls === undefined ? {} : { calls: opts.calls }),
    ...(opts.seed === undefined ? {} : { seed: opts.seed }),
    allowOutsideProject: opts.allowOutsideProject === true,
  });
  if (result.refusal !== undefined) {
    io.stderr(`resgen: ${result.refusal}\n`);
    return result.exit;
  }
  if (result.policies.length === 0) return report(result.checked, "pretty", undefined, io);
  io.stdout(opts.format === "json" ? renderChaosJson(result) : renderChaosText(result));
  return result.exit;
}

function parseWindow(value: string): number {
  const parsed = parseDuration(value);
  if (!parsed.ok) throw new InvalidArgumentError(parsed.message);
  if (parsed.value <= 0) throw new InvalidArgumentError("the window must be longer than 0");
  return parsed.value;
}

/** The inputs a watch rebuilds on: policies, project files and the OpenAPI documents they read. */
function watchedFiles(result: BuildResult, cwd: string): number {
  const files = new Set<string>();
  for (const { absolute, config } of result.checked.files.values()) {
    files.add(absolute);
    if (config) files.add(config);
  }
  for (const config of result.checked.projects.keys()) files.add(config);
  for (const shown of result.checked.documents.keys()) files.add(resolve(cwd, shown));
  return files.size;
}

/** `HH:MM:SS` in local time: when a rebuild ran, for someone watching the terminal. */
function clockTime(date: Date): string {
  return [date.getHours(), date.getMinutes(), date.getSeconds()]
    .map((n) => String(n).padStart(2, "0"))
    .join(":");
}

/** `resgen init`: one line per file (written, appended to, skipped), then what to do next. */
/** The options of `resgen init`, as commander parses them. */
interface InitFlags {
  dir?: string;
  openapi?: string;
  baseUrl?: string;
  name?: string;
  runtime?: "vendored" | "package";
  platform?: "node" | "web";
}

async function runInit(opts: InitFlags, io: Io): Promise<number> {
  const plan = await planInit({ cwd: io.cwd, ...opts });
  if (!plan.ok) {
    if (plan.diagnostics.length > 0)
      io.stdout(format("pretty", plan.diagnostics, plan.sources, { color: io.color }));
    io.stderr(`resgen: ${plan.message}\n`);
    return plan.exit;
  }
  const failed = await applyInit(plan);
  if (failed) {
    io.stderr(
      `resgen: cannot write ${displayPath(failed.file, io.cwd)}: ${failed.reason}; nothing written\n`,
    );
    return 2;
  }
  for (const step of plan.steps) {
    const where = displayPath(step.file, io.cwd);
    io.stdout(
      step.kind === "write"
        ? `wrote ${where}\n`
        : step.kind === "append"
          ? `appended ${step.lines.join(", ")} to ${where}\n`
          : `skipped ${where}: ${step.reason}\n`,
    );
  }
  if (plan.diagnostics.length > 0)
    io.stdout("\n" + format("pretty", plan.diagnostics, plan.sources, { color: io.color }));
  io.stdout(initNext(plan, io.cwd));
  return 0;
}

/** What to do after `init`: install, build, the first call, and ESLint lines to add by hand. */
function initNext(plan: InitPlan, cwd: string): string {
  const lines: string[] = [""];
  if (plan.operations.length > 0) {
    const count = `${plan.operations.length} operation${plan.operations.length === 1 ? "" : "s"}`;
    lines.push(
      `${plan.dependency} (${displayPath(plan.policy, cwd)}): ${count}: ${plan.operations.slice(0, 8).join(", ")}${plan.operations.length > 8 ? ", …" : ""}`,
    );
  }
  const out = displayPath(plan.out, cwd);
  const project = plan.dir === resolve(cwd) ? "." : displayPath(plan.dir, cwd);
  const names = clientNames(plan.dependency);
  const variable = camelCase(plan.dependency);
  const from = displayPath(dirname(plan.out), cwd);
  const commands: [string, string][] = [];
  if (plan.runtimePackage)
    commands.push([
      "npm i resgen",
      "runtime: package: the clients import resgen/runtime at run time",
    ]);
  if (plan.install.length > 0)
    commands.push([`npm i -D ${plan.install.join(" ")}`, "what the ESLint config imports"]);
  commands.push([
    project === "." ? "npx resgen build" : `npx resgen build ${project}`,
    `writes the client into ${out}/`,
  ]);
  const width = Math.max(...commands.map(([c]) => c.length));
  lines.push("next:", ...commands.map(([c, why]) => `  ${c.padEnd(width)}  # ${why}`));
  lines.push(
    `  then, in a module in ${from}/:`,
    `    import { ${names.factory} } from "./${basename(plan.out)}/index.js";`,
    `    const ${variable} = ${names.factory}({ baseUrl: ${JSON.stringify(plan.baseUrl ?? `https://${plan.dependency.toLowerCase()}.internal`)} });`,
  );
  if (!plan.esm)
    lines.push(
      'note: the generated clients are ES modules: set "type": "module" in package.json to compile',
      "  them with module NodeNext (a bundler takes them as they are)",
    );
  if (plan.eslintLines)
    lines.push(
      "add to your ESLint config:",
      ...plan.eslintLines.map((l) => (l === "" ? "" : `  ${l}`)),
    );
  return lines.join("\n") + "\n";
}

function collectTargets(value: string, previous: TargetName[]): TargetName[] {
  const { targets, unknown } = parseTargets([value]);
  if (unknown.length > 0)
    throw new InvalidArgumentError(
      `unknown target ${unknown.map((u) => `"${u}"`).join(", ")}; choose from ${TARGETS.join(", ")}`,
    );
  return [...new Set([...previous, ...targets])];
}

function parseCount(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new InvalidArgumentError("expected a whole number, 0 or more");
  return n;
}

function parsePositive(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new InvalidArgumentError("expected a whole number, 1 or more");
  return n;
}

function report(result: CheckResult, fmt: Format, maxWarnings: number | undefined, io: Io): number {
  const status = exitCode(result.diagnostics, { maxWarnings });
  if (fmt !== "pretty") {
    // every outcome, arguments matching nothing included, in the format asked for (docs/build.md)
    io.stdout(format(fmt, result.diagnostics, result.sources));
    return status;
  }
  if (result.unmatched.length > 0) {
    for (const arg of result.unmatched)
      io.stderr(`resgen: error RG114 no policy files match "${arg}"\n`);
    return status;
  }
  io.stdout(summary(result.policies));
  for (const service of result.services) io.stdout(describeService(service) + "\n");
  if (result.diagnostics.length > 0) io.stdout("\n");
  const text = format("pretty", result.diagnostics, result.sources, { color: io.color });
  const fileCount = `${result.fileCount} ${result.fileCount === 1 ? "policy" : "policies"} checked: `;
  // the count goes before the last line (the summary); found by index, not a regex, which
  // would rescan every long frame line to its end and take quadratic time
  const last = text.endsWith("\n") ? text.lastIndexOf("\n", text.length - 2) + 1 : -1;
  io.stdout(last < 0 ? text : text.slice(0, last) + fileCount + text.slice(last));
  return status;
}

/** What was found: one block per policy with its operations and their effective stack. */
export function summary(policies: readonly ResolvedPolicy[]): string {
  const lines: string[] = [];
  for (const p of policies) {
    const layers = [
      p.essential ? "essential" : "optional",
      p.transport,
      p.bulkhead
        ? p.bulkhead.adaptive === undefined
          ? `bulkhead ${p.bulkhead.maxConcurrent}`
          : `adaptive bulkhead ${p.bulkhead.adaptive.minLimit}–${p.bulkhead.adaptive.maxLimit} from ${p.bulkhead.maxConcurrent}`
        : undefined,
      p.breaker
        ? `breaker ${Math.round(p.breaker.failureRate * 100)}%/${p.breaker.window.kind === "time" ? formatMs(p.breaker.window.durationMs) : `${p.breaker.window.calls} calls`}`
        : undefined,
      p.budget ? `budget ${p.budget.maxTokens}` : undefined,
    ].filter(Boolean);
    lines.push(`${p.dependency} (${p.file}): ${layers.join(", ")}`);
    const width = Math.max(...p.operations.map((o) => o.name.length));
    for (const op of p.operations)
      lines.push(`  ${op.name.padEnd(width)}  ${describeOperation(op)}`);
  }
  return lines.length > 0 ? lines.join("\n") + "\n" : "";
}

function describeOperation(op: ResolvedOperation): string {
  const parts: string[] = [];
  if (op.method) parts.push(`${op.method} ${op.path ?? ""}`.trim());
  parts.push(`attempt ${formatMs(op.timeout.attemptMs)} / total ${formatMs(op.timeout.totalMs)}`);
  parts.push(op.plan.description);
  if (op.idempotencyKey) parts.push(`key ${op.idempotencyKey.header}`);
  if (op.fallback)
    parts.push(
      `fallback ${op.fallback.kind}${op.fallback.kind === "stale" && op.fallback.otherwise ? `, else ${op.fallback.otherwise.kind}` : ""}`,
    );
  return parts.join(" · ");
}
