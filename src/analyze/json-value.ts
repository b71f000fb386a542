/**
 * A validator for the JSON Schema subset of policies (docs/policy.md, "Schemas"): object, array, string, number,
 * integer, boolean, null, enum, const, nullable, additionalProperties, allOf, oneOf / anyOf (at
 * least one alternative matches) and `$ref` to the policy's `schemas`. Used to check constant
 * fallback values against the response they stand in for.
 */
import type { JsonSchema } from "../model/resolved.js";

export interface Mismatch {
  /** Where in the value, as a JSON-path-like string: `$`, `$.items[0].id`. */
  readonly at: string;
  readonly message: string;
}

const MAX_DEPTH = 64;

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

// The standard library types JSON.stringify as returning string, but it returns undefined for
// undefined, functions and symbols; this signature says so, so show() keeps its fallback.
const stringify = JSON.stringify as (value: unknown) => string | undefined;

function show(value: unknown): string {
  const text = stringify(value) ?? String(value);
  return text.length > 40 ? text.slice(0, 37) + "..." : text;
}

const key = (at: string, name: string) =>
  /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? `${at}.${name}` : `${at}[${JSON.stringify(name)}]`;

/** The first place where `value` does not match `schema`, or undefined when it matches. */
export function firstMismatch(
  value: unknown,
  schema: JsonSchema,
  schemas: Readonly<Record<string, JsonSchema>>,
  at = "$",
  depth = 0,
): Mismatch | undefined {
  if (depth > MAX_DEPTH) return undefined;
  if (schema.$ref !== undefined) {
    const name = schema.$ref.replace(/^#\/schemas\//, "");
    const target = Object.hasOwn(schemas, name) ? schemas[name] : undefined;
    // a missing schema is reported on its own (RG218); nothing to compare against here
    if (!target) return undefined;
    if (value === null && schema.nullable) return undefined;
    return firstMismatch(value, target, schemas, at, depth + 1);
  }
  if (value === null && schema.nullable) return undefined;
  if (schema.enum !== undefined && !schema.enum.some((e) => e === value)) {
    return {
      at,
      message: `${show(value)} is not one of ${schema.enum.map((e) => JSON.stringify(e)).join(", ")}`,
    };
  }
  if (schema.const !== undefined && schema.const !== value)
    return { at, message: `${show(value)} is not ${JSON.stringify(schema.const)}` };
  for (const member of schema.allOf ?? []) {
    const m = firstMismatch(value, member, schemas, at, depth + 1);
    if (m) return m;
  }
  for (const alternatives of [schema.oneOf, schema.anyOf]) {
    if (alternatives === undefined) continue;
    const misses = alternatives.map((member) =>
      firstMismatch(value, member, schemas, at, depth + 1),
    );
    if (misses.every((m) => m !== undefined))
      return {
        at,
        message: `matches none of the ${alternatives.length} alternatives (first: ${misses[0]!.at}, ${misses[0]!.message})`,
      };
  }
  const actual = typeOf(value);
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    const ok = types.some((t) => t === actual || (t === "number" && actual === "integer"));
    if (!ok)
      return {
        at,
        message: `expected ${types.join(" or ")}${schema.nullable ? " or null" : ""}, got ${actual === "integer" ? "number" : actual} ${show(value)}`,
      };
  }
  if (actual === "array" && schema.items) {
    const items = value as unknown[];
    for (let i = 0; i < items.length; i++) {
      const m = firstMismatch(items[i], schema.items, schemas, `${at}[${i}]`, depth + 1);
      if (m) return m;
    }
  }
  if (actual === "object") {
    const obj = value as Record<string, unknown>;
    for (const name of schema.required ?? []) {
      if (!Object.hasOwn(obj, name)) return { at, message: `missing required property "${name}"` };
    }
    const props = schema.properties ?? {};
    for (const [name, v] of Object.entries(obj)) {
      const prop = Object.hasOwn(props, name) ? props[name] : undefined;
      if (prop) {
        const m = firstMismatch(v, prop, schemas, key(at, name), depth + 1);
        if (m) return m;
      } else if (schema.additionalProperties === false) {
        return {
          at,
          message: `property "${name}" is not declared and additionalProperties is false`,
        };
      } else if (typeof schema.additionalProperties === "object") {
        const m = firstMismatch(v, schema.additionalProperties, schemas, key(at, name), depth + 1);
        if (m) return m;
      }
    }
  }
  return undefined;
}
