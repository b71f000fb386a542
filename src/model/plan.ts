/**
 * An operation's effective plan: whether it is attempted once, retried or hedged, and why; how
 * many attempts one call makes, its worst case in time, its budget, whether it may be repeated
 * and the settings the runtime is given. It is computed once, when the policy is resolved
 * (src/model/normalize.ts), and everything that describes or runs the operation reads it:
 * the analyzer, `check`'s summary, `explain`, the targets, the generated JSDoc and the runtime
 * settings the client is emitted with (docs/runtime.md, "Retry").
 */
import { formatMs } from "../language/durations.js";
import type {
  ErrorCondition,
  ResultCondition,
  IdempotencyBasis,
  Jitter,
  ResolvedBudget,
  ResolvedHedge,
  ResolvedRetry,
} from "./resolved.js";
import {
  backoffCeilings,
  hedgeWorstCaseMs,
  retryWorstCaseMs,
} from "../../templates/runtime/worst-case.js";

/** The backoff ceilings come from the runtime, which checks reconfigurations with the same sums. */
export { backoffCeilings };

/**
 * Why an operation is attempted once: no retry or hedge is declared; the retry allows one
 * attempt (`maxAttempts: 1`, which is a single attempt, not a retry); or the operation is not
 * repeatable, so what is declared is not run.
 */
export type SingleReason = "none declared" | "maxAttempts 1" | "not repeatable";

/** What runs, in short: the part of the plan `explain --format json` shows. */
export type AttemptPlan =
  | { readonly kind: "single"; readonly why: SingleReason }
  | { readonly kind: "retry"; readonly maxAttempts: number; readonly jitter: Jitter }
  | { readonly kind: "hedge"; readonly maxAttempts: number; readonly delayMs: number };

/** The budget that bounds the extra attempts of a plan: the dependency's retry budget, or the hedge budget. */
export type PlanBudget =
  | ({ readonly kind: "retry" } & ResolvedBudget)
  /** At most `ratio` of calls send hedged copies. */
  | { readonly kind: "hedge"; readonly ratio: number };

/** Every attempt at its timeout and every backoff at its cap. */
export interface WorstCase {
  readonly ms: number;
  /** The sum in words: "3 attempts × 500ms + backoff 50ms + 100ms = 1650ms". */
  readonly formula: string;
}

/**
 * What the generated client gives the runtime for this operation (templates/runtime/operation.ts,
 * OperationSettings): the emitter writes these as they are.
 */
export interface RuntimePlan {
  /** Whether the runtime may send the operation more than once; emitted as `repeatable`. */
  readonly repeatable: boolean;
  /**
   * The retry as declared, also when the plan attempts once: its `on` still says which failures
   * are transient (a hedge launches its next copy on one). Null when none is declared.
   */
  readonly retry: ResolvedRetry | null;
  /** The hedge, only when the plan hedges (a hedge on an operation that is not repeatable never runs). */
  readonly hedge: ResolvedHedge | null;
}

interface PlanCommon {
  /** Most attempts one logical call makes: 1, the retry's or the hedge's maxAttempts. */
  readonly attempts: number;
  /** Whether repeating the call is safe (docs/policy.md, "Operations"); `idempotency` says why. */
  readonly repeatable: boolean;
  readonly idempotency: IdempotencyBasis;
  /** The largest backoff before each retry (retry plans; empty otherwise). */
  readonly backoffCeilings: readonly number[];
  readonly worstCase: WorstCase;
  /** Attempts (or hedged copies) that can run to their timeout within the total timeout. */
  readonly attemptsWithinTotal: number;
  /** What bounds the extra attempts; null for a single attempt, or a retry without a budget. */
  readonly budget: PlanBudget | null;
  /** The plan in words, the same wherever it is shown ({@link describePlan}). */
  readonly description: string;
  /** What a retry plan retries, in words ({@link describeRetryOn}); null for other plans. */
  readonly retriedOn: string | null;
  readonly runtime: RuntimePlan;
}

/** The effective plan of one operation; read it rather than the operation's declared `retry` and `hedge`. */
export type OperationPlan =
  | (PlanCommon & {
      readonly kind: "single";
      readonly why: SingleReason;
      readonly retry: null;
      readonly hedge: null;
    })
  | (PlanCommon & {
      readonly kind: "retry";
      readonly maxAttempts: number;
      readonly jitter: Jitter;
      readonly retry: ResolvedRetry;
      readonly hedge: null;
    })
  | (PlanCommon & {
      readonly kind: "hedge";
      readonly maxAttempts: number;
      readonly delayMs: number;
      readonly retry: null;
      readonly hedge: ResolvedHedge;
    });

/** What decides the plan of an operation: its repeatability and its declared layers. */
export interface PlanInputs {
  readonly repeatable: boolean;
  readonly idempotency: IdempotencyBasis;
  readonly retry: ResolvedRetry | null;
  readonly hedge: ResolvedHedge | null;
  readonly budget: ResolvedBudget | null;
}

/**
 * What runs, from the declared layers: a hedge wins over a retry (declaring both is RG203), a
 * retry of one attempt is a single attempt, and nothing is repeated on an operation that is not
 * repeatable.
 */
export function attemptPlan(
  repeatable: boolean,
  retry: ResolvedRetry | null,
  hedge: ResolvedHedge | null,
): AttemptPlan {
  if ((retry || hedge) && !repeatable) return { kind: "single", why: "not repeatable" };
  if (hedge) return { kind: "hedge", maxAttempts: hedge.maxAttempts, delayMs: hedge.delayMs };
  if (retry && retry.maxAttempts > 1)
    return { kind: "retry", maxAttempts: retry.maxAttempts, jitter: retry.backoff.jitter };
  return { kind: "single", why: retry ? "maxAttempts 1" : "none declared" };
}

/** The effective plan of an operation whose attempt and total timeouts are `timeout`. */
export function planOperation(
  inputs: PlanInputs,
  timeout: { readonly attemptMs: number; readonly totalMs: number },
): OperationPlan {
  const { attemptMs, totalMs } = timeout;
  const what = attemptPlan(inputs.repeatable, inputs.retry, inputs.hedge);
  const common = {
    repeatable: inputs.repeatable,
    idempotency: inputs.idempotency,
    description: describePlan(what),
    runtime: {
      repeatable: inputs.repeatable,
      retry: inputs.retry,
      hedge: what.kind === "hedge" ? inputs.hedge : null,
    },
  };
  switch (what.kind) {
    case "retry": {
      const retry = inputs.retry!;
      const delays = backoffCeilings(retry.backoff, retry.maxAttempts - 1);
      const ms = retryWorstCaseMs(attemptMs, retry.maxAttempts, retry.backoff);
      return {
        ...what,
        ...common,
        retry,
        hedge: null,
        attempts: retry.maxAttempts,
        backoffCeilings: delays,
        worstCase: {
          ms,
          formula: `${retry.maxAttempts} attempts × ${formatMs(attemptMs)} + backoff ${delays.map(formatMs).join(" + ")} = ${formatMs(ms)}`,
        },
        attemptsWithinTotal: attemptsWithin(totalMs, attemptMs, delays, retry.maxAttempts),
        budget: inputs.budget ? { kind: "retry", ...inputs.budget } : null,
        retriedOn: describeRetryOn(retry),
      };
    }
    case "hedge": {
      const hedge = inputs.hedge!;
      const ms = hedgeWorstCaseMs(attemptMs, hedge.maxAttempts, hedge.delayMs);
      return {
        ...what,
        ...common,
        retry: null,
        hedge,
        attempts: hedge.maxAttempts,
        backoffCeilings: [],
        worstCase: {
          ms,
          formula: `hedge delay ${formatMs(hedge.delayMs)} × ${hedge.maxAttempts - 1} + attempt ${formatMs(attemptMs)} = ${formatMs(ms)}`,
        },
        attemptsWithinTotal: hedgesWithin(totalMs, attemptMs, hedge.delayMs, hedge.maxAttempts),
        budget: { kind: "hedge", ratio: hedge.budget },
        retriedOn: null,
      };
    }
    case "single":
      return {
        ...what,
        ...common,
        retry: null,
        hedge: null,
        attempts: 1,
        backoffCeilings: [],
        worstCase: { ms: attemptMs, formula: `one attempt = ${formatMs(attemptMs)}` },
        attemptsWithinTotal: attemptMs <= totalMs ? 1 : 0,
        budget: null,
        retriedOn: null,
      };
  }
}

/** The worst case of the plan these inputs make, for deriving the total timeout from it. */
export function planWorstCase(inputs: PlanInputs, attemptMs: number): WorstCase {
  return planOperation(inputs, { attemptMs, totalMs: Number.POSITIVE_INFINITY }).worstCase;
}

/** The short form of a plan: what runs, without its arithmetic. */
export function attemptPlanOf(plan: OperationPlan): AttemptPlan {
  switch (plan.kind) {
    case "retry":
      return { kind: "retry", maxAttempts: plan.maxAttempts, jitter: plan.jitter };
    case "hedge":
      return { kind: "hedge", maxAttempts: plan.maxAttempts, delayMs: plan.delayMs };
    case "single":
      return { kind: "single", why: plan.why };
  }
}

/** The plan in words, the same wherever it is shown: "up to 3 attempts (full jitter)". */
export function describePlan(plan: AttemptPlan): string {
  switch (plan.kind) {
    case "retry":
      return `up to ${plan.maxAttempts} attempts (${plan.jitter} jitter)`;
    case "hedge":
      return `hedged: up to ${plan.maxAttempts} copies, ${plan.delayMs} ms apart`;
    case "single":
      // "retry-safe" is the policy language's word for a repeatable operation (docs/policy.md, "Operations")
      return plan.why === "none declared"
        ? "attempted once (no retry declared)"
        : plan.why === "maxAttempts 1"
          ? "attempted once (retry.maxAttempts: 1)"
          : "attempted once (not retry-safe)";
  }
}

/**
 * What a retry retries, in words: its outcomes and the thrown errors it names ("timeout, network,
 * 503, code ECONNRESET"). Anything else is not retried (docs/runtime.md, "What counts as transient").
 */
export function describeRetryOn(
  retry: Pick<ResolvedRetry, "on" | "errors"> & Partial<Pick<ResolvedRetry, "results">>,
): string {
  return [
    ...retry.on.map(String),
    ...retry.errors.map(describeCondition),
    ...(retry.results ?? []).map(describeResult),
  ].join(", ");
}

/** A body condition in words: "200 when $.status is \"pending\"". */
export function describeResult(condition: ResultCondition): string {
  return `${String(condition.status)} when ${condition.path} is ${JSON.stringify(condition.equals)}`;
}

function describeCondition(condition: ErrorCondition): string {
  return "code" in condition ? `code ${condition.code}` : `name ${condition.name}`;
}

/** How many attempts complete within `totalMs` when each one runs to its timeout. */
export function attemptsWithin(
  totalMs: number,
  attemptMs: number,
  delays: readonly number[],
  maxAttempts: number,
): number {
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
export function hedgesWithin(
  totalMs: number,
  attemptMs: number,
  delayMs: number,
  maxAttempts: number,
): number {
  let n = 0;
  for (let k = 1; k <= maxAttempts; k++) if ((k - 1) * delayMs + attemptMs <= totalMs) n = k;
  return n;
}
