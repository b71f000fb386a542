/**
 * Retry plans that hurt the dependency they are meant to spare: retries without jitter arrive as
 * a herd, and retries without a budget multiply the load of an outage (see the AWS Architecture
 * Blog, "Exponential Backoff And Jitter", and gRPC A6 retry throttling).
 */
import { formatMs } from "../policy/durations.js";
import type { ResolvedPolicy } from "../policy/model.js";
import { DEFAULTS } from "../policy/normalize.js";
import { effectiveRetry, finding, inherited, num, setAt, type AnalyzeContext, type Finding } from "./context.js";

/** Clients assumed to fail together when the policy declares no rate (DESIGN §7's checkout pool). */
export const HERD_WITHOUT_RPS = 200;

export function checkRetry(policy: ResolvedPolicy, ctx: AnalyzeContext): Finding[] {
  const out: Finding[] = [];
  const herd = Math.ceil(policy.latency.rps ?? HERD_WITHOUT_RPS);
  for (const op of policy.operations) {
    // checked on every declared retry, also one an unsafe operation does not run: the values are wrong wherever they apply
    const b = op.retry?.backoff;
    if (op.retry && b && b.baseMs > b.capMs) {
      const baseSet = setAt(op.provenance["retry.backoff.base"]);
      const capSet = setAt(op.provenance["retry.backoff.cap"]);
      out.push(
        finding(
          ctx,
          policy,
          "RG106",
          [{ ref: baseSet ?? capSet }, { ref: setAt(op.provenance["retry"]), key: true }, { ref: op.source, key: true }],
          `retry.backoff.base ${formatMs(b.baseMs)}${baseSet ? "" : " (the default)"} must be at most retry.backoff.cap ${formatMs(b.capMs)}${capSet ? "" : " (the default)"}: every delay would be cut to the cap, so the backoff never grows`,
          `lower base to ${formatMs(b.capMs)} or less, or raise cap to ${formatMs(b.baseMs)} or more`,
          op,
        ),
      );
    }
    const retry = effectiveRetry(op);
    if (!retry || retry.backoff.jitter !== "none") continue;
    const window = retry.backoff.baseMs;
    out.push(
      finding(
        ctx,
        policy,
        "RG206",
        [{ ref: setAt(op.provenance["retry.backoff.jitter"]) }, { ref: setAt(op.provenance["retry"]), key: true }, { ref: op.source, key: true }],
        `retry backoff has \`jitter: none\`: calls that fail together retry together, ${herd} of them within the same millisecond after ${formatMs(window)}${inherited(ctx, "retry", op.provenance["retry"])}`,
        `use \`jitter: full\`: it spreads those ${herd} retries over the 0–${formatMs(window)} backoff window (about ${num(herd / Math.max(1, window))} per ms) instead of one spike`,
        op,
      ),
    );
  }

  if (policy.budget === null && policy.provenance["retry.budget"]?.origin === "default") {
    const retrying = policy.operations.filter((op) => effectiveRetry(op) !== null);
    const worst = retrying.reduce((m, op) => Math.max(m, effectiveRetry(op)!.maxAttempts), 1);
    const first = retrying.find((op) => effectiveRetry(op)!.maxAttempts === worst);
    if (first) {
      const rps = policy.latency.rps;
      const load = rps === undefined ? "" : ` (${num(rps)} rps become ${num(rps * worst)} rps)`;
      const calls = Math.ceil(rps ?? 100);
      const half = DEFAULTS.budget.maxTokens / 2;
      out.push(
        finding(
          ctx,
          policy,
          "RG210",
          [{ ref: setAt(first.provenance["retry"]), key: true }, { ref: first.source, key: true }],
          `retries without a budget: in a total outage every call makes ${worst} attempts, ${worst}× the load${load} on a dependency that is already down${inherited(ctx, "retry", first.provenance["retry"])}`,
          `add \`budget: { maxTokens: ${DEFAULTS.budget.maxTokens}, tokenRatio: ${DEFAULTS.budget.tokenRatio} }\` under retry: then ${calls} failing calls make at most ${calls} + ${half} + 1 = ${calls + half + 1} attempts instead of ${calls * worst} (gRPC A6 throttling); \`budget: false\` says no budget on purpose`,
        ),
      );
    }
  }
  return out;
}
