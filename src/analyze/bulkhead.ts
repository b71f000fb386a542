/**
 * Bulkhead size against Little's law (in flight = arrival rate × time in system): below
 * rps × p99 it rejects healthy traffic at peak; above rps × attempt timeout × 2 it never limits
 * anything, even when every call hangs until its timeout. With no bulkhead and nothing to derive
 * one from, nothing bounds the calls in flight (RG224; docs/policy.md, "Derived defaults").
 */
import { formatMs } from "../language/durations.js";
import type { ResolvedPolicy } from "../model/resolved.js";
import {
  finding,
  inherited,
  inPolicy,
  num,
  sectionRef,
  setAt,
  type AnalyzeContext,
  type Finding,
} from "./context.js";

/** No bulkhead, none derived, and not turned off with `bulkhead: false`: nothing bounds the calls in flight. */
function unbounded(policy: ResolvedPolicy, ctx: AnalyzeContext): Finding[] {
  if (policy.bulkhead || policy.provenance["bulkhead"]?.origin !== "absent") return [];
  const l = policy.latency;
  const declared = Object.keys(l).length > 0;
  const missing = [
    ...(l.rps === undefined ? ["rps"] : []),
    ...(l.p99Ms === undefined && l.p999Ms === undefined ? ["p99 (or p999)"] : []),
  ].join(" and ");
  return [
    finding(
      ctx,
      policy,
      "RG224",
      [{ ref: inPolicy(policy, "dependency") }],
      declared
        ? `no bulkhead, and latency declares no ${missing} to derive one by Little's law: nothing bounds the calls in flight, so when ${policy.dependency} is slow its calls can hold every socket and request of the service`
        : `neither latency nor a bulkhead: nothing bounds the calls in flight, so when ${policy.dependency} is slow its calls can hold every socket and request of the service`,
      `declare the measured \`latency: { p99, rps }\` (a bulkhead of rps × p99 × 2 is then derived), or a \`bulkhead: { maxConcurrent }\`; \`bulkhead: false\` says no bulkhead on purpose`,
    ),
  ];
}

export function checkBulkhead(policy: ResolvedPolicy, ctx: AnalyzeContext): Finding[] {
  const b = policy.bulkhead;
  const { rps, p99Ms } = policy.latency;
  if (!b) return unbounded(policy, ctx);
  if (rps === undefined) return [];
  const from = inherited(ctx, "bulkhead", policy.provenance["bulkhead"]);
  const provenance = policy.provenance["bulkhead.maxConcurrent"];
  // a derived size points at the section it was derived from (`latency:`)
  const at = [
    { ref: setAt(provenance) },
    { ref: provenance?.origin === "derived" ? provenance.source : undefined, key: true },
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
          `bulkhead maxConcurrent ${n} is below rps × p99 = ${num(rps)} × ${formatMs(p99Ms)} = ${num(healthy)} calls in flight when healthy: it rejects healthy traffic at peak${from}`,
          `Little's law: size it at about rps × p99 × 2 = ${Math.ceil(healthy * 2)}`,
        ),
      ];
    }
  }
  const slowest = policy.operations.reduce((m, op) => Math.max(m, op.timeout.attemptMs), 0);
  const ceiling = rps * (slowest / 1000) * 2;
  // a derived size is rps × p99 × 2 or more by construction: above the ceiling only through its floor of 10
  // or an attempt timeout under p99 (RG208 reports that), so it is not reported here
  if (slowest > 0 && n > ceiling && provenance?.origin !== "derived") {
    return [
      finding(
        ctx,
        policy,
        "RG214",
        at,
        `bulkhead maxConcurrent ${n} is above rps × attempt timeout × 2 = ${num(rps)} × ${formatMs(slowest)} × 2 = ${num(ceiling)}: even with every call hanging until its timeout it never fills, so it limits nothing${from}`,
        p99Ms !== undefined
          ? `Little's law: size it at about rps × p99 × 2 = ${Math.ceil(rps * (p99Ms / 1000) * 2)}`
          : `size it between rps × p99 and ${Math.floor(ceiling)}`,
      ),
    ];
  }
  return [];
}
