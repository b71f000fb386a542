/**
 * Property tests: no input, however malformed, crashes the loader; every failure is a diagnostic
 * whose position lies inside the file.
 */
import fc from "fast-check";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { checkPolicyText } from "../../src/program/check.js";
import { CODES } from "../../src/diagnostics/codes.js";

const examples = ["payments", "recommendations", "inventory", "geocoder"].map((name) =>
  readFileSync(new URL(`../../examples/checkout/resilience/${name}.yaml`, import.meta.url), "utf8"),
);

function assertWellFormed(text: string): void {
  const { diagnostics } = checkPolicyText("fuzz.yaml", text);
  for (const d of diagnostics) {
    expect(CODES[d.code]).toBeDefined();
    expect(d.span.start).toBeGreaterThanOrEqual(0);
    expect(d.span.start).toBeLessThanOrEqual(Math.max(text.length, 0));
    expect(d.span.end).toBeGreaterThanOrEqual(d.span.start);
    expect(d.message.length).toBeGreaterThan(0);
  }
}

/** Mutations that keep most of a real policy intact, so deep paths get exercised. */
const mutation = fc.oneof(
  fc.record({
    kind: fc.constant("delete" as const),
    at: fc.nat(),
    length: fc.integer({ min: 1, max: 40 }),
  }),
  fc.record({
    kind: fc.constant("insert" as const),
    at: fc.nat(),
    text: fc.oneof(
      fc.string({ maxLength: 12 }),
      fc.constantFrom(
        "{",
        "}",
        "[",
        "]",
        ": ",
        "\n  ",
        "- ",
        "&a ",
        "*a",
        "'",
        '"',
        "#",
        "250",
        "-1s",
        "50%",
        "null",
        "~",
        "\t",
      ),
    ),
  }),
  fc.record({ kind: fc.constant("swap-line" as const), a: fc.nat(), b: fc.nat() }),
);

function mutate(text: string, mutations: readonly Mutation[]): string {
  let out = text;
  for (const m of mutations) {
    if (m.kind === "delete") {
      const at = m.at % (out.length + 1);
      out = out.slice(0, at) + out.slice(at + m.length);
    } else if (m.kind === "insert") {
      const at = m.at % (out.length + 1);
      out = out.slice(0, at) + m.text + out.slice(at);
    } else {
      const lines = out.split("\n");
      const a = m.a % lines.length;
      const b = m.b % lines.length;
      [lines[a], lines[b]] = [lines[b]!, lines[a]!];
      out = lines.join("\n");
    }
  }
  return out;
}
type Mutation =
  | { kind: "delete"; at: number; length: number }
  | { kind: "insert"; at: number; text: string }
  | { kind: "swap-line"; a: number; b: number };

describe("loader robustness", () => {
  it("survives thousands of mutated real policies", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...examples),
        fc.array(mutation, { minLength: 1, maxLength: 6 }),
        (text, ms) => {
          assertWellFormed(mutate(text, ms));
        },
      ),
      { numRuns: 2000 },
    );
    // 2,000 builds of real policies: seconds on an idle machine, more on a loaded two-core one
  }, 120_000);

  it("survives arbitrary JSON-like values serialised as YAML", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), (value) => {
        assertWellFormed(stringify(value));
        assertWellFormed(stringify({ version: 1, dependency: "x", operations: value }));
        assertWellFormed(
          stringify({
            version: 1,
            dependency: "x",
            retry: value,
            breaker: value,
            operations: { a: value },
          }),
        );
      }),
      { numRuns: 1000 },
    );
  });

  it("survives random text", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300, unit: "binary" }), (text) => assertWellFormed(text)),
      { numRuns: 1000 },
    );
  });
});
