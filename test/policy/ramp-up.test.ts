/**
 * breaker.rampUp (docs/policy.md): slow start after recovery. Validated with its range (RG106),
 * resolved to milliseconds from the policy or the project defaults, present only when set, and
 * shown by explain.
 */
import { describe, expect, it } from "vitest";
import { checkPolicyText } from "../../src/program/check.js";
import { explain } from "../../src/explain/explain.js";
import type { ResolvedPolicy } from "../../src/model/resolved.js";
import type { ConfigSettings } from "../../src/model/normalize.js";
import { policy } from "../helpers/diagnose.js";

function resolve(text: string, project: ConfigSettings = {}): ResolvedPolicy {
  const { policy: resolved, diagnostics } = checkPolicyText("policy.yaml", text, project);
  expect(diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  return resolved!;
}

describe("breaker.rampUp", () => {
  it("resolves to rampUpMs, with where it came from", () => {
    const p = resolve(policy("breaker: { rampUp: 30s }\n"));
    expect(p.breaker?.rampUpMs).toBe(30_000);
    expect(p.provenance["breaker.rampUp"]).toMatchObject({ origin: "policy" });
    const fromProject = resolve(policy("breaker: { minCalls: 20 }\n"), {
      config: { version: 1, defaults: { breaker: { rampUp: "10s" } } },
    });
    expect(fromProject.breaker?.rampUpMs).toBe(10_000);
    expect(fromProject.provenance["breaker.rampUp"]).toMatchObject({ origin: "project" });
  });

  it("is absent unless set, so breakers without one keep their settings", () => {
    const p = resolve(policy("breaker: { minCalls: 20 }\n"));
    expect(p.breaker).not.toHaveProperty("rampUpMs");
    expect(p.provenance).not.toHaveProperty("breaker.rampUp");
  });

  it("is refused outside 1ms to 1h with RG106", () => {
    for (const value of ["0ms", "2h"]) {
      const { diagnostics } = checkPolicyText(
        "policy.yaml",
        policy(`breaker: { rampUp: ${value} }\n`),
      );
      expect(diagnostics.map((d) => d.code)).toContain("RG106");
    }
  });

  it("is shown by explain", () => {
    const report = explain(resolve(policy("breaker: { rampUp: 30s }\n")));
    expect(JSON.stringify(report)).toContain("breaker.rampUp");
    expect(JSON.stringify(explain(resolve(policy("breaker: { minCalls: 20 }\n"))))).not.toContain(
      "breaker.rampUp",
    );
  });
});
