// Snapshots of a dependency's state (breaker, window, retry budget), and checking one to restore.
import type { BreakerSnapshot, CircuitBreaker } from "./breaker.js";
import type { BudgetSnapshot, RetryBudget } from "./budget.js";

/** The `format` every dependency snapshot carries. */
export const SNAPSHOT_FORMAT = "resgen.dependency-state";
/** The snapshot layout this runtime writes and reads. */
export const SNAPSHOT_VERSION = 1;

/**
 * A dependency's state as plain JSON (docs/runtime.md, "Snapshot and restore"): returned by a
 * generated client's `snapshot()`, accepted by its factory's `state` option. Durations only, no
 * clock readings, so it can cross processes and machines.
 */
export interface DependencySnapshot {
  readonly format: typeof SNAPSHOT_FORMAT;
  readonly version: typeof SNAPSHOT_VERSION;
  /** The dependency it was taken from. */
  readonly dependency: string;
  /** Hash of the resolved settings of the client that took it; another policy refuses it. */
  readonly policy: string;
  /** The breaker's state; `null` for a dependency without one. */
  readonly breaker: BreakerSnapshot | null;
  /** The retry budget's tokens; `null` for a dependency without one. */
  readonly budget: BudgetSnapshot | null;
}

/** Why a snapshot was refused. */
export type SnapshotProblem = "malformed" | "version" | "dependency" | "policy";

/**
 * Thrown by a client factory given a `state` it cannot restore. Nothing of the snapshot is
 * applied: the client is not created.
 */
export class SnapshotError extends Error {
  /** What is wrong: not a snapshot, another layout version, another dependency or policy. */
  readonly problem: SnapshotProblem;

  constructor(problem: SnapshotProblem, message: string) {
    super(message);
    this.problem = problem;
  }
}
Object.defineProperty(SnapshotError.prototype, "name", { value: "SnapshotError", writable: true });

/** Takes a snapshot of a dependency's protections. */
export function takeSnapshot(
  dependency: string,
  policy: string,
  breaker: CircuitBreaker | null,
  budget: RetryBudget | null,
): DependencySnapshot {
  return {
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_VERSION,
    dependency,
    policy,
    breaker: breaker?.snapshot() ?? null,
    budget: budget?.snapshot() ?? null,
  };
}

/**
 * Checks the whole of `value` before applying any of it, and throws a {@link SnapshotError} on
 * the first problem: a snapshot is restored entirely or not at all.
 */
export function restoreSnapshot(
  value: unknown,
  dependency: string,
  policy: string,
  breaker: CircuitBreaker | null,
  budget: RetryBudget | null,
): void {
  const refuse = (problem: SnapshotProblem, why: string): never => {
    throw new SnapshotError(problem, `${dependency}: cannot restore the snapshot: ${why}`);
  };
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return refuse("malformed", "it is not an object");
  const s = value as Record<string, unknown>;
  if (s["format"] !== SNAPSHOT_FORMAT)
    return refuse("malformed", `its format is not "${SNAPSHOT_FORMAT}"`);
  const [version, reads] = [String(s["version"]), String(SNAPSHOT_VERSION)];
  if (s["version"] !== SNAPSHOT_VERSION)
    return refuse("version", `its layout is version ${version}, this runtime reads ${reads}`);
  if (s["dependency"] !== dependency)
    return refuse("dependency", `it was taken from ${String(s["dependency"])}`);
  if (s["policy"] !== policy)
    return refuse(
      "policy",
      `it was taken under other settings (policy ${String(s["policy"])}, this client ${policy})`,
    );
  const b = s["breaker"];
  if ((breaker === null) !== (b === null))
    return refuse("malformed", breaker === null ? "it has a breaker" : "it has no breaker");
  const breakerProblem = breaker === null ? undefined : breaker.checkSnapshot(b);
  if (breakerProblem !== undefined) return refuse("malformed", breakerProblem);
  const t = s["budget"];
  if ((budget === null) !== (t === null))
    return refuse("malformed", budget === null ? "it has a budget" : "it has no budget");
  const budgetProblem = budget === null ? undefined : budget.checkSnapshot(t);
  if (budgetProblem !== undefined) return refuse("malformed", budgetProblem);
  // every part passed: apply them all
  breaker?.restore(b as BreakerSnapshot);
  budget?.restore(t as BudgetSnapshot);
}
