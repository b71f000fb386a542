/**
 * The command line: commander wiring and output, nothing else. The exit code follows the exit
 * category of the codes reported (src/diagnostics/codes.ts, docs/build.md): 0 clean (warnings
 * allowed unless --max-warnings says otherwise), 1 errors found, 2 usage or I/O error. With
 * `--format json` (or sarif) every outcome a command reaches is written in that format.
 */
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
import { MANIFEST } from "../build/write.js";
import {
  countBySeverity,
  diagnostic,
  exitCode,
  type Diagnostic,
} from "../diagnostics/diagnostic.js";
import { FORMATS, format, SourceTexts, type Format } from "../diagnostics/format.js";
import { formatMs } from "../language/durations.js";
import type { ResolvedOperation, ResolvedPolicy } from "../model/resolved.js";
import { VERSION } from "../version.js";
import { describeService } from "../model/service.js";
import { parseTargets, TARGETS, type TargetName } from "../targets/index.js";

export interface Io {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly cwd: string;
  readonly color: boolean;
  /** Ends `build --watch` (tests); the CLI otherwise stops on SIGINT or SIGTERM. */
  readonly signal?: AbortSignal;
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
    .option(
      "-t, --target <targets>",
      `what to generate, repeatable or comma-separated: ${TARGETS.join(", ")} (default: ts)`,
      collectTargets,
      [],
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
        };
        if (opts.watch) {
          const controller = new AbortController();
          const stop = () => controller.abort();
          process.once("SIGINT", stop);
          process.once("SIGTERM", stop);
          await watchBuild(
            paths,
            options,
            (result) => void reportBuild(result, opts, io),
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
        opts: { operation?: string; format: "text" | "json"; allowOutsideProject?: boolean },
      ) => {
        exitCode = await runExplain(file, opts, io);
      },
    );

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
  if (opts.format !== "pretty") {
    io.stdout(format(opts.format, result.diagnostics, checked.sources));
  } else if (result.diagnostics.length > 0) {
    io.stdout(format("pretty", result.diagnostics, checked.sources, { color: io.color }));
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

async function runExplain(
  file: string,
  opts: { operation?: string; format: "text" | "json"; allowOutsideProject?: boolean },
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
  const report = explain(policy, {
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
      p.bulkhead ? `bulkhead ${p.bulkhead.maxConcurrent}` : undefined,
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
