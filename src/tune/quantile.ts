/**
 * Quantiles from cumulative histogram buckets, as Prometheus' histogram_quantile computes them:
 * find the bucket the rank falls in and interpolate linearly inside it, assuming observations are
 * spread evenly between its bounds. That assumption is the resolution limit: the true quantile
 * lies somewhere in that bucket, so each estimate carries the bounds it fell between. A quantile
 * in the `+Inf` bucket has no upper bound; the highest finite bound is then only a floor.
 */
import type { Bucket } from "./histogram.js";

export interface QuantileEstimate {
  /** The quantile asked for, 0 < q < 1. */
  readonly q: number;
  /** The estimate, in the buckets' unit. */
  readonly value: number;
  /** The bounds of the bucket it fell in: the true quantile lies between them. */
  readonly lower: number;
  readonly upper: number;
  /** The rank fell in the `+Inf` bucket: `value` is the highest finite bound, a floor. */
  readonly unbounded: boolean;
}

/** The `q` quantile of cumulative `buckets` (the last one `+Inf`); undefined when they count nothing. */
export function quantile(q: number, buckets: readonly Bucket[]): QuantileEstimate | undefined {
  const total = buckets[buckets.length - 1]?.count ?? 0;
  if (total === 0) return undefined;
  const rank = q * total;
  const i = buckets.findIndex((b) => b.count >= rank);
  const bucket = buckets[i]!;
  if (bucket.le === Infinity) {
    const floor = buckets.length > 1 ? buckets[buckets.length - 2]!.le : 0;
    return { q, value: floor, lower: floor, upper: Infinity, unbounded: true };
  }
  const lower = i === 0 ? Math.min(0, bucket.le) : buckets[i - 1]!.le;
  const below = i === 0 ? 0 : buckets[i - 1]!.count;
  const inside = bucket.count - below;
  const value =
    i === 0 && bucket.le <= 0 ? bucket.le : lower + ((bucket.le - lower) * (rank - below)) / inside;
  return { q, value, lower, upper: bucket.le, unbounded: false };
}

/** Adds the counts of histograms with the same bounds, bucket by bucket. */
export function mergeBuckets(all: readonly (readonly Bucket[])[]): Bucket[] | undefined {
  const first = all[0];
  if (first === undefined) return [];
  if (all.some((b) => b.length !== first.length || b.some((x, i) => x.le !== first[i]!.le)))
    return undefined;
  return first.map((b, i) => ({ le: b.le, count: all.reduce((sum, x) => sum + x[i]!.count, 0) }));
}
