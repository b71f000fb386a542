/**
 * deadline.minAttempt and timeout.headers: resolved with provenance, emitted into the
 * operation's settings, shown by explain; deadline.minBudget of a service policy.
 */
import { describe, expect, it } from "vitest";
import { checkPolicyText } from "../../src/program/check.js";
import { operationSettings } from "../../src/emit/client.js";
import { explain } from "../../src/explain/explain.js";
import type { ResolvedPolicy } from "../../src/model/resolved.js";
import { policy } from "../helpers/diagnose.js";

function resolve(text: string): ResolvedPolicy {
  const { policy: resolved, diagnostics } = checkPolicyText("policy.yaml", text, {});
  expect(diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  return resolved!;
}

describe("deadline.minAttempt", () => {
  it("is derived from p50, capped at the attempt timeout, with its formula", () => {
    const p = resolve(policy("latency: { p50: 80ms, p99: 200ms }\n"));
    const op = p.operations[0]!;
    expect(op.timeout.minAttemptMs).toBe(80);
    expect(op.provenance["deadline.minAttempt"]).toMatchObject({
      origin: "derived",
      formula: "p50 (80ms) = 80ms",
    });
    expect(operationSettings(op, true)).toMatchObject({
      timeout: { attemptMs: 600, minAttemptMs: 80 },
    });
    const capped = resolve(policy("latency: { p50: 80ms }\ntimeout: { attempt: 50ms }\n"))
      .operations[0]!;
    expect(capped.timeout.minAttemptMs).toBe(50);
    expect(capped.provenance["deadline.minAttempt"]?.formula).toBe(
      "p50 (80ms), capped at the attempt timeout 50ms = 50ms",
    );
  });

  it("takes the policy's value, and is absent without p50 or at 0ms", () => {
    const set = resolve(policy("latency: { p50: 80ms }\ndeadline: { minAttempt: 30ms }\n"))
      .operations[0]!;
    expect(set.timeout.minAttemptMs).toBe(30);
    expect(set.provenance["deadline.minAttempt"]).toMatchObject({ origin: "policy" });
    const none = resolve(policy("")).operations[0]!;
    expect(none.timeout.minAttemptMs).toBeUndefined();
    expect(operationSettings(none, true)).toMatchObject({
      timeout: { attemptMs: 2_000, totalMs: 2_010 },
    });
    expect((operationSettings(none, true) as { timeout: object }).timeout).not.toHaveProperty(
      "minAttemptMs",
    );
    expect(
      resolve(policy("latency: { p50: 80ms }\ndeadline: { minAttempt: 0ms }\n")).operations[0]!
        .timeout.minAttemptMs,
    ).toBeUndefined();
  });

  it("refuses a value out of range with RG106", () => {
    const { diagnostics } = checkPolicyText(
      "policy.yaml",
      policy("deadline: { minAttempt: 2h }\n"),
      {},
    );
    expect(diagnostics.map((d) => d.code)).toContain("RG106");
  });

  it("is shown by explain in the deadline layer, with its formula", () => {
    const p = resolve(policy("latency: { p50: 80ms, p99: 200ms }\n"));
    const layer = explain(p).operations[0]!.stack.find((l) => l.layer === "deadline")!;
    expect(layer.settings.find((s) => s.key === "deadline.minAttempt")).toMatchObject({
      value: 80,
      origin: "derived",
      formula: "p50 (80ms) = 80ms",
    });
  });
});

describe("timeout.headers", () => {
  it("is resolved, emitted and explained when declared", () => {
    const op = resolve(policy("timeout: { attempt: 1s, headers: 200ms }\n")).operations[0]!;
    expect(op.timeout.headersMs).toBe(200);
    expect(operationSettings(op, true)).toMatchObject({
      timeout: { attemptMs: 1_000, headersMs: 200 },
    });
    expect(resolve(policy("")).operations[0]!.timeout.headersMs).toBeUndefined();
    const { diagnostics } = checkPolicyText(
      "policy.yaml",
      policy("timeout: { headers: 0ms }\n"),
      {},
    );
    expect(diagnostics.map((d) => d.code)).toContain("RG106");
  });
});
