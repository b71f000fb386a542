/**
 * Bulkhead size against Little's law (in flight = arrival rate × time in system): below
 * rps × p99 it rejects healthy traffic at peak; above rps × attempt timeout × 2 it never limits
 * anything, even when every call hangs until its timeout.
 */
import { formatMs } from "../policy/durations.js";
import type { ResolvedPolicy } from "../policy/model.js";
import { finding, inPolicy, num, sectionRef, setAt, type AnalyzeContext, type Finding } from "./context.js";

export function checkBulkhead(policy: ResolvedPolicy, ctx: AnalyzeContext): Finding[] {
  const b = policy.bulkhead;
  const { rps, p99Ms } = policy.latency;
  if (!b || rps === undefined) return [];
  const provenance = policy.provenance["bulkhead.maxConcurrent"];
  const at = [
    { ref: setAt(provenance) },
    ...(provenance?.origin === "derived" ? [{ ref: inPolicy(policy, "latency") , key: true }] : []),
    { ref: sectionRef(policy, "bulkhead"), key: true },
  ];
  const n = b.maxConcurrent;
  if (p99Ms !== undefined) {
    const healthy = rps * (p99Ms / 1000);
    if (n < healthy) {
      return [
        finding(
          ctx,
          policy,
          "RG214",
          at,
          `bulkhead maxConcurrent ${n} is below rps × p99 = ${num(rps)} × ${formatMs(p99Ms)} = ${num(healthy)} calls in flight when healthy: it rejects healthy traffic at peak`,
          `Little's law: size it at about rps × p99 × 2 = ${Math.ceil(healthy * 2)}`,
        ),
      ];
    }
  }
  const slowest = policy.operations.reduce((m, op) => Math.max(m, op.timeout.attemptMs), 0);
  const ceiling = rps * (slowest / 1000) * 2;
  if (slowest > 0 && n > ceiling) {
    return [
      finding(
        ctx,
        policy,
        "RG214",
        at,
        `bulkhead maxConcurrent ${n} is above rps × attempt timeout × 2 = ${num(rps)} × ${formatMs(slowest)} × 2 = ${num(ceiling)}: even with every call hanging until its timeout it never fills, so it limits nothing`,
        p99Ms !== undefined ? `Little's law: size it at about rps × p99 × 2 = ${Math.ceil(rps * (p99Ms / 1000) * 2)}` : `size it between rps × p99 and ${Math.floor(ceiling)}`,
      ),
    ];
  }
  return [];
}
