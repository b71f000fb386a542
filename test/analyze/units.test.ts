/**
 * The analyzer's building blocks: the JSON Schema subset validator behind RG216, retry chains
 * (RG220) through diamonds and cycles, and what each check leaves alone.
 */
import { describe, expect, it } from "vitest";
import { firstMismatch } from "../../src/analyze/json-value.js";
import { checkTexts } from "../../src/program/check.js";
import type { JsonSchema } from "../../src/model/resolved.js";

const schemas: Record<string, JsonSchema> = {
  Item: {
    type: "object",
    properties: {
      id: { type: "string" },
      score: { type: "number" },
      tags: { type: "array", items: { type: "string" } },
    },
    required: ["id"],
  },
  Strict: { type: "object", properties: { a: { type: "integer" } }, additionalProperties: false },
  Node: { type: "object", properties: { next: { $ref: "#/schemas/Node", nullable: true } } },
};

describe("firstMismatch (JSON Schema subset)", () => {
  it("accepts matching values, integers as numbers, nullable nulls and extra properties by default", () => {
    expect(
      firstMismatch(
        [{ id: "a", score: 3, tags: ["x"], extra: true }],
        { type: "array", items: { $ref: "#/schemas/Item" } },
        schemas,
      ),
    ).toBeUndefined();
    expect(firstMismatch(null, { type: "string", nullable: true }, schemas)).toBeUndefined();
    expect(
      firstMismatch({ next: { next: { next: null } } }, { $ref: "#/schemas/Node" }, schemas),
    ).toBeUndefined();
  });

  it("names the first place that differs", () => {
    expect(
      firstMismatch(
        [{ id: "a" }, { score: 1 }],
        { type: "array", items: { $ref: "#/schemas/Item" } },
        schemas,
      ),
    ).toEqual({ at: "$[1]", message: 'missing required property "id"' });
    expect(firstMismatch({ id: "a", tags: ["x", 2] }, { $ref: "#/schemas/Item" }, schemas)).toEqual(
      { at: "$.tags[1]", message: "expected string, got number 2" },
    );
    expect(firstMismatch(1.5, { type: "integer" }, schemas)?.message).toBe(
      "expected integer, got number 1.5",
    );
    expect(firstMismatch("maybe", { type: "string", enum: ["yes", "no"] }, schemas)?.message).toBe(
      '"maybe" is not one of "yes", "no"',
    );
    expect(firstMismatch({ a: 1, b: 2 }, { $ref: "#/schemas/Strict" }, schemas)?.message).toBe(
      'property "b" is not declared and additionalProperties is false',
    );
    expect(
      firstMismatch(
        { "odd key": 1 },
        { type: "object", additionalProperties: { type: "string" } },
        schemas,
      )?.at,
    ).toBe('$["odd key"]');
    expect(firstMismatch(null, { type: "object" }, schemas)?.message).toBe(
      "expected object, got null null",
    );
  });
});

// `bulkhead: false`: these policies show chains and what each check leaves alone, not RG224
const policy = (name: string, body: string) => ({
  file: `${name}.yaml`,
  text: `version: 1\ndependency: ${name}\nbulkhead: false\n${body}`,
});
// they leave timeouts at the built-in default, the same at every hop: RG226 and RG227 (timeouts) are not what they show
const findings = (files: { file: string; text: string }[]) =>
  checkTexts(files).diagnostics.filter((d) => d.code !== "RG226" && d.code !== "RG227");
const codes = (files: { file: string; text: string }[]) =>
  findings(files).map((d) => `${d.file} ${d.code}`);

describe("retry chains", () => {
  const op = 'operations:\n  get: { method: GET, path: "/x/{id}" }\n';
  const retry = (n: number) => `retry: { maxAttempts: ${n}, budget: {} }\n`;

  it("multiplies along the worst branch of a diamond and reports it once, at the root", () => {
    const files = [
      policy("a", `calls: [b, c]\n${retry(2)}${op}`),
      policy("b", `calls: [d]\n${retry(2)}${op}`),
      policy("c", `calls: [d]\n${retry(4)}${op}`),
      policy("d", `${retry(3)}${op}`),
    ];
    const found = findings(files);
    expect(found.map((d) => `${d.file} ${d.code}`)).toEqual(["a.yaml RG220"]);
    expect(found[0]!.message).toContain("a → c → d: 2 × 4 × 3 = 24");
  });

  it("stays quiet at 10 calls and below, and counts a non-retry-safe operation once", () => {
    expect(
      codes([policy("a", `calls: [b]\n${retry(2)}${op}`), policy("b", `${retry(5)}${op}`)]),
    ).toEqual([]);
    const post = "operations:\n  create: { method: POST, path: /x, retry: false }\n";
    expect(
      codes([
        policy("a", `calls: [b]\n${retry(4)}${op}`),
        policy("b", `calls: [c]\n${post}`),
        policy("c", `${retry(2)}${op}`),
      ]),
    ).toEqual([]);
  });

  it("survives cycles, including a dependency that calls itself", () => {
    const found = codes([
      policy("a", `calls: [a, b]\n${retry(4)}${op}`),
      policy("b", `calls: [a]\n${retry(4)}${op}`),
    ]);
    expect(found).toEqual(["a.yaml RG220"]);
  });
});

describe("what the checks leave alone", () => {
  it("an explicit `fallback: { kind: none }` and `budget: false` are deliberate", () => {
    const text =
      "essential: false\nlatency: { rps: 10 }\nretry: { maxAttempts: 2, budget: false }\noperations:\n  get: { method: GET, path: /x, fallback: { kind: none } }\n";
    expect(codes([policy("a", text)])).toEqual([]);
  });

  it("operations without params: keep untyped path parameters", () => {
    expect(
      codes([policy("a", 'operations:\n  get: { method: GET, path: "/a/{b}/c/{d}" }\n')]),
    ).toEqual([]);
  });

  it("a non-retry-safe operation inherits nothing that needs a budget, jitter or a fitting total", () => {
    const text =
      "timeout: { attempt: 500ms, total: 600ms }\nretry: { maxAttempts: 5, backoff: { jitter: none } }\noperations:\n  create: { method: POST, path: /x, retry: false }\n";
    expect(codes([policy("a", text)])).toEqual([]);
  });
});

describe("a failing check", () => {
  it("is reported as RG299 and the run goes on", async () => {
    const { analyze } = await import("../../src/analyze/index.js");
    const { policies } = checkTexts([
      policy("a", "essential: false\noperations:\n  get: { method: GET, path: /x }\n"),
    ]);
    const broken = {
      locate: () => {
        throw new Error("no positions today");
      },
      locateKey: () => undefined,
    };
    const found = analyze(policies, broken);
    expect(found.length).toBeGreaterThan(0);
    expect(found.every((d) => d.code === "RG299" && d.file === "a.yaml")).toBe(true);
    expect(found[0]!.message).toContain("no positions today");
  });
});
