/**
 * The open periods of a breaker with open-duration backoff (docs/policy.md, "Breaker"): the
 * first opening lasts `openFor` (the base), the n-th reopening in a row after a failed trial
 * min(cap, base × multiplier^n); closing starts again from the base. The runtime computes the
 * same (templates/runtime/breaker.ts, `nextOpenForMs`); `explain` and the analyzer show it.
 */
import { formatMs } from "../language/durations.js";
import type { ResolvedBreaker } from "./resolved.js";

/** The open periods in milliseconds, up to and including the first that reaches the cap. */
export function openPeriods(b: ResolvedBreaker, limit = 12): number[] {
  const backoff = b.openBackoff;
  if (backoff === undefined) return [b.openForMs];
  const out: number[] = [];
  for (let n = 0; n < limit; n++) {
    const period = Math.min(backoff.capMs, b.openForMs * backoff.multiplier ** n);
    out.push(period);
    if (period >= backoff.capMs || backoff.multiplier === 1) break;
  }
  return out;
}

/** The sequence as text: "5s, 10s, 20s, 40s … 5m" (every period, then the cap repeated). */
export function openPeriodsText(b: ResolvedBreaker): string {
  const periods = openPeriods(b);
  const shown = periods.map(formatMs);
  const last = periods[periods.length - 1]!;
  if (b.openBackoff === undefined || b.openBackoff.multiplier === 1) return shown.join(", ");
  return last >= b.openBackoff.capMs
    ? `${shown.slice(0, -1).join(", ")}${periods.length > 1 ? " … " : ""}${formatMs(last)}, then ${formatMs(last)} until a trial succeeds`
    : `${shown.join(", ")} …`;
}
