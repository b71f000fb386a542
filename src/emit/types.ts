/**
 * The JSON Schema subset of policies (DESIGN §2) as TypeScript types. Named schemas become
 * exported interfaces or type aliases; `$ref`s become references to them, so recursive schemas
 * work. Anything the subset cannot say precisely becomes `unknown`, never `any`.
 */
import type { JsonSchema } from "../policy/model.js";
import { docText, pascalCase, propertyKey } from "./names.js";

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

function baseType(schema: JsonSchema, ctx: TypeContext, indent: string): string {
  if (schema.$ref !== undefined) {
    const name = ctx.names.get(schema.$ref.replace(/^#\/schemas\//, ""));
    // a missing schema is reported by the analyzer before emission; stay total anyway
    return name ?? "unknown";
  }
  if (schema.enum !== undefined) return schema.enum.map((v) => JSON.stringify(v)).join(" | ");
  switch (schema.type) {
    case undefined:
      return "unknown";
    case "array":
      return `Array<${schema.items ? typeOf(schema.items, ctx, indent) : "unknown"}>`;
    case "object":
      return objectType(schema, ctx, indent);
    default:
      return SCALARS[schema.type] ?? "unknown";
  }
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
  return /^[A-Za-z0-9_<>.,\s[\]]+$/.test(type) || type.startsWith("{") ? type : `(${type})`;
}

/** Type names for the named schemas of a policy, avoiding the names the client module uses. */
export function schemaTypeNames(schemas: Readonly<Record<string, JsonSchema>>, taken: ReadonlySet<string>): Map<string, string> {
  const names = new Map<string, string>();
  const used = new Set(taken);
  for (const name of Object.keys(schemas).sort()) {
    let candidate = pascalCase(name);
    while (used.has(candidate)) candidate += "Schema";
    used.add(candidate);
    names.set(name, candidate);
  }
  return names;
}
