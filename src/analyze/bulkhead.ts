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

/**
 * The adaptive limit's bounds (docs/runtime.md, "Adaptive concurrency"), on the effective values:
 * a start outside [minLimit, maxLimit] (inherited from two layers) is clamped at once; a maxLimit
 * below rps × p99 rejects healthy traffic at peak however fast the dependency; a minLimit above
 * rps × attempt timeout × 2 never lets the limit fall to where it would limit anything.
 */
function checkAdaptive(policy: ResolvedPolicy, ctx: AnalyzeContext): Finding[] {
  const b = policy.bulkhead;
  const a = b ? b.adaptive : undefined;
  if (!b || a === undefined) return [];
  const p = policy.provenance;
  const at = (key: string) => [
    { ref: setAt(p[`bulkhead.adaptive.${key}`]) },
    { ref: sectionRef(policy, "bulkhead"), key: true },
  ];
  const start = b.maxConcurrent;
  if (start < a.minLimit || start > a.maxLimit) {
    const low = start < a.minLimit;
    return [
      finding(
        ctx,
        policy,
        "RG234",
        [
          { ref: setAt(p["bulkhead.maxConcurrent"]) },
          { ref: p["bulkhead.maxConcurrent"]?.source, key: true },
          ...at(low ? "minLimit" : "maxLimit"),
        ],
        `the adaptive limit starts at bulkhead.maxConcurrent ${start}, ${low ? "below" : "above"} adaptive.${low ? "minLimit" : "maxLimit"} ${low ? a.minLimit : a.maxLimit}: it is clamped to ${low ? a.minLimit : a.maxLimit} at once`,
        `declare maxConcurrent between ${a.minLimit} and ${a.maxLimit}, or widen the interval`,
      ),
    ];
  }
  const { rps, p99Ms } = policy.latency;
  if (rps === undefined) return [];
  if (p99Ms !== undefined) {
    const healthy = rps * (p99Ms / 1000);
    if (a.maxLimit < healthy) {
      return [
        finding(
          ctx,
          policy,
          "RG234",
          at("maxLimit"),
          `adaptive maxLimit ${a.maxLimit} is below rps × p99 = ${num(rps)} × ${formatMs(p99Ms)} = ${num(healthy)} calls in flight when healthy: however fast ${policy.dependency} answers, the limit rejects healthy traffic at peak`,
          `raise maxLimit to at least rps × p99 × 2 = ${Math.ceil(healthy * 2)}`,
        ),
      ];
    }
  }
  const slowest = policy.operations.reduce((m, op) => Math.max(m, op.timeout.attemptMs), 0);
  const ceiling = rps * (slowest / 1000) * 2;
  if (slowest > 0 && a.minLimit > ceiling) {
    return [
      finding(
        ctx,
        policy,
        "RG234",
        at("minLimit"),
        `adaptive minLimit ${a.minLimit} is above rps × attempt timeout × 2 = ${num(rps)} × ${formatMs(slowest)} × 2 = ${num(ceiling)}: even with every call hanging until its timeout the limit never falls to where it limits anything, so adapting changes nothing`,
        `lower minLimit below ${Math.floor(ceiling)} (1, the default, lets the limit follow the dependency all the way down)`,
      ),
    ];
  }
  return [];
}

export function checkBulkhead(policy: ResolvedPolicy, ctx: AnalyzeContext): Finding[] {
  const adaptive = checkAdaptive(policy, ctx);
  return adaptive.length > 0 ? adaptive : checkStatic(policy, ctx);
}

function checkStatic(policy: ResolvedPolicy, ctx: AnalyzeContext): Finding[] {
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
