/**
 * OpenAPI Schema Objects (3.0 and 3.1) → the policy language's JSON Schema subset. A `$ref` to a
 * schema becomes a named schema (so recursive schemas become recursive named types); what the
 * subset cannot say is reported with RG606, naming the schema, and left out of the type.
 */
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import type { Path } from "../language/parse.js";
import { SCHEMA_TYPES, type TypeSchemaInput } from "../language/schema.js";
import { isObject, type OpenApiVersion, type Raw } from "./description.js";
import type { DocumentSet } from "./references.js";

type SchemaType = (typeof SCHEMA_TYPES)[number];
const TYPES: ReadonlySet<string> = new Set(SCHEMA_TYPES);

/**
 * Keywords that would change the type but that a TypeScript type cannot carry. Validation-only
 * keywords (pattern, minimum, maxLength, ...) and annotations (example, readOnly, xml, ...) do
 * not change the type and are ignored without a word.
 */
const UNSUPPORTED: Readonly<Record<string, string>> = {
  not: "`not` (a negated schema)",
  if: "`if`/`then`/`else` (conditional schemas)",
  patternProperties: "`patternProperties`",
  prefixItems: "`prefixItems` (tuples)",
  dependentSchemas: "`dependentSchemas`",
  unevaluatedProperties: "`unevaluatedProperties`",
  unevaluatedItems: "`unevaluatedItems`",
  propertyNames: "`propertyNames`",
  contains: "`contains`",
  $dynamicRef: "`$dynamicRef`",
};

const MAX_DEPTH = 64;

/** Converts the schemas an import needs; `schemas` collects the named ones. */
export class SchemaConverter {
  /** Named schemas, by the name they get in the policy model. */
  readonly schemas: Record<string, TypeSchemaInput> = {};
  readonly diagnostics: Diagnostic[] = [];
  private readonly names = new Map<string, string>();
  /** Where each named schema is defined in the document. */
  private readonly defined = new Map<string, Path>();
  private readonly taken = new Set<string>();

  constructor(
    private readonly docs: DocumentSet,
    private readonly version: OpenApiVersion,
  ) {}

  /** The schema at `path` (the value `node`), as the policy subset. `label` names it in messages. */
  convert(node: unknown, path: Path, label: string, depth = 0): TypeSchemaInput {
    if (depth > MAX_DEPTH) {
      this.report(
        path,
        `schema ${label} nests deeper than ${MAX_DEPTH} levels: typed unknown below that depth`,
        "name the inner schemas under components/schemas and refer to them with $ref",
      );
      return {};
    }
    if (node === true || (isObject(node) && Object.keys(node).length === 0)) return {};
    if (node === false) {
      this.report(
        path,
        `schema ${label} is \`false\` (no value is allowed): typed unknown`,
        undefined,
      );
      return {};
    }
    if (!isObject(node)) {
      this.report(
        path,
        `schema ${label} is not a schema object`,
        "a schema is a mapping such as `{ type: string }`",
      );
      return {};
    }

    if (typeof node["$ref"] === "string") return this.reference(node, path, label, depth);

    const out: TypeSchemaInput = {};
    const type = node["type"];
    if (typeof type === "string") {
      if (TYPES.has(type)) out.type = type as SchemaType;
      else
        this.report(
          [...path, "type"],
          `schema ${label} has type "${type}", which is not a JSON type`,
          `use one of ${SCHEMA_TYPES.join(", ")}`,
        );
    } else if (Array.isArray(type)) {
      const known = type.filter((t): t is SchemaType => typeof t === "string" && TYPES.has(t));
      if (known.length !== type.length)
        this.report(
          [...path, "type"],
          `schema ${label} lists a type that is not a JSON type`,
          `use ${SCHEMA_TYPES.join(", ")}`,
        );
      const others = known.filter((t) => t !== "null");
      if (known.includes("null") && others.length === 1) {
        out.type = others[0]!;
        out.nullable = true;
      } else if (known.length > 0) {
        out.type = [...new Set(known)];
      }
    }
    // 3.0's nullable; 3.1 writes type: [T, "null"], but a leftover nullable still means null is allowed
    if (node["nullable"] === true) out.nullable = true;
    if (typeof node["description"] === "string") out.description = node["description"];
    if (typeof node["format"] === "string") out.format = node["format"];

    if (Array.isArray(node["enum"])) {
      const values = node["enum"].filter(
        (v): v is string | number | boolean | null =>
          v === null || ["string", "number", "boolean"].includes(typeof v),
      );
      if (values.length !== node["enum"].length)
        this.report(
          [...path, "enum"],
          `schema ${label} has enum values that are objects or lists: they are left out of the type`,
          "a TypeScript literal type holds strings, numbers, booleans and null",
        );
      if (values.length > 0) out.enum = values;
    }
    if (Object.hasOwn(node, "const")) {
      const c = node["const"];
      if (c === null || ["string", "number", "boolean"].includes(typeof c))
        out.const = c as string | number | boolean | null;
      else
        this.report(
          [...path, "const"],
          `schema ${label} has a const that is an object or a list: typed by its other keywords`,
          undefined,
        );
    }

    if (node["properties"] !== undefined) {
      const props = node["properties"];
      if (isObject(props)) {
        out.properties = {};
        for (const [name, prop] of Object.entries(props))
          out.properties[name] = this.convert(
            prop,
            [...path, "properties", name],
            `${label}.${name}`,
            depth + 1,
          );
      } else {
        this.report(
          [...path, "properties"],
          `schema ${label}: properties is not a mapping`,
          undefined,
        );
      }
      if (out.type === undefined) out.type = "object";
    }
    if (Array.isArray(node["required"]))
      out.required = node["required"].filter((r): r is string => typeof r === "string");
    if (node["items"] !== undefined) {
      if (Array.isArray(node["items"]))
        this.report(
          [...path, "items"],
          `schema ${label} lists items as a tuple, which OpenAPI 3 does not allow: typed unknown[]`,
          "use `prefixItems` (3.1) or one `items` schema",
        );
      else out.items = this.convert(node["items"], [...path, "items"], `${label}[]`, depth + 1);
      if (out.type === undefined) out.type = "array";
    }
    const extra = node["additionalProperties"];
    if (typeof extra === "boolean") out.additionalProperties = extra;
    else if (extra !== undefined)
      out.additionalProperties = this.convert(
        extra,
        [...path, "additionalProperties"],
        `${label}[key]`,
        depth + 1,
      );

    for (const key of ["allOf", "oneOf", "anyOf"] as const) {
      const members = node[key];
      if (members === undefined) continue;
      if (!Array.isArray(members) || members.length === 0) {
        this.report(
          [...path, key],
          `schema ${label}: ${key} is not a non-empty list of schemas`,
          undefined,
        );
        continue;
      }
      out[key] = members.map((m, i) =>
        this.convert(m, [...path, key, i], `${label} (${key}[${i}])`, depth + 1),
      );
    }
    if (node["discriminator"] !== undefined) this.discriminate(node, out, path, label);

    for (const key of Object.keys(node)) {
      const what = Object.hasOwn(UNSUPPORTED, key) ? UNSUPPORTED[key] : undefined;
      if (what === undefined) continue;
      this.report(
        [...path, key],
        `schema ${label} uses ${what}, which a TypeScript type cannot express: the generated type ignores it and is wider than the schema`,
        "describe the shape without it, or accept the wider type",
      );
    }
    return out;
  }

  /** `{ $ref }`: a named schema; in 3.1, keywords next to it also apply (an intersection). */
  private reference(node: Raw, path: Path, label: string, depth: number): TypeSchemaInput {
    const ref = node["$ref"] as string;
    const named = this.named(ref, [...path, "$ref"]);
    const siblings = Object.keys(node).filter(
      (k) =>
        k !== "$ref" &&
        k !== "description" &&
        k !== "summary" &&
        !k.startsWith("x-") &&
        k !== "example" &&
        k !== "examples",
    );
    const out: TypeSchemaInput = { ...named };
    if (typeof node["description"] === "string") out.description = node["description"];
    if (this.version === "3.1" && siblings.length > 0) {
      const rest = Object.fromEntries(
        Object.entries(node).filter(([k]) => k !== "$ref" && k !== "description"),
      );
      const own = this.convert(rest, path, label, depth + 1);
      return {
        ...(out.description === undefined ? {} : { description: out.description }),
        allOf: [named, own],
      };
    }
    return out;
  }

  /**
   * A `$ref` to a schema (written at `at`, in whichever file), as a reference to the named schema
   * it becomes. Each target is converted once, however many files refer to it.
   */
  named(ref: string, at: Path): TypeSchemaInput {
    const resolved = this.docs.resolve(ref, at);
    if ("problem" in resolved) {
      this.error(at, resolved.problem, resolved.hint ?? "fix the reference");
      return {};
    }
    const target = resolved.path;
    const id = JSON.stringify(target);
    const known = this.names.get(id);
    if (known !== undefined) return { $ref: `#/schemas/${known}` };
    const value = this.docs.valueAt(target);
    if (value === undefined) {
      this.error(
        at,
        `$ref "${ref}" points at nothing: ${this.docs.describeMissing(target)}`,
        "fix the reference, or add the schema it names",
      );
      return {};
    }
    const name = this.nameFor(this.docs.localPath(target));
    this.names.set(id, name);
    this.defined.set(name, target);
    // registered before converting, so a schema that refers to itself finds its own name
    this.schemas[name] = {};
    this.schemas[name] = this.convert(value, target, name);
    return { $ref: `#/schemas/${name}` };
  }

  private nameFor(target: Path): string {
    const isComponent =
      target.length === 3 && target[0] === "components" && target[1] === "schemas";
    const raw = isComponent ? String(target[2]) : target.map(String).join("_");
    let base = raw.replace(/[^A-Za-z0-9_]+/g, "_").replace(/^_+|_+$/g, "") || "Schema";
    if (!/^[A-Za-z_]/.test(base)) base = `_${base}`;
    let name = base;
    for (let n = 2; this.taken.has(name); n++) name = `${base}${n}`;
    this.taken.add(name);
    return name;
  }

  /**
   * `discriminator` with `oneOf`/`anyOf` of `$ref`s: each alternative gets its discriminating
   * property as a literal (from `mapping`, else the schema's name), so the union narrows.
   */
  private discriminate(node: Raw, out: TypeSchemaInput, path: Path, label: string): void {
    const d = node["discriminator"];
    const property =
      isObject(d) && typeof d["propertyName"] === "string" ? d["propertyName"] : undefined;
    const key = out.oneOf ? "oneOf" : out.anyOf ? "anyOf" : undefined;
    if (property === undefined) {
      this.report(
        [...path, "discriminator"],
        `schema ${label}: discriminator has no propertyName`,
        undefined,
      );
      return;
    }
    if (key === undefined) {
      this.report(
        [...path, "discriminator"],
        `schema ${label} has a discriminator without oneOf/anyOf: the schemas that extend it are not part of its type`,
        "list the alternatives under oneOf with the discriminator next to it",
      );
      return;
    }
    const raw = node[key] as unknown[];
    const mapping = isObject(d) && isObject(d["mapping"]) ? d["mapping"] : {};
    out[key] = out[key]!.map((member, i) => {
      const ref =
        isObject(raw[i]) && typeof raw[i]["$ref"] === "string" ? raw[i]["$ref"] : undefined;
      if (ref === undefined || member.$ref === undefined) return member;
      const fromMapping = Object.entries(mapping)
        .filter(([, target]) => target === ref || target === ref.split("/").pop())
        .map(([value]) => value);
      const values =
        fromMapping.length > 0 ? fromMapping : [decodeURIComponent(ref.split("/").pop() ?? "")];
      const tag: TypeSchemaInput =
        values.length === 1 ? { const: values[0]! } : { type: "string", enum: values };
      return {
        allOf: [member, { type: "object", properties: { [property]: tag }, required: [property] }],
      };
    });
  }

  /**
   * Named schemas that are their own type with no object or array in between (`A: { $ref: B }`,
   * `B: { allOf: [{ $ref: A }] }`): no type can say that. Reported as RG603 at the first one's
   * definition; the import then fails, so no circular alias is ever emitted.
   */
  checkCycles(): void {
    const direct = (schema: TypeSchemaInput): string[] => [
      ...(schema.$ref === undefined ? [] : [schema.$ref.replace(/^#\/schemas\//, "")]),
      ...[schema.allOf, schema.oneOf, schema.anyOf].flatMap((members) =>
        (members ?? []).flatMap(direct),
      ),
    ];
    const reported = new Set<string>();
    for (const start of Object.keys(this.schemas)) {
      const stack: { name: string; trail: string[] }[] = [{ name: start, trail: [start] }];
      const seen = new Set<string>();
      while (stack.length > 0) {
        const { name, trail } = stack.pop()!;
        for (const next of direct(this.schemas[name] ?? {})) {
          if (next === start) {
            if (trail.some((n) => reported.has(n))) continue;
            trail.forEach((n) => reported.add(n));
            this.diagnostics.push(
              this.docs.findingAtKey(
                "RG603",
                this.defined.get(start) ?? [],
                `schema ${start} is its own type through ${[...trail, start].join(" → ")}, with no object or array in between`,
                "nest the reference in a property or in items",
              ),
            );
          } else if (!seen.has(next) && trail.length < 64) {
            seen.add(next);
            stack.push({ name: next, trail: [...trail, next] });
          }
        }
      }
    }
  }

  /** A warning at the node (RG606): the type is wider than the document says. */
  report(path: Path, message: string, hint: string | undefined): void {
    this.diagnostics.push(this.docs.findingAtKey("RG606", path, message, hint));
  }

  private error(path: Path, message: string, hint: string): void {
    this.diagnostics.push(this.docs.finding("RG603", path, message, hint));
  }
}
