/**
 * Reads histograms from an OpenTelemetry metrics export in the OTLP JSON encoding: one
 * `{ "resourceMetrics": [...] }` object, or one per line (what the Collector's file exporter
 * writes). Each histogram data point gives a series: `explicitBounds`, per-bucket `bucketCounts`
 * (numbers, or strings as the encoding writes 64-bit integers), `count`, and the window it covers
 * from `startTimeUnixNano` to `timeUnixNano`. Other metric types are skipped; an exponential
 * histogram is reported, since its buckets are not read.
 */
import {
  bucketProblem,
  type Bucket,
  type HistogramSeries,
  type Problem,
  type ReadExport,
} from "./histogram.js";
import { describeLabels } from "./prometheus.js";

type Json = unknown;

const isObject = (v: Json): v is Record<string, Json> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const list = (v: Json): Json[] => (Array.isArray(v) ? v : []);

/** A 64-bit count as OTLP JSON writes it: a number or a decimal string. */
function count(v: Json): number | undefined {
  if (typeof v === "number") return Number.isInteger(v) && v >= 0 ? v : undefined;
  if (typeof v === "string" && /^\d+$/.test(v)) return Number(v);
  return undefined;
}

function nanos(v: Json): bigint | undefined {
  if (typeof v === "number" && Number.isInteger(v) && v >= 0) return BigInt(v);
  if (typeof v === "string" && /^\d+$/.test(v)) return BigInt(v);
  return undefined;
}

/** An attribute's value as text: strings as they are, numbers and booleans written out. */
function attributeValue(v: Json): string | undefined {
  if (!isObject(v)) return undefined;
  if (typeof v["stringValue"] === "string") return v["stringValue"];
  if (typeof v["boolValue"] === "boolean") return String(v["boolValue"]);
  const int = v["intValue"];
  if (typeof int === "string" || typeof int === "number") return String(int);
  if (typeof v["doubleValue"] === "number") return String(v["doubleValue"]);
  return undefined;
}

/** The JSON values of the export: the whole text, else one per non-empty line. */
function documents(text: string): Json[] | string {
  try {
    return [JSON.parse(text) as Json];
  } catch (whole) {
    const lines = text.split(/\r?\n/).filter((l) => l.trim() !== "");
    if (lines.length < 2) return (whole as Error).message;
    const out: Json[] = [];
    for (let i = 0; i < lines.length; i++) {
      try {
        out.push(JSON.parse(lines[i]!) as Json);
      } catch (error) {
        return `line ${i + 1}: ${(error as Error).message}`;
      }
    }
    return out;
  }
}

/** Reads the histograms of an OTLP JSON metrics export; `file` names it in messages. */
export function readOtlp(text: string, file: string): ReadExport {
  const problems: Problem[] = [];
  const series: HistogramSeries[] = [];
  const docs = documents(text);
  if (typeof docs === "string") {
    problems.push({ severity: "error", where: file, message: `is not OTLP JSON: ${docs}` });
    return { format: "otlp", series, problems };
  }
  for (const [d, doc] of docs.entries()) {
    if (!isObject(doc) || !Array.isArray(doc["resourceMetrics"])) {
      problems.push({
        severity: "error",
        where: file,
        message: `${docs.length > 1 ? `line ${d + 1} ` : ""}is not an OTLP metrics export: it has no "resourceMetrics" list`,
      });
      continue;
    }
    for (const resource of list(doc["resourceMetrics"])) {
      const replica = isObject(resource) ? replicaOf(resource["resource"]) : undefined;
      for (const scope of isObject(resource) ? list(resource["scopeMetrics"]) : [])
        for (const metric of isObject(scope) ? list(scope["metrics"]) : []) {
          if (!isObject(metric) || typeof metric["name"] !== "string") continue;
          const name = metric["name"];
          if (isObject(metric["exponentialHistogram"])) {
            problems.push({
              severity: "warning",
              where: file,
              message: `metric "${name}" is an exponential histogram, which tune does not read: export explicit-bucket histograms`,
            });
            continue;
          }
          const histogram = metric["histogram"];
          if (!isObject(histogram)) continue;
          const unit =
            typeof metric["unit"] === "string" && metric["unit"] !== ""
              ? metric["unit"]
              : undefined;
          for (const [p, point] of list(histogram["dataPoints"]).entries()) {
            const where = `${file}: metric "${name}", data point ${p + 1}`;
            const read = readPoint(point);
            if (typeof read === "string") {
              problems.push({ severity: "error", where, message: read });
              continue;
            }
            const problem = bucketProblem(read.buckets);
            if (problem !== undefined) {
              problems.push({
                severity: "error",
                where,
                message: `${name}${describeLabels(read.labels)} ${problem}`,
              });
              continue;
            }
            series.push({
              metric: name,
              unit,
              where,
              ...read,
              ...(replica === undefined ? {} : { replica }),
            });
          }
        }
    }
  }
  return { format: "otlp", series: latestReports(series), problems };
}

/**
 * The replica a resource stands for: its `service.instance.id`, which OpenTelemetry makes unique
 * per process, else all its attributes; undefined for a resource without attributes.
 */
function replicaOf(resource: Json): string | undefined {
  const attributes: [string, string][] = [];
  for (const a of isObject(resource) ? list(resource["attributes"]) : []) {
    if (!isObject(a) || typeof a["key"] !== "string") continue;
    const value = attributeValue(a["value"]);
    if (value !== undefined) attributes.push([a["key"], value]);
  }
  const instance = attributes.find(([k]) => k === "service.instance.id");
  if (instance !== undefined) return `service.instance.id=${instance[1]}`;
  if (attributes.length === 0) return undefined;
  return attributes
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
}

/**
 * One report per series and start time: a file the Collector appends an export to every
 * interval holds the same cumulative series again and again, each report counting everything
 * since the same start, so only the latest counts. Reports with other start times (delta
 * temporality, a restart) or of other replicas are other observations, added up by tune.
 */
function latestReports(series: readonly HistogramSeries[]): HistogramSeries[] {
  const latest = new Map<string, HistogramSeries>();
  const order: string[] = [];
  for (const s of series) {
    if (s.window === undefined) {
      order.push(`#${String(order.length)}`);
      latest.set(order[order.length - 1]!, s);
      continue;
    }
    const key = JSON.stringify([
      s.metric,
      s.replica ?? "",
      String(s.window.start),
      Object.entries(s.labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    ]);
    const seen = latest.get(key);
    if (seen === undefined) order.push(key);
    if (seen === undefined || seen.window!.end < s.window.end) latest.set(key, s);
  }
  return order.map((key) => latest.get(key)!);
}

function readPoint(
  point: Json,
): Pick<HistogramSeries, "labels" | "buckets" | "count" | "window"> | string {
  if (!isObject(point)) return "is not an object";
  const labels: Record<string, string> = {};
  for (const a of list(point["attributes"])) {
    if (!isObject(a) || typeof a["key"] !== "string") continue;
    const value = attributeValue(a["value"]);
    if (value !== undefined) labels[a["key"]] = value;
  }
  const bounds = list(point["explicitBounds"]);
  const counts = list(point["bucketCounts"]);
  if (bounds.some((b) => typeof b !== "number" || !Number.isFinite(b)))
    return "has an explicitBounds entry that is not a finite number";
  const perBucket = counts.map(count);
  if (perBucket.some((c) => c === undefined))
    return "has a bucketCounts entry that is not a whole number, 0 or more";
  if (counts.length !== bounds.length + 1)
    return `has ${counts.length} bucketCounts for ${bounds.length} explicitBounds; there is one more count than bounds (the last bucket is +Inf)`;
  const buckets: Bucket[] = [];
  let cumulative = 0;
  for (let i = 0; i < perBucket.length; i++) {
    cumulative += perBucket[i]!;
    buckets.push({ le: i < bounds.length ? (bounds[i] as number) : Infinity, count: cumulative });
  }
  for (let i = 1; i < bounds.length; i++)
    if ((bounds[i] as number) <= (bounds[i - 1] as number))
      return `has explicitBounds that do not increase (${String(bounds[i - 1])}, then ${String(bounds[i])})`;
  const total = count(point["count"]);
  if (total !== undefined && total !== cumulative)
    return `has count ${total} but its bucketCounts add up to ${cumulative}`;
  const start = nanos(point["startTimeUnixNano"]);
  const end = nanos(point["timeUnixNano"]);
  return {
    labels,
    buckets,
    count: cumulative,
    ...(start !== undefined && end !== undefined && end > start && start > 0n
      ? { window: { start, end } }
      : {}),
  };
}
