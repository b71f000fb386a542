/**
 * What `resgen chaos` prints: per operation, what each drill does, one row per drill of what the
 * stack did, and whether the policy's promises held. Every figure is in virtual time, so the
 * same seed prints the same bytes.
 */
import { formatMs } from "../language/durations.js";
import type { ResolvedOperation } from "../model/resolved.js";
import {
  judge,
  type ChaosOperation,
  type ChaosPolicy,
  type ChaosResult,
  type Judged,
} from "./chaos.js";
import type { DrillResult } from "./chaos.js";
import type { Measured } from "./run.js";

const COLUMNS = [
  "drill",
  "calls",
  "ok",
  "fallback",
  "failed",
  "shed",
  "attempts/call",
  "p50",
  "p95",
  "p99",
  "max",
  "budget",
  "load",
  "bound",
  "promises",
  "breaker",
] as const;
/** Left-aligned columns; the rest are numbers, aligned right. */
const LEFT: ReadonlySet<string> = new Set(["drill", "promises", "breaker"]);

export function renderChaosText(result: ChaosResult): string {
  const out: string[] = [];
  out.push(
    `${String(result.calls)} calls a drill (flapping: enough to fill the breaker's window), seed ${String(result.seed)}; times are virtual`,
  );
  for (const p of result.policies) out.push("", ...renderPolicy(p));
  out.push("", summary(result));
  return out.join("\n") + "\n";
}

function renderPolicy(p: ChaosPolicy): string[] {
  const out = [`${p.policy.dependency} (${p.policy.file}): ${String(p.rps)} rps`];
  const kept = inRedis(p);
  if (kept.length > 0)
    out.push(
      `  ${kept.join(" and ")} kept in Redis: drilled in a memory store on the drill's clock, no Redis needed or touched`,
    );
  for (const o of p.operations) out.push(...renderOperation(p, o));
  return out;
}

/** What the drilled operations of `p` keep in Redis (`store: redis`), in words. */
function inRedis(p: ChaosPolicy): string[] {
  const limit = p.operations.some((o) => {
    const own = o.operation.rateLimit;
    const limit = own === undefined ? p.policy.rateLimit : own;
    return limit !== undefined && limit !== false && limit.store === "redis";
  });
  const stale = p.operations.some(
    (o) => o.operation.fallback?.kind === "stale" && o.operation.fallback.store === "redis",
  );
  return [...(limit ? ["the rate limit"] : []), ...(stale ? ["the stale cache"] : [])];
}

/** A drill with its verdicts, judged from its observations at the moment they are printed. */
interface Shown extends Judged {
  readonly drill: DrillResult["drill"];
  readonly measured: DrillResult["measured"];
}

function renderOperation(p: ChaosPolicy, o: ChaosOperation): string[] {
  const op = o.operation;
  const out = [`  ${op.name}: ${describe(op)}`];
  const width = Math.max(...o.drills.map((d) => d.drill.name.length));
  for (const d of o.drills) out.push(`    ${d.drill.name.padEnd(width)}  ${d.drill.description}`);
  const shown = o.drills.map((d): Shown => ({ ...d, ...judge(p.policy, op, d.measured) }));
  const rows = [COLUMNS.map(String), ...shown.map(row)];
  out.push(...table(rows).map((line) => `    ${line}`));
  out.push(...verdicts(op, shown).map((line) => `    ${line}`));
  return out;
}

function describe(op: ResolvedOperation): string {
  const parts = [
    `attempt ${formatMs(op.timeout.attemptMs)}`,
    `total ${formatMs(op.timeout.totalMs)}`,
    op.plan.description,
  ];
  if (op.fallback) parts.push(`fallback ${op.fallback.kind}`);
  return parts.join(" · ");
}

function row(d: Shown): string[] {
  const m = d.measured;
  const shed = m.rejected.breaker + m.rejected.bulkhead + m.rejected.rateLimit;
  return [
    d.drill.name,
    String(m.calls),
    String(m.outcomes.success),
    String(m.outcomes.fallback),
    String(m.outcomes.failure),
    String(shed),
    `${(m.attempts.total / Math.max(1, m.calls)).toFixed(2)} (max ${String(m.attempts.max)})`,
    ms(quantile(m.latencies, 0.5)),
    ms(quantile(m.latencies, 0.95)),
    ms(quantile(m.latencies, 0.99)),
    ms(d.time.measured),
    budget(m),
    times(d.load.measured),
    times(d.load.limit),
    d.pass ? "PASS" : `FAIL ${broken(d).join(", ")}`,
    transitions(m),
  ];
}

/** The names of what a drill broke: its promises, and `observations` when they disagree. */
function broken(d: Judged): string[] {
  const out: string[] = [];
  if (d.inconsistencies.length > 0) out.push("observations");
  if (!d.time.holds) out.push("time");
  if (!d.load.holds) out.push("load");
  if (d.limit !== null && !d.limit.holds) out.push("limit");
  return out;
}

/**
 * The promises of the operation over all its drills: the worst of each, and where; the rate limit
 * kept in a store when there is one; and what any drill observed that contradicts itself.
 */
function verdicts(op: ResolvedOperation, drills: readonly Shown[]): string[] {
  const slowest = drills.reduce((a, b) => (b.time.measured > a.time.measured ? b : a));
  const heaviest = drills.reduce((a, b) =>
    b.load.measured / b.load.limit > a.load.measured / a.load.limit ? b : a,
  );
  const brokenTime = drills.filter((d) => !d.time.holds).map((d) => d.drill.name);
  const brokenLoad = drills.filter((d) => !d.load.holds).map((d) => d.drill.name);
  const out = [
    `${brokenTime.length === 0 ? "PASS" : "FAIL"}  every call within the total ${formatMs(op.timeout.totalMs)}: slowest ${ms(slowest.time.measured)} (${slowest.drill.name})${brokenTime.length > 0 ? `; over it in ${brokenTime.join(", ")}` : ""}`,
    `${brokenLoad.length === 0 ? "PASS" : "FAIL"}  load within the budget's bound: ${times(heaviest.load.measured)} of ${times(heaviest.load.limit)} (${heaviest.drill.name}: ${String(heaviest.measured.requests)} requests for ${String(heaviest.measured.calls)} calls; ${heaviest.load.basis})${brokenLoad.length > 0 ? `; over it in ${brokenLoad.join(", ")}` : ""}`,
  ];
  const limited = drills.filter((d) => d.limit !== null);
  if (limited.length > 0) {
    const steps = limited.reduce((n, d) => n + d.measured.limitSteps.length, 0);
    const wrong = limited.filter((d) => !d.limit!.holds);
    out.push(
      wrong.length === 0
        ? `PASS  the rate limit kept in the store answered as ${limited[0]!.limit!.basis.replace(/: .*$/, "")}: ${String(steps)} steps`
        : `FAIL  the rate limit kept in the store answered otherwise than ${wrong[0]!.limit!.basis.replace(/: .*$/, "")}: ${wrong.map((d) => `${d.drill.name} (${d.limit!.basis.replace(/^.*: /, "")})`).join(", ")}`,
    );
  }
  for (const d of drills)
    if (d.inconsistencies.length > 0)
      out.push(
        `FAIL  the ${d.drill.name} drill's observations disagree: ${d.inconsistencies.join("; ")}`,
      );
  return out;
}

function summary(result: ChaosResult): string {
  let drills = 0;
  let broken = 0;
  for (const p of result.policies)
    for (const o of p.operations)
      for (const d of o.drills) {
        drills++;
        if (!judge(p.policy, o.operation, d.measured).pass) broken++;
      }
  const operations = result.policies.reduce((n, p) => n + p.operations.length, 0);
  return broken === 0
    ? `${String(drills)} drills of ${String(operations)} operation${operations === 1 ? "" : "s"}: every promise held`
    : `${String(drills)} drills of ${String(operations)} operation${operations === 1 ? "" : "s"}: ${String(broken)} broke a promise`;
}

function transitions(m: Measured): string {
  if (m.transitions.length === 0) return "closed";
  return m.transitions.map((t) => `${t.to} ${seconds(t.atMs)}`).join(", ");
}

function budget(m: Measured): string {
  if (m.budget === null) return "-";
  const refused = m.rejected.budget > 0 ? ` (${String(m.rejected.budget)} refused)` : "";
  return `${tokens(m.budget.start)}→${tokens(m.budget.min)}${refused}`;
}

/** Nearest-rank quantile of sorted values. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1]!;
}

function ms(value: number): string {
  return `${String(Math.round(value))}ms`;
}

function seconds(value: number): string {
  return `${(value / 1000).toFixed(2)}s`;
}

function times(value: number): string {
  return `${value.toFixed(2)}×`;
}

function tokens(value: number): string {
  return String(Math.round(value * 10) / 10);
}

function table(rows: readonly (readonly string[])[]): string[] {
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows.map((r) =>
    r
      .map((cell, i) => {
        const last = i === r.length - 1;
        if (LEFT.has(COLUMNS[i]!)) return last ? cell : cell.padEnd(widths[i]!);
        return cell.padStart(widths[i]!);
      })
      .join("  ")
      .trimEnd(),
  );
}

/** The result as JSON: every figure of the text, and the latencies' quantiles. */
export function renderChaosJson(result: ChaosResult): string {
  return (
    JSON.stringify(
      {
        seed: result.seed,
        calls: result.calls,
        exit: result.exit,
        policies: result.policies.map((p) => ({
          dependency: p.policy.dependency,
          file: p.policy.file,
          rps: p.rps,
          operations: p.operations.map((o) => ({
            name: o.operation.name,
            drills: o.drills.map((d) => {
              const { latencies, limitSteps, ...measured } = d.measured;
              const judged = judge(p.policy, o.operation, d.measured);
              return {
                name: d.drill.name,
                description: d.drill.description,
                ...measured,
                latencyMs: {
                  p50: quantile(latencies, 0.5),
                  p95: quantile(latencies, 0.95),
                  p99: quantile(latencies, 0.99),
                  max: quantile(latencies, 1),
                },
                limitSteps: limitSteps.length,
                promises: {
                  pass: judged.pass,
                  time: judged.time,
                  load: judged.load,
                  ...(judged.limit === null ? {} : { limit: judged.limit }),
                  inconsistencies: judged.inconsistencies,
                },
              };
            }),
          })),
        })),
      },
      null,
      2,
    ) + "\n"
  );
}
