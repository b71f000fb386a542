/**
 * Plain data from a policy (settings, fallback values) as TypeScript expression text. Strings are
 * JSON-escaped, keys quoted when needed, and `__proto__` written as a computed key so that it
 * stays an own property instead of setting the prototype.
 */
import { propertyKey } from "../model/identifiers.js";

export function literal(value: unknown, indent = ""): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number") {
    if (Number.isNaN(value)) return "Number.NaN";
    if (!Number.isFinite(value)) return value > 0 ? "Number.POSITIVE_INFINITY" : "Number.NEGATIVE_INFINITY";
    return Object.is(value, -0) ? "0" : String(value);
  }
  if (typeof value === "boolean") return String(value);
  const inner = indent + "  ";
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    const items = value.map((v) => literal(v, inner));
    const oneLine = `[${items.join(", ")}]`;
    return oneLine.length <= 80 && !oneLine.includes("\n") ? oneLine : `[\n${items.map((i) => inner + i).join(",\n")},\n${indent}]`;
  }
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) return "{}";
    const parts = entries.map(([k, v]) => `${k === "__proto__" ? `["__proto__"]` : propertyKey(k)}: ${literal(v, inner)}`);
    const oneLine = `{ ${parts.join(", ")} }`;
    return oneLine.length <= 80 && !oneLine.includes("\n") ? oneLine : `{\n${parts.map((p) => inner + p).join(",\n")},\n${indent}}`;
  }
  throw new Error(`internal: cannot write a ${typeof value} as a literal`);
}
