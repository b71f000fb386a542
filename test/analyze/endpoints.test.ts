// Several endpoints in the policy language and the analyzer (docs/policy.md, "Endpoints").
import { describe, expect, it } from "vitest";
import { checkTexts } from "../../src/program/check.js";
import { explain } from "../../src/explain/explain.js";
import { LineIndex } from "../../src/diagnostics/position.js";
import { at, diagnose } from "../helpers/diagnose.js";

// the analyzer's findings too (diagnose stops at validation), with 1-based positions
function analyze(text: string) {
  const index = new LineIndex(text);
  return checkTexts([{ file: "search.yaml", text }]).diagnostics.map((d) => ({
    code: d.code,
    severity: d.severity,
    message: d.message,
    hint: d.hint,
    ...index.position(d.span.start),
  }));
}

const policy = (lines: string[]) =>
  [
    "version: 1",
    "dependency: search",
    "timeout: { attempt: 300ms }",
    "bulkhead: false",
    ...lines,
    "operations:",
    "  find: { method: GET, path: /find }",
  ].join("\n");

describe("endpoints: validation", () => {
  it("refuses max under 2 or over 16 and an unknown choice, each at its value", () => {
    const text = policy(["endpoints: { max: 17, choose: random }"]);
    const found = diagnose(text);
    expect(found).toContainEqual(expect.objectContaining({ code: "RG106", ...at(text, "17") }));
    expect(found).toContainEqual(expect.objectContaining({ code: "RG107", ...at(text, "random") }));
    expect(diagnose(policy(["endpoints: { max: 1 }"])).map((d) => d.code)).toEqual(["RG106"]);
  });

  it("accepts an empty section, and the model takes the defaults", () => {
    const { policies, diagnostics } = checkTexts([
      { file: "search.yaml", text: policy(["endpoints: {}"]) },
    ]);
    expect(diagnostics).toEqual([]);
    expect(policies[0]?.endpoints).toMatchObject({ choose: "power-of-two", max: 8 });
  });

  it("is an error with transport: function (RG232), at the section's key", () => {
    const text = policy(["transport: function", "endpoints: {}"]).replace(
      "find: { method: GET, path: /find }",
      "find: { idempotent: true }",
    );
    const found = analyze(text).filter((d) => d.code === "RG232");
    expect(found).toEqual([
      expect.objectContaining({ severity: "error", ...at(text, "endpoints:") }),
    ]);
  });
});

describe("endpoints: RG231, a breaker per endpoint that cannot fill its window", () => {
  it("warns with the arithmetic when rps × window / max is under minCalls", () => {
    const text = policy([
      "latency: { rps: 10 }",
      "breaker: { window: { duration: 10s }, minCalls: 20 }",
      "endpoints: { max: 8 }",
    ]);
    const found = analyze(text).filter((d) => d.code === "RG231");
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ severity: "warning", ...at(text, "8 }") });
    expect(found[0]?.message).toContain(
      "latency.rps 10/s × window 10s / endpoints.max 8 = 12.5 calls per endpoint per window, under breaker.minCalls 20",
    );
    expect(found[0]?.hint).toContain("at most 5 fill the window");
  });

  it("is silent when each endpoint's share fills the window, or without rps", () => {
    const enough = policy([
      "latency: { rps: 10 }",
      "breaker: { window: { duration: 10s }, minCalls: 20 }",
      "endpoints: { max: 5 }",
    ]);
    expect(analyze(enough).map((d) => d.code)).not.toContain("RG231");
    const unknown = policy(["breaker: { minCalls: 20 }", "endpoints: { max: 16 }"]);
    expect(analyze(unknown).map((d) => d.code)).not.toContain("RG231");
  });
});

describe("endpoints: explain", () => {
  it("shows an endpoints layer after the breaker, with the endpoints a call may reach", () => {
    const text = policy([
      "retry: { maxAttempts: 3 }",
      "breaker: {}",
      "endpoints: { max: 2, choose: round-robin }",
    ]);
    const { policies } = checkTexts([{ file: "search.yaml", text }]);
    const stack = explain(policies[0]!).operations[0]!.stack;
    const names = stack.map((l) => l.layer);
    expect(names.indexOf("endpoints")).toBe(names.indexOf("breaker") + 1);
    const layer = stack.find((l) => l.layer === "endpoints");
    expect(layer?.settings.map((s) => [s.key, s.text])).toEqual([
      ["endpoints.choose", "round-robin"],
      ["endpoints.max", "2"],
      ["endpoints.breakers", "one per endpoint (up to 2)"],
      ["endpoints.per call", "up to 2 different (3 attempts)"],
    ]);
  });

  it("has no endpoints layer when the policy declares none", () => {
    const { policies } = checkTexts([{ file: "search.yaml", text: policy([]) }]);
    const names = explain(policies[0]!).operations[0]!.stack.map((l) => l.layer);
    expect(names).not.toContain("endpoints");
  });
});
