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
import type { ResolvedOperation, ResolvedPolicy, ResolvedRateLimit } from "../model/resolved.js";
import { DEFAULT_CALLS, DEFAULT_RPS, planDrills, type Drill } from "./drills.js";
import { runDrill, type Measured } from "./run.js";
import { TtlMap } from "../../templates/runtime/index.js";
import { REFUND, TAKE } from "../../templates/runtime/shared-rate-limit.js";

export const DEFAULT_SEED = 1;

export interface ChaosOptions {
  readonly cwd: string;
  readonly operation?: string;
  readonly calls?: number;
  readonly seed?: number;
  readonly allowOutsideProject?: boolean;
  /** Runs one drill; {@link runDrill} unless a test gives its own observations. */
  readonly runDrill?: typeof runDrill;
}

/** One promise of the policy, held against one drill. */
export interface Promised {
  readonly holds: boolean;
  /** What was measured, in the promise's unit (ms for time, × for load, steps for the limit). */
  readonly measured: number;
  readonly limit: number;
  /** How the limit is reached, in words. */
  readonly basis: string;
}

/**
 * What one drill observed. Whether its promises held is never stored with it: it is computed
 * from these observations by {@link judge} wherever it is printed or decides the exit code, so
 * no verdict can disagree with what was measured.
 */
export interface DrillResult {
  readonly drill: Drill;
  readonly measured: Measured;
}

/** A drill's observations held against its policy's promises. */
export interface Judged {
  readonly time: Promised;
  readonly load: Promised;
  /** A rate limit kept in a store answered as the policy's rate; `null` without one. */
  readonly limit: Promised | null;
  /**
   * Observations that contradict one another (a call that never ended, a request no attempt
   * sent). Any one fails every promise of the drill: its figures prove nothing.
   */
  readonly inconsistencies: readonly string[];
  /** Every promise held and the observations agree. */
  readonly pass: boolean;
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
      const run = options.runDrill ?? runDrill;
      for (const drill of planDrills(policy, operation, { calls, seed }))
        drills.push({ drill, measured: await run(policy, operation, drill, seed) });
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
    p.operations.some((o) => o.drills.some((d) => !judge(p.policy, o.operation, d.measured).pass)),
  );
}

/**
 * A drill's observations against the policy's promises ({@link promises}), the rate limit kept
 * in a store ({@link limitPromise}) and one another ({@link inconsistencies}). A drill passes only
 * when every promise holds and nothing it observed contradicts anything else it observed.
 */
export function judge(policy: ResolvedPolicy, op: ResolvedOperation, measured: Measured): Judged {
  const { time, load } = promises(op, measured);
  const limit = limitPromise(rateLimitOf(policy, op), measured);
  const contradictions = inconsistencies(measured);
  const pass = contradictions.length === 0 && time.holds && load.holds && (limit?.holds ?? true);
  // observations that contradict one another support no promise
  const unproven = (p: Promised): Promised =>
    contradictions.length === 0 ? p : { ...p, holds: false };
  return {
    time: unproven(time),
    load: unproven(load),
    limit: limit === null ? null : unproven(limit),
    inconsistencies: contradictions,
    pass,
  };
}

/** The rate limit an operation's attempts take their permits from, if any. */
function rateLimitOf(policy: ResolvedPolicy, op: ResolvedOperation): ResolvedRateLimit | null {
  const limit = op.rateLimit === undefined ? policy.rateLimit : op.rateLimit;
  return limit === undefined || limit === false ? null : limit;
}

/**
 * What a drill observed that cannot all be true at once. Every call the drill made ends exactly
 * once, so the outcomes and the latencies each count the calls; a request reaches the
 * dependency only as an attempt the stack started, and an attempt succeeds only on a response.
 */
export function inconsistencies(m: Measured): string[] {
  const out: string[] = [];
  const ended = m.outcomes.success + m.outcomes.fallback + m.outcomes.failure;
  if (ended !== m.calls)
    out.push(`${String(ended)} call(s) ended (ok, fallback or failed) of ${String(m.calls)} made`);
  if (m.latencies.length !== m.calls)
    out.push(`${String(m.latencies.length)} call time(s) for ${String(m.calls)} calls`);
  if (m.latencies.some((t) => !Number.isFinite(t) || t < 0))
    out.push("a call's time is negative or not a number");
  if (m.requests > m.attempts.total)
    out.push(
      `${String(m.requests)} request(s) reached the dependency, but ${String(m.attempts.total)} attempt(s) started`,
    );
  if (m.successfulAttempts > m.requests)
    out.push(
      `${String(m.successfulAttempts)} attempt(s) succeeded, but ${String(m.requests)} request(s) reached the dependency`,
    );
  return out;
}

/** Slack for comparing waits in milliseconds, computed in microseconds on both sides. */
const WAIT_SLACK_MS = 0.001;

/**
 * A rate limit kept in a store (`store: redis`, which a drill keeps in a memory store on its own
 * clock) promises the policy's rate on the drill's clock: every answer the store gave is the one
 * the store's own steps (`TAKE`, `REFUND`) give at the policy's rate and burst, replayed on a fresh
 * map at the drill's time each step was taken at. A store on another clock (or one that forgets)
 * answered otherwise. `null` for a limit kept in memory (the runtime's limiter runs on the
 * drill's clock) or none.
 */
export function limitPromise(limit: ResolvedRateLimit | null, m: Measured): Promised | null {
  if (limit === null || limit.store !== "redis") return null;
  const intervalUs = (limit.rate.periodMs * 1_000) / limit.rate.count;
  const toleranceUs = (Math.max(1, limit.burst) - 1) * intervalUs;
  const basis = `${limit.rate.text}, burst ${String(limit.burst)}, replayed on the drill's clock`;
  if (m.limitSteps.length === 0)
    return {
      holds: m.attempts.total === 0 && m.rejected.rateLimit === 0,
      measured: 0,
      limit: 0,
      basis: `${basis}: the store took no step`,
    };
  const map = new TtlMap(Number.MAX_SAFE_INTEGER);
  let wrong = 0;
  for (const step of m.limitSteps) {
    if (step.kind === "refund") {
      REFUND.memory(map, [step.key], [String(intervalUs)], step.atMs);
      continue;
    }
    const args = [intervalUs, toleranceUs, step.offsetMs, step.boundMs].map(String);
    const { granted, waitMs } = TAKE.memory(map, [step.key], args, step.atMs);
    if (granted !== step.granted || Math.abs(waitMs - step.waitMs) > WAIT_SLACK_MS) wrong++;
  }
  return {
    holds: wrong === 0,
    measured: wrong,
    limit: 0,
    basis: `${basis}: ${String(wrong)} of ${String(m.limitSteps.length)} answers differ`,
  };
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
