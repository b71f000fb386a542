// Response validation: the helpers generated validators call, and the `parse` error an invalid
// response fails with.
import { ResilienceError } from "./errors.js";
import type { AttemptContext } from "./transport.js";

/**
 * A generated validator (`validate: response`, docs/policy.md): the first problem of `value`
 * against the response schema, or `undefined` when it matches. A problem starts with its path
 * from `value` (`.items[3].price: expected number, got string`; `: expected object, got array`
 * for `value` itself), so a validator that calls another prepends its own part of the path, and
 * only when something failed: a value that matches builds no string.
 */
export type Validator = (value: unknown) => string | undefined;

/** Whether `value` is a JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** What `value` is, for a message: its JSON type, or `nothing` for no value at all. */
function kindOf(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

/** `value` as a short JSON text, for a message. */
function shown(value: unknown): string {
  // JSON.stringify gives undefined for no value (a missing property)
  const text = value === undefined ? "nothing" : JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

/** `<at>: expected <what>, got <kind>` (`at` is the path from the validated value). */
export function expectedType(at: string, what: string, value: unknown): string {
  const kind = kindOf(value);
  return `${at}: expected ${what}, got ${kind === "number" ? `number ${shown(value)}` : kind}`;
}

/** `<at>: expected one of <values>, got <value>`, for `enum` and `const`. */
export function notAllowed(at: string, allowed: readonly unknown[], value: unknown): string {
  const list = allowed.map(shown).join(" | ");
  return `${at}: expected ${allowed.length === 1 ? list : `one of ${list}`}, got ${shown(value)}`;
}

/** `<at>.key: required property missing`. */
export function missingProperty(at: string, key: string): string {
  return `${propertyPath(at, key)}: required property missing`;
}

/** `<at>.key: unexpected property` (`additionalProperties: false`). */
export function unexpectedProperty(at: string, key: string): string {
  return `${propertyPath(at, key)}: unexpected property`;
}

/** The path of a property: `.price`, or `["unit price"]` for a key that is not a plain name. */
export function propertyPath(at: string, key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${at}.${key}` : `${at}[${JSON.stringify(key)}]`;
}

/**
 * `oneOf` / `anyOf`, checked alike: `undefined` when `value` matches at least one alternative,
 * else the problem, with the first alternative's own (its path from the same value).
 */
export function noAlternative(
  value: unknown,
  alternatives: readonly Validator[],
): string | undefined {
  let first: string | undefined;
  for (const check of alternatives) {
    const problem = check(value);
    if (problem === undefined) return undefined;
    first ??= problem;
  }
  const why = first === undefined ? "" : first.startsWith(":") ? first : ` at ${first}`;
  return `: matches none of the ${String(alternatives.length)} alternatives; the first fails${why}`;
}

/**
 * `value` when `validate` finds no problem in it; else a `parse` error, not transient (the same
 * request would get the same answer), naming the path: docs/runtime.md, "Response validation".
 */
export function checkedResponse<T>(
  value: T,
  validate: Validator,
  ctx: AttemptContext,
  what: string,
  response?: { readonly status: number; readonly body: string },
): T {
  const problem = validate(value);
  if (problem === undefined) return value;
  throw new ResilienceError({
    kind: "parse",
    message: `${ctx.dependency}.${ctx.operation}: ${what} does not match its schema: $${problem}`,
    dependency: ctx.dependency,
    operation: ctx.operation,
    transient: false,
    ...(response === undefined ? {} : { status: response.status, body: response.body }),
  });
}

/** A function transport's answer, checked once it resolves (see {@link checkedResponse}). */
export async function checkedResult<T>(
  pending: T | Promise<T>,
  validate: Validator,
  ctx: AttemptContext,
): Promise<T> {
  return checkedResponse(await pending, validate, ctx, "the function returned a value that");
}
