// Live reconfiguration: which settings may change at run time, their ranges (the compiler's, for
// the policy leaf each one is resolved from), and the validator every change goes through, from
// `client.reconfigure(change)`, from an overrides document at creation and from
// `resgen explain --overrides`. It only computes: the stack applies what it returns.
import type { BreakerSettings } from "./breaker.js";
import type { BulkheadSettings } from "./bulkhead.js";
import type { ChaosOptions } from "./chaos.js";
import type { OperationSettings } from "./operation.js";
import type { RateLimitSettings } from "./rate-limit.js";
import { hedgeWorstCaseMs, retryWorstCaseMs } from "./worst-case.js";

/** A change to an operation's timeouts, in milliseconds. */
export interface TimeoutChange {
  readonly attemptMs?: number | undefined;
  readonly totalMs?: number | undefined;
}

/** A change to an operation's retry: attempts and backoff. */
export interface RetryChange {
  readonly maxAttempts?: number | undefined;
  readonly backoff?:
    | {
        readonly baseMs?: number | undefined;
        readonly capMs?: number | undefined;
        readonly multiplier?: number | undefined;
      }
    | undefined;
}

/** A change to one operation. */
export interface OperationChange {
  readonly timeout?: TimeoutChange | undefined;
  readonly retry?: RetryChange | undefined;
}

/** A change to the dependency's circuit breaker (its window is fixed at creation). */
export interface BreakerChange {
  readonly failureRate?: number | undefined;
  readonly slowCall?:
    { readonly durationMs?: number | undefined; readonly rate?: number | undefined } | undefined;
  readonly minCalls?: number | undefined;
  readonly openForMs?: number | undefined;
  readonly halfOpen?:
    { readonly maxCalls?: number | undefined; readonly successes?: number | undefined } | undefined;
}

/** A change to the dependency's bulkhead. */
export interface BulkheadChange {
  readonly maxConcurrent?: number | undefined;
  readonly maxQueue?: number | undefined;
  readonly queueTimeoutMs?: number | undefined;
}

/** A change to the dependency's own rate limit (one kept in this process). */
export interface RateLimitChange {
  readonly burst?: number | undefined;
  readonly maxWaitMs?: number | undefined;
  readonly maxPauseMs?: number | undefined;
}

/**
 * A reconfiguration: any subset of the reconfigurable settings, resolved (milliseconds, ratios
 * in [0, 1]). `Operation` is the union of the dependency's operation names; generated clients
 * type it per dependency. A new section goes here and in {@link RECONFIGURABLE}.
 */
export interface Reconfiguration<Operation extends string = string> {
  readonly operations?: { readonly [K in Operation]?: OperationChange | undefined } | undefined;
  readonly breaker?: BreakerChange | undefined;
  readonly bulkhead?: BulkheadChange | undefined;
  readonly rateLimit?: RateLimitChange | undefined;
  /**
   * New faults for a client created with the `chaos` option, replacing its seed and faults
   * (docs/runtime.md, "Chaos"). Only `client.reconfigure()` takes it: an overrides document
   * cannot turn chaos on, and a client created without the option refuses it.
   */
  readonly chaos?: ChaosOptions<Operation> | undefined;
}

/** What a value is: the unit its range is written in, and whether it is whole. */
type Unit = "ms" | "count" | "ratio" | "factor";

/** One reconfigurable leaf: the policy leaf it is resolved from, and the compiler's range of it. */
export interface ReconfigurableLeaf {
  /** The policy's name for it, as the compiler's messages give it (`timeout.attempt`). */
  readonly leaf: string;
  readonly unit: Unit;
  readonly min: number;
  readonly max: number;
  /** Whether `min` itself is refused (a rate must be more than 0%). */
  readonly aboveMin?: boolean;
}

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * Every reconfigurable setting by section and path, with its range. A test derives the
 * compiler's range of each policy leaf from its schema and asserts it equals this one.
 */
export const RECONFIGURABLE = {
  operation: {
    "timeout.attemptMs": { leaf: "timeout.attempt", unit: "ms", min: 1, max: HOUR },
    "timeout.totalMs": { leaf: "timeout.total", unit: "ms", min: 1, max: DAY },
    "retry.maxAttempts": { leaf: "retry.maxAttempts", unit: "count", min: 1, max: 100 },
    "retry.backoff.baseMs": { leaf: "retry.backoff.base", unit: "ms", min: 0, max: HOUR },
    "retry.backoff.capMs": { leaf: "retry.backoff.cap", unit: "ms", min: 0, max: HOUR },
    "retry.backoff.multiplier": {
      leaf: "retry.backoff.multiplier",
      unit: "factor",
      min: 1,
      max: 10,
    },
  },
  breaker: {
    failureRate: {
      leaf: "breaker.failureRate",
      unit: "ratio",
      min: 0,
      max: 1,
      aboveMin: true,
    },
    "slowCall.durationMs": {
      leaf: "breaker.slowCall.duration",
      unit: "ms",
      min: 1,
      max: HOUR,
    },
    "slowCall.rate": {
      leaf: "breaker.slowCall.rate",
      unit: "ratio",
      min: 0,
      max: 1,
      aboveMin: true,
    },
    minCalls: { leaf: "breaker.minCalls", unit: "count", min: 1, max: 100_000 },
    openForMs: { leaf: "breaker.openFor", unit: "ms", min: 1, max: HOUR },
    "halfOpen.maxCalls": { leaf: "breaker.halfOpen.maxCalls", unit: "count", min: 1, max: 1_000 },
    "halfOpen.successes": {
      leaf: "breaker.halfOpen.successes",
      unit: "count",
      min: 1,
      max: 1_000,
    },
  },
  bulkhead: {
    maxConcurrent: { leaf: "bulkhead.maxConcurrent", unit: "count", min: 1, max: 100_000 },
    maxQueue: { leaf: "bulkhead.maxQueue", unit: "count", min: 0, max: 100_000 },
    queueTimeoutMs: { leaf: "bulkhead.queueTimeout", unit: "ms", min: 0, max: HOUR },
  },
  rateLimit: {
    burst: { leaf: "rateLimit.burst", unit: "count", min: 1, max: 1_000_000 },
    maxWaitMs: { leaf: "rateLimit.maxWait", unit: "ms", min: 0, max: HOUR },
    maxPauseMs: { leaf: "rateLimit.maxPause", unit: "ms", min: 0, max: DAY },
  },
} as const satisfies Record<string, Record<string, ReconfigurableLeaf>>;

/** The dependency-wide settings a reconfiguration may change; `DependencySettings` has them. */
export interface ReconfigurableParts {
  readonly breaker: BreakerSettings | null;
  readonly bulkhead: BulkheadSettings | null;
  readonly rateLimit?: RateLimitSettings | null | undefined;
}

/** The settings in force: the dependency's and each operation's, by name. */
export interface EffectiveSettings<D extends ReconfigurableParts = ReconfigurableParts> {
  readonly dependency: D;
  readonly operations: Readonly<Record<string, OperationSettings>>;
}

/** What {@link validateReconfiguration} decides. */
export type ReconfigurationVerdict<D extends ReconfigurableParts = ReconfigurableParts> =
  | {
      readonly ok: true;
      /** The settings with the change applied: new objects where something changed. */
      readonly settings: EffectiveSettings<D>;
      /** The paths that change value (`operations.geocode.timeout.attemptMs`), in order. */
      readonly changed: readonly string[];
    }
  | { readonly ok: false; readonly problems: readonly string[] };

/** The result of `client.reconfigure(change)`: applied, or refused with every problem. */
export type ReconfigureResult =
  | { readonly applied: true; readonly changed: readonly string[] }
  | { readonly applied: false; readonly problems: readonly string[] };

/** Thrown at creation by an overrides document that the validator refuses. */
export class ReconfigurationError extends Error {
  /** Every problem found, one a line in the message too. */
  readonly problems: readonly string[];

  constructor(source: string, problems: readonly string[]) {
    super(`${source} refused:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ReconfigurationError";
    this.problems = problems;
  }
}

type Section = keyof typeof RECONFIGURABLE;
type Leaves = Readonly<Record<string, ReconfigurableLeaf>>;
type Values = Map<string, number>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The value of `table`'s own property `key`, never one it inherits: every key here comes from
 * input, and `constructor`, `__proto__` or `toString` must read as no setting, not as
 * Object.prototype's (docs/runtime.md, "Reconfiguration").
 */
function own<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

function ms(value: number | null): string {
  return `${String(value)}ms`;
}

function shown(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

function formatValue(unit: Unit, value: number): string {
  return unit === "ms" ? `${String(value)}ms` : String(value);
}

function rangeText(spec: ReconfigurableLeaf): string {
  const low =
    spec.aboveMin === true ? `more than ${String(spec.min)}` : formatValue(spec.unit, spec.min);
  return spec.aboveMin === true
    ? `${low} and at most ${formatValue(spec.unit, spec.max)}`
    : `${low} to ${formatValue(spec.unit, spec.max)}`;
}

/** The problem with one value, or `undefined` when it is in range. */
function leafProblem(path: string, spec: ReconfigurableLeaf, value: unknown): string | undefined {
  const where = `${path} (${spec.leaf})`;
  if (typeof value !== "number" || !Number.isFinite(value))
    return `${where}: must be a finite number, got ${shown(value)}`;
  // resolved durations are whole milliseconds, and counts whole
  const whole = spec.unit === "ms" || spec.unit === "count";
  if (whole && !Number.isInteger(value))
    return `${where}: must be a whole number, got ${String(value)}`;
  const low = spec.aboveMin === true ? value <= spec.min : value < spec.min;
  if (low || value > spec.max)
    return `${where}: must be ${rangeText(spec)}, got ${formatValue(spec.unit, value)}`;
  return undefined;
}

/**
 * The problem with `value` for the setting at `path` of `section` (`"operation"`,
 * `"timeout.attemptMs"`), by its range alone; `undefined` when it is in range.
 */
export function rangeProblem(section: Section, path: string, value: unknown): string | undefined {
  const spec = own(RECONFIGURABLE[section] as Leaves, path);
  if (spec === undefined) return `${path}: not reconfigurable`;
  return leafProblem(path, spec, value);
}

/**
 * Reads the numbers of one section's change into `out` by path, with a problem for every key that
 * is not reconfigurable, every value out of range and every object that is not one.
 */
function readLeaves(
  change: unknown,
  leaves: Leaves,
  prefix: string,
  at: string,
  out: Values,
  problems: string[],
): void {
  if (!isRecord(change)) {
    problems.push(`${at || "the change"}: must be an object`);
    return;
  }
  for (const [key, value] of Object.entries(change)) {
    if (value === undefined) continue;
    const path = prefix === "" ? key : `${prefix}.${key}`;
    const where = at === "" ? key : `${at}.${key}`;
    const spec = own(leaves, path);
    if (spec !== undefined) {
      const problem = leafProblem(where, spec, value);
      if (problem === undefined) out.set(path, value as number);
      else problems.push(problem);
    } else if (Object.keys(leaves).some((p) => p.startsWith(`${path}.`))) {
      readLeaves(value, leaves, path, where, out, problems);
    } else {
      const known = Object.keys(leaves).join(", ");
      problems.push(`${where}: not reconfigurable (reconfigurable here: ${known})`);
    }
  }
}

function pick(values: Values, path: string, current: number): number {
  return values.get(path) ?? current;
}

function changedPaths(values: Values, at: string, current: (path: string) => unknown): string[] {
  return [...values].filter(([path, v]) => current(path) !== v).map(([path]) => `${at}.${path}`);
}

/** The operation with `values` applied; a retry change to one without retry is a problem. */
function changeOperation(op: OperationSettings, values: Values, at: string, problems: string[]) {
  const t = op.timeout;
  const timeout = {
    ...t,
    attemptMs: values.get("timeout.attemptMs") ?? t.attemptMs,
    totalMs: values.get("timeout.totalMs") ?? t.totalMs,
  };
  const retryChanged = [...values.keys()].some((p) => p.startsWith("retry."));
  const r = op.retry;
  if (retryChanged && r === null)
    problems.push(`${at}.retry: the operation has no retry to change`);
  const retry =
    r === null || !retryChanged
      ? r
      : {
          ...r,
          maxAttempts: pick(values, "retry.maxAttempts", r.maxAttempts),
          backoff: {
            ...r.backoff,
            baseMs: pick(values, "retry.backoff.baseMs", r.backoff.baseMs),
            capMs: pick(values, "retry.backoff.capMs", r.backoff.capMs),
            multiplier: pick(values, "retry.backoff.multiplier", r.backoff.multiplier),
          },
        };
  return { ...op, timeout, retry };
}

/** Milliseconds the operation's worst case can take: its plan, as the compiler works it out. */
export function operationWorstCaseMs(op: OperationSettings): number | null {
  const attemptMs = op.timeout.attemptMs;
  if (attemptMs === null) return null;
  const repeatable = op.repeatable || op.idempotencyKey !== null;
  if (op.hedge !== null && repeatable)
    return hedgeWorstCaseMs(attemptMs, op.hedge.maxAttempts, op.hedge.delayMs);
  const retry = op.retry;
  if (retry !== null && repeatable && retry.maxAttempts > 1)
    return retryWorstCaseMs(attemptMs, retry.maxAttempts, retry.backoff);
  return attemptMs;
}

function attempts(op: OperationSettings): number {
  const repeatable = op.repeatable || op.idempotencyKey !== null;
  if (!repeatable) return 1;
  return op.hedge?.maxAttempts ?? op.retry?.maxAttempts ?? 1;
}

/** How far the worst case runs past the total; 0 when it fits or either is unbounded. */
function overrun(op: OperationSettings): number {
  const worst = operationWorstCaseMs(op);
  const total = op.timeout.totalMs;
  return worst === null || total === null ? 0 : Math.max(0, worst - total);
}

/**
 * The compiler's arithmetic on a changed operation: the attempt timeout below the total (RG205),
 * backoff base at most its cap (RG106), and a worst case within the total (RG207). The compiler
 * only warns on the last, so a policy may start over it: a change is refused when it makes the
 * overrun longer, so one that shortens it still applies.
 */
function operationProblems(before: OperationSettings, after: OperationSettings, at: string) {
  const problems: string[] = [];
  const { attemptMs, totalMs } = after.timeout;
  const n = attempts(after);
  if (
    attemptMs !== null &&
    totalMs !== null &&
    (attemptMs > totalMs || (attemptMs === totalMs && n > 1))
  )
    problems.push(
      `${at}.timeout: attempt timeout ${ms(attemptMs)} (timeout.attempt) must be below ` +
        `the total ${ms(totalMs)} (timeout.total)` +
        (n > 1
          ? ": one slow attempt would use the whole deadline, so the other " +
            (n === 2 ? "attempt" : `${String(n - 1)} attempts`) +
            " could never run"
          : ""),
    );
  const b = after.retry?.backoff;
  if (b !== undefined && b.baseMs > b.capMs)
    problems.push(
      `${at}.retry.backoff: baseMs ${ms(b.baseMs)} (retry.backoff.base) must be at most ` +
        `capMs ${ms(b.capMs)} (retry.backoff.cap)`,
    );
  if (problems.length === 0 && overrun(after) > overrun(before))
    problems.push(
      `${at}: worst case ${ms(operationWorstCaseMs(after))} (every attempt at its timeout, ` +
        `every backoff at its cap) exceeds the total timeout ${ms(totalMs)} (timeout.total)`,
    );
  return problems;
}

function changeBreaker(b: BreakerSettings, values: Values, problems: string[]): BreakerSettings {
  const slowChanged = values.has("slowCall.durationMs") || values.has("slowCall.rate");
  if (slowChanged && b.slowCall === null)
    problems.push("breaker.slowCall: the breaker has no slow-call check to change");
  const next: BreakerSettings = {
    ...b,
    failureRate: pick(values, "failureRate", b.failureRate),
    slowCall:
      b.slowCall === null
        ? null
        : {
            durationMs: pick(values, "slowCall.durationMs", b.slowCall.durationMs),
            rate: pick(values, "slowCall.rate", b.slowCall.rate),
          },
    minCalls: pick(values, "minCalls", b.minCalls),
    openForMs: pick(values, "openForMs", b.openForMs),
    halfOpen: {
      maxCalls: pick(values, "halfOpen.maxCalls", b.halfOpen.maxCalls),
      successes: pick(values, "halfOpen.successes", b.halfOpen.successes),
    },
  };
  if (next.window.kind === "count" && next.minCalls > next.window.calls)
    problems.push(
      `breaker.minCalls ${String(next.minCalls)} (breaker.minCalls) must be at most the ` +
        `window's ${String(next.window.calls)} calls (breaker.window.calls): ` +
        "the breaker could never open",
    );
  const backoff = next.openBackoff;
  if (backoff !== undefined && backoff.capMs < next.openForMs)
    problems.push(
      `breaker.openForMs ${ms(next.openForMs)} (breaker.openFor.base) must be at most ` +
        `the open-duration cap ${ms(backoff.capMs)} (breaker.openFor.cap)`,
    );
  return next;
}

function changeBulkhead(b: BulkheadSettings, values: Values, problems: string[]): BulkheadSettings {
  if (values.has("maxConcurrent") && b.adaptive !== undefined && b.adaptive !== null)
    problems.push(
      "bulkhead.maxConcurrent (bulkhead.maxConcurrent): " +
        "an adaptive bulkhead's limit follows latency and is not reconfigurable",
    );
  return {
    ...b,
    maxConcurrent: pick(values, "maxConcurrent", b.maxConcurrent),
    maxQueue: pick(values, "maxQueue", b.maxQueue),
    queueTimeoutMs: pick(values, "queueTimeoutMs", b.queueTimeoutMs),
  };
}

function changeRateLimit(
  r: RateLimitSettings,
  values: Values,
  problems: string[],
): RateLimitSettings {
  if (r.store === "redis")
    problems.push(
      "rateLimit: a limit the replicas share in the store is not reconfigurable from one replica",
    );
  return {
    ...r,
    burst: pick(values, "burst", r.burst),
    maxWaitMs: pick(values, "maxWaitMs", r.maxWaitMs),
    maxPauseMs: pick(values, "maxPauseMs", r.maxPauseMs),
  };
}

/** Reads one dependency-wide section, or a problem when the dependency has none of it. */
function readSection(
  change: Record<string, unknown>,
  section: Exclude<Section, "operation">,
  present: boolean,
  problems: string[],
): Values | undefined {
  const raw = own(change, section);
  if (raw === undefined) return undefined;
  if (!present) {
    problems.push(`${section}: the dependency has no ${section} to change`);
    return undefined;
  }
  const values: Values = new Map();
  readLeaves(raw, RECONFIGURABLE[section], "", section, values, problems);
  return values;
}

const TOP_LEVEL = ["operations", "breaker", "bulkhead", "rateLimit"];

/**
 * Why `chaos` is refused here: the stack takes it out of a `client.reconfigure()` change before
 * validating the rest, so what reaches this is an overrides document (or explain --overrides).
 */
const CHAOS_FROM_DOCUMENT =
  "chaos: only code turns chaos on (the chaos option, client.reconfigure()), " +
  "never an overrides document";

/**
 * Checks `change` against `current` by the compiler's rules: every value in its range, and the
 * arithmetic between them. Returns the settings it makes, or every problem found (nothing of a
 * refused change is applied). Never throws, whatever `change` is.
 */
export function validateReconfiguration<D extends ReconfigurableParts>(
  current: EffectiveSettings<D>,
  change: unknown,
): ReconfigurationVerdict<D> {
  const problems: string[] = [];
  if (!isRecord(change)) return { ok: false, problems: ["the change: must be an object"] };
  for (const key of Object.keys(change))
    if (key === "chaos") problems.push(CHAOS_FROM_DOCUMENT);
    else if (!TOP_LEVEL.includes(key))
      problems.push(`${key}: not reconfigurable (reconfigurable: ${TOP_LEVEL.join(", ")})`);
  const changed: string[] = [];
  const operations = changeOperations(
    current.operations,
    own(change, "operations"),
    changed,
    problems,
  );
  const dep = current.dependency;
  let dependency: D = dep;
  const breaker = readSection(change, "breaker", dep.breaker !== null, problems);
  if (breaker !== undefined && dep.breaker !== null) {
    dependency = { ...dependency, breaker: changeBreaker(dep.breaker, breaker, problems) };
    changed.push(...changedPaths(breaker, "breaker", (p) => leafOf(dep.breaker, p)));
  }
  const bulkhead = readSection(change, "bulkhead", dep.bulkhead !== null, problems);
  if (bulkhead !== undefined && dep.bulkhead !== null) {
    dependency = { ...dependency, bulkhead: changeBulkhead(dep.bulkhead, bulkhead, problems) };
    changed.push(...changedPaths(bulkhead, "bulkhead", (p) => leafOf(dep.bulkhead, p)));
  }
  const limit = dep.rateLimit ?? null;
  const rateLimit = readSection(change, "rateLimit", limit !== null, problems);
  if (rateLimit !== undefined && limit !== null) {
    dependency = { ...dependency, rateLimit: changeRateLimit(limit, rateLimit, problems) };
    changed.push(...changedPaths(rateLimit, "rateLimit", (p) => leafOf(limit, p)));
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, settings: { dependency, operations }, changed };
}

function changeOperations(
  current: Readonly<Record<string, OperationSettings>>,
  raw: unknown,
  changed: string[],
  problems: string[],
): Readonly<Record<string, OperationSettings>> {
  if (raw === undefined) return current;
  if (!isRecord(raw)) {
    problems.push("operations: must be an object of operation names");
    return current;
  }
  const next: Record<string, OperationSettings> = { ...current };
  for (const [name, opChange] of Object.entries(raw)) {
    if (opChange === undefined) continue;
    const at = `operations.${name}`;
    const op = own(current, name);
    if (op === undefined) {
      problems.push(`${at}: no such operation (operations: ${Object.keys(current).join(", ")})`);
      continue;
    }
    const values: Values = new Map();
    readLeaves(opChange, RECONFIGURABLE.operation, "", at, values, problems);
    const after = changeOperation(op, values, at, problems);
    problems.push(...operationProblems(op, after, at));
    next[name] = after;
    changed.push(...changedPaths(values, at, (p) => leafOf(op, p)));
  }
  return next;
}

/** The value at a dotted path of a settings object, for telling what a change changes. */
function leafOf(settings: unknown, path: string): unknown {
  let at: unknown = settings;
  for (const key of path.split(".")) at = isRecord(at) ? own(at, key) : undefined;
  return at;
}

/**
 * The environment variable an overrides document may come in for a dependency:
 * `RESGEN_OVERRIDES_` and its name in capitals, other characters as `_` (`payments-eu` reads
 * `RESGEN_OVERRIDES_PAYMENTS_EU`).
 */
export function overridesVariable(dependency: string): string {
  return `RESGEN_OVERRIDES_${dependency.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;
}

/**
 * The value of an environment variable where there is a `process` (none on workerd) and it may
 * be read: Deno without `--allow-env` throws on the read, and that means no variable.
 */
function environmentValue(name: string): string | undefined {
  let value: string | undefined;
  try {
    const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process
      ?.env;
    value = env?.[name];
  } catch {
    return undefined;
  }
  return value === undefined || value.trim() === "" ? undefined : value;
}

/** An overrides document: an object, or its JSON text. A problem when the text is not JSON. */
export function parseOverrides(document: unknown, source: string): unknown {
  if (typeof document !== "string") return document;
  try {
    return JSON.parse(document) as unknown;
  } catch (error) {
    throw new ReconfigurationError(source, [
      `not JSON: ${error instanceof Error ? error.message : String(error)}`,
    ]);
  }
}

/** One overrides document to apply at creation, and where it came from (for messages). */
export interface OverridesSource {
  readonly source: string;
  readonly document: unknown;
}

/**
 * The overrides to apply at creation, in order: the client's `overrides` option, then the
 * environment variable, so a deploy's variable has the last word.
 */
export function overridesAtCreation(dependency: string, option: unknown): OverridesSource[] {
  const out: OverridesSource[] = [];
  if (option !== undefined)
    out.push({
      source: "the overrides option",
      document: parseOverrides(option, "the overrides option"),
    });
  const variable = overridesVariable(dependency);
  const text = environmentValue(variable);
  if (text !== undefined) out.push({ source: variable, document: parseOverrides(text, variable) });
  return out;
}
