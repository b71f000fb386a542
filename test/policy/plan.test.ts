/**
 * One attempt plan per operation (src/model/plan.ts): `check`'s summary, `explain`, the
 * generated JSDoc and the runtime all read the same plan, so they cannot disagree about whether
 * an operation is attempted once, retried or hedged.
 */
import { describe, expect, it } from "vitest";
import { checkPolicyText } from "../../src/program/check.js";
import { summary } from "../../src/cli/cli.js";
import { emitClient, operationSettings } from "../../src/emit/client.js";
import { explain, renderExplainText } from "../../src/explain/explain.js";
import type { ResolvedPolicy } from "../../src/model/resolved.js";
import { describePlan } from "../../src/model/plan.js";
import {
  createDependency,
  createVirtualClock,
  ResilienceError,
  type OperationSettings,
} from "../../templates/runtime/index.js";

/** Every combination of method, key, retry and hedge, one operation each. */
const variants = [
  ["GET", "", ""],
  ["GET", "", "retry: { maxAttempts: 1 }"],
  ["GET", "", "retry: { maxAttempts: 3 }"],
  ["GET", "", "retry: false\n    hedge: { delay: 20ms, maxAttempts: 2 }"],
  ["POST", "", "retry: { maxAttempts: 3 }"],
  ["POST", "", "retry: false\n    hedge: { delay: 20ms, maxAttempts: 2 }"],
  ["POST", "idempotency: { header: Idempotency-Key }", "retry: { maxAttempts: 2 }"],
  ["PUT", "", ""],
] as const;

function resolved(): ResolvedPolicy {
  const operations = variants
    .map(
      ([method, key, layers], i) =>
        `  op${i}:\n    method: ${method}\n    path: /things\n${key ? `    ${key}\n` : ""}${layers ? `    ${layers}\n` : ""}`,
    )
    .join("");
  const text = `version: 1\ndependency: things\nlatency: { p99: 50ms }\ntimeout: { attempt: 100ms, total: 2s }\noperations:\n${operations}`;
  const { policy, diagnostics } = checkPolicyText("things.yaml", text);
  expect(diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  return policy!;
}

/** Attempts the runtime makes when every attempt fails with a retryable 503, in virtual time. */
async function attemptsInOutage(settings: OperationSettings<null>): Promise<number> {
  const clock = createVirtualClock(0);
  const dep = createDependency(
    { name: "things", deadline: null, breaker: null, bulkhead: null, budget: null },
    { clock, random: () => 0.5 },
  );
  let attempts = 0;
  const call = dep.call(settings, () => {
    attempts++;
    return Promise.reject(
      new ResilienceError({
        kind: "http",
        message: "status 503",
        status: 503,
        headers: {},
        body: "",
        transient: true,
      }),
    );
  });
  call.catch(() => undefined);
  await clock.runAll();
  await call.catch(() => undefined);
  return attempts;
}

describe("the attempt plan", () => {
  it("is one per operation, and the summary, explain, the JSDoc and the runtime all follow it", async () => {
    const policy = resolved();
    const lines = summary([policy]).split("\n");
    const client = emitClient(policy);
    const text = renderExplainText(explain(policy, {}));
    const seen = new Set<string>();
    for (const op of policy.operations) {
      const words = describePlan(op.plan);
      seen.add(words);
      expect(
        lines.find((l) => l.trim().startsWith(`${op.name} `)),
        op.name,
      ).toContain(words);
      expect(client, op.name).toContain(`Stack: attempt timeout 100 ms, total 2000 ms; ${words}`);
      const expected = op.plan.kind === "single" ? 1 : op.plan.maxAttempts;
      expect(text, op.name).toContain(`attempts      ${expected}: ${words}`);
      if (op.plan.kind !== "hedge")
        expect(
          await attemptsInOutage(operationSettings(op, true) as OperationSettings<null>),
          op.name,
        ).toBe(expected);
    }
    // the variants reach every kind of plan and every reason for a single attempt
    expect([...seen].sort()).toEqual([
      "attempted once (no retry declared)",
      "attempted once (not retry-safe)",
      "attempted once (retry.maxAttempts: 1)",
      "hedged: up to 2 copies, 20 ms apart",
      "up to 2 attempts (full jitter)",
      "up to 3 attempts (full jitter)",
    ]);
  });

  it("says maxAttempts 1 is a single attempt, not a retry", () => {
    const op = resolved().operations[1]!;
    expect(op.plan).toMatchObject({
      kind: "single",
      why: "maxAttempts 1",
      attempts: 1,
      retry: null,
      hedge: null,
    });
    expect(describePlan(op.plan)).not.toMatch(/retry 1|1 attempts/);
  });

  it("says a retry-safe operation with neither retry nor hedge is attempted once because none is declared, not because it is unsafe", () => {
    const op = resolved().operations[7]!;
    expect(op.plan.repeatable).toBe(true);
    expect(describePlan(op.plan)).toBe("attempted once (no retry declared)");
  });
});

describe("which errors are retried", () => {
  it("the JSDoc and explain list the outcomes and the named errors retry.on retries, and say a bug is never retried", () => {
    const text =
      "version: 1\ndependency: sdk\ntransport: function\noperations:\n  put:\n    idempotent: true\n    retry: { maxAttempts: 3, on: [timeout, network, { code: ECONNRESET }, { name: ThrottlingException }] }\n";
    const { policy, diagnostics } = checkPolicyText("sdk.yaml", text);
    expect(diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    // the JSDoc as one line: how it is wrapped is the emitter's business
    const jsdoc = emitClient(policy!).replace(/\n\s*\* /g, " ");
    expect(jsdoc).toContain(
      "retried on timeout, network, code ECONNRESET, name ThrottlingException; a programming error (TypeError, RangeError, ReferenceError, SyntaxError) is never retried",
    );
    expect(renderExplainText(explain(policy!, {}))).toMatch(
      /retry\.on +timeout, network, code ECONNRESET, name ThrottlingException/,
    );
  });
});
