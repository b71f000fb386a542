/**
 * The text `resgen tune` prints: per policy what was observed (each quantile with the bucket it
 * fell in), the diff of its text, the derived values before and after; then the problems with the
 * export, and the analyzer's findings on the tuned policies. Ordered by policy file, then
 * operation as the policy declares them, so the output of one input is always the same.
 */
import { format } from "../diagnostics/format.js";
import { formatMs } from "../language/durations.js";
import type { QuantileEstimate } from "./quantile.js";
import { QUANTILES, roundedMs, roundedRps, type Observed, type TuneResult } from "./tune.js";

const ms = (seconds: number): string => formatMs(Math.round(seconds * 1e6) / 1e3);

function estimate(key: string, e: QuantileEstimate): string {
  if (e.unbounded) return `${key} ≥ ${ms(e.lower)} (above the highest bucket)`;
  return `${key} ${formatMs(roundedMs(e))} (${ms(e.lower)}–${ms(e.upper)})`;
}

function observedLine(o: Observed, withP90: boolean): string {
  const parts = QUANTILES.filter(([k]) => withP90 || k !== "p90").flatMap(([k]) => {
    const e = o.quantiles[k];
    return e ? [estimate(k, e)] : [];
  });
  if (o.rps !== undefined) parts.push(`rps ${roundedRps(o.rps)}${rpsShown(o)}`);
  return parts.join(", ");
}

/** How many replicas the observations came from, where there are several. */
function replicasShown(o: Observed): string {
  if (o.replicas === 1 && o.replicasGiven !== true) return "";
  const n = `${String(o.replicas)} replica${o.replicas === 1 ? "" : "s"}`;
  return ` from ${n}${o.replicasGiven === true ? " (--replicas)" : ""}`;
}

/** What rps is: one replica's or the fleet's, where the two differ. */
function rpsShown(o: Observed): string {
  if (o.fleetRps === undefined || o.rps === undefined || o.replicas === 1) return "";
  return o.rps === o.fleetRps
    ? ` for the fleet of ${String(o.replicas)}`
    : ` per replica (${String(roundedRps(o.fleetRps))} for the fleet of ${String(o.replicas)})`;
}

const ORIGIN: Readonly<Record<string, string>> = {
  derived: "derived",
  policy: "set in the policy",
  operation: "set on the operation",
  project: "set in the project defaults",
  default: "built-in default",
  absent: "none",
};

/** The report of a tune run, as text. */
export function renderTune(
  result: TuneResult,
  options: { color: boolean; write: boolean },
): string {
  const out: string[] = [];
  if (result.policies.some((p) => p.observed))
    out.push(
      "quantiles are interpolated inside histogram buckets: each true value lies between the bucket bounds shown",
      "",
    );
  const exportErrors = result.problems.some((p) => p.severity === "error");
  for (const p of result.policies) {
    const o = p.observed;
    const withP90 = p.values.p90 !== undefined || /\bp90\s*:/.test(p.text);
    out.push(
      `${p.dependency} (${p.file}): ${o ? `${o.samples} successful observation${o.samples === 1 ? "" : "s"}${replicasShown(o)}` : `no data${exportErrors ? " (the export's errors are below)" : ""}`}`,
    );
    if (o) out.push(`  observed: ${observedLine(o, withP90)}`);
    if (p.operations.length > 0) {
      out.push("  by operation (shown only: latency is set for the whole dependency):");
      const width = Math.max(...p.operations.map((op) => op.name.length));
      for (const op of p.operations)
        out.push(`    ${op.name.padEnd(width)}  ${op.samples} obs.  ${observedLine(op, withP90)}`);
    }
    if (p.diff === "") out.push("  latency unchanged");
    else
      out.push(
        ...p.diff
          .trimEnd()
          .split("\n")
          .map((l) => `  ${l}`),
      );
    const changes = p.derived;
    if (changes.length > 0) {
      out.push("  derived values, before → after:");
      const names = changes.map((c) =>
        c.operation === undefined ? c.key : `${c.operation} ${c.key}`,
      );
      const width = Math.max(...names.map((n) => n.length));
      const values = changes.map((c) =>
        c.before === c.after ? c.after : `${c.before} → ${c.after}`,
      );
      const valueWidth = Math.max(...values.map((v) => v.length));
      changes.forEach((c, i) => {
        const why =
          c.origin === "derived" && c.formula !== undefined
            ? `derived: ${c.formula}`
            : (ORIGIN[c.origin] ?? c.origin);
        out.push(`    ${names[i]!.padEnd(width)}  ${values[i]!.padEnd(valueWidth)}  ${why}`);
      });
    }
    out.push("");
  }
  for (const problem of result.problems)
    out.push(
      `${problem.where === undefined ? "" : `${problem.where}: `}${problem.severity}: ${problem.message}`,
    );
  if (result.problems.length > 0) out.push("");
  let text = out.join("\n");
  const checked = result.tunedCheck ?? result.committed;
  if (checked.diagnostics.length > 0) {
    if (result.tunedCheck) text += "the analyzer on the tuned policies:\n";
    text += format("pretty", checked.diagnostics, checked.sources, { color: options.color });
  } else if (result.tunedCheck) text += "the analyzer finds nothing in the tuned policies\n";
  return text;
}
