/**
 * Timeouts against each other and against measured latency: an attempt that cannot fit in the
 * total, a retry plan whose worst case overruns the deadline, an attempt timeout that cuts healthy
 * calls or holds callers far longer than any healthy call takes.
 */
import { formatMs } from "../language/durations.js";
import type { ResolvedOperation, ResolvedPolicy } from "../model/resolved.js";
import { RANGES } from "../language/schema.js";
import {
  derivedFrom,
  finding,
  inherited,
  inPolicy,
  isEnabled,
  setAt,
  type AnalyzeContext,
  type Finding,
  type Place,
} from "./context.js";

/** Candidate places for the attempt timeout: where it was set, else the latency entries it was derived from, else the operation. */
function attemptPlaces(op: ResolvedOperation): Place[] {
  const p = op.provenance["timeout.attempt"];
  return [{ ref: setAt(p) }, ...derivedFrom(p), { ref: op.source, key: true }];
}

function totalPlaces(op: ResolvedOperation): Place[] {
  return [{ ref: setAt(op.provenance["timeout.total"]) }, { ref: op.source, key: true }];
}

/**
 * RG226: attempt timeouts that are resgen's built-in default (no p99 or p999 to derive them from,
 * none set), once for the policy when every operation has one, else at each operation that does.
 * `checks: { unmeasuredTimeouts: false }` in the project file turns it off (docs/policy.md).
 */
function unmeasuredTimeouts(policy: ResolvedPolicy, ctx: AnalyzeContext): Finding[] {
  if (!isEnabled(ctx, policy, "unmeasuredTimeouts")) return [];
  const unmeasured = policy.operations.filter(
    (op) => op.provenance["timeout.attempt"]?.origin === "default",
  );
  if (unmeasured.length === 0) return [];
  const why =
    "with no `latency` p99 or p999 to derive it from and no `timeout.attempt`, it is a guess, too short for a slow dependency and far too long for a fast one";
  const hint =
    "declare the measured `latency: { p99: … }` (the attempt timeout becomes 3 × p99) or set `timeout.attempt`; `checks: { unmeasuredTimeouts: false }` in resgen.config.yaml turns this warning off";
  if (unmeasured.length === policy.operations.length) {
    const ms = new Set(unmeasured.map((op) => op.timeout.attemptMs));
    const value = ms.size === 1 ? ` ${formatMs(unmeasured[0]!.timeout.attemptMs)}` : "";
    const subject =
      policy.operations.length === 1
        ? "the attempt timeout"
        : `the attempt timeout of every operation (${policy.operations.length})`;
    return [
      finding(
        ctx,
        policy,
        "RG226",
        [
          { ref: inPolicy(policy, "latency"), key: true },
          { ref: inPolicy(policy, "timeout"), key: true },
          { ref: inPolicy(policy, "dependency"), key: true },
        ],
        `${subject} is resgen's built-in default${value}, not a measurement: ${why}`,
        hint,
      ),
    ];
  }
  return unmeasured.map((op) =>
    finding(
      ctx,
      policy,
      "RG226",
      [{ ref: op.source, key: true }],
      `the attempt timeout is resgen's built-in default ${formatMs(op.timeout.attemptMs)}, not a measurement: ${why}`,
      hint,
      op,
    ),
  );
}

export function checkTimeouts(policy: ResolvedPolicy, ctx: AnalyzeContext): Finding[] {
  const out: Finding[] = unmeasuredTimeouts(policy, ctx);
  const { p99Ms, p999Ms } = policy.latency;
  for (const op of policy.operations) {
    const { attemptMs, totalMs } = op.timeout;
    const totalDerived = op.provenance["timeout.total"]?.origin === "derived";
    const plan = op.plan;
    const retry = plan.retry;
    const attempts = plan.attempts;
    // a retry (or hedge) inherited from the project defaults: say where it was turned on, and how to turn it off
    const planLayer = plan.kind === "single" ? undefined : plan.kind;
    const from = planLayer ? inherited(ctx, planLayer, op.provenance[planLayer]) : "";
    const turnOff =
      planLayer && from
        ? `; or \`${planLayer}: false\` in the policy turns the inherited ${planLayer} off`
        : "";
    // one attempt as long as the whole call is harmless; longer, or with retries to fit, it is not
    if (!totalDerived && (attemptMs > totalMs || (attemptMs === totalMs && attempts > 1))) {
      const explicitAttempt = setAt(op.provenance["timeout.attempt"]) !== undefined;
      out.push(
        finding(
          ctx,
          policy,
          "RG205",
          explicitAttempt ? attemptPlaces(op) : totalPlaces(op),
          `attempt timeout ${formatMs(attemptMs)}${explicitAttempt ? "" : " (derived)"} is not below the total timeout ${formatMs(totalMs)}: ${attempts > 1 ? `one slow attempt uses the whole deadline, so the other ${attempts - 1 === 1 ? "attempt" : `${attempts - 1} attempts`} can never run` : "the attempt timeout can never fire before the deadline"}${from}`,
          (p999Ms !== undefined && Math.ceil(1.5 * p999Ms) * attempts < totalMs
            ? `set timeout.attempt below timeout.total, e.g. 1.5 × p999 = ${formatMs(Math.ceil(1.5 * p999Ms))}`
            : `raise timeout.total above ${attempts} × ${formatMs(attemptMs)} = ${formatMs(attempts * attemptMs)} plus backoff, or lower timeout.attempt`) +
            turnOff,
          op,
        ),
      );
    } else {
      // a derived total is the worst case itself, unless it was capped at the longest total
      const { ms: worst, formula } = plan.worstCase;
      if (worst > totalMs) {
        const max = plan.attempts;
        const fit = plan.attemptsWithinTotal;
        out.push(
          finding(
            ctx,
            policy,
            "RG207",
            totalPlaces(op),
            `worst case ${formula} exceeds the total timeout ${formatMs(totalMs)}: when every attempt times out, only ${fit} of ${max} attempts ${fit === 1 ? "fits" : "fit"}${from}`,
            (worst <= RANGES.total.max
              ? `raise timeout.total to ${formatMs(worst)}, lower timeout.attempt, or set maxAttempts: ${Math.max(1, fit)}`
              : `lower timeout.attempt or set maxAttempts: ${Math.max(1, fit)} (timeout.total is at most ${formatMs(RANGES.total.max)})`) +
              turnOff,
            op,
          ),
        );
      }
    }

    // the margin is kept back from the call's whole time: at or above the total no attempt has any time
    const marginMs = policy.deadline.marginMs;
    if (marginMs >= totalMs) {
      const marginSet = setAt(policy.provenance["deadline.margin"]);
      out.push(
        finding(
          ctx,
          policy,
          "RG106",
          marginSet ? [{ ref: marginSet }] : totalPlaces(op),
          `deadline.margin ${formatMs(marginMs)}${marginSet ? "" : " (the default)"} must be below the total timeout ${formatMs(totalMs)}: the margin is kept back from the call's time, so no attempt would have any time left`,
          marginSet
            ? `lower deadline.margin below ${formatMs(totalMs)} (10ms is typical)`
            : `raise timeout.total above ${formatMs(marginMs)}, or lower deadline.margin`,
          op,
        ),
      );
    }

    if (p99Ms !== undefined && attemptMs < p99Ms) {
      out.push(
        finding(
          ctx,
          policy,
          "RG208",
          attemptPlaces(op),
          `attempt timeout ${formatMs(attemptMs)} is under p99 ${formatMs(p99Ms)}: more than 1% of healthy calls are cut off${retry ? " and retried, adding load exactly when the dependency is slow" : ""}`,
          p999Ms !== undefined
            ? `set timeout.attempt above p99, e.g. 1.5 × p999 = ${formatMs(Math.ceil(1.5 * p999Ms))} (the derived default)`
            : `set timeout.attempt above p99, e.g. 3 × p99 = ${formatMs(3 * p99Ms)} (the derived default)`,
          op,
        ),
      );
    } else if (p999Ms !== undefined && p999Ms > 0 && attemptMs > 5 * p999Ms) {
      out.push(
        finding(
          ctx,
          policy,
          "RG209",
          attemptPlaces(op),
          `attempt timeout ${formatMs(attemptMs)} is over 5 × p999 (5 × ${formatMs(p999Ms)} = ${formatMs(5 * p999Ms)}): a stuck call holds its caller ${Math.round(attemptMs / p999Ms)}× longer than the slowest healthy one`,
          `set timeout.attempt near 1.5 × p999 = ${formatMs(Math.ceil(1.5 * p999Ms))}`,
          op,
        ),
      );
    }

    const after = retry?.retryAfter;
    if (retry && after?.maxMs !== undefined && after.maxMs > totalMs) {
      out.push(
        finding(
          ctx,
          policy,
          "RG217",
          [{ ref: setAt(op.provenance["retry.retryAfter"]) }, { ref: op.source, key: true }],
          `retryAfter.max ${formatMs(after.maxMs)} is beyond the total timeout ${formatMs(totalMs)}: a Retry-After between ${formatMs(totalMs)} and ${formatMs(after.maxMs)} is accepted but can never be waited out`,
          `set retryAfter.max to at most ${formatMs(totalMs)} so longer waits give up at once, or use \`retryAfter: honor\` (the deadline bounds it)`,
          op,
        ),
      );
    }
  }
  return out;
}
