/**
 * Idempotency: which operations may be repeated, and by which layer. A repeated POST without a key
 * charges twice; a hedged one sends concurrent copies that the server must deduplicate.
 */
import type { ResolvedOperation, ResolvedPolicy } from "../model/resolved.js";
import { finding, inOperation, setAt, type AnalyzeContext, type Finding } from "./context.js";

const ORIGIN_TEXT = {
  operation: "the operation",
  policy: "the policy",
  project: "the project defaults",
  derived: "a derived default",
  default: "a built-in default",
  absent: "nowhere",
  override: "an overrides document",
} as const;

function kind(op: ResolvedOperation): string {
  if (op.method)
    return op.idempotency === "none" && op.method !== "POST" && op.method !== "PATCH"
      ? `${op.method} marked idempotent: false`
      : op.method;
  return "function call";
}

export function checkIdempotency(policy: ResolvedPolicy, ctx: AnalyzeContext): Finding[] {
  const out: Finding[] = [];
  for (const op of policy.operations) {
    // the layers as declared: a retry of one attempt repeats nothing (the plan says "maxAttempts 1")
    const retry = op.retry && op.retry.maxAttempts > 1 ? op.retry : null;
    const hedge = op.hedge;
    const layers = [
      ...(retry
        ? [{ name: "retry", attempts: retry.maxAttempts, provenance: op.provenance["retry"] }]
        : []),
      ...(hedge
        ? [{ name: "hedge", attempts: hedge.maxAttempts, provenance: op.provenance["hedge"] }]
        : []),
    ];
    const opKey = { ref: op.source, key: true };

    if (!op.plan.repeatable) {
      for (const layer of layers) {
        const origin = layer.provenance?.origin ?? "default";
        const where = setAt(layer.provenance);
        if (origin === "operation") {
          out.push(
            finding(
              ctx,
              policy,
              "RG201",
              [{ ref: where, key: true }, opKey],
              `${layer.name} (maxAttempts ${layer.attempts}) is set on a ${kind(op)} that is not idempotent and has no idempotency key: up to ${layer.attempts} executions of one call`,
              `add \`idempotency: { header: Idempotency-Key }\` (the server deduplicates by key), assert \`idempotent: true\` if repeating is harmless, or remove \`${layer.name}\``,
              op,
            ),
          );
        } else {
          out.push(
            finding(
              ctx,
              policy,
              "RG202",
              [{ ref: where, key: true }, opKey],
              `${layer.name} (maxAttempts ${layer.attempts}) inherited from ${ORIGIN_TEXT[origin]}${origin === "project" && where ? ` (${ctx.where?.(where) ?? where.file})` : ""} does not apply to this ${kind(op)} (not idempotent, no idempotency key): it will be attempted once`,
              `add \`idempotency: { header: Idempotency-Key }\` to make it retry-safe, or set \`${layer.name}: false\` on the operation to say so`,
              op,
            ),
          );
        }
      }
      continue;
    }

    if (hedge && op.idempotency === "key") {
      const where = setAt(op.provenance["hedge"]);
      out.push(
        finding(
          ctx,
          policy,
          "RG204",
          [{ ref: where, key: true }, opKey],
          `hedging sends up to ${hedge.maxAttempts} concurrent copies of a ${kind(op)} that is safe to repeat only through its idempotency key; servers reject or serialise concurrent requests with one key`,
          "hedge idempotent reads only: set `hedge: false` on this operation and let it retry sequentially",
          op,
        ),
      );
    } else if (hedge && retry) {
      const retrySet = setAt(op.provenance["retry"]);
      const hedgeSet = setAt(op.provenance["hedge"]);
      // point at whichever of the two the operation itself declares, else at the hedge
      const first =
        op.provenance["retry"]?.origin === "operation" &&
        op.provenance["hedge"]?.origin !== "operation"
          ? retrySet
          : hedgeSet;
      out.push(
        finding(
          ctx,
          policy,
          "RG203",
          [
            { ref: first, key: true },
            { ref: hedgeSet ?? retrySet, key: true },
            { ref: inOperation(policy, op), key: true },
          ],
          `both retry (maxAttempts ${retry.maxAttempts}) and hedge (maxAttempts ${hedge.maxAttempts}) apply: hedging replaces retries, and together they would make up to ${retry.maxAttempts * hedge.maxAttempts} attempts per call`,
          "keep one: `retry: false` on the operation to hedge it, or `hedge: false` to retry it",
          op,
        ),
      );
    }
  }
  return out;
}
