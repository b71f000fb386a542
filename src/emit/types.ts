/**
 * The JSON Schema subset of policies (docs/policy.md, "Schemas") as TypeScript types. Named schemas become
 * exported interfaces or type aliases; `$ref`s become references to them, so recursive schemas
 * work. `allOf` becomes an intersection, `oneOf` / `anyOf` a union, `const` a literal, a list of
 * types a union. Anything the subset cannot say precisely becomes `unknown`, never `any`.
 */
import type { JsonSchema } from "../model/resolved.js";
import { docText, pascalCase, propertyKey } from "../model/identifiers.js";

export interface TypeContext {
  /** Type name of each named schema, by schema name. */
  readonly names: ReadonlyMap<string, string>;
}

const SCALARS: Readonly<Record<string, string>> = {
  string: "string",
  number: "number",
  integer: "number",
  boolean: "boolean",
  null: "null",
};

/** The TypeScript type text for `schema`. `indent` is the indentation of the line it starts on. */
export function typeOf(schema: JsonSchema, ctx: TypeContext, indent = ""): string {
  const base = baseType(schema, ctx, indent);
  return schema.nullable === true && base !== "unknown" && base !== "null" ? `${wrap(base)} | null` : base;
}

/**
 * The schema's own type (`$ref`, `const`, `enum`, `type`), intersected with its `allOf` members
 * and with the union of its `oneOf` / `anyOf` members. A bare `type: object` next to a combinator
 * adds nothing the members do not say, so it is left out rather than widened to a record.
 */
function baseType(schema: JsonSchema, ctx: TypeContext, indent: string): string {
  const combined = schema.allOf !== undefined || schema.oneOf !== undefined || schema.anyOf !== undefined;
  const parts: string[] = [];
  if (!combined || contributesOwnType(schema)) parts.push(ownType(schema, ctx, indent));
  for (const member of schema.allOf ?? []) parts.push(typeOf(member, ctx, indent));
  for (const alternatives of [schema.oneOf, schema.anyOf]) {
    if (alternatives !== undefined) parts.push(union(alternatives.map((m) => typeOf(m, ctx, indent))));
  }
  const known = parts.filter((p) => p !== "unknown");
  if (known.length === 0) return "unknown";
  return known.length === 1 ? known[0]! : known.map(group).join(" & ");
}

/** Whether the schema says something of its own besides combinators. */
function contributesOwnType(schema: JsonSchema): boolean {
  if (schema.$ref !== undefined || schema.const !== undefined || schema.enum !== undefined) return true;
  if (schema.type === undefined) return false;
  if (schema.type !== "object") return true;
  return schema.properties !== undefined || schema.additionalProperties !== undefined;
}

function ownType(schema: JsonSchema, ctx: TypeContext, indent: string): string {
  if (schema.$ref !== undefined) {
    const name = ctx.names.get(schema.$ref.replace(/^#\/schemas\//, ""));
    // a missing schema is reported by the analyzer before emission; stay total anyway
    return name ?? "unknown";
  }
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum !== undefined) return schema.enum.map((v) => JSON.stringify(v)).join(" | ");
  if (Array.isArray(schema.type)) return union([...new Set(schema.type)].map((t) => typeFor(t, schema, ctx, indent)));
  return typeFor(schema.type, schema, ctx, indent);
}

function typeFor(type: JsonSchema["type"] & string | undefined, schema: JsonSchema, ctx: TypeContext, indent: string): string {
  switch (type) {
    case undefined:
      return "unknown";
    case "array":
      return `Array<${schema.items ? typeOf(schema.items, ctx, indent) : "unknown"}>`;
    case "object":
      return objectType(schema, ctx, indent);
    default:
      return SCALARS[type] ?? "unknown";
  }
}

/** A union of member types; `unknown` absorbs the others. */
function union(members: readonly string[]): string {
  if (members.includes("unknown")) return "unknown";
  const unique = [...new Set(members)];
  return unique.length === 1 ? unique[0]! : unique.map(group).join(" | ");
}

/** Parenthesises a type that has a top-level `|` or `&`, so it can be a member of another. */
function group(type: string): string {
  let depth = 0;
  for (let i = 0; i < type.length; i++) {
    const ch = type[i]!;
    if (ch === '"') {
      // skip a string literal (JSON.stringify escapes quotes inside it)
      for (i++; i < type.length && type[i] !== '"'; i++) if (type[i] === "\\") i++;
    } else if (ch === "{" || ch === "(" || ch === "<" || ch === "[") depth++;
    else if (ch === "}" || ch === ")" || ch === ">" || ch === "]") depth--;
    else if (depth === 0 && (ch === "|" || ch === "&")) return `(${type})`;
  }
  return type;
}

/** Whether a named schema can be emitted as an interface: a plain object type, nothing combined. */
export function isInterfaceSchema(schema: JsonSchema): boolean {
  return schema.type === "object" && schema.nullable !== true && schema.allOf === undefined && schema.oneOf === undefined && schema.anyOf === undefined && schema.const === undefined && schema.enum === undefined;
}

function objectType(schema: JsonSchema, ctx: TypeContext, indent: string): string {
  const properties = Object.entries(schema.properties ?? {});
  const extra = schema.additionalProperties;
  if (properties.length === 0) {
    if (extra === false) return "Record<string, never>";
    if (extra === undefined || extra === true) return "Record<string, unknown>";
    return `Record<string, ${typeOf(extra, ctx, indent)}>`;
  }
  const inner = indent + "  ";
  const required = new Set(schema.required ?? []);
  const lines = properties.map(([name, prop]) => {
    const doc = prop.description ? `${inner}/** ${docText(prop.description).replace(/\n/g, " ")} */\n` : "";
    return `${doc}${inner}${propertyKey(name)}${required.has(name) ? "" : "?"}: ${typeOf(prop, ctx, inner)};`;
  });
  // extra properties of a declared schema are typed unknown: an index signature must admit every
  // declared property's type, which would weaken them all
  if (extra !== undefined && extra !== false) lines.push(`${inner}[key: string]: unknown;`);
  return `{\n${lines.join("\n")}\n${indent}}`;
}

function wrap(type: string): string {
  return /^[A-Za-z0-9_<>.,\s[\]]+$/.test(type) ? type : group(type);
}

/**
 * Names a schema type must not take: globals the generated module (or code importing its types)
 * relies on, and what it imports from the runtime. Schemas from OpenAPI documents are often
 * called `Error`, `Date` or `Record`.
 */
const RESERVED: ReadonlySet<string> = new Set([
  "Array", "ReadonlyArray", "Record", "Readonly", "Partial", "Promise", "Object", "String", "Number", "Boolean", "Symbol", "BigInt",
  "Date", "Error", "Map", "Set", "JSON", "Math", "URL", "Request", "Response", "Headers", "AbortSignal", "Function",
  "AttemptContext", "CallOptions", "Clock", "DependencyHealth", "DependencySettings", "Observer", "OperationSettings", "Outcome", "Random", "ResilienceError",
  "OpenTelemetryOptions",
]);

/** Type names for the named schemas of a policy, avoiding the names the client module uses. */
export function schemaTypeNames(schemas: Readonly<Record<string, JsonSchema>>, taken: ReadonlySet<string>): Map<string, string> {
  const names = new Map<string, string>();
  const used = new Set([...taken, ...RESERVED]);
  for (const name of Object.keys(schemas).sort()) {
    let candidate = pascalCase(name);
    while (used.has(candidate)) candidate += "Schema";
    used.add(candidate);
    names.set(name, candidate);
  }
  return names;
}
