/**
 * An operation's attempt plan: whether it is attempted once, retried or hedged, and why. It is
 * computed once, when the policy is resolved, and everything that describes or runs the
 * operation reads it: `check`'s summary, `explain`, the generated JSDoc and the runtime settings
 * the client is emitted with (docs/runtime.md, "Retry").
 */
import type { ErrorCondition, Jitter, ResolvedHedge, ResolvedOperation, ResolvedRetry } from "./resolved.js";

export type AttemptPlan =
  /**
   * One attempt. `why`: no retry or hedge is declared; the retry allows one attempt
   * (`maxAttempts: 1`); or the operation is not retry-safe, so what is declared is not run.
   */
  | { readonly kind: "single"; readonly why: "none declared" | "maxAttempts 1" | "not retry-safe" }
  | { readonly kind: "retry"; readonly maxAttempts: number; readonly jitter: Jitter }
  | { readonly kind: "hedge"; readonly maxAttempts: number; readonly delayMs: number };

/** The plan of an operation with these layers. A hedge wins over a retry (declaring both is RG203). */
export function attemptPlan(retrySafe: boolean, retry: ResolvedRetry | null, hedge: ResolvedHedge | null): AttemptPlan {
  if ((retry || hedge) && !retrySafe) return { kind: "single", why: "not retry-safe" };
  if (hedge) return { kind: "hedge", maxAttempts: hedge.maxAttempts, delayMs: hedge.delayMs };
  if (retry && retry.maxAttempts > 1) return { kind: "retry", maxAttempts: retry.maxAttempts, jitter: retry.backoff.jitter };
  return { kind: "single", why: retry ? "maxAttempts 1" : "none declared" };
}

/** The plan in words, the same wherever it is shown: "up to 3 attempts (full jitter)". */
export function describePlan(plan: AttemptPlan): string {
  switch (plan.kind) {
    case "retry":
      return `up to ${plan.maxAttempts} attempts (${plan.jitter} jitter)`;
    case "hedge":
      return `hedged: up to ${plan.maxAttempts} copies, ${plan.delayMs} ms apart`;
    case "single":
      return plan.why === "none declared" ? "attempted once (no retry declared)" : plan.why === "maxAttempts 1" ? "attempted once (retry.maxAttempts: 1)" : "attempted once (not retry-safe)";
  }
}

/**
 * What a retry retries, in words: its outcomes and the thrown errors it names ("timeout, network,
 * 503, code ECONNRESET"). Anything else is not retried (docs/runtime.md, "What counts as transient").
 */
export function describeRetryOn(retry: Pick<ResolvedRetry, "on" | "errors">): string {
  return [...retry.on.map(String), ...retry.errors.map(describeCondition)].join(", ");
}

function describeCondition(condition: ErrorCondition): string {
  return "code" in condition ? `code ${condition.code}` : `name ${condition.name}`;
}

/** The retry plan an operation really runs: none when it is not retry-safe or makes one attempt. */
export function effectiveRetry(op: ResolvedOperation) {
  return op.retrySafe && op.retry && op.retry.maxAttempts > 1 ? op.retry : null;
}

/** The hedge an operation really runs: none when it is not retry-safe. */
export function effectiveHedge(op: ResolvedOperation) {
  return op.retrySafe ? op.hedge : null;
}

/** Most attempts one logical call of `op` can make. */
export function attemptsOf(op: ResolvedOperation): number {
  const retry = effectiveRetry(op);
  const hedge = effectiveHedge(op);
  return Math.max(1, retry?.maxAttempts ?? 1, hedge?.maxAttempts ?? 1);
}

/** How many attempts complete within `totalMs` when each one runs to its timeout. */
export function attemptsWithin(totalMs: number, attemptMs: number, delays: readonly number[], maxAttempts: number): number {
  let elapsed = 0;
  let n = 0;
  for (let i = 0; i < maxAttempts; i++) {
    elapsed += (i > 0 ? (delays[i - 1] ?? 0) : 0) + attemptMs;
    if (elapsed > totalMs) break;
    n++;
  }
  return n;
}

/** How many hedged copies, launched `delayMs` apart, can run to their timeout within `totalMs`. */
export function hedgesWithin(totalMs: number, attemptMs: number, delayMs: number, maxAttempts: number): number {
  let n = 0;
  for (let k = 1; k <= maxAttempts; k++) if ((k - 1) * delayMs + attemptMs <= totalMs) n = k;
  return n;
}
