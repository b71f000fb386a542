/**
 * Reads histograms from the Prometheus text exposition format (also what OpenMetrics and the
 * OpenTelemetry Prometheus exporter write): `# TYPE name histogram`, `name_bucket{…,le="0.05"} N`,
 * `name_sum`, `name_count`, with `# UNIT` lines where the export has them. Other metric types are
 * skipped. A histogram is also recognised without a `# TYPE` line, from `_bucket` samples with an
 * `le` label.
 */
import {
  bucketProblem,
  secondsPer,
  type Bucket,
  type HistogramSeries,
  type Problem,
  type ReadExport,
} from "./histogram.js";

interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
  readonly line: number;
  /** Which `# TYPE` line of its metric it follows: 0 the first, 1 a repeated one, … */
  readonly exposition?: number;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const SUFFIXES = ["_bucket", "_count", "_sum"] as const;
/** The unit a metric's name ends with, by the Prometheus naming conventions. */
const NAME_UNITS: readonly [string, string][] = [
  ["_seconds", "seconds"],
  ["_milliseconds", "milliseconds"],
  ["_microseconds", "microseconds"],
];

/** Parses a sample value: a float, `+Inf`, `-Inf` or `NaN`. */
function parseValue(text: string): number | undefined {
  if (text === "+Inf" || text === "Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  if (text === "NaN") return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return undefined;
  return Number(text);
}

/** Parses one sample line; the reason when it is malformed. */
function parseSample(text: string, line: number): Sample | string {
  const name = NAME.exec(text)?.[0];
  if (name === undefined) return "expected a metric name";
  let rest = text.slice(name.length);
  const labels: Record<string, string> = {};
  if (rest.startsWith("{")) {
    rest = rest.slice(1);
    for (;;) {
      rest = rest.trimStart();
      if (rest.startsWith("}")) {
        rest = rest.slice(1);
        break;
      }
      const label = LABEL_NAME.exec(rest)?.[0];
      if (label === undefined) return "expected a label name or `}`";
      rest = rest.slice(label.length).trimStart();
      if (!rest.startsWith("=")) return `expected = after the label ${label}`;
      rest = rest.slice(1).trimStart();
      if (!rest.startsWith('"')) return `expected a quoted value for the label ${label}`;
      let value = "";
      let i = 1;
      for (; i < rest.length; i++) {
        const c = rest[i]!;
        if (c === "\\") {
          const next = rest[i + 1];
          if (next === "n") value += "\n";
          else if (next === "\\" || next === '"') value += next;
          else return `unknown escape \\${next ?? ""} in the value of the label ${label}`;
          i++;
        } else if (c === '"') break;
        else value += c;
      }
      if (i >= rest.length) return `the value of the label ${label} is not closed`;
      if (label in labels) return `the label ${label} is given twice`;
      labels[label] = value;
      rest = rest.slice(i + 1).trimStart();
      if (rest.startsWith(",")) rest = rest.slice(1);
      else if (!rest.startsWith("}")) return "expected , or } after a label";
    }
  }
  const fields = rest.trim().split(/\s+/);
  if (rest.length > 0 && !/^\s/.test(rest)) return "expected a space before the value";
  if (fields.length < 1 || fields[0] === "" || fields.length > 2)
    return "expected a value, and at most a timestamp after it";
  const value = parseValue(fields[0]!);
  if (value === undefined) return `"${fields[0]!}" is not a number`;
  return { name, labels, value, line };
}

/** Reads the histograms of a Prometheus text export; `file` names it in messages. */
export function readPrometheus(text: string, file: string): ReadExport {
  const problems: Problem[] = [];
  const types = new Map<string, string>();
  const units = new Map<string, { unit: string; line: number }>();
  const samples: Sample[] = [];
  // A file of several replicas' exports one after the other (`cat a.prom b.prom`) repeats each
  // metric's `# TYPE` line: the samples after the second are the next exposition's.
  const exposition = new Map<string, number>();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    if (line.startsWith("#")) {
      const meta = /^#\s*(TYPE|UNIT)\s+(\S+)\s+(\S+)\s*$/.exec(line);
      if (meta?.[1] === "TYPE") {
        const name = meta[2]!;
        if (types.has(name)) exposition.set(name, (exposition.get(name) ?? 0) + 1);
        types.set(name, meta[3]!);
      } else if (meta?.[1] === "UNIT") units.set(meta[2]!, { unit: meta[3]!, line: i + 1 });
      continue;
    }
    const sample = parseSample(line, i + 1);
    if (typeof sample === "string")
      problems.push({
        severity: "error",
        where: `${file}:${i + 1}`,
        message: `cannot read this line: ${sample}`,
      });
    else {
      const base = SUFFIXES.reduce(
        (name, x) => (name.endsWith(x) ? name.slice(0, -x.length) : name),
        sample.name,
      );
      samples.push({ ...sample, exposition: exposition.get(base) ?? 0 });
    }
  }

  // which names are histograms: those typed so, and untyped names with `le`-labelled buckets
  const histograms = new Set<string>();
  for (const [name, type] of types) if (type === "histogram") histograms.add(name);
  for (const s of samples) {
    if (!s.name.endsWith("_bucket") || !("le" in s.labels)) continue;
    const base = s.name.slice(0, -"_bucket".length);
    if (!types.has(base) && !types.has(s.name)) histograms.add(base);
  }

  interface Group {
    readonly base: string;
    readonly labels: Record<string, string>;
    readonly line: number;
    readonly buckets: { le: number; count: number; line: number }[];
    /** Its exposition in the file, counted from 0: which replica's export it is. */
    readonly copy: number;
    count?: { value: number; line: number };
    sum?: boolean;
  }
  const groups = new Map<string, Group>();
  // the exposition each series is in now: a series whose samples begin again (a bound, a
  // `_count` or a `_sum` it already has) is the next exposition's, with or without `# TYPE`
  const current = new Map<string, number>();
  for (const s of samples) {
    const suffix = SUFFIXES.find((x) => s.name.endsWith(x));
    if (suffix === undefined) continue;
    const base = s.name.slice(0, -suffix.length);
    if (!histograms.has(base)) continue;
    const { le, ...labels } = s.labels;
    const series =
      base +
      JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    let copy = Math.max(current.get(series) ?? 0, s.exposition ?? 0);
    const open = groups.get(`${series}#${String(copy)}`);
    if (open !== undefined) {
      const bound = le === undefined ? undefined : parseValue(le);
      const again =
        suffix === "_bucket"
          ? open.buckets.some((b) => b.le === bound)
          : suffix === "_count"
            ? open.count !== undefined
            : open.sum === true;
      if (again) copy++;
    }
    current.set(series, copy);
    const key = `${series}#${String(copy)}`;
    let group = groups.get(key);
    if (!group) {
      group = { base, labels, line: s.line, buckets: [], copy };
      groups.set(key, group);
    }
    if (suffix === "_sum") group.sum = true;
    const where = `${file}:${s.line}`;
    if (suffix === "_bucket") {
      const bound = le === undefined ? undefined : parseValue(le);
      if (bound === undefined || Number.isNaN(bound)) {
        problems.push({
          severity: "error",
          where,
          message: `${s.name} has ${le === undefined ? "no le label" : `le="${le}", which is not a number`}`,
        });
        continue;
      }
      if (!Number.isFinite(s.value) || s.value < 0) {
        problems.push({
          severity: "error",
          where,
          message: `${s.name} has the count ${String(s.value)}: a bucket counts observations, 0 or more`,
        });
        continue;
      }
      group.buckets.push({ le: bound, count: s.value, line: s.line });
    } else if (suffix === "_count") group.count = { value: s.value, line: s.line };
  }

  const series: HistogramSeries[] = [];
  const copies = Math.max(0, ...[...groups.values()].map((g) => g.copy)) + 1;
  for (const group of groups.values()) {
    const where = `${file}:${group.line}`;
    const buckets: Bucket[] = group.buckets
      .sort((a, b) => a.le - b.le)
      .map(({ le, count }) => ({ le, count }));
    const described = `${group.base}${describeLabels(group.labels)}`;
    const problem = bucketProblem(buckets);
    if (problem !== undefined) {
      problems.push({ severity: "error", where, message: `${described} ${problem}` });
      continue;
    }
    const total = buckets[buckets.length - 1]!.count;
    if (group.count !== undefined && group.count.value !== total) {
      problems.push({
        severity: "error",
        where: `${file}:${group.count.line}`,
        message: `${described}: _count is ${String(group.count.value)} but the le="+Inf" bucket counts ${total}; they are the same number in a sound export`,
      });
      continue;
    }
    const fromName = NAME_UNITS.find(([suffix]) => group.base.endsWith(suffix))?.[1];
    const declared = units.get(group.base)?.unit;
    const conflict =
      fromName !== undefined &&
      declared !== undefined &&
      secondsPer(fromName) !== secondsPer(declared)
        ? `its name says ${fromName} but its # UNIT line (line ${units.get(group.base)!.line}) says ${declared}`
        : undefined;
    series.push({
      metric: group.base,
      labels: group.labels,
      buckets,
      count: total,
      unit: declared ?? fromName,
      ...(conflict === undefined ? {} : { unitConflict: conflict }),
      where,
      ...(copies > 1 ? { replica: `exposition ${String(group.copy + 1)}` } : {}),
    });
  }
  return { format: "prometheus", series, problems };
}

/** `{a="1",b="2"}`, for messages; nothing for no labels. */
export function describeLabels(labels: Readonly<Record<string, string>>): string {
  const entries = Object.entries(labels);
  if (entries.length === 0) return "";
  return `{${entries.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(",")}}`;
}
