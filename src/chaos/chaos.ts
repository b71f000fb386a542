/**
 * `resgen chaos`: fault drills. Each policy given is checked by the same pipeline as `resgen
 * check`; then every operation (or the one `--operation` names) goes through the five drills of
 * drills.ts, each on a fresh stack and server, one after another. What each drill measured is
 * held against the policy's own promises, as explain computes them: every call within the total
 * timeout, and the load within the outage bound of the retry or hedge budget.
 */
import { check, type CheckResult } from "../program/check.js";
import { countBySeverity, exitCode } from "../diagnostics/diagnostic.js";
import { attemptBound } from "../explain/explain.js";
import type { ResolvedOperation, ResolvedPolicy } from "../model/resolved.js";
import { DEFAULT_CALLS, DEFAULT_RPS, planDrills, type Drill } from "./drills.js";
import { runDrill, type Measured } from "./run.js";

export const DEFAULT_SEED = 1;

export interface ChaosOptions {
  readonly cwd: string;
  readonly operation?: string;
  readonly calls?: number;
  readonly seed?: number;
  readonly allowOutsideProject?: boolean;
}

/** One promise of the policy, held against one drill. */
export interface Promised {
  readonly holds: boolean;
  /** What was measured, in the promise's unit (ms for time, × for load). */
  readonly measured: number;
  readonly limit: number;
  /** How the limit is reached, in words. */
  readonly basis: string;
}

export interface DrillResult {
  readonly drill: Drill;
  readonly measured: Measured;
  readonly time: Promised;
  readonly load: Promised;
}

export interface ChaosOperation {
  readonly operation: ResolvedOperation;
  readonly drills: readonly DrillResult[];
}

export interface ChaosPolicy {
  readonly policy: ResolvedPolicy;
  readonly rps: number;
  readonly operations: readonly ChaosOperation[];
}

export interface ChaosResult {
  readonly checked: CheckResult;
  readonly policies: readonly ChaosPolicy[];
  readonly seed: number;
  readonly calls: number;
  /** Why nothing was drilled, for a usage error (an operation no policy has). */
  readonly refusal?: string;
  /** 0 every promise held, 1 a policy has errors or a promise broke, 2 usage or I/O. */
  readonly exit: 0 | 1 | 2;
}

/** Checks the policies, then drills them; never throws for a bad input, only for a stalled drill. */
export async function chaos(paths: readonly string[], options: ChaosOptions): Promise<ChaosResult> {
  const seed = options.seed ?? DEFAULT_SEED;
  const calls = options.calls ?? DEFAULT_CALLS;
  const checked = await check(paths, {
    cwd: options.cwd,
    allowOutsideProject: options.allowOutsideProject === true,
  });
  const base = { checked, seed, calls };
  if (checked.unmatched.length > 0 || countBySeverity(checked.diagnostics).errors > 0)
    return {
      ...base,
      policies: [],
      exit:
        checked.unmatched.length > 0 ? 2 : (Math.max(1, exitCode(checked.diagnostics)) as 1 | 2),
    };
  const name = options.operation;
  if (
    name !== undefined &&
    !checked.policies.some((p) => p.operations.some((o) => o.name === name))
  )
    return {
      ...base,
      policies: [],
      refusal: `no policy given has an operation "${name}"`,
      exit: 2,
    };
  const policies: ChaosPolicy[] = [];
  for (const policy of checked.policies) {
    const operations: ChaosOperation[] = [];
    for (const operation of policy.operations) {
      if (name !== undefined && operation.name !== name) continue;
      const drills: DrillResult[] = [];
      for (const drill of planDrills(policy, operation, { calls, seed })) {
        const measured = await runDrill(policy, operation, drill, seed);
        drills.push({ drill, measured, ...promises(operation, measured) });
      }
      operations.push({ operation, drills });
    }
    if (operations.length > 0)
      policies.push({ policy, rps: policy.latency.rps ?? DEFAULT_RPS, operations });
  }
  return { ...base, policies, exit: brokePromise(policies) ? 1 : 0 };
}

/** Whether a drill of `policies` broke one of its policy's promises: then the command exits 1. */
export function brokePromise(policies: readonly ChaosPolicy[]): boolean {
  return policies.some((p) =>
    p.operations.some((o) => o.drills.some((d) => !d.time.holds || !d.load.holds)),
  );
}

/**
 * The policy's promises against what a drill measured: no call takes longer than the total
 * timeout (the deadline every call is given), and the requests that reached the dependency stay
 * within explain's bound for this many calls, with the tokens the drill's successful attempts
 * earned back; without a budget, within every call making all its attempts.
 */
export function promises(
  op: ResolvedOperation,
  measured: Measured,
): { time: Promised; load: Promised } {
  const slowest = measured.latencies[measured.latencies.length - 1] ?? 0;
  const total = op.timeout.totalMs;
  const bound = attemptBound(op.plan, measured.calls, measured.successfulAttempts);
  const limit = bound.withBudget ?? bound.without;
  const calls = Math.max(1, measured.calls);
  return {
    time: {
      holds: slowest <= total,
      measured: slowest,
      limit: total,
      basis: "timeout.total",
    },
    load: {
      holds: measured.requests <= limit,
      measured: measured.requests / calls,
      limit: limit / calls,
      basis:
        bound.formula ??
        `no budget: ${String(measured.calls)} calls × ${String(op.plan.attempts)} attempts = ${String(bound.without)}`,
    },
  };
}
