/**
 * An OpenAPI document's keys are input: a schema keyword named after something every object
 * inherits (`constructor`, `toString`, …) is read as the unknown word it is, never as
 * Object.prototype's member.
 */
import { describe, expect, it } from "vitest";
import { checkTexts } from "../../src/program/check.js";
import { PROTOTYPE_NAMES } from "../helpers/prototype.js";

const POLICY = "version: 1\ndependency: shop\nopenapi: ./api.yaml\n";

function check(schema: string) {
  const api =
    "openapi: 3.1.0\ninfo: { title: Shop, version: 1.0.0 }\npaths:\n  /thing:\n    get:\n" +
    '      operationId: thing\n      responses:\n        "200":\n          description: OK.\n' +
    `          content:\n            application/json:\n              schema: ${schema}\n`;
  const checked = checkTexts([
    { file: "shop.yaml", text: POLICY },
    { file: "api.yaml", text: api },
  ]);
  return {
    // the policy declares no latency, bulkhead or timeout on purpose (RG224, RG226)
    diagnostics: checked.diagnostics.filter((d) => d.code !== "RG224" && d.code !== "RG226"),
  };
}

describe("OpenAPI schemas: inherited names", () => {
  const shown = (schema: string) => check(schema).diagnostics.map((d) => `${d.code} ${d.message}`);

  it("a keyword named after an Object.prototype member is read as any unknown keyword", () => {
    const unknown = shown("{ type: string, xUnknownWord: 1 }");
    for (const name of PROTOTYPE_NAMES) {
      const got = shown(`{ type: string, ${JSON.stringify(name)}: 1 }`);
      // the YAML reader refuses `__proto__` as a key wherever it is (RG006)
      if (name === "__proto__") expect(got).toEqual(["RG006 the key __proto__ is not supported"]);
      else expect(got, name).toEqual(unknown);
    }
  });
});
