/**
 * Retries at several layers multiply: when a dependency declares `calls: [other]`, one call to it
 * can make maxAttempts calls to `other`, each of which retries too (3 × 3 × 3 = 27 at the bottom).
 * This check reads every policy of one run.
 */
import type { ResolvedPolicy } from "../policy/model.js";
import { didYouMean } from "../policy/suggest.js";
import { attemptsOf, finding, inPolicy, type AnalyzeContext, type Finding } from "./context.js";

/** Calls at the bottom of a chain above which the multiplication is reported. */
export const CHAIN_LIMIT = 10;

/** Most attempts one logical call to the dependency can make, over its operations. */
export function dependencyAttempts(policy: ResolvedPolicy): number {
  return policy.operations.reduce((m, op) => Math.max(m, attemptsOf(op)), 1);
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
          suggestion ? `did you mean "${suggestion}"?` : `check ${callee}'s policy together with this one, or remove it from calls`,
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
      if (own * below.product > best.product) best = { names: [name, ...below.names], product: own * below.product };
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
    out.push(
      finding(
        ctx,
        root,
        "RG220",
        [{ ref: inPolicy(root, "calls", root.calls.indexOf(next)) }, { ref: inPolicy(root, "calls"), key: true }],
        `retries multiply along ${chain.names.join(" → ")}: ${factors.join(" × ")} = ${chain.product} calls can reach ${bottom} for one call to ${root.dependency}`,
        `retry at one layer only (usually the outermost): set \`retry: { maxAttempts: 1 }\` on the inner hops, keeping at most ${CHAIN_LIMIT} calls at the bottom`,
      ),
    );
  }
  return out;
}

function hasCycle(policies: readonly ResolvedPolicy[], byName: ReadonlyMap<string, ResolvedPolicy>): boolean {
  const state = new Map<string, 1 | 2>();
  const visit = (name: string): boolean => {
    const s = state.get(name);
    if (s === 1) return true;
    if (s === 2) return false;
    state.set(name, 1);
    for (const callee of byName.get(name)?.calls ?? []) if (byName.has(callee) && visit(callee)) return true;
    state.set(name, 2);
    return false;
  };
  return policies.some((p) => visit(p.dependency));
}
