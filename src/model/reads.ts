/**
 * Which operations are retry-safe reads: the operations a stale fallback may answer and whose
 * identical in-flight calls may be coalesced (docs/runtime.md, "Fallback" and "Coalescing").
 */
import type { ResolvedOperation } from "./resolved.js";

/**
 * Whether `op` is a retry-safe read: an HTTP GET or HEAD that is retry-safe, or a function
 * operation asserted `idempotent: true` without an idempotency key (a key marks a write made
 * safe to repeat, not a read).
 */
export function isRetrySafeRead(
  op: {
    readonly method?: ResolvedOperation["method"] | undefined;
    readonly idempotency: ResolvedOperation["idempotency"];
    readonly plan: { readonly repeatable: boolean };
  },
  transport: "http" | "function",
): boolean {
  if (!op.plan.repeatable) return false;
  if (transport === "http") return op.method === "GET" || op.method === "HEAD";
  return (
    op.idempotency === "asserted" ||
    (op.idempotency === "method" && (op.method === "GET" || op.method === "HEAD"))
  );
}
