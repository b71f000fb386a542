/**
 * `resgen tune`: the `latency:` section of each policy from observed latency. Reads a histogram
 * export (Prometheus text or OTLP JSON), keeps the series of the policies' dependencies (by the
 * dependency label) whose outcome was a success, estimates p50, p95, p99 and p999 from the
 * buckets and rps from the count over the window, and rewrites `latency:` in memory. The tuned
 * texts are then checked by the same pipeline as `resgen check` (over the file system with those
 * texts in place of the committed ones), so the derived values and the analyzer's findings are
 * the project's own. Writing (`--write`) happens only when nothing went wrong.
 */
import { chmod, realpath, rename, rm, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { check, checkProgram, type CheckResult } from "../program/check.js";
import { countBySeverity, exitCode } from "../diagnostics/diagnostic.js";
import { formatMs } from "../language/durations.js";
import type { ResolvedLatency, ResolvedPolicy } from "../model/resolved.js";
import { overlayHost } from "../source/overlay.js";
import { isWithin, readInput } from "../source/read.js";
import { runAsync } from "../source/task.js";
import { secondsPer, type HistogramSeries, type Problem, type ReadExport } from "./histogram.js";
import { readOtlp } from "./otlp.js";
import { describeLabels, readPrometheus } from "./prometheus.js";
import { mergeBuckets, quantile, type QuantileEstimate } from "./quantile.js";
import { setLatency, type LatencyKey, type LatencyText } from "./edit.js";
import { lineDiff } from "./diff.js";

/** The metric tune reads by default: what the generated OpenTelemetry telemetry records. */
export const DEFAULT_METRIC = "resilience.client.attempt.duration";
export const DEFAULT_DEPENDENCY_LABEL = "resilience.dependency";
export const DEFAULT_OPERATION_LABEL = "resilience.operation";
/** Observations below which a dependency's latency is left as it is. */
export const DEFAULT_MIN_SAMPLES = 100;
/** The largest export read: a day of scrapes of a few hundred series is well under it. */
export const MAX_EXPORT_BYTES = 64 * 1024 * 1024;
/** The label whose value says how an attempt ended; only `success` counts towards latency. */
const OUTCOME_LABEL = "resilience.outcome";
/** OpenTelemetry's HTTP conventions mark a failed request with this attribute. */
const ERROR_LABEL = "error.type";
/** Set on attempts the client's `chaos` option injected faults into: a drill, not the dependency. */
const CHAOS_LABEL = "resilience.chaos.fault";

/** Labels that tell replicas apart inside one export: Prometheus' scrape target, OpenTelemetry's. */
const REPLICA_LABELS = ["instance", "service.instance.id"] as const;

export interface TuneOptions {
  readonly cwd: string;
  /** The export to read, or the exports of several replicas, added up. */
  readonly from: string | readonly string[];
  /**
   * What `latency.rps` is written as: the rate one replica sees (`per-replica`, the default,
   * what the bulkhead, the breaker's window and a memory rate limit are sized by), or the
   * whole fleet's (`fleet`).
   */
  readonly rps?: "per-replica" | "fleet";
  /** Replicas the exports cover, when they cannot tell (docs/tune.md, "Several replicas"). */
  readonly replicas?: number;
  readonly metric?: string;
  readonly dependencyLabel?: string;
  readonly operationLabel?: string;
  /** Milliseconds the counters of a Prometheus export cover, for rps. */
  readonly windowMs?: number;
  readonly minSamples?: number;
  readonly allowOutsideProject?: boolean;
}

export const QUANTILES = [
  ["p50", 0.5],
  ["p90", 0.9],
  ["p95", 0.95],
  ["p99", 0.99],
  ["p999", 0.999],
] as const;
export type QuantileKey = (typeof QUANTILES)[number][0];

/** What the export says about one dependency, or one of its operations. */
export interface Observed {
  /** Successful observations the quantiles come from. */
  readonly samples: number;
  /** Estimates in seconds, with the bounds of the bucket each fell in. */
  readonly quantiles: Readonly<Partial<Record<QuantileKey, QuantileEstimate>>>;
  /**
   * Observations of every outcome per second over the window, as written (per replica, or for
   * the fleet with `rps: fleet`); undefined without a window.
   */
  readonly rps?: number;
  /** The same over every replica of the exports; undefined without a window. */
  readonly fleetRps?: number;
  /** Replicas the observations came from: counted in the exports, or `--replicas`. */
  readonly replicas: number;
  /** Whether `replicas` was given (`--replicas`) rather than counted. */
  readonly replicasGiven?: boolean;
}

/** One derived value before and after tuning. */
export interface DerivedChange {
  /** The operation, or undefined for a dependency-level value. */
  readonly operation?: string;
  readonly key: string;
  readonly before: string;
  readonly after: string;
  /** Where the tuned value comes from: `derived`, `policy`, `operation`, `project`, `default`. */
  readonly origin: string;
  readonly formula?: string;
}

export interface TunedPolicy {
  /** The file as displayed. */
  readonly file: string;
  readonly absolute: string;
  readonly dependency: string;
  /** Undefined when the export has nothing usable for it (the reason is among the problems). */
  readonly observed?: Observed;
  readonly operations: readonly (Observed & { readonly name: string })[];
  /** The values written, as they are written. */
  readonly values: LatencyText;
  readonly text: string;
  readonly tuned: string;
  /** Unified-style diff of the text, empty when nothing changes. */
  readonly diff: string;
  readonly derived: readonly DerivedChange[];
}

export interface TuneResult {
  /** Problems with the export or with tuning; each error means nothing is written. */
  readonly problems: readonly Problem[];
  /** The committed policies, checked. */
  readonly committed: CheckResult;
  /** The tuned policies, checked; undefined when tuning did not get that far. */
  readonly tunedCheck?: CheckResult;
  readonly policies: readonly TunedPolicy[];
  /** 0, 1 (errors in the export, the data or the tuned policies) or 2 (usage or I/O). */
  readonly exit: 0 | 1 | 2;
}

/** Runs tune without writing; `writeTuned` applies a result. */
export async function tune(paths: readonly string[], options: TuneOptions): Promise<TuneResult> {
  const problems: Problem[] = [];
  const committed = await check(paths, {
    cwd: options.cwd,
    allowOutsideProject: options.allowOutsideProject === true,
  });
  const refused = (exit: 0 | 1 | 2): TuneResult => ({ problems, committed, policies: [], exit });
  if (committed.unmatched.length > 0 || countBySeverity(committed.diagnostics).errors > 0)
    return refused(Math.max(1, exitCode(committed.diagnostics)) as 1 | 2);

  const froms = typeof options.from === "string" ? [options.from] : [...options.from];
  const reads: ReadExport[] = [];
  for (const [index, from] of froms.entries()) {
    const exportFile = resolve(options.cwd, from);
    // a FIFO, a device or an export past the limit is refused, not read until it ends
    const input = await readInput(exportFile, MAX_EXPORT_BYTES);
    if ("problem" in input) {
      problems.push({ severity: "error", where: from, message: input.problem });
      return refused(2);
    }
    const text = input.text;
    if (text.trim() === "") {
      problems.push({ severity: "error", where: from, message: "the export is empty" });
      return refused(1);
    }
    const one: ReadExport = text.trimStart().startsWith("{")
      ? readOtlp(text, from)
      : readPrometheus(text, from);
    reads.push({ ...one, series: one.series.map((s) => ({ ...s, source: index })) });
  }
  // the exports of several replicas are one export: their series are added up
  const read: ReadExport = {
    format: reads.some((r) => r.format === "prometheus") ? "prometheus" : "otlp",
    series: reads.flatMap((r) => r.series),
    problems: reads.flatMap((r) => r.problems),
  };
  problems.push(...read.problems);
  const shownFrom = froms.join(", ");
  const selected = select(read, { ...options, from: shownFrom }, problems);

  const policies: TunedPolicy[] = [];
  const tunedTexts = new Map<string, string>();
  const minSamples = options.minSamples ?? DEFAULT_MIN_SAMPLES;
  const dependencies = new Set(committed.policies.map((p) => p.dependency));
  for (const name of [...selected.byDependency.keys()].sort())
    if (!dependencies.has(name))
      problems.push({
        severity: "warning",
        where: shownFrom,
        message: `the export has latency of "${name}", which no policy given names`,
      });
  for (const policy of committed.policies) {
    const source = committed.documents.get(policy.file);
    const absolute = committed.files.get(policy.file)?.absolute;
    if (!source || absolute === undefined) continue;
    const series = selected.byDependency.get(policy.dependency) ?? [];
    const replicas = replicasOf(series, options);
    const observed = selected.ok
      ? observe(policy.dependency, series, selected, options, replicas, problems)
      : undefined;
    const operations = selected.ok
      ? observeOperations(policy, series, selected, options, replicas)
      : [];
    let values: LatencyText = {};
    if (observed !== undefined) {
      if (observed.samples < minSamples)
        problems.push({
          severity: "warning",
          where: policy.file,
          message: `${policy.dependency}: ${observed.samples} successful observation${observed.samples === 1 ? "" : "s"} in the export, fewer than ${minSamples} (--min-samples): its latency is left as it is`,
        });
      else values = latencyValues(policy, observed, problems);
    } else if (selected.ok)
      problems.push({
        severity: "warning",
        where: policy.file,
        message: `${policy.dependency}: the export has no successful ${selected.metricShown} with ${selected.dependencyLabel}="${policy.dependency}": its latency is left as it is`,
      });
    const edited = setLatency(source.text, values);
    if ("error" in edited) {
      problems.push({ severity: "error", where: policy.file, message: edited.error });
      continue;
    }
    if (edited.text !== source.text) tunedTexts.set(absolute, edited.text);
    policies.push({
      file: policy.file,
      absolute,
      dependency: policy.dependency,
      ...(observed === undefined ? {} : { observed }),
      operations,
      values,
      text: source.text,
      tuned: edited.text,
      diff: lineDiff(policy.file, source.text, edited.text),
      derived: [],
    });
  }

  const tunedCheck = await runAsync(
    checkProgram(overlayHost(options.cwd, tunedTexts), paths, {
      allowOutsideProject: options.allowOutsideProject === true,
    }),
  );
  const withDerived = policies.map((p) => {
    const before = committed.policies.find((x) => x.file === p.file);
    const after = tunedCheck.policies.find((x) => x.file === p.file);
    return before && after ? { ...p, derived: derivedChanges(before, after) } : p;
  });
  const failed =
    problems.some((p) => p.severity === "error") ||
    countBySeverity(tunedCheck.diagnostics).errors > 0;
  return { problems, committed, tunedCheck, policies: withDerived, exit: failed ? 1 : 0 };
}

/**
 * Writes the tuned texts that differ, each to a temporary file beside it renamed over it; none
 * on an error. A policy that is a symbolic link (or lies under one) is written through it, to its
 * target, which keeps its mode; one whose target is outside its project is refused, and then
 * nothing is written (docs/tune.md, "Writing"). `written` names each file as displayed, with the
 * link's target where it differs, relative to `cwd`.
 */
export async function writeTuned(
  result: TuneResult,
  cwd: string = process.cwd(),
): Promise<{ written: string[] } | { error: string }> {
  if (result.exit !== 0) return { error: "not written: fix the errors above first" };
  const changed = result.policies.filter((p) => p.tuned !== p.text);
  // where each goes: every link resolved, inside its project, once
  const targets = new Map<string, { file: string; tuned: string; mode: number }>();
  const written: string[] = [];
  for (const p of changed) {
    let target: string;
    let mode: number;
    try {
      target = await realpath(p.absolute);
      mode = (await stat(target)).mode & 0o7777;
    } catch (error) {
      return { error: `cannot write ${p.file}: ${(error as Error).message}; nothing written` };
    }
    const config = result.committed.files.get(p.file)?.config;
    // the project root (docs/security.md): the project file's folder, else the policy's own
    const folder = config === undefined ? dirname(p.absolute) : dirname(config);
    const root = await realpath(folder).catch(() => folder);
    if (!isWithin(root, target))
      return {
        error: `cannot write ${p.file}: it is a symbolic link (or lies under one) to a file outside the project, and tune writes nothing outside the project; nothing written`,
      };
    const same = targets.get(target);
    if (same !== undefined && same.tuned !== p.tuned)
      return {
        error: `cannot write ${p.file}: it and ${same.file} are the same file, tuned differently; nothing written`,
      };
    if (same === undefined) targets.set(target, { file: p.file, tuned: p.tuned, mode });
    const shown = relative(cwd, target).split(sep).join("/");
    written.push(
      target === p.absolute || shown === p.file
        ? p.file
        : `${p.file} (through its link to ${shown})`,
    );
  }
  const temps: [string, string][] = [];
  try {
    for (const [target, t] of targets) {
      const temp = join(dirname(target), `.${basename(target)}.${process.pid}.tune.tmp`);
      temps.push([temp, target]);
      await writeFile(temp, t.tuned, { flag: "wx", mode: t.mode });
      // the creation mode passes through the umask: set the target's exactly
      await chmod(temp, t.mode);
    }
  } catch (error) {
    for (const [temp] of temps) await rm(temp, { force: true });
    return { error: `cannot write: ${(error as Error).message}; nothing written` };
  }
  for (const [temp, target] of temps) await rename(temp, target);
  return { written };
}

// --- which series count ---------------------------------------------------------------------

interface Selected {
  /** False when an error means nothing can be observed. */
  readonly ok: boolean;
  readonly metricShown: string;
  readonly dependencyLabel: string;
  /** Series of the metric, bounds in seconds, by the dependency label's value. */
  readonly byDependency: ReadonlyMap<string, readonly HistogramSeries[]>;
  /** The label names as the export spells them. */
  readonly operationKey: (s: HistogramSeries) => string | undefined;
  readonly success: (s: HistogramSeries) => boolean;
}

/** A label as the export spells it: OTLP keeps the dots, Prometheus turns them to underscores. */
function labelOf(series: HistogramSeries, name: string): string | undefined {
  return series.labels[name] ?? series.labels[name.replace(/[^a-zA-Z0-9_]/g, "_")];
}

/** Whether an export's metric name is `wanted`, in OpenTelemetry or Prometheus spelling. */
function isMetric(name: string, wanted: string): boolean {
  if (name === wanted) return true;
  const prometheus = wanted.replace(/[^a-zA-Z0-9_:]/g, "_");
  return [prometheus, `${prometheus}_seconds`, `${prometheus}_milliseconds`].includes(name);
}

function select(
  read: ReadExport,
  options: TuneOptions & { readonly from: string },
  problems: Problem[],
): Selected {
  const metric = options.metric ?? DEFAULT_METRIC;
  const dependencyLabel = options.dependencyLabel ?? DEFAULT_DEPENDENCY_LABEL;
  const operationLabel = options.operationLabel ?? DEFAULT_OPERATION_LABEL;
  const base = {
    metricShown: metric,
    dependencyLabel,
    operationKey: (s: HistogramSeries) => labelOf(s, operationLabel),
    success: (s: HistogramSeries) => {
      const outcome = labelOf(s, OUTCOME_LABEL);
      return (
        (outcome === undefined || outcome === "success") &&
        labelOf(s, ERROR_LABEL) === undefined &&
        labelOf(s, CHAOS_LABEL) === undefined
      );
    },
  };
  const byDependency = new Map<string, HistogramSeries[]>();
  const fail = (message: string, where?: string): Selected => {
    problems.push({ severity: "error", message, ...(where === undefined ? {} : { where }) });
    return { ...base, ok: false, byDependency };
  };
  if (read.series.length === 0 && !read.problems.some((p) => p.severity === "error"))
    return fail("the export holds no histogram", options.from);
  const matching = read.series.filter((s) => isMetric(s.metric, metric));
  if (matching.length === 0) {
    const names = [...new Set(read.series.map((s) => s.metric))].sort();
    return read.series.length === 0
      ? { ...base, ok: false, byDependency }
      : fail(
          `the export has no histogram "${metric}"${names.length > 0 ? `; its histograms: ${names.join(", ")} (choose one with --metric)` : ""}`,
          options.from,
        );
  }
  let ok = true;
  for (const s of matching) {
    const factor = s.unit === undefined ? undefined : secondsPer(s.unit);
    const problem =
      s.unitConflict !== undefined
        ? `${s.metric} has conflicting units: ${s.unitConflict}`
        : s.unit === undefined
          ? `${s.metric} declares no unit: tune reads durations in seconds or milliseconds, named by a _seconds or _milliseconds suffix, a # UNIT line, or the OTLP unit`
          : factor === undefined
            ? `${s.metric} is in "${s.unit}", which is not a unit of time: tune reads durations (s or ms)`
            : undefined;
    if (problem !== undefined) {
      if (ok) problems.push({ severity: "error", where: s.where, message: problem });
      ok = false;
      continue;
    }
    const dependency = labelOf(s, dependencyLabel);
    if (dependency === undefined) continue;
    const converted: HistogramSeries = {
      ...s,
      buckets: s.buckets.map((b) => ({ le: b.le * factor!, count: b.count })),
    };
    byDependency.set(dependency, [...(byDependency.get(dependency) ?? []), converted]);
  }
  if (ok && byDependency.size === 0)
    return fail(
      `no series of ${metric} has the label "${dependencyLabel}": name the label that holds the dependency with --dependency-label`,
      options.from,
    );
  if (ok && read.format === "prometheus" && options.windowMs === undefined)
    problems.push({
      severity: "warning",
      where: options.from,
      message:
        "rps is not derived: a Prometheus export holds counts since the process started, not over a known period; pass --window <duration>, the period its counters cover",
    });
  return { ...base, ok, byDependency };
}

/**
 * How many replicas `series` (one dependency's) came from: `--replicas` when given, else the
 * distinct replicas the exports tell apart, by file (`--from`), by exposition inside a file (a
 * concatenated Prometheus file, an OTLP resource) and by a replica label (`instance`,
 * `service.instance.id`).
 */
function replicasOf(series: readonly HistogramSeries[], options: TuneOptions): number {
  if (options.replicas !== undefined) return options.replicas;
  return Math.max(1, byReplica(series).size);
}

/** `series` by the replica each came from (see {@link replicasOf}). */
function byReplica(series: readonly HistogramSeries[]): Map<string, HistogramSeries[]> {
  const out = new Map<string, HistogramSeries[]>();
  for (const s of series) {
    const label = REPLICA_LABELS.map((l) => labelOf(s, l)).find((v) => v !== undefined);
    const key = JSON.stringify([s.source ?? 0, s.replica ?? "", label ?? ""]);
    const group = out.get(key);
    if (group === undefined) out.set(key, [s]);
    else group.push(s);
  }
  return out;
}

/**
 * Observations per second of every replica together: with `--window`, all of them over it;
 * else each replica's over its own window (OTLP start to end: replicas started at different
 * times count over different periods), added up. Undefined when a replica's period is unknown.
 */
function fleetRate(series: readonly HistogramSeries[], options: TuneOptions): number | undefined {
  if (options.windowMs !== undefined) {
    const all = series.reduce((sum, s) => sum + s.count, 0);
    return options.windowMs > 0 ? all / (options.windowMs / 1000) : undefined;
  }
  let total = 0;
  for (const group of byReplica(series).values()) {
    const seconds = windowSeconds(group, options);
    if (seconds === undefined || seconds <= 0) return undefined;
    total += group.reduce((sum, s) => sum + s.count, 0) / seconds;
  }
  return total;
}

/** The latency of a set of series: quantiles of the successful ones, rps of all. */
function observeSeries(
  series: readonly HistogramSeries[],
  selected: Selected,
  options: TuneOptions,
  replicas: number,
): Observed | string | undefined {
  const good = series.filter(selected.success);
  if (good.length === 0) return undefined;
  const merged = mergeBuckets(good.map((s) => s.buckets));
  if (merged === undefined)
    return `its series have different bucket bounds (${good.map((s) => s.where).join(", ")}), which cannot be added up`;
  const quantiles: Partial<Record<QuantileKey, QuantileEstimate>> = {};
  for (const [key, q] of QUANTILES) {
    const e = quantile(q, merged);
    if (e) quantiles[key] = e;
  }
  const samples = merged[merged.length - 1]!.count;
  const fleet = fleetRate(series, options);
  return {
    samples,
    quantiles,
    replicas,
    ...(options.replicas === undefined ? {} : { replicasGiven: true }),
    ...(fleet === undefined
      ? {}
      : { fleetRps: fleet, rps: options.rps === "fleet" ? fleet : fleet / replicas }),
  };
}

function windowSeconds(
  series: readonly HistogramSeries[],
  options: TuneOptions,
): number | undefined {
  if (options.windowMs !== undefined) return options.windowMs / 1000;
  const windows = series.flatMap((s) => (s.window ? [s.window] : []));
  // a series with no window of its own (a Prometheus export among OTLP ones) has counts over
  // an unknown period: no rate can be told from them
  if (windows.length === 0 || windows.length < series.length) return undefined;
  const start = windows.reduce((m, w) => (w.start < m ? w.start : m), windows[0]!.start);
  const end = windows.reduce((m, w) => (w.end > m ? w.end : m), windows[0]!.end);
  return Number(end - start) / 1e9;
}

function observe(
  dependency: string,
  series: readonly HistogramSeries[],
  selected: Selected,
  options: TuneOptions,
  replicas: number,
  problems: Problem[],
): Observed | undefined {
  const observed = observeSeries(series, selected, options, replicas);
  if (typeof observed === "string") {
    problems.push({
      severity: "error",
      where: typeof options.from === "string" ? options.from : options.from.join(", "),
      message: `${dependency}: ${observed}`,
    });
    return undefined;
  }
  return observed;
}

function observeOperations(
  policy: ResolvedPolicy,
  series: readonly HistogramSeries[],
  selected: Selected,
  options: TuneOptions,
  replicas: number,
): (Observed & { name: string })[] {
  const byOperation = new Map<string, HistogramSeries[]>();
  for (const s of series) {
    const name = selected.operationKey(s);
    if (name !== undefined) byOperation.set(name, [...(byOperation.get(name) ?? []), s]);
  }
  const out: (Observed & { name: string })[] = [];
  const known = policy.operations.map((o) => o.name);
  for (const name of [...byOperation.keys()].sort((a, b) => {
    const i = known.indexOf(a);
    const j = known.indexOf(b);
    return (i < 0 ? Infinity : i) - (j < 0 ? Infinity : j) || (a < b ? -1 : a > b ? 1 : 0);
  })) {
    const o = observeSeries(byOperation.get(name)!, selected, options, replicas);
    if (o !== undefined && typeof o !== "string") out.push({ name, ...o });
  }
  return out;
}

// --- the values written ---------------------------------------------------------------------

/** A quantile in whole milliseconds, at least 1ms (the least a latency accepts). */
export function roundedMs(e: QuantileEstimate): number {
  return Math.max(1, Math.round(e.value * 1000));
}

/** rps as written: whole above 10, one decimal below, never 0. */
export function roundedRps(rps: number): number {
  const r = rps >= 10 ? Math.round(rps) : Math.round(rps * 10) / 10;
  return r > 0 ? r : 0.1;
}

/** The new latency values: p50, p95, p99, p999, rps when observed; p90 only where the policy has it. */
function latencyValues(
  policy: ResolvedPolicy,
  observed: Observed,
  problems: Problem[],
): LatencyText {
  const current: ResolvedLatency = policy.latency;
  const values: LatencyText = {};
  for (const [key] of QUANTILES) {
    const e = observed.quantiles[key];
    if (!e || (key === "p90" && current.p90Ms === undefined)) continue;
    if (e.unbounded)
      problems.push({
        severity: "warning",
        where: policy.file,
        message: `${policy.dependency}: ${key} lies above the highest bucket bound (${formatMs(roundedMs(e))}): it is written as ${formatMs(roundedMs(e))}, a floor; the true value is higher (add larger buckets)`,
      });
    const ms = roundedMs(e);
    const now = (current as Record<string, number | undefined>)[`${key}Ms`];
    // an unchanged value keeps its spelling (0.1s stays 0.1s)
    if (now !== ms) values[key] = formatMs(ms);
  }
  if (observed.samples < 1000 && observed.quantiles.p999)
    problems.push({
      severity: "warning",
      where: policy.file,
      message: `${policy.dependency}: p999 comes from ${observed.samples} observations, fewer than 1000: it rests on the slowest one or two`,
    });
  if (observed.rps !== undefined) {
    const rps = roundedRps(observed.rps);
    if (current.rps !== rps) values.rps = String(rps);
  }
  return values;
}

// --- derived values before and after --------------------------------------------------------

function derivedChanges(before: ResolvedPolicy, after: ResolvedPolicy): DerivedChange[] {
  const out: DerivedChange[] = [];
  const ms = (v: number | undefined) => (v === undefined ? "none" : formatMs(v));
  const push = (
    key: string,
    b: string,
    a: string,
    provenance: { origin: string; formula?: string } | undefined,
    operation?: string,
  ) =>
    out.push({
      ...(operation === undefined ? {} : { operation }),
      key,
      before: b,
      after: a,
      origin: provenance?.origin ?? "absent",
      ...(provenance?.formula === undefined ? {} : { formula: provenance.formula }),
    });
  push(
    "bulkhead.maxConcurrent",
    before.bulkhead ? String(before.bulkhead.maxConcurrent) : "none",
    after.bulkhead ? String(after.bulkhead.maxConcurrent) : "none",
    after.provenance["bulkhead.maxConcurrent"],
  );
  if (before.breaker || after.breaker)
    push(
      "breaker.slowCall.duration",
      ms(before.breaker?.slowCall?.durationMs),
      ms(after.breaker?.slowCall?.durationMs),
      after.provenance["breaker.slowCall.duration"],
    );
  for (const op of after.operations) {
    const was = before.operations.find((o) => o.name === op.name);
    if (!was) continue;
    for (const [setting, key] of [
      ["timeout.attempt", "attemptMs"],
      ["timeout.total", "totalMs"],
    ] as const)
      push(setting, ms(was.timeout[key]), ms(op.timeout[key]), op.provenance[setting], op.name);
    if (was.plan.hedge || op.plan.hedge)
      push(
        "hedge.delay",
        ms(was.plan.hedge?.delayMs),
        ms(op.plan.hedge?.delayMs),
        op.provenance["hedge.delay"],
        op.name,
      );
  }
  return out;
}

export { describeLabels };
export type { LatencyKey };
