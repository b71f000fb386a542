/**
 * Plain data from a policy (settings, fallback values) as a TypeScript expression for the printer
 * (src/emit/printer.ts): arrays and objects on one line where they fit, else one entry per line.
 * Strings are JSON-escaped, keys quoted when needed, and `__proto__` written as a computed key so
 * that it stays an own property instead of setting the prototype.
 */
import { propertyKey } from "../model/identifiers.js";
import { list, objectLiteral, type Doc } from "./printer.js";

/** `value` as an expression. Non-finite numbers are written as `Number.NaN` and the infinities. */
export function literal(value: unknown): Doc {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number") {
    if (Number.isNaN(value)) return "Number.NaN";
    if (!Number.isFinite(value))
      return value > 0 ? "Number.POSITIVE_INFINITY" : "Number.NEGATIVE_INFINITY";
    return Object.is(value, -0) ? "0" : String(value);
  }
  if (typeof value === "boolean") return String(value);
  if (Array.isArray(value))
    return list(
      "[",
      value.map((v) => literal(v)),
      "]",
    );
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) return "{}";
    return objectLiteral(
      entries.map(([k, v]) => [
        k === "__proto__" ? `["__proto__"]` : propertyKey(k),
        ": ",
        literal(v),
      ]),
    );
  }
  throw new Error(`internal: cannot write a ${typeof value} as a literal`);
}
