/**
 * RG234: the adaptive bulkhead's bounds against Little's law, on effective values
 * (docs/runtime.md, "Adaptive concurrency").
 */
import { describe, expect, it } from "vitest";
import { checkTexts } from "../../src/program/check.js";
import { LineIndex } from "../../src/diagnostics/position.js";
import { at } from "../helpers/diagnose.js";

const text = (latency: string, bulkhead: string) =>
  `version: 1\ndependency: inventory\n${latency}bulkhead: ${bulkhead}\noperations:\n  reserve: { method: GET, path: /stock }\n`;
/** The RG234 findings of one policy text, analyzed, with 1-based positions. */
function rg234(t: string, config?: string) {
  const index = new LineIndex(t);
  const project = config === undefined ? [] : [{ file: "resgen.config.yaml", text: config }];
  return checkTexts([...project, { file: "inventory.yaml", text: t }])
    .diagnostics.filter((d) => d.code === "RG234")
    .map((d) => ({
      severity: d.severity,
      ...index.position(d.span.start),
      message: d.message,
      hint: d.hint,
    }));
}

describe("RG234 adaptive concurrency bounds", () => {
  it("is silent for bounds that bracket the healthy load, or without latency to compare", () => {
    expect(rg234(text("latency: { p99: 100ms, rps: 500 }\n", "{ adaptive: {} }"))).toEqual([]);
    expect(rg234(text("", "{ maxConcurrent: 5, adaptive: { maxLimit: 5 } }"))).toEqual([]);
  });

  it("warns at maxLimit when even the highest limit is under rps × p99", () => {
    const t = text("latency: { p99: 100ms, rps: 500 }\n", "{ adaptive: { maxLimit: 30 } }");
    // the start, Little's law's 100, is above 30 first: the clamp is reported instead
    expect(rg234(t)[0]!.message).toContain("clamped to 30 at once");
    const u = text(
      "latency: { p99: 100ms, rps: 500 }\n",
      "{ maxConcurrent: 30, adaptive: { maxLimit: 30 } }",
    );
    const found = rg234(u);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({
      severity: "warning",
      ...at(u, "30 }"),
      hint: "raise maxLimit to at least rps × p99 × 2 = 100",
    });
    expect(found[0]!.message).toContain("rps × p99 = 500 × 100ms = 50 calls in flight");
  });

  it("warns at minLimit when the limit can never fall to where it limits anything", () => {
    // attempt timeout 300ms (derived from p99 100ms): 50 × 0.3 × 2 = 30
    const t = text(
      "latency: { p99: 100ms, rps: 50 }\n",
      "{ maxConcurrent: 40, adaptive: { minLimit: 35, maxLimit: 80 } }",
    );
    const found = rg234(t);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject(at(t, "35"));
    expect(found[0]!.message).toContain("rps × attempt timeout × 2 = 50 × 300ms × 2 = 30");
  });

  it("warns when layers put the start outside the interval (the project's maxConcurrent, the policy's maxLimit)", () => {
    const t = text("", "{ adaptive: { maxLimit: 20 } }");
    const found = rg234(t, "version: 1\ndefaults:\n  bulkhead: { maxConcurrent: 50 }\n");
    expect(found).toHaveLength(1);
    expect(found[0]!.message).toBe(
      "the adaptive limit starts at bulkhead.maxConcurrent 50, above adaptive.maxLimit 20: it is clamped to 20 at once",
    );
  });
});
