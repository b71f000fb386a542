/**
 * Response validators (`validate: response`, docs/policy.md "Response validation"): the JSON
 * Schema subset of policies compiled into plain functions of the client module, with no
 * dependency but the runtime's message helpers (templates/runtime/validate.ts). A validator
 * returns the first problem it finds, starting with its path from the value it was given
 * (`.items[3].price: expected number, got string`), or `undefined`; the runtime puts `$` in
 * front. A caller prepends its own part of the path only on the way out of a failure, so a value
 * that matches builds no string at all.
 *
 * A named schema becomes one function (`check<Type>`), so `$ref`s, recursive ones included, are
 * calls; every other keyword becomes statements of the function that checks the value it
 * applies to. The alternatives of `oneOf` / `anyOf` become functions of their own (`check<Type>$1`,
 * a name no type can have), tried in order: a value matching one of them passes (exclusivity is
 * not checked). As in JSON Schema, a keyword applies only to values of its type: `properties`
 * without `type: object` checks objects and lets other values through. `format`, `description`
 * and the validation-only keywords the subset leaves out are not checked.
 */
import type { JsonSchema } from "../model/resolved.js";
import { CLIENT_RUNTIME as R } from "../model/names.js";
import { code, group, indent, join, line, list, lines, softline, type Doc } from "./printer.js";

/**
 * The path of a value from the one its function was given, as a JS expression: a dynamic part
 * (a loop index, a key of additionalProperties) or none, then a literal suffix. It is evaluated
 * only where a problem is returned.
 */
interface Where {
  readonly expr: Doc | undefined;
  readonly suffix: string;
}

const HERE: Where = { expr: undefined, suffix: "" };

function pathOf(where: Where): Doc {
  if (where.expr === undefined) return JSON.stringify(where.suffix);
  return where.suffix === "" ? where.expr : [where.expr, ` + ${JSON.stringify(where.suffix)}`];
}

const PLAIN_KEY = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `.price`, or `["unit price"]` for a key that is not a plain name (as propertyPath writes it at run time). */
function keySuffix(key: string): string {
  return PLAIN_KEY.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

/** The test that a value is not of one JSON type. */
const NOT_TYPE: Readonly<Record<string, (v: string) => Doc>> = {
  string: (v) => `typeof ${v} !== "string"`,
  number: (v) => `typeof ${v} !== "number"`,
  integer: (v) => `!Number.isInteger(${v})`,
  boolean: (v) => `typeof ${v} !== "boolean"`,
  null: (v) => `${v} !== null`,
  object: (v) => ["!", R.isJsonObject, `(${v})`],
  array: (v) => `!Array.isArray(${v})`,
};

/** State of the function being written: its fresh names. */
interface Scope {
  /** The function's own name, the base of its alternatives' names. */
  readonly name: string;
  /** The number of the next fresh value or index (`v1`, `i1`). */
  next: number;
  /** The number of the next fresh problem (`p1`), the result of a call. */
  problems: number;
}

/** `if (test) return value;`, the return on a line of its own when it does not fit. */
function ifReturn(test: Doc, value: Doc): Doc {
  return group("if (", test, ")", indent([line, "return ", value, ";"]));
}

/** `a && b && c` (or `||`), one operand a line when it does not fit. */
function operands(operator: "&&" | "||", docs: readonly Doc[]): Doc {
  return group(indent([softline, join([` ${operator}`, line], docs)]), softline);
}

/** A call, its arguments one a line when it does not fit. */
function call(callee: Doc, args: readonly Doc[]): Doc {
  return [callee, list("(", args, ")")];
}

/** Writes the validators of one client module. */
export class Validators {
  readonly #schemas: Readonly<Record<string, JsonSchema>>;
  readonly #typeNames: ReadonlyMap<string, string>;
  readonly #functions: Doc[] = [];
  readonly #named = new Set<string>();
  readonly #alternatives = new Map<string, number>();

  /** @param typeNames the type name of each named schema (src/model/names.ts) */
  constructor(
    schemas: Readonly<Record<string, JsonSchema>>,
    typeNames: ReadonlyMap<string, string>,
  ) {
    this.#schemas = schemas;
    this.#typeNames = typeNames;
  }

  /**
   * The validator of an operation's response, named after its type (`check<Response>`), or the
   * named schema's own when the response is only a `$ref`; `undefined` when nothing can fail.
   */
  response(typeName: string, schema: JsonSchema): string | undefined {
    const ref = onlyRef(schema);
    if (ref !== undefined) return this.#namedValidator(ref);
    const name = `check${typeName}`;
    return this.#function(name, schema, false) ? name : undefined;
  }

  /** The functions written so far, in the order they were needed. */
  get functions(): readonly Doc[] {
    return this.#functions;
  }

  /** The validator of a named schema, written once (a recursive schema calls itself). */
  #namedValidator(schemaName: string): string | undefined {
    const typeName = this.#typeNames.get(schemaName);
    const schema = this.#schemas[schemaName];
    // a $ref to nothing was reported before emission; stay total
    if (typeName === undefined || schema === undefined) return undefined;
    const name = `check${typeName}`;
    if (!this.#named.has(name)) {
      this.#named.add(name);
      this.#function(name, schema, true);
    }
    return name;
  }

  /**
   * Writes `function name(value)`. Returns whether anything can fail; a function that checks
   * nothing is still written when `always` (a named schema others call).
   */
  #function(name: string, schema: JsonSchema, always: boolean): boolean {
    const scope: Scope = { name, next: 1, problems: 1 };
    const body = this.#check(schema, "value", HERE, scope);
    if (body.length === 0 && !always) return false;
    this.#functions.push(code`
      function ${name}(${body.length === 0 ? "_value" : "value"}: unknown): string | undefined {
        ${lines(body)}
        return undefined;
      }
    `);
    return body.length > 0;
  }

  /** Statements that return the first problem of the value in `v` (an identifier) against `schema`. */
  #check(schema: JsonSchema, v: string, where: Where, scope: Scope): Doc[] {
    const types =
      schema.type === undefined
        ? undefined
        : [...new Set(Array.isArray(schema.type) ? schema.type : [schema.type])];
    // null passes `nullable` before anything else is asked of the value
    const nullable = schema.nullable === true && !(types?.includes("null") ?? false);
    const out: Doc[] = [];
    const ref = schema.$ref?.replace(/^#\/schemas\//, "");
    if (ref !== undefined) {
      const called = this.#namedValidator(ref);
      if (called !== undefined) out.push(...this.#calls(called, [v], where, scope));
    }
    if (types !== undefined) {
      out.push(
        ifReturn(
          operands(
            "&&",
            types.map((t) => NOT_TYPE[t]!(v)),
          ),
          call(R.expectedType, [pathOf(where), JSON.stringify(types.join(" or ")), v]),
        ),
      );
    }
    if (schema.const !== undefined) out.push(this.#allowed([schema.const], v, where));
    if (schema.enum !== undefined) out.push(this.#allowed(schema.enum, v, where));
    const object = this.#object(schema, v, where, scope);
    if (object.length > 0)
      out.push(...(only(types, "object") ? object : wrap([R.isJsonObject, `(${v})`], object)));
    const array = this.#array(schema, v, where, scope);
    if (array.length > 0)
      out.push(...(only(types, "array") ? array : wrap(`Array.isArray(${v})`, array)));
    for (const member of schema.allOf ?? []) out.push(...this.#check(member, v, where, scope));
    for (const alternatives of [schema.oneOf, schema.anyOf])
      if (alternatives !== undefined) out.push(...this.#union(alternatives, v, where, scope));
    return nullable && out.length > 0 ? wrap(`${v} !== null`, out) : out;
  }

  /** `const pN = callee(args); if (pN !== undefined) return <where> + pN;` */
  #calls(callee: Doc, args: readonly Doc[], where: Where, scope: Scope): Doc[] {
    const problem = `p${String(scope.problems++)}`;
    const here = where.expr === undefined && where.suffix === "";
    return [
      code`const ${problem} = ${call(callee, args)};`,
      ifReturn(`${problem} !== undefined`, here ? problem : [pathOf(where), ` + ${problem}`]),
    ];
  }

  /** `enum` and `const`: the value is one of these. */
  #allowed(values: readonly unknown[], v: string, where: Where): Doc {
    return ifReturn(
      operands(
        "&&",
        values.map((value) => `${v} !== ${JSON.stringify(value)}`),
      ),
      call(R.notAllowed, [
        pathOf(where),
        list(
          "[",
          values.map((x) => JSON.stringify(x)),
          "]",
        ),
        v,
      ]),
    );
  }

  /** `required`, `properties` and `additionalProperties`, for a value known to be an object. */
  #object(schema: JsonSchema, v: string, where: Where, scope: Scope): Doc[] {
    const out: Doc[] = [];
    const declared = schema.properties ?? {};
    const properties = Object.entries(declared);
    const required = new Set(schema.required ?? []);
    for (const key of required)
      if (!Object.hasOwn(declared, key)) out.push(this.#missing(key, v, where));
    for (const [key, sub] of properties) {
      const value = `v${scope.next++}`;
      const at: Where = { expr: where.expr, suffix: where.suffix + keySuffix(key) };
      const checks = this.#check(sub, value, at, scope);
      // a name Object.prototype has (toString, constructor) would read the prototype's when
      // absent, and its type would be the prototype's method: only an own property is read
      const read =
        key in Object.prototype
          ? `const ${value}: unknown = Object.getOwnPropertyDescriptor(${v}, ${JSON.stringify(key)})?.value;`
          : `const ${value} = ${v}[${JSON.stringify(key)}];`;
      if (required.has(key)) {
        out.push(this.#missing(key, v, where));
        if (checks.length > 0) out.push(read, ...checks);
      } else if (checks.length > 0) {
        out.push(read, ...wrap(`${value} !== undefined`, checks));
      }
    }
    const extra = schema.additionalProperties;
    if (extra === false || typeof extra === "object") {
      const known = properties.map(([key]) => `key === ${JSON.stringify(key)}`);
      let rest: Doc[];
      if (extra === false)
        rest = [code`return ${call(R.unexpectedProperty, [pathOf(where), "key"])};`];
      else {
        const value = `v${scope.next++}`;
        const at: Where = { expr: call(R.propertyPath, [pathOf(where), "key"]), suffix: "" };
        const checks = this.#check(extra, value, at, scope);
        rest = checks.length === 0 ? [] : [`const ${value} = ${v}[key];`, ...checks];
      }
      if (rest.length > 0)
        out.push(code`
          for (const key of Object.keys(${v})) {
            ${known.length === 0 ? null : group("if (", operands("||", known), ") continue;")}
            ${lines(rest)}
          }
        `);
    }
    return out;
  }

  #missing(key: string, v: string, where: Where): Doc {
    return ifReturn(
      `!Object.hasOwn(${v}, ${JSON.stringify(key)})`,
      call(R.missingProperty, [pathOf(where), JSON.stringify(key)]),
    );
  }

  /** `items`, for a value known to be an array. */
  #array(schema: JsonSchema, v: string, where: Where, scope: Scope): Doc[] {
    if (schema.items === undefined) return [];
    const n = scope.next++;
    const item = `v${n}`;
    const index = `i${n}`;
    const opening = JSON.stringify(`${where.suffix}[`);
    const at: Where = {
      expr:
        where.expr === undefined
          ? `${opening} + String(${index}) + "]"`
          : [where.expr, ` + ${opening} + String(${index}) + "]"`],
      suffix: "",
    };
    const checks = this.#check(schema.items, item, at, scope);
    if (checks.length === 0) return [];
    return [
      code`
        for (let ${index} = 0; ${index} < ${v}.length; ${index}++) {
          const ${item}: unknown = ${v}[${index}];
          ${lines(checks)}
        }
      `,
    ];
  }

  /** `oneOf` / `anyOf`: each alternative a function, tried in order. */
  #union(alternatives: readonly JsonSchema[], v: string, where: Where, scope: Scope): Doc[] {
    const names: string[] = [];
    for (const alternative of alternatives) {
      const ref = onlyRef(alternative);
      let name = ref === undefined ? undefined : this.#namedValidator(ref);
      if (name === undefined) {
        const k = (this.#alternatives.get(scope.name) ?? 0) + 1;
        this.#alternatives.set(scope.name, k);
        name = `${scope.name}$${k}`;
        // an alternative that checks nothing matches everything: so does the union
        if (!this.#function(name, alternative, false)) return [];
      }
      names.push(name);
    }
    return this.#calls(R.noAlternative, [v, list("[", names, "]")], where, scope);
  }
}

/** The schema's `$ref` target when the `$ref` (and a description) is all it says. */
function onlyRef(schema: JsonSchema): string | undefined {
  if (schema.$ref === undefined) return undefined;
  const others = Object.keys(schema).filter((k) => k !== "$ref" && k !== "description");
  return others.length === 0 ? schema.$ref.replace(/^#\/schemas\//, "") : undefined;
}

/** Whether `types` is exactly one type, `type`: its check has already narrowed the value. */
function only(types: readonly string[] | undefined, type: string): boolean {
  return types !== undefined && types.length === 1 && types[0] === type;
}

/** `if (test) { ...body }`. */
function wrap(test: Doc, body: readonly Doc[]): Doc[] {
  return [
    code`
      if (${test}) {
        ${lines(body)}
      }
    `,
  ];
}
