/**
 * Names in generated code. Every name that comes from a policy goes through here, so a policy
 * can only ever produce safe identifiers or properly quoted property names.
 */

const RESERVED = new Set(
  (
    "break case catch class const continue debugger default delete do else enum export extends false finally for " +
    "function if import in instanceof new null return super switch this throw true try typeof var void while with " +
    "implements interface let package private protected public static yield await any boolean never number object " +
    "string symbol undefined unknown bigint constructor prototype arguments eval"
  ).split(" "),
);

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Words of a name: `get-charge`, `get_charge` and `getCharge` all give [get, charge]. */
function words(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
}

/** `payments-v2` → `PaymentsV2`. Non-ASCII and punctuation are dropped; a leading digit gets `_`. */
export function pascalCase(name: string): string {
  const out = words(name)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join("");
  if (out === "") return "_";
  return /^[0-9]/.test(out) ? `_${out}` : out;
}

/** `get-charge` → `getCharge`; reserved words get a trailing `_` (`delete` → `delete_`). */
export function camelCase(name: string): string {
  const pascal = pascalCase(name);
  const out = pascal.startsWith("_") ? pascal : pascal[0]!.toLowerCase() + pascal.slice(1);
  return RESERVED.has(out) ? `${out}_` : out;
}

/** A method name: camelCase, where reserved words are fine (`client.delete()`). */
export function methodName(name: string): string {
  const pascal = pascalCase(name);
  return pascal.startsWith("_") ? pascal : pascal[0]!.toLowerCase() + pascal.slice(1);
}

/** A property key as written in an interface or object literal: bare when safe, else a JSON string. */
export function propertyKey(name: string): string {
  return IDENTIFIER.test(name) && name !== "__proto__" ? name : JSON.stringify(name);
}

/**
 * The key of a method signature in an interface. `new(...)` there would declare a construct
 * signature, not a method named new, so that one name is quoted.
 */
export function methodSignatureKey(name: string): string {
  return name === "new" ? JSON.stringify(name) : propertyKey(name);
}

/** Property access on `target`: `target.name`, or `target["odd-name"]`. */
export function access(target: string, name: string): string {
  return IDENTIFIER.test(name) ? `${target}.${name}` : `${target}[${JSON.stringify(name)}]`;
}

/** Text for a JSDoc comment: a policy cannot close the comment or smuggle code after it. */
export function docText(text: string): string {
  return text.replace(/\*\//g, "*\\/").replace(/\r\n?/g, "\n").trim();
}

/** The generated module file name of a dependency (lower case, so case-insensitive disks agree). */
export function moduleName(dependency: string): string {
  return (
    words(dependency)
      .map((w) => w.toLowerCase())
      .join("-") || "dependency"
  );
}
