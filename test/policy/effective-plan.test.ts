/**
 * One effective plan per operation, computed once in the model (src/model/plan.ts): the
 * summary of `check`, `explain`, the analyzer's attempt counts and the settings the emitter
 * writes for the runtime all read it, so they agree on what `maxAttempts: 1` means (one
 * attempt, kind single), on a hedge declared next to such a retry, and on an operation that
 * is not repeatable.
 */
import { describe, expect, it } from "vitest";
import { summary } from "../../src/cli/cli.js";
import { checkTexts } from "../../src/program/check.js";
import { explain } from "../../src/explain/explain.js";
import { dependencyAttempts } from "../../src/analyze/chains.js";
import type { ResolvedOperation, ResolvedPolicy } from "../../src/model/resolved.js";

/** One policy with one operation `op` whose body is `body`; returns it and its findings (errors only among `allowed`). */
function one(
  body: string,
  allowed: readonly string[] = [],
): { policy: ResolvedPolicy; op: ResolvedOperation; codes: string[] } {
  const text = `version: 1\ndependency: things\nlatency: { p99: 100ms }\nbulkhead: false\noperations:\n  op:\n${body}`;
  const r = checkTexts([{ file: "things.yaml", text }]);
  expect(r.diagnostics.filter((d) => d.severity === "error" && !allowed.includes(d.code))).toEqual(
    [],
  );
  const policy = r.policies[0]!;
  return { policy, op: policy.operations[0]!, codes: r.diagnostics.map((d) => d.code) };
}

/** What each consumer says about the operation's attempts. */
function consumers(policy: ResolvedPolicy, op: ResolvedOperation) {
  const line = summary([policy])
    .split("\n")
    .find((l) => l.trim().startsWith("op "))!;
  const report = explain(policy).operations[0]!;
  return {
    summary: line,
    explain: {
      plan: report.plan,
      attempts: report.worstCase.maxAttempts,
      kind: report.worstCase.plan,
      fits: report.worstCase.fitsInTotal,
    },
    analyzer: dependencyAttempts(policy),
    runtime: op.plan.runtime,
  };
}

describe("maxAttempts: 1", () => {
  it("is one attempt, kind single, why maxAttempts 1, for the summary, explain, the analyzer and the runtime settings", () => {
    const { policy, op, codes } = one(
      "    method: GET\n    path: /things\n    retry: { maxAttempts: 1 }\n",
    );
    expect(op.plan).toMatchObject({
      kind: "single",
      why: "maxAttempts 1",
      attempts: 1,
      retry: null,
      hedge: null,
      budget: null,
    });
    const seen = consumers(policy, op);
    expect(seen.summary).toContain("attempted once (retry.maxAttempts: 1)");
    expect(seen.explain).toEqual({
      plan: { kind: "single", why: "maxAttempts 1" },
      attempts: 1,
      kind: "single",
      fits: true,
    });
    expect(seen.analyzer).toBe(1);
    // the runtime still gets the declared retry (its `on` classifies failures) and makes one attempt of it
    expect(seen.runtime).toMatchObject({
      repeatable: true,
      retry: { maxAttempts: 1 },
      hedge: null,
    });
    // the derived total is one attempt (3 × p99 = 300ms) plus the margin
    expect(op.timeout).toMatchObject({ attemptMs: 300, totalMs: 310 });
    expect(op.provenance["timeout.total"]?.formula).toBe("one attempt 300ms + margin 10ms = 310ms");
    expect(codes).toEqual([]);
  });

  it("next to a hedge, leaves the hedge to run: the derived total is the hedge's worst case and no consumer says otherwise", () => {
    const { policy, op, codes } = one(
      "    method: GET\n    path: /things\n    retry: { maxAttempts: 1 }\n    hedge: { delay: 20ms, maxAttempts: 3 }\n",
    );
    // 2 × 20ms + 300ms + margin: the total leaves room for every copy, so no copy is said not to fit
    expect(op.timeout.totalMs).toBe(350);
    expect(codes).not.toContain("RG207");
    const seen = consumers(policy, op);
    expect(seen.summary).toContain("hedged: up to 3 copies, 20 ms apart");
    expect(seen.explain).toEqual({
      plan: { kind: "hedge", maxAttempts: 3, delayMs: 20 },
      attempts: 3,
      kind: "hedge",
      fits: true,
    });
    expect(seen.analyzer).toBe(3);
    expect(op.plan).toMatchObject({
      kind: "hedge",
      attempts: 3,
      delayMs: 20,
      worstCase: { ms: 340 },
    });
    expect(seen.runtime.hedge).toMatchObject({ delayMs: 20, maxAttempts: 3 });
  });
});

describe("an operation that is not repeatable", () => {
  it("is attempted once everywhere, and its derived total is one attempt's, not the declared retry's", () => {
    // RG201: the retry set on the operation is refused, yet the model still resolves it
    const { policy, op, codes } = one(
      "    method: POST\n    path: /things\n    retry: { maxAttempts: 3 }\n",
      ["RG201"],
    );
    const seen = consumers(policy, op);
    expect(seen.summary).toContain("attempt 300ms / total 310ms · attempted once (not retry-safe)");
    expect(seen.explain).toMatchObject({ attempts: 1, kind: "single", fits: true });
    expect(seen.analyzer).toBe(1);
    expect(op.timeout.totalMs).toBe(310);
    expect(op.plan).toMatchObject({
      kind: "single",
      why: "not repeatable",
      attempts: 1,
      repeatable: false,
      idempotency: "none",
    });
    expect(op.repeatable).toBe(false);
    expect(seen.runtime).toMatchObject({
      repeatable: false,
      retry: { maxAttempts: 3 },
      hedge: null,
    });
    expect(codes).toContain("RG201");
  });
});

describe("the plan's arithmetic", () => {
  it("carries the worst case, the backoff ceilings, what fits in the total and the budget", () => {
    const text =
      "version: 1\ndependency: things\nlatency: { p99: 100ms }\nbulkhead: false\nretry: { budget: { maxTokens: 40 } }\ntimeout: { total: 700ms }\n" +
      "operations:\n  op:\n    method: GET\n    path: /things\n    retry: { maxAttempts: 3, backoff: { base: 50ms, cap: 1s } }\n";
    const policy = checkTexts([{ file: "things.yaml", text }]).policies[0]!;
    const plan = policy.operations[0]!.plan;
    expect(plan).toMatchObject({
      kind: "retry",
      attempts: 3,
      backoffCeilings: [50, 100],
      worstCase: { ms: 1050, formula: "3 attempts × 300ms + backoff 50ms + 100ms = 1050ms" },
      attemptsWithinTotal: 2,
      budget: { kind: "retry", maxTokens: 40 },
      description: "up to 3 attempts (full jitter)",
      retriedOn: "timeout, network, 408, 425, 429, 500, 502, 503, 504",
    });
  });
});
