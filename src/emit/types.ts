/**
 * The JSON Schema subset of policies (docs/policy.md, "Schemas") as TypeScript types. Named schemas become
 * exported interfaces or type aliases; `$ref`s become references to them, so recursive schemas
 * work. `allOf` becomes an intersection, `oneOf` / `anyOf` a union, `const` a literal, a list of
 * types a union. Anything the subset cannot say precisely becomes `unknown`, never `any`.
 *
 * A schema becomes a small type tree first (`schemaType`), so that unions can be de-duplicated and
 * members parenthesised by their structure, then a document for the printer (`typeDoc`).
 */
import type { JsonSchema } from "../model/resolved.js";
import { docText, propertyKey } from "../model/identifiers.js";
import {
  group,
  hardline,
  ifBreak,
  indent,
  join,
  jsdoc,
  line,
  lines,
  softline,
  type Doc,
} from "./printer.js";

export interface TypeContext {
  /** Type name of each named schema, by schema name (src/model/names.ts, `schemaTypeNames`). */
  readonly names: ReadonlyMap<string, string>;
}

/** A TypeScript type, as far as schemas can say one. */
export type TypeNode =
  /** A keyword, a literal or a reference: printed as it is. */
  | { readonly kind: "name"; readonly text: string }
  | { readonly kind: "array"; readonly items: TypeNode }
  | { readonly kind: "record"; readonly values: TypeNode }
  | { readonly kind: "object"; readonly properties: readonly Property[]; readonly index: boolean }
  | { readonly kind: "union" | "intersection"; readonly members: readonly TypeNode[] };

interface Property {
  readonly key: string;
  readonly optional: boolean;
  readonly type: TypeNode;
  readonly doc?: string | undefined;
}

const name = (text: string): TypeNode => ({ kind: "name", text });
const UNKNOWN = name("unknown");

const SCALARS: Readonly<Record<string, string>> = {
  string: "string",
  number: "number",
  integer: "number",
  boolean: "boolean",
  null: "null",
};

/** The type of `schema`. */
export function schemaType(schema: JsonSchema, ctx: TypeContext): TypeNode {
  const base = baseType(schema, ctx);
  return schema.nullable === true && !isName(base, "unknown") && !isName(base, "null")
    ? { kind: "union", members: [base, name("null")] }
    : base;
}

function isName(type: TypeNode, text: string): boolean {
  return type.kind === "name" && type.text === text;
}

/**
 * The schema's own type (`$ref`, `const`, `enum`, `type`), intersected with its `allOf` members
 * and with the union of its `oneOf` / `anyOf` members. A bare `type: object` next to a combinator
 * adds nothing the members do not say, so it is left out rather than widened to a record.
 */
function baseType(schema: JsonSchema, ctx: TypeContext): TypeNode {
  const combined =
    schema.allOf !== undefined || schema.oneOf !== undefined || schema.anyOf !== undefined;
  const parts: TypeNode[] = [];
  if (!combined || contributesOwnType(schema)) parts.push(ownType(schema, ctx));
  for (const member of schema.allOf ?? []) parts.push(schemaType(member, ctx));
  for (const alternatives of [schema.oneOf, schema.anyOf]) {
    if (alternatives !== undefined) parts.push(union(alternatives.map((m) => schemaType(m, ctx))));
  }
  const known = parts.filter((p) => !isName(p, "unknown"));
  if (known.length === 0) return UNKNOWN;
  return known.length === 1 ? known[0]! : { kind: "intersection", members: known };
}

/** Whether the schema says something of its own besides combinators. */
function contributesOwnType(schema: JsonSchema): boolean {
  if (schema.$ref !== undefined || schema.const !== undefined || schema.enum !== undefined)
    return true;
  if (schema.type === undefined) return false;
  if (schema.type !== "object") return true;
  return schema.properties !== undefined || schema.additionalProperties !== undefined;
}

function ownType(schema: JsonSchema, ctx: TypeContext): TypeNode {
  if (schema.$ref !== undefined) {
    const named = ctx.names.get(schema.$ref.replace(/^#\/schemas\//, ""));
    // a missing schema is reported by the analyzer before emission; stay total anyway
    return named === undefined ? UNKNOWN : name(named);
  }
  if (schema.const !== undefined) return name(JSON.stringify(schema.const));
  if (schema.enum !== undefined) {
    const values = schema.enum.map((v) => name(JSON.stringify(v)));
    return values.length === 1 ? values[0]! : { kind: "union", members: values };
  }
  if (Array.isArray(schema.type))
    return union([...new Set(schema.type)].map((t) => typeFor(t, schema, ctx)));
  return typeFor(schema.type, schema, ctx);
}

function typeFor(
  type: (JsonSchema["type"] & string) | undefined,
  schema: JsonSchema,
  ctx: TypeContext,
): TypeNode {
  switch (type) {
    case undefined:
      return UNKNOWN;
    case "array":
      return { kind: "array", items: schema.items ? schemaType(schema.items, ctx) : UNKNOWN };
    case "object":
      return objectType(schema, ctx);
    default:
      return name(SCALARS[type] ?? "unknown");
  }
}

/** A union of member types, each once; `unknown` absorbs the others. */
function union(members: readonly TypeNode[]): TypeNode {
  if (members.some((m) => isName(m, "unknown"))) return UNKNOWN;
  const unique = new Map(members.map((m) => [typeText(m), m]));
  return unique.size === 1 ? members[0]! : { kind: "union", members: [...unique.values()] };
}

/** Whether a named schema can be emitted as an interface: a plain object type, nothing combined. */
export function isInterfaceSchema(schema: JsonSchema): boolean {
  return (
    schema.type === "object" &&
    schema.nullable !== true &&
    schema.allOf === undefined &&
    schema.oneOf === undefined &&
    schema.anyOf === undefined &&
    schema.const === undefined &&
    schema.enum === undefined
  );
}

function objectType(schema: JsonSchema, ctx: TypeContext): TypeNode {
  const properties = Object.entries(schema.properties ?? {});
  const extra = schema.additionalProperties;
  if (properties.length === 0) {
    if (extra === false) return { kind: "record", values: name("never") };
    if (extra === undefined || extra === true) return { kind: "record", values: UNKNOWN };
    return { kind: "record", values: schemaType(extra, ctx) };
  }
  const required = new Set(schema.required ?? []);
  return {
    kind: "object",
    properties: properties.map(([key, prop]) => ({
      key,
      optional: !required.has(key),
      type: schemaType(prop, ctx),
      doc: prop.description ? docText(prop.description).replace(/\n/g, " ") : undefined,
    })),
    // extra properties of a declared schema are typed unknown: an index signature must admit every
    // declared property's type, which would weaken them all
    index: extra !== undefined && extra !== false,
  };
}

/** The type on one line, as the key that tells union members apart. */
function typeText(type: TypeNode): string {
  switch (type.kind) {
    case "name":
      return type.text;
    case "array":
      return `Array<${typeText(type.items)}>`;
    case "record":
      return `Record<string, ${typeText(type.values)}>`;
    case "object":
      return `{ ${type.properties.map((p) => `${propertyKey(p.key)}${p.optional ? "?" : ""}: ${typeText(p.type)}; `).join("")}${type.index ? "[key: string]: unknown; " : ""}}`;
    case "union":
    case "intersection":
      return type.members
        .map((m) => (isCombined(m) ? `(${typeText(m)})` : typeText(m)))
        .join(type.kind === "union" ? " | " : " & ");
  }
}

function isCombined(type: TypeNode): boolean {
  return type.kind === "union" || type.kind === "intersection";
}

/** Whether an object type (always printed on several lines) is part of `type`. */
function hasObject(type: TypeNode): boolean {
  switch (type.kind) {
    case "name":
      return false;
    case "array":
      return hasObject(type.items);
    case "record":
      return hasObject(type.values);
    case "object":
      return true;
    case "union":
    case "intersection":
      return type.members.some(hasObject);
  }
}

/**
 * The type as a document. Object types take one line per property; a union of simpler types
 * stays on one line where it fits, else puts each member on a line of its own after `|`.
 */
export function typeDoc(type: TypeNode): Doc {
  switch (type.kind) {
    case "name":
      return type.text;
    case "array":
      return ["Array<", typeDoc(type.items), ">"];
    case "record":
      return ["Record<string, ", typeDoc(type.values), ">"];
    case "object": {
      const members: Doc[] = type.properties.map((p) => [
        p.doc === undefined ? "" : [jsdoc(p.doc), hardline],
        `${propertyKey(p.key)}${p.optional ? "?" : ""}: `,
        typeDoc(p.type),
        ";",
      ]);
      if (type.index) members.push("[key: string]: unknown;");
      return ["{", indent([hardline, lines(members)]), hardline, "}"];
    }
    case "union":
    case "intersection": {
      const members = type.members.map((m) =>
        isCombined(m) ? ["(", typeDoc(m), ")"] : typeDoc(m),
      );
      if (type.kind === "intersection" || hasObject(type))
        return join(type.kind === "union" ? " | " : " & ", members);
      return unionDoc(members);
    }
  }
}

/** `a | b | c` where it fits, else one member a line, each after `|`. */
export function unionDoc(members: readonly Doc[]): Doc {
  if (members.length === 1) return members[0]!;
  return group(indent([softline, ifBreak("| "), join([line, "| "], members)]));
}
