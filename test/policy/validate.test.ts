/**
 * `validate:` (docs/policy.md, "Response validation"): off by default, set for a policy or an
 * operation, turned off by `validate: none`, and only where there is a response schema.
 */
import { describe, expect, it } from "vitest";
import { checkPolicyText, checkTexts } from "../../src/program/check.js";
import { diagnose } from "../helpers/diagnose.js";

const policy = (top: string, op: string) => `version: 1
dependency: shop
${top}
operations:
  list: { method: GET, path: /items, response: { type: array, items: { type: string } }${op} }
  get: { method: GET, path: /item, response: { type: string } }
  ping: { method: GET, path: /ping }
`;

const validated = (text: string) =>
  checkPolicyText("shop.yaml", text).policy!.operations.map((o) => [o.name, o.validateResponse]);

describe("validate", () => {
  it("is off unless asked for", () => {
    expect(validated(policy("", ""))).toEqual([
      ["list", undefined],
      ["get", undefined],
      ["ping", undefined],
    ]);
  });

  it("applies a policy's validate: response to every operation with a response schema", () => {
    expect(validated(policy("validate: response", ""))).toEqual([
      ["list", true],
      ["get", true],
      ["ping", undefined],
    ]);
  });

  it("lets an operation turn it on, or an inherited one off", () => {
    expect(validated(policy("", ", validate: response"))).toEqual([
      ["list", true],
      ["get", undefined],
      ["ping", undefined],
    ]);
    expect(validated(policy("validate: response", ", validate: none"))).toEqual([
      ["list", undefined],
      ["get", true],
      ["ping", undefined],
    ]);
  });

  it("takes response or none only", () => {
    expect(diagnose(policy("validate: strict", "")).map((d) => d.code)).toEqual(["RG107"]);
  });
});

describe("validate in the project file's defaults", () => {
  const withDefaults = (value: string, top = "") =>
    checkTexts([
      { file: "resgen.config.yaml", text: `version: 1\ndefaults:\n  validate: ${value}\n` },
      { file: "shop.yaml", text: policy(top, "") },
    ]);

  it("applies to every policy of the project that does not set its own", () => {
    const result = withDefaults("response");
    expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(result.policies[0]!.operations.map((o) => [o.name, o.validateResponse])).toEqual([
      ["list", true],
      ["get", true],
      ["ping", undefined],
    ]);
  });

  it("loses to a policy's own validate: none", () => {
    const result = withDefaults("response", "validate: none");
    expect(result.policies[0]!.operations.map((o) => o.validateResponse)).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });

  it("takes response or none only", () => {
    const result = withDefaults("strict");
    const errors = result.diagnostics.filter((d) => d.severity === "error");
    expect(errors.map((d) => [d.code, d.file])).toEqual([["RG107", "resgen.config.yaml"]]);
  });
});
