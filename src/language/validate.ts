/**
 * Validation: zod checks the shape, then each zod issue is translated into one positioned,
 * human diagnostic. Raw validator messages never reach users.
 */
import type { z } from "zod";
import { diagnostic, type Diagnostic } from "../diagnostics/diagnostic.js";
import type { Code } from "../diagnostics/codes.js";
import {
  checkDurationRange,
  checkRateRange,
  describe,
  parseDuration,
  parseRate,
  parseThroughput,
  type DurationRange,
  type RateRange,
} from "./durations.js";
import type { Path, PathSegment, SourceDocument } from "./parse.js";
import { kindOf, rangeOf, type ValueKind } from "./schema.js";
import { didYouMean } from "./suggest.js";

type Issue = z.core.$ZodIssue;
type AnySchema = z.core.$ZodType;

export interface Validated<T> {
  readonly value: T | undefined;
  readonly diagnostics: readonly Diagnostic[];
}

/** Validates `source.data` against `schema`; returns the typed value only when it is valid. */
export function validate<S extends z.ZodType>(
  schema: S,
  source: SourceDocument,
): Validated<z.infer<S>> {
  const result = schema.safeParse(source.data);
  if (result.success) return { value: result.data, diagnostics: [] };
  const diagnostics: Diagnostic[] = [];
  for (const issue of withoutSafeIntegerBounds(result.error.issues))
    diagnostics.push(...translate(schema, source, issue, []));
  return { value: undefined, diagnostics };
}

/**
 * The issues without zod's own safe-integer bound of `.int()` where the value also broke the
 * field's declared range: an integer past both is reported once, at the declared bound.
 */
function withoutSafeIntegerBounds(issues: readonly Issue[]): Issue[] {
  const ranged = (i: Issue) => i.code === "too_big" || i.code === "too_small";
  const safe = (i: Issue) =>
    (i.code === "too_big" && Number(i.maximum) === Number.MAX_SAFE_INTEGER) ||
    (i.code === "too_small" && Number(i.minimum) === Number.MIN_SAFE_INTEGER);
  const key = (i: Issue) => i.path.map(String).join("\0");
  const declared = new Set(issues.filter((i) => ranged(i) && !safe(i)).map(key));
  return issues.filter((i) => !(ranged(i) && safe(i) && declared.has(key(i))));
}

function translate(
  root: AnySchema,
  source: SourceDocument,
  issue: Issue,
  base: Path,
): Diagnostic[] {
  const path: Path = [...base, ...(issue.path as PathSegment[])];
  const file = source.file;
  const input = valueAt(source.data, path);
  // a value that is a duration or a mapping (`breaker.openFor`): a string is read as the duration
  const at =
    typeof input === "string"
      ? (stringPlace(root, path) ?? schemaAt(root, path))
      : schemaAt(root, path);
  const where = context(path);

  if (issue.code === "unrecognized_keys") {
    const known = at.keys ?? [];
    return issue.keys.map((key) => {
      const misplaced = misplacedHint(path, key);
      if (misplaced)
        return diagnostic(
          "RG101",
          file,
          source.keySpanOf([...path, key]),
          `"${key}" cannot be set${where ? ` in ${where}` : " here"}`,
          misplaced,
        );
      const suggestion = didYouMean(key, known);
      return diagnostic(
        "RG101",
        file,
        source.keySpanOf([...path, key]),
        `unknown key "${key}"${where ? ` in ${where}` : ""}`,
        suggestion
          ? `did you mean "${suggestion}"?`
          : known.length > 0
            ? `expected one of: ${known.join(", ")}`
            : undefined,
      );
    });
  }

  if (input === undefined && !source.has(path)) {
    const key = path[path.length - 1];
    return [
      diagnostic(
        "RG102",
        file,
        source.parentSpanOf(path),
        `missing required key "${String(key)}"${context(path.slice(0, -1)) ? ` in ${context(path.slice(0, -1))}` : ""}`,
      ),
    ];
  }

  const span = source.spanOf(path);
  // a check across keys (schema refinements): the schema words the message and names the bound
  if (issue.code === "custom" && issue.params?.["range"] === true) {
    const hint: unknown = issue.params["hint"];
    return [
      diagnostic("RG106", file, span, issue.message, typeof hint === "string" ? hint : undefined),
    ];
  }
  if (at.kind) {
    const explained = explainKind(at.kind, input, path, at.range);
    if (explained)
      return [diagnostic(explained.code, file, span, explained.message, explained.hint)];
  }

  switch (issue.code) {
    case "invalid_union": {
      if ("note" in issue && issue.note === "No matching discriminator") {
        const options = ((issue as { options?: unknown[] }).options ?? []).map(String);
        const suggestion = typeof input === "string" ? didYouMean(input, options) : undefined;
        return [
          diagnostic(
            "RG107",
            file,
            span,
            `${formatValue(input)} is not a valid ${label(path)}; expected one of ${options.join(", ")}`,
            suggestion ? `did you mean "${suggestion}"?` : undefined,
          ),
        ];
      }
      // A union such as `false | { ...settings }`: follow the branch that matches the input's type.
      const branches = issue.errors.filter(
        (errors) =>
          !errors.some(
            (e) => e.path.length === 0 && (e.code === "invalid_type" || e.code === "invalid_value"),
          ),
      );
      if (branches.length === 1)
        return branches[0]!.flatMap((e) => translate(root, source, e, path));
      return [
        diagnostic(
          "RG103",
          file,
          span,
          `${label(path)} has the wrong type: ${expectedOfUnion(issue)} expected, got ${describe(input)}`,
          layerHint(path, input),
        ),
      ];
    }
    case "invalid_type":
      // YAML reads a number with hundreds of digits (or .inf) as Infinity, which zod refuses as a type
      if (typeof input === "number" && Number.isNaN(input))
        return [diagnostic("RG103", file, span, `${label(path)} must be a number, got NaN`)];
      if (typeof input === "number" && !Number.isFinite(input)) {
        const bound = input > 0 ? at.numbers?.max : at.numbers?.min;
        const relation =
          bound === undefined || !Number.isFinite(bound)
            ? "a finite number"
            : `${input > 0 ? "at most" : "at least"} ${bound}`;
        return [
          diagnostic(
            "RG106",
            file,
            span,
            `${label(path)} must be ${relation}, got ${input > 0 ? "a number" : "a negative number"} too large to represent`,
          ),
        ];
      }
      return [
        diagnostic(
          "RG103",
          file,
          span,
          `${label(path)} must be ${article(issue.expected)}, got ${describe(input)}`,
          layerHint(path, input),
        ),
      ];
    case "invalid_value": {
      if (path.length === 1 && path[0] === "version") {
        return [
          diagnostic(
            "RG110",
            file,
            span,
            `unsupported version ${formatValue(input)}`,
            "this resgen reads version: 1",
          ),
        ];
      }
      const options = issue.values.map((v) => String(v));
      const suggestion = typeof input === "string" ? didYouMean(input, options) : undefined;
      return [
        diagnostic(
          "RG107",
          file,
          span,
          `${formatValue(input)} is not allowed for ${label(path)}; expected ${options.length === 1 ? options[0]! : `one of ${options.join(", ")}`}`,
          suggestion ? `did you mean "${suggestion}"?` : undefined,
        ),
      ];
    }
    case "too_small":
    case "too_big": {
      const bound = Number(issue.code === "too_small" ? issue.minimum : issue.maximum);
      const inclusive = issue.inclusive !== false;
      const relation =
        issue.code === "too_small"
          ? inclusive
            ? "at least"
            : "more than"
          : inclusive
            ? "at most"
            : "less than";
      const what =
        issue.origin === "array" ? `${bound} item${bound === 1 ? "" : "s"}` : String(bound);
      return [
        diagnostic(
          "RG106",
          file,
          span,
          `${label(path)} must be ${relation} ${what}, got ${Array.isArray(input) ? `${input.length}` : formatValue(input)}`,
        ),
      ];
    }
    case "invalid_format":
      return [
        diagnostic(
          "RG103",
          file,
          span,
          `${label(path)} has an invalid format: ${formatValue(input)}`,
        ),
      ];
    case "not_multiple_of":
      return [
        diagnostic(
          "RG106",
          file,
          span,
          `${label(path)} must be a multiple of ${String(issue.divisor)}`,
        ),
      ];
    default:
      return [
        diagnostic("RG103", file, span, `${label(path)} is not valid: ${formatValue(input)}`),
      ];
  }
}

const LAYERS = ["retry", "hedge", "breaker", "bulkhead"];

/**
 * A layer written as true or false where it is refused (docs/policy.md, "The project file"):
 * `true` is spelled `{}`; `false` turns off an inherited layer in a policy, and means nothing in
 * the project defaults, which nothing is inherited into.
 */
function layerHint(path: Path, input: unknown): string | undefined {
  const key = String(path[path.length - 1]);
  if (typeof input !== "boolean" || !LAYERS.includes(key)) return undefined;
  if (input) return `write \`${key}: {}\` to turn it on with the defaults`;
  if (path.length === 2 && path[0] === "defaults")
    return `the project defaults give no ${key} when \`${key}\` is left out of \`defaults:\`; \`${key}: false\` belongs in a policy, to turn off the ${key} it inherits from here`;
  return undefined;
}

/** Keys that exist elsewhere in the language: say where they belong instead of "unknown". */
function misplacedHint(path: Path, key: string): string | undefined {
  const inOperation = path[0] === "operations";
  if (inOperation && path.length === 3 && path[2] === "retry" && key === "budget") {
    return "the retry budget is shared by all operations of a dependency: set it under the top-level retry";
  }
  if (
    inOperation &&
    path.length === 2 &&
    ["breaker", "bulkhead", "latency", "deadline", "transport"].includes(key)
  ) {
    return `${key} belongs to the whole dependency: set it at the top level of the policy`;
  }
  if (
    path.length === 0 &&
    ["method", "path", "query", "body", "response", "idempotency", "idempotent"].includes(key)
  ) {
    return `${key} belongs to an operation: put it under operations.<name>`;
  }
  return undefined;
}

function explainKind(
  kind: ValueKind,
  input: unknown,
  path: Path,
  range: DurationRange | RateRange | undefined,
): { code: Code; message: string; hint?: string } | undefined {
  const withPath = (message: string) => `${label(path)}: ${message}`;
  switch (kind) {
    case "duration": {
      const parsed = parseDuration(input);
      if (!parsed.ok)
        return {
          code: parsed.range ? "RG106" : "RG104",
          message: withPath(parsed.message),
          ...(parsed.hint ? { hint: parsed.hint } : {}),
        };
      const outside =
        range && "min" in range
          ? checkDurationRange(parsed.value, range, String(input))
          : undefined;
      return outside
        ? {
            code: "RG106",
            message: `${label(path)} ${outside.message}`,
            ...(outside.hint ? { hint: outside.hint } : {}),
          }
        : undefined;
    }
    case "rate": {
      const parsed = parseRate(input);
      if (!parsed.ok)
        return {
          code: "RG105",
          message: withPath(parsed.message),
          ...(parsed.hint ? { hint: parsed.hint } : {}),
        };
      const outside =
        range && "positive" in range ? checkRateRange(parsed.value, range, input) : undefined;
      return outside
        ? {
            code: "RG106",
            message: `${label(path)} ${outside.message}`,
            ...(outside.hint ? { hint: outside.hint } : {}),
          }
        : undefined;
    }
    case "throughput": {
      const parsed = parseThroughput(input);
      if (parsed.ok) return undefined;
      return {
        code: parsed.range ? "RG106" : "RG119",
        message: withPath(parsed.message),
        ...(parsed.hint ? { hint: parsed.hint } : {}),
      };
    }
    case "name":
      if (typeof input !== "string") return undefined;
      return {
        code: "RG108",
        message: `${formatValue(input)} is not a valid ${label(path)}`,
        hint: "start with a letter, then letters, digits, - or _",
      };
    case "header":
      if (typeof input !== "string") return undefined;
      return {
        code: "RG108",
        message: `${formatValue(input)} is not a valid HTTP header name`,
        hint: "letters, digits and - (e.g. Idempotency-Key)",
      };
    case "ref":
      if (typeof input !== "string") return undefined;
      return {
        code: "RG111",
        message: `${formatValue(input)} is not a schema reference`,
        hint: 'write "#/schemas/Name"',
      };
    case "path":
      return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Walking the zod schema along a data path, to know the keys and the kind expected there.

interface SchemaPlace {
  readonly kind?: ValueKind;
  readonly range?: DurationRange | RateRange;
  /** Bounds of a number leaf, for a value too large to represent. */
  readonly numbers?: NumberBounds;
  readonly keys?: readonly string[];
}

interface NumberBounds {
  readonly min: number;
  readonly max: number;
}

function schemaAt(root: AnySchema, path: Path): SchemaPlace {
  let node: AnySchema | undefined = root;
  for (const segment of path) {
    if (!node) return {};
    node = child(node, segment);
  }
  if (!node) return {};
  return placeOf(node);
}

/**
 * The place of the tagged string option (a duration, a rate) of a union at `path`, such as
 * `breaker.openFor` (a duration or `{ base, cap, multiplier }`); undefined for anything else.
 */
function stringPlace(root: AnySchema, path: Path): SchemaPlace | undefined {
  let node: AnySchema | undefined = root;
  for (const segment of path) {
    if (!node) return undefined;
    node = child(node, segment);
  }
  if (!node) return undefined;
  const d = def(unwrapAll(node));
  if (d.type !== "union") return undefined;
  const tagged = (d.options as AnySchema[]).map(placeOf).filter((p) => p.kind !== undefined);
  return tagged.length === 1 && tagged[0]?.kind !== "name" ? tagged[0] : undefined;
}

function placeOf(schema: AnySchema): SchemaPlace {
  let kind: ValueKind | undefined;
  let range: DurationRange | RateRange | undefined;
  let node: AnySchema = schema;
  for (let i = 0; i < 10; i++) {
    kind ??= kindOf(node as z.ZodType);
    range ??= rangeOf(node as z.ZodType);
    const inner = unwrap(node);
    if (inner === node) break;
    node = inner;
  }
  const keys = objectKeys(node);
  const numbers = numberBounds(node);
  return {
    ...(kind ? { kind } : {}),
    ...(range ? { range } : {}),
    ...(numbers ? { numbers } : {}),
    ...(keys ? { keys } : {}),
  };
}

function numberBounds(schema: AnySchema): NumberBounds | undefined {
  if (def(schema).type !== "number") return undefined;
  const n = schema as unknown as { minValue?: number | null; maxValue?: number | null };
  return {
    min: n.minValue ?? Number.NEGATIVE_INFINITY,
    max: n.maxValue ?? Number.POSITIVE_INFINITY,
  };
}

function def(schema: AnySchema): Record<string, unknown> & { type: string } {
  return schema._zod.def as unknown as Record<string, unknown> & { type: string };
}

function unwrap(schema: AnySchema): AnySchema {
  const d = def(schema);
  switch (d.type) {
    case "optional":
    case "nullable":
    case "default":
    case "readonly":
    case "catch":
      return d.innerType as AnySchema;
    case "pipe":
      return d.in as AnySchema;
    case "lazy":
      return (d.getter as () => AnySchema)();
    default:
      return schema;
  }
}

function objectKeys(schema: AnySchema): string[] | undefined {
  const d = def(schema);
  if (d.type === "object") return Object.keys(d.shape as object);
  if (d.type === "union") {
    const keys = new Set<string>();
    for (const option of d.options as AnySchema[])
      for (const k of objectKeys(unwrapAll(option)) ?? []) keys.add(k);
    return keys.size > 0 ? [...keys] : undefined;
  }
  return undefined;
}

function unwrapAll(schema: AnySchema): AnySchema {
  let node = schema;
  for (let i = 0; i < 10; i++) {
    const inner = unwrap(node);
    if (inner === node) return node;
    node = inner;
  }
  return node;
}

function child(schema: AnySchema, segment: PathSegment): AnySchema | undefined {
  const node = unwrapAll(schema);
  const d = def(node);
  switch (d.type) {
    case "object":
      return (d.shape as Record<string, AnySchema>)[String(segment)];
    case "record":
      return d.valueType as AnySchema;
    case "array":
      return d.element as AnySchema;
    case "union":
      for (const option of d.options as AnySchema[]) {
        const found = child(option, segment);
        if (found) return found;
      }
      return undefined;
    default:
      return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Wording.

function valueAt(data: unknown, path: Path): unknown {
  let node = data;
  for (const segment of path) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string, unknown>)[String(segment)];
  }
  return node;
}

/** "operation getCharge", "retry.backoff" ... : where in the policy a path is, for messages. */
function context(path: Path): string {
  if (path.length === 0) return "";
  if (path[0] === "operations" && path.length >= 2) {
    const rest = path.slice(2).join(".");
    return `operation "${String(path[1])}"${rest ? ` (${rest})` : ""}`;
  }
  if (path[0] === "schemas" && path.length >= 2) {
    const rest = path.slice(2).join(".");
    return `schema "${String(path[1])}"${rest ? ` (${rest})` : ""}`;
  }
  return path.join(".");
}

/** The name of the setting at `path`, as the user wrote it (`retry.backoff.jitter`). */
function label(path: Path): string {
  const c = context(path);
  if (path[0] === "operations" && path.length === 2) return `operation name`;
  if (path[0] === "operations" || path[0] === "schemas") return c;
  return c || "the document";
}

function formatValue(value: unknown): string {
  if (typeof value === "string")
    return JSON.stringify(value.length > 60 ? value.slice(0, 57) + "..." : value);
  if (value === undefined) return "nothing";
  if (typeof value === "object" && value !== null)
    return Array.isArray(value) ? "a list" : "a mapping";
  // the scalars left in parsed YAML; a symbol or a function (never parsed) is named by its type alone
  if (
    value === null ||
    typeof value === "number" ||
    typeof value === "boolean" ||
    typeof value === "bigint"
  )
    return String(value);
  return typeof value;
}

function article(expected: string): string {
  const names: Record<string, string> = {
    object: "a mapping",
    array: "a list",
    string: "a string",
    number: "a number",
    boolean: "true or false",
    int: "an integer",
  };
  return names[expected] ?? `a ${expected}`;
}

function expectedOfUnion(issue: Issue & { code: "invalid_union" }): string {
  const expected = new Set<string>();
  for (const errors of issue.errors) {
    for (const e of errors) {
      if (e.path.length !== 0) continue;
      if (e.code === "invalid_type") expected.add(article(e.expected));
      if (e.code === "invalid_value") for (const v of e.values) expected.add(String(v));
    }
  }
  return expected.size > 0 ? [...expected].join(" or ") : "another value";
}
