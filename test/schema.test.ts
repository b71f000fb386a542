import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { JSON_SCHEMAS } from "../src/language/json-schema.js";
import { PACKAGE_ROOT } from "../src/version.js";

describe("schema/*.schema.json", () => {
  for (const [name, render] of Object.entries(JSON_SCHEMAS)) {
    it(`${name} is up to date with the zod schema (run npm run schema)`, () => {
      expect(readFileSync(join(PACKAGE_ROOT, "schema", name), "utf8")).toBe(render());
    });

    it(`${name} describes every property, so editors can show it`, () => {
      const missing: string[] = [];
      // walk schema positions only (not keyword maps), so a property called "properties" is no trap
      const visit = (schema: unknown, path: string): void => {
        if (schema === null || typeof schema !== "object") return;
        const s = schema as Record<string, unknown>;
        for (const [key, value] of Object.entries(
          (s["properties"] ?? {}) as Record<string, Record<string, unknown>>,
        )) {
          if (typeof value["description"] !== "string" && typeof value["$ref"] !== "string")
            missing.push(`${path}.${key}`);
          visit(value, `${path}.${key}`);
        }
        for (const key of ["items", "additionalProperties", "propertyNames"])
          visit(s[key], `${path}/${key}`);
        for (const key of ["anyOf", "oneOf", "allOf"])
          for (const [i, sub] of ((s[key] ?? []) as unknown[]).entries())
            visit(sub, `${path}/${key}[${i}]`);
        for (const [name, sub] of Object.entries(
          (s["definitions"] ?? {}) as Record<string, unknown>,
        ))
          visit(sub, `#${name}`);
      };
      visit(JSON.parse(render()), "$");
      expect(missing).toEqual([]);
    });
  }

  it("every example policy points editors at the schema", () => {
    for (const name of ["payments", "recommendations", "inventory", "geocoder"]) {
      const text = readFileSync(
        join(PACKAGE_ROOT, "examples/checkout/resilience", `${name}.yaml`),
        "utf8",
      );
      expect(text.split("\n")[0]).toBe(
        "# yaml-language-server: $schema=../../../schema/policy.schema.json",
      );
    }
  });
});
