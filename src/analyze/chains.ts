/**
 * Retries at several layers multiply: when a dependency declares `calls: [other]`, one call to it
 * can make maxAttempts calls to `other`, each of which retries too (3 × 3 × 3 = 27 at the bottom).
 * The cure is to retry at one layer only, the one closest to the failing dependency (Google SRE
 * book, "Handling Overload"; AWS Builders' Library, "Timeouts, retries and backoff with jitter").
 * Along the same chains each inner hop must also give up before its caller does (RG227).
 * This check reads every policy of one run.
 */
import { formatMs } from "../language/durations.js";
import type { ResolvedOperation, ResolvedPolicy } from "../model/resolved.js";
import { didYouMean } from "../language/suggest.js";
import { finding, inPolicy, type AnalyzeContext, type Finding } from "./context.js";

/** Calls at the bottom of a chain above which the multiplication is reported. */
export const CHAIN_LIMIT = 10;

/** Most attempts one logical call to the dependency can make, over its operations. */
export function dependencyAttempts(policy: ResolvedPolicy): number {
  return policy.operations.reduce((m, op) => Math.max(m, op.plan.attempts), 1);
}

interface Chain {
  readonly names: readonly string[];
  readonly product: number;
}

export function checkChains(policies: readonly ResolvedPolicy[], ctx: AnalyzeContext): Finding[] {
  const out: Finding[] = [];
  const byName = new Map(policies.map((p) => [p.dependency, p]));
  const names = [...byName.keys()];

  for (const p of policies) {
    p.calls.forEach((callee, i) => {
      if (byName.has(callee)) return;
      const suggestion = didYouMean(callee, names);
      out.push(
        finding(
          ctx,
          p,
          "RG221",
          [{ ref: inPolicy(p, "calls", i) }, { ref: inPolicy(p, "calls"), key: true }],
          `calls names "${callee}", which no policy in this check declares: retries through it cannot be counted`,
          suggestion
            ? `did you mean "${suggestion}"?`
            : `check ${callee}'s policy together with this one, or remove it from calls`,
        ),
      );
    });
  }

  // The chain with the most calls at its bottom, from `name` down. Cycles stop where they close;
  // results are memoised only when there is no cycle (otherwise they depend on the path taken),
  // and the walk is bounded so a pathological graph cannot stall the check.
  const acyclic = !hasCycle(policies, byName);
  const memo = new Map<string, Chain>();
  let budget = 100_000;
  const worst = (name: string, path: readonly string[]): Chain => {
    const cached = memo.get(name);
    if (cached) return cached;
    const policy = byName.get(name)!;
    const own = dependencyAttempts(policy);
    let best: Chain = { names: [name], product: own };
    for (const callee of policy.calls) {
      if (!byName.has(callee) || path.includes(callee) || --budget < 0) continue;
      const below = worst(callee, [...path, callee]);
      if (own * below.product > best.product)
        best = { names: [name, ...below.names], product: own * below.product };
    }
    if (acyclic) memo.set(name, best);
    return best;
  };

  const called = new Set(policies.flatMap((p) => p.calls));
  const roots = policies.filter((p) => !called.has(p.dependency));
  for (const root of roots.length > 0 ? roots : policies.slice(0, 1)) {
    const chain = worst(root.dependency, [root.dependency]);
    if (chain.names.length < 2 || chain.product <= CHAIN_LIMIT) continue;
    const next = chain.names[1]!;
    const factors = chain.names.map((n) => dependencyAttempts(byName.get(n)!));
    const bottom = chain.names.at(-1)!;
    // one layer retries: the calls to the dependency at the bottom, the one closest to where the failure is
    const outer = chain.names.slice(0, -1).filter((_, i) => factors[i]! > 1);
    const kept = factors.map((f, i) => (i === factors.length - 1 ? f : 1));
    const keptProduct = factors.at(-1)!;
    const policiesOf = (names: readonly string[]) =>
      names.length === 1
        ? `${names[0]!}'s policy`
        : `the policies of ${names.slice(0, -1).join(", ")} and ${names.at(-1)!}`;
    out.push(
      finding(
        ctx,
        root,
        "RG220",
        [
          { ref: inPolicy(root, "calls", root.calls.indexOf(next)) },
          { ref: inPolicy(root, "calls"), key: true },
        ],
        `retries multiply along ${chain.names.join(" → ")}: ${factors.join(" × ")} = ${chain.product} calls can reach ${bottom} for one call to ${root.dependency}`,
        outer.length === 0
          ? `lower maxAttempts on the calls to ${bottom} to at most ${CHAIN_LIMIT}: the other layers already make one attempt`
          : `retry at one layer only, the one closest to the failing dependency: keep the retries on the calls to ${bottom} and set \`retry: { maxAttempts: 1 }\` in ${policiesOf(outer)}; then ${kept.join(" × ")} = ${keptProduct} ${keptProduct === 1 ? "call reaches" : "calls reach"} ${bottom}`,
      ),
    );
  }

  out.push(...checkHopTimeouts(policies, byName, ctx));
  return out;
}

/** The operation with the largest value of `pick`, the first of them on a tie. */
function longest(
  policy: ResolvedPolicy,
  pick: (op: ResolvedOperation) => number,
): ResolvedOperation | undefined {
  return policy.operations.reduce<ResolvedOperation | undefined>(
    (m, op) => (m === undefined || pick(op) > pick(m) ? op : m),
    undefined,
  );
}

/**
 * RG227: along each `calls:` edge, the callee's longest total timeout (all its attempts and
 * backoff) must be shorter than the caller's longest attempt timeout, or the caller gives up on
 * an attempt while the callee is still working, and retrying, for it.
 */
function checkHopTimeouts(
  policies: readonly ResolvedPolicy[],
  byName: ReadonlyMap<string, ResolvedPolicy>,
  ctx: AnalyzeContext,
): Finding[] {
  const out: Finding[] = [];
  for (const caller of policies) {
    const outer = longest(caller, (op) => op.timeout.attemptMs);
    if (!outer) continue;
    const attemptMs = outer.timeout.attemptMs;
    [...new Set(caller.calls)].forEach((name) => {
      const callee = byName.get(name);
      if (!callee || callee === caller) return;
      const inner = longest(callee, (op) => op.timeout.totalMs);
      if (!inner || inner.timeout.totalMs < attemptMs) return;
      const totalMs = inner.timeout.totalMs;
      const formula =
        inner.provenance["timeout.total"]?.origin === "derived"
          ? inner.provenance["timeout.total"].formula
          : undefined;
      // "2 attempts × 800ms + backoff 50ms + margin 10ms = 1660ms": the sum, the result is said next to it
      const how = formula
        ? ` (${formula.includes(" = ") ? formula.slice(0, formula.lastIndexOf(" = ")) : formula})`
        : "";
      const one = (p: ResolvedPolicy) =>
        p.operations.length === 1 ? "" : ` of ${p === caller ? outer.name : inner.name}`;
      out.push(
        finding(
          ctx,
          caller,
          "RG227",
          [
            { ref: inPolicy(caller, "calls", caller.calls.indexOf(name)) },
            { ref: inPolicy(caller, "calls"), key: true },
          ],
          `the total timeout${one(callee)} at ${name}${how} is ${formatMs(totalMs)}, not shorter than the attempt timeout${one(caller)} at ${caller.dependency}, ${formatMs(attemptMs)}: ${formatMs(totalMs)} ≥ ${formatMs(attemptMs)}, so an attempt to ${caller.dependency} gives up while ${name} is still working (and retrying) for it`,
          `lower timeout.total at ${name} (or its timeout.attempt or maxAttempts) below ${formatMs(attemptMs)}, or raise timeout.attempt at ${caller.dependency} above ${formatMs(totalMs)}`,
        ),
      );
    });
  }
  return out;
}

function hasCycle(
  policies: readonly ResolvedPolicy[],
  byName: ReadonlyMap<string, ResolvedPolicy>,
): boolean {
  const state = new Map<string, 1 | 2>();
  const visit = (name: string): boolean => {
    const s = state.get(name);
    if (s === 1) return true;
    if (s === 2) return false;
    state.set(name, 1);
    for (const callee of byName.get(name)?.calls ?? [])
      if (byName.has(callee) && visit(callee)) return true;
    state.set(name, 2);
    return false;
  };
  return policies.some((p) => visit(p.dependency));
}
