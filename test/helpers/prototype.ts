/**
 * Keys that name something every object inherits, and the levels of an overrides document, for
 * the tests that check such keys are never read as settings (docs/runtime.md, "Reconfiguration").
 */

/** Every name an object inherits from Object.prototype, `__proto__` included. */
export const PROTOTYPE_NAMES = Object.getOwnPropertyNames(Object.prototype).sort();

/** Every level of a change that holds named settings, as a path from the top. */
export const LEVELS: readonly (readonly string[])[] = [
  [],
  ["breaker"],
  ["breaker", "slowCall"],
  ["breaker", "halfOpen"],
  ["bulkhead"],
  ["rateLimit"],
  ["operations"],
  ["operations", "getCharge"],
  ["operations", "getCharge", "timeout"],
  ["operations", "getCharge", "retry"],
  ["operations", "getCharge", "retry", "backoff"],
];

/**
 * The JSON text of a change holding `value` under `name` at `level`: built as text, so that
 * `__proto__` is an own key once parsed, as it is in a document read from a file.
 */
export function documentText(level: readonly string[], name: string, value = "1"): string {
  let text = `{${JSON.stringify(name)}:${value}}`;
  for (const key of [...level].reverse()) text = `{${JSON.stringify(key)}:${text}}`;
  return text;
}
