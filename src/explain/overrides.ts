/**
 * `resgen explain --overrides <file>`: the policy as the client would run it after an overrides
 * document. The document is checked by the runtime's own validator (templates/runtime/
 * reconfigure.ts, the one `client.reconfigure` and the client's `overrides` option use); the
 * settings it returns are written back into the resolved policy, with `override` as their
 * origin, and each changed operation's plan (attempts, worst case) is worked out again.
 */
import { RECONFIGURABLE, type EffectiveSettings } from "../../templates/runtime/reconfigure.js";
import { planOperation } from "../model/plan.js";
import type { Provenance, ResolvedOperation, ResolvedPolicy } from "../model/resolved.js";

type Leaves = Readonly<Record<string, { readonly leaf: string }>>;

/** The policy leaf a changed path is resolved from (`timeout.attempt` for `…timeout.attemptMs`). */
function leafOf(section: keyof typeof RECONFIGURABLE, path: string): string | undefined {
  // own properties only: a path comes from the document, and `constructor` is no leaf
  const leaves = RECONFIGURABLE[section] as Leaves;
  return Object.hasOwn(leaves, path) ? leaves[path]?.leaf : undefined;
}

function noted(
  provenance: Readonly<Record<string, Provenance>>,
  leaves: readonly (string | undefined)[],
  file: string,
): Readonly<Record<string, Provenance>> {
  const out = { ...provenance };
  for (const leaf of leaves)
    if (leaf !== undefined) out[leaf] = { origin: "override", formula: `--overrides ${file}` };
  return out;
}

function overrideOperation(
  policy: ResolvedPolicy,
  op: ResolvedOperation,
  settings: EffectiveSettings,
  changed: readonly string[],
  file: string,
): ResolvedOperation {
  const prefix = `operations.${op.name}.`;
  const paths = changed.filter((p) => p.startsWith(prefix)).map((p) => p.slice(prefix.length));
  const live = Object.hasOwn(settings.operations, op.name)
    ? settings.operations[op.name]
    : undefined;
  if (paths.length === 0 || live === undefined) return op;
  const timeout = {
    ...op.timeout,
    attemptMs: live.timeout.attemptMs ?? op.timeout.attemptMs,
    totalMs: live.timeout.totalMs ?? op.timeout.totalMs,
  };
  const retry =
    op.retry === null || live.retry === null
      ? op.retry
      : {
          ...op.retry,
          maxAttempts: live.retry.maxAttempts,
          backoff: { ...op.retry.backoff, ...live.retry.backoff },
        };
  const plan = planOperation(
    {
      repeatable: op.plan.repeatable,
      idempotency: op.plan.idempotency,
      retry,
      hedge: op.hedge,
      budget: policy.budget,
    },
    timeout,
  );
  const leaves = paths.map((p) => leafOf("operation", p));
  return { ...op, timeout, retry, plan, provenance: noted(op.provenance, leaves, file) };
}

/**
 * `policy` with the settings a validated overrides document makes (`settings`, and the paths it
 * `changed`), from the overrides file `file`.
 */
export function withOverrides(
  policy: ResolvedPolicy,
  settings: EffectiveSettings,
  changed: readonly string[],
  file: string,
): ResolvedPolicy {
  const operations = policy.operations.map((op) =>
    overrideOperation(policy, op, settings, changed, file),
  );
  const dependencyLeaves = changed.flatMap((path) => {
    const [section, ...rest] = path.split(".");
    if (section !== "breaker" && section !== "bulkhead" && section !== "rateLimit") return [];
    return [leafOf(section, rest.join("."))];
  });
  const d = settings.dependency;
  const breaker =
    policy.breaker === null || d.breaker === null
      ? policy.breaker
      : {
          ...policy.breaker,
          failureRate: d.breaker.failureRate,
          slowCall: d.breaker.slowCall,
          minCalls: d.breaker.minCalls,
          openForMs: d.breaker.openForMs,
          halfOpen: d.breaker.halfOpen,
        };
  const bulkhead =
    policy.bulkhead === null || d.bulkhead === null
      ? policy.bulkhead
      : {
          ...policy.bulkhead,
          maxConcurrent: d.bulkhead.maxConcurrent,
          maxQueue: d.bulkhead.maxQueue,
          queueTimeoutMs: d.bulkhead.queueTimeoutMs,
        };
  const limit = d.rateLimit ?? null;
  const rateLimit =
    policy.rateLimit === undefined || limit === null
      ? policy.rateLimit
      : {
          ...policy.rateLimit,
          burst: limit.burst,
          maxWaitMs: limit.maxWaitMs,
          maxPauseMs: limit.maxPauseMs,
        };
  return {
    ...policy,
    operations,
    breaker,
    bulkhead,
    ...(rateLimit === undefined ? {} : { rateLimit }),
    provenance: noted(policy.provenance, dependencyLeaves, file),
  };
}
