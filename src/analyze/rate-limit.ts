/**
 * Rate limits against the quota they protect (docs/policy.md, "Rate limit"). Every attempt takes
 * a permit (retries and hedged copies too), so what reaches the server is at most the sum of the
 * limits that can be busy at once; what the callers ask for is the call rate × the attempts each
 * call may make. Either above the quota is a warning, with the arithmetic.
 */
import type { ResolvedOperation, ResolvedPolicy, ResolvedRateLimit } from "../model/resolved.js";
import {
  finding,
  inOperation,
  inPolicy,
  num,
  type AnalyzeContext,
  type Finding,
} from "./context.js";

/** Attempts one call of `op` may make: its retries, or its hedged copies. */
function attemptsOf(op: ResolvedOperation): number {
  return op.plan.kind === "single" ? 1 : op.plan.maxAttempts;
}

/** Permits per second the server accepts from this limit: its quota, else its rate. */
function capacity(limit: ResolvedRateLimit): {
  perSecond: number;
  text: string;
  what: string;
} {
  const q = limit.quota;
  return q === null || q.perSecond >= limit.rate.perSecond
    ? { perSecond: limit.rate.perSecond, text: limit.rate.text, what: "rateLimit.rate" }
    : { perSecond: q.perSecond, text: q.text, what: "rateLimit.quota" };
}

const perSecond = (n: number): string => `${num(n)}/s`;
/** `6000/min (100/s)`; a rate already per second as it is. */
const shown = (t: { text: string; perSecond: number }): string =>
  t.text.endsWith("/s") ? t.text : `${t.text} (${perSecond(t.perSecond)})`;

const fewer = (fit: number): string =>
  fit <= 1
    ? "no retries (the first attempts alone use the quota up)"
    : `maxAttempts ≤ ${String(fit)}`;

export function checkRateLimit(policy: ResolvedPolicy, ctx: AnalyzeContext): Finding[] {
  const out: Finding[] = [];
  const shared = policy.rateLimit;
  const own = policy.operations.filter(
    (op): op is ResolvedOperation & { rateLimit: ResolvedRateLimit } =>
      op.rateLimit !== undefined && op.rateLimit !== false,
  );
  // a limit faster than its own quota sends more than the server accepts
  const limits: { limit: ResolvedRateLimit; op?: ResolvedOperation }[] = [
    ...(shared === undefined ? [] : [{ limit: shared }]),
    ...own.map((op) => ({ limit: op.rateLimit, op })),
  ];
  for (const { limit, op } of limits) {
    const q = limit.quota;
    if (q === null || limit.rate.perSecond <= q.perSecond) continue;
    out.push(
      finding(
        ctx,
        policy,
        "RG230",
        [{ ref: { file: limit.source.file, path: [...limit.source.path, "rate"] } }],
        `rateLimit.rate ${shown(limit.rate)} is over its quota ${shown(q)}: the client sends more than the server accepts, and the excess comes back as 429`,
        `lower rate to ${q.text} or less`,
        op,
      ),
    );
  }
  // operations with their own limit add to the dependency's: together they can all be busy
  if (shared !== undefined && own.length > 0) {
    // the server's quota, when declared, is what they must fit together
    const q = shared.quota;
    const cap =
      q === null
        ? { perSecond: shared.rate.perSecond, text: shared.rate.text, what: "rateLimit.rate" }
        : { perSecond: q.perSecond, text: q.text, what: "rateLimit.quota" };
    const total = own.reduce((sum, op) => sum + op.rateLimit.rate.perSecond, shared.rate.perSecond);
    if (total > cap.perSecond) {
      const terms = [shared.rate.text, ...own.map((op) => `${op.name} ${op.rateLimit.rate.text}`)];
      out.push(
        finding(
          ctx,
          policy,
          "RG230",
          [{ ref: inPolicy(policy, "rateLimit", shared.quota === null ? "rate" : "quota") }],
          `the operations' own rate limits add to the dependency's: ${terms.join(" + ")} = ${perSecond(total)} offered at most, over ${cap.what} ${shown(cap)}`,
          `an operation's rateLimit replaces the dependency's for that operation, so the limits add up: keep their sum within ${cap.text}, or declare the server's real quota as rateLimit.quota`,
        ),
      );
    }
  }
  // a hedge never waits for a permit, and one from Redis costs a round trip: it would never go
  for (const op of policy.operations) {
    const limit = op.rateLimit === undefined ? shared : op.rateLimit;
    if (op.plan.kind !== "hedge" || limit === undefined || limit === false) continue;
    if (limit.store !== "redis") continue;
    out.push(
      finding(
        ctx,
        policy,
        "RG233",
        [
          { ref: inOperation(policy, op, "hedge") },
          { ref: { file: limit.source.file, path: [...limit.source.path, "store"] } },
        ],
        `${op.name} hedges under a rate limit kept in Redis: a hedged copy goes only with a permit free at once, and a permit from Redis takes a round trip, so the runtime never sends its hedges`,
        `give ${op.name} its own rateLimit with store: memory (a share of the quota), or rateLimit: false, or retry instead of hedging`,
        op,
      ),
    );
  }
  // worst-case demand: every call retried (or hedged) to the last attempt. latency.rps is what
  // one replica sees (docs/tune.md, "Several replicas"): a limit in memory is each replica's
  // own, so one replica's demand meets it; a limit kept in Redis is the whole fleet's, so every
  // replica's demand meets it together
  const perReplica = policy.latency.rps;
  const fleet = shared?.store === "redis" ? (shared.replicas ?? 1) : 1;
  const rps = perReplica === undefined ? undefined : perReplica * fleet;
  if (perReplica !== undefined && rps !== undefined && shared !== undefined) {
    const sharing = policy.operations.filter((op) => op.rateLimit === undefined);
    const worst = sharing.reduce<ResolvedOperation | undefined>(
      (m, op) => (m === undefined || attemptsOf(op) > attemptsOf(m) ? op : m),
      undefined,
    );
    if (worst !== undefined) {
      const attempts = attemptsOf(worst);
      const cap = capacity(shared);
      const offered = rps * attempts;
      if (offered > cap.perSecond) {
        const how =
          worst.plan.kind === "hedge"
            ? `${String(attempts)} hedged copies (${worst.name})`
            : attempts === 1
              ? "1 attempt"
              : `${String(attempts)} attempts (${worst.name}, retry.maxAttempts)`;
        const lost = offered - cap.perSecond;
        out.push(
          finding(
            ctx,
            policy,
            "RG230",
            [
              {
                ref:
                  attempts === 1
                    ? inOperation(policy, worst)
                    : inOperation(policy, worst, worst.plan.kind === "hedge" ? "hedge" : "retry"),
              },
              { ref: inPolicy(policy, "retry", "maxAttempts") },
              { ref: inPolicy(policy, "rateLimit", "rate") },
            ],
            `worst-case offered load: latency.rps ${num(perReplica)}/s${fleet > 1 ? ` × ${String(fleet)} replicas (rateLimit.replicas: the limit kept in Redis is the fleet's)` : ""} × ${how} = ${perSecond(offered)}, over ${cap.what} ${shown(cap)}: when attempts fail, retries take the permits first attempts need, and up to ${perSecond(lost)} of the attempts are turned away as rate-limited`,
            attempts > 1
              ? `every attempt takes a permit: ${fewer(Math.floor(cap.perSecond / rps))}, a retry budget, or a quota that covers rps × attempts`
              : `the callers ask for more than the limit allows even without retries: raise the limit to the server's quota or shed load before the call`,
          ),
        );
      }
    }
  }
  return out;
}
