/**
 * Retry plans that hurt the dependency they are meant to spare: retries without jitter arrive as
 * a herd, and retries without a budget multiply the load of an outage (see the AWS Architecture
 * Blog, "Exponential Backoff And Jitter", and gRPC A6 retry throttling).
 */
import { formatMs } from "../language/durations.js";
import type { ResolvedOperation, ResolvedPolicy } from "../model/resolved.js";
import { DEFAULTS } from "../model/normalize.js";
import { finding, inherited, num, setAt, type AnalyzeContext, type Finding } from "./context.js";

/** Clients assumed to fail together when the policy declares no rate (the checkout service's pool of 200 in docs/performance.md). */
export const HERD_WITHOUT_RPS = 200;

/**
 * 4xx statuses that describe the request: sending it again gets the same answer, so the runtime
 * never retries them and never counts them against the breaker or the budget, whatever
 * `retry.on` says (templates/runtime/errors.ts, describesRequest; docs/policy.md, "Retry").
 * 408, 425 and 429 describe the server's state and may be retried.
 */
export const REQUEST_STATUSES: ReadonlySet<number> = new Set([
  400, 401, 403, 404, 405, 409, 410, 422,
]);

export function checkRetry(policy: ResolvedPolicy, ctx: AnalyzeContext): Finding[] {
  const out: Finding[] = [];
  const herd = Math.ceil(policy.latency.rps ?? HERD_WITHOUT_RPS);
  for (const op of policy.operations) {
    // checked on every declared retry, as below: a request-describing 4xx in retry.on is wrong wherever it applies
    if (op.retry) out.push(...requestStatuses(policy, op, ctx));
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
          [
            { ref: baseSet ?? capSet },
            { ref: setAt(op.provenance["retry"]), key: true },
            { ref: op.source, key: true },
          ],
          `retry.backoff.base ${formatMs(b.baseMs)}${baseSet ? "" : " (the default)"} must be at most retry.backoff.cap ${formatMs(b.capMs)}${capSet ? "" : " (the default)"}: every delay would be cut to the cap, so the backoff never grows`,
          `lower base to ${formatMs(b.capMs)} or less, or raise cap to ${formatMs(b.baseMs)} or more`,
          op,
        ),
      );
    }
    const retry = op.plan.retry;
    if (!retry || retry.backoff.jitter !== "none") continue;
    const window = retry.backoff.baseMs;
    out.push(
      finding(
        ctx,
        policy,
        "RG206",
        [
          { ref: setAt(op.provenance["retry.backoff.jitter"]) },
          { ref: setAt(op.provenance["retry"]), key: true },
          { ref: op.source, key: true },
        ],
        `retry backoff has \`jitter: none\`: calls that fail together retry together, ${herd} of them within the same millisecond after ${formatMs(window)}${inherited(ctx, "retry", op.provenance["retry"])}`,
        `use \`jitter: full\`: it spreads those ${herd} retries over the 0–${formatMs(window)} backoff window (about ${num(herd / Math.max(1, window))} per ms) instead of one spike`,
        op,
      ),
    );
  }

  if (policy.budget === null && policy.provenance["retry.budget"]?.origin === "absent") {
    const retrying = policy.operations.filter((op) => op.plan.kind === "retry");
    const worst = retrying.reduce((m, op) => Math.max(m, op.plan.attempts), 1);
    const first = retrying.find((op) => op.plan.attempts === worst);
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
          [
            { ref: setAt(first.provenance["retry"]), key: true },
            { ref: first.source, key: true },
          ],
          `retries without a budget: in a total outage every call makes ${worst} attempts, ${worst}× the load${load} on a dependency that is already down${inherited(ctx, "retry", first.provenance["retry"])}`,
          `add \`budget: { maxTokens: ${DEFAULTS.budget.maxTokens}, tokenRatio: ${DEFAULTS.budget.tokenRatio} }\` under retry: then ${calls} failing calls make at most ${calls} + ${half} + 1 = ${calls + half + 1} attempts instead of ${calls * worst} (gRPC A6 throttling); \`budget: false\` says no budget on purpose`,
        ),
      );
    }
  }
  return out;
}

/** RG225: each entry of `retry.on` that is a 4xx describing the request, at the entry as written. */
function requestStatuses(
  policy: ResolvedPolicy,
  op: ResolvedOperation,
  ctx: AnalyzeContext,
): Finding[] {
  const provenance = op.provenance["retry.on"];
  const list = setAt(provenance);
  if (!list || !op.retry) return [];
  const written = ctx.valueAt?.(list);
  // the entries as written (so the finding points at the entry); the resolved list when the file is not at hand
  const entries: [number | undefined, unknown][] = Array.isArray(written)
    ? written.map((v, i) => [i, v])
    : op.retry.on.map((v) => [undefined, v]);
  const out: Finding[] = [];
  for (const [i, status] of entries) {
    if (typeof status !== "number" || !REQUEST_STATUSES.has(status)) continue;
    out.push(
      finding(
        ctx,
        policy,
        "RG225",
        [
          ...(i === undefined ? [] : [{ ref: { file: list.file, path: [...list.path, i] } }]),
          { ref: list },
          { ref: op.source, key: true },
        ],
        `retry.on lists ${status}, which describes the request: sending it again gets the same ${status}, so it is never retried and never counts against the breaker or the budget${inherited(ctx, "retry", provenance)}`,
        `remove ${status} from retry.on; of the 4xx statuses only 408, 425 and 429 (the server's state, not the request's) are worth retrying`,
        op,
      ),
    );
  }
  return out;
}
