/**
 * The model both export readers produce: histogram series with cumulative bucket counts, in the
 * unit the export declares (tune.ts converts the ones it reads to seconds), and the problems found
 * while reading them. A series knows where it
 * was read (`file:line`, or a JSON path), so every message about it can point there.
 */

/** One cumulative bucket: how many observations were at most `le` seconds. */
export interface Bucket {
  /** Upper bound in the series' unit; `Infinity` for the last bucket. */
  readonly le: number;
  /** Observations at most `le`, cumulative. */
  readonly count: number;
}

/** One histogram series of an export: one metric, one set of labels. */
export interface HistogramSeries {
  /** The metric as named in the export (`resilience_client_attempt_duration_seconds`). */
  readonly metric: string;
  /** Labels (Prometheus) or attributes (OpenTelemetry), by name as written. */
  readonly labels: Readonly<Record<string, string>>;
  /** Cumulative, sorted by bound, the last one `le: Infinity`. */
  readonly buckets: readonly Bucket[];
  /**
   * The unit of the bounds as the export declares it (`s`, `ms`, `seconds`), undefined when it
   * declares none; `conflict` when two declarations disagree (a `_seconds` name, a `# UNIT ms`).
   */
  readonly unit: string | undefined;
  readonly unitConflict?: string;
  /** Observations in all: the `+Inf` bucket. */
  readonly count: number;
  /** The period the counts cover, Unix nanoseconds, when the export says (OTLP start and end times). */
  readonly window?: { readonly start: bigint; readonly end: bigint };
  /** Where it was read: `file:line` or `file: metric "name", data point 3`. */
  readonly where: string;
  /**
   * Which replica's export it came from, within its file: the exposition of a concatenated
   * Prometheus file (`2`), or an OTLP resource's `service.instance.id` (else all its
   * attributes). Undefined where the file holds one.
   */
  readonly replica?: string;
  /** The input it was read from, by its place among the `--from` files (tune.ts sets it). */
  readonly source?: number;
}

/** A problem with an input: an error stops `tune` (nothing is written), a warning does not. */
export interface Problem {
  readonly severity: "error" | "warning";
  readonly message: string;
  /** `file:line`, or the file, when the problem has a place. */
  readonly where?: string;
}

/** What a reader made of an export. */
export interface ReadExport {
  readonly format: "prometheus" | "otlp";
  readonly series: readonly HistogramSeries[];
  readonly problems: readonly Problem[];
}

/** Multipliers from a unit as exports write it to seconds; undefined for a unit that is not a time. */
export function secondsPer(unit: string): number | undefined {
  switch (unit) {
    case "s":
    case "seconds":
      return 1;
    case "ms":
    case "milliseconds":
      return 1e-3;
    case "us":
    case "µs":
    case "microseconds":
      return 1e-6;
    default:
      return undefined;
  }
}

/**
 * Checks cumulative buckets read from an export: bounds strictly increasing, counts never
 * decreasing, the last bound `+Inf`. Returns the problem, or undefined when they are sound.
 */
export function bucketProblem(buckets: readonly Bucket[]): string | undefined {
  if (buckets.length === 0) return "has no buckets";
  for (let i = 1; i < buckets.length; i++) {
    const prev = buckets[i - 1]!;
    const b = buckets[i]!;
    if (b.le === prev.le) return `has the bucket le="${formatBound(b.le)}" twice`;
    if (b.count < prev.count)
      return `has bucket counts that decrease (le="${formatBound(prev.le)}" counts ${prev.count}, le="${formatBound(b.le)}" counts ${b.count}): cumulative buckets never do`;
  }
  if (buckets[buckets.length - 1]!.le !== Infinity)
    return 'has no le="+Inf" bucket, which every histogram ends with: the export is incomplete';
  return undefined;
}

/** A bound as Prometheus writes it. */
export function formatBound(le: number): string {
  return le === Infinity ? "+Inf" : String(le);
}
