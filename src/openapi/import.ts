/**
 * OpenAPI → operations of the policy language. Pure: a loaded document (with its YAML nodes, for
 * positions) and the policy that points at it become operations as the policy would have written
 * them (method, path, params, query, body, response, idempotency) plus the named schemas they use.
 * The policy's own entries under `operations:` select operations by operationId and override
 * their resilience settings; normalisation then runs exactly as for inline operations.
 */
import { diagnostic, type Diagnostic } from "../diagnostics/diagnostic.js";
import type { Path, SourceDocument } from "../language/parse.js";
import type { SourceRef } from "../language/parse.js";
import {
  METHODS,
  NAME_PATTERN,
  type AuthInput,
  type OperationInput,
  type PolicyInput,
  type TypeSchemaInput,
} from "../language/schema.js";
import { checkPathTemplate } from "../language/structure.js";
import { didYouMean } from "../language/suggest.js";
import { documentVersion, isObject, type Raw } from "./description.js";
import { DocumentSet } from "./references.js";
import { SchemaConverter } from "./schemas.js";
import { SecurityImport } from "./security.js";

/** Header parameters that carry an idempotency key unless the policy names others (compared case-insensitively). */
export const DEFAULT_IDEMPOTENCY_HEADERS = ["Idempotency-Key", "X-Idempotency-Key"] as const;

/** Keys of an operation that the document supplies; the policy may not set them for an imported operation. */
export const DOCUMENT_KEYS = [
  "method",
  "path",
  "params",
  "query",
  "body",
  "response",
  "auth",
] as const;

const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;
const JSON_MEDIA = /^application\/(?:[\w.+-]+\+)?json(?:\s*;.*)?$/i;

export interface OpenApiImport {
  /** The imported operations, by operationId, as the policy language writes them. */
  readonly operations: Readonly<Record<string, OperationInput>>;
  /** Where each imported operation is in the document. */
  readonly sources: Readonly<Record<string, SourceRef>>;
  /** Named schemas the operations use. */
  readonly schemas: Readonly<Record<string, TypeSchemaInput>>;
  /** Where the document makes an operation keyed or idempotent (the header parameter, `x-idempotent`). */
  readonly idempotencySources: Readonly<Record<string, SourceRef>>;
  /** The security schemes the imported operations use, and the document's default requirement. */
  readonly auth?: AuthInput;
  readonly diagnostics: readonly Diagnostic[];
}

export interface ImportOptions {
  /** operationIds to import; all the document's operations when undefined. */
  readonly only?: readonly string[];
  /** Header parameter names that make an operation keyed. */
  readonly idempotencyHeaders?: readonly string[];
}

interface Found {
  readonly id: string;
  readonly method: string;
  readonly path: string;
  readonly at: Path;
  readonly node: Raw;
  readonly item: Raw;
  readonly itemPath: Path;
}

/** Reads the operations of an OpenAPI 3.0 / 3.1 document. Never throws; problems are diagnostics. */
export function importOpenApi(
  description: SourceDocument | DocumentSet,
  options: ImportOptions = {},
): OpenApiImport {
  const docs = description instanceof DocumentSet ? description : DocumentSet.single(description);
  const source = docs.root;
  const diagnostics: Diagnostic[] = [];
  const empty = { operations: {}, sources: {}, schemas: {}, idempotencySources: {}, diagnostics };
  const version = documentVersion(source.data);
  if ("problem" in version) {
    diagnostics.push(docs.finding("RG602", version.path, version.problem, version.hint));
    return empty;
  }
  const data = source.data as Raw;
  const converter = new SchemaConverter(docs, version.version);
  const security = new SecurityImport(docs, diagnostics);
  const found = findOperations(docs, data, diagnostics);
  const only = options.only === undefined ? undefined : new Set(options.only);
  const keyHeaders = new Set(
    (options.idempotencyHeaders ?? DEFAULT_IDEMPOTENCY_HEADERS).map((h) => h.toLowerCase()),
  );

  const operations: Record<string, OperationInput> = {};
  const sources: Record<string, SourceRef> = {};
  const idempotencySources: Record<string, SourceRef> = {};
  for (const op of found.values()) {
    if (only && !only.has(op.id)) continue;
    const listed = only !== undefined;
    const skip = (message: string, hint?: string) =>
      diagnostics.push(
        docs.findingAtKey(
          listed ? "RG608" : "RG607",
          op.at,
          `${op.id} (${op.method.toUpperCase()} ${op.path}): ${message}`,
          hint,
        ),
      );
    if (!new RegExp(NAME_PATTERN).test(op.id)) {
      skip(
        `operationId "${op.id}" cannot name a method (a letter, then letters, digits, - and _)`,
        "rename the operationId",
      );
      continue;
    }
    const method = op.method.toUpperCase();
    if (!(METHODS as readonly string[]).includes(method)) {
      skip(`${method} is not a method resgen clients send`, `methods: ${METHODS.join(", ")}`);
      continue;
    }
    const pathProblem = checkPathTemplate(op.path);
    if (pathProblem) {
      skip(pathProblem.message, pathProblem.hint);
      continue;
    }
    const converted = convertOperation(docs, converter, op, keyHeaders, diagnostics);
    if ("problem" in converted) {
      skip(converted.problem, converted.hint);
      continue;
    }
    // an operation's own `security` is its requirement; the others follow the document's (auth.use)
    const requirement = security.operation(op.node, op.at);
    operations[op.id] = {
      method: method as OperationInput["method"] & string,
      path: op.path,
      ...converted.operation,
      ...(op.node["security"] !== undefined && requirement !== undefined
        ? { auth: requirement }
        : {}),
    };
    sources[op.id] = { file: docs.fileOf(op.at), path: docs.localPath(op.at) };
    if (converted.idempotencyAt)
      idempotencySources[op.id] = {
        file: docs.fileOf(converted.idempotencyAt),
        path: docs.localPath(converted.idempotencyAt),
      };
  }
  converter.checkCycles();
  if (only === undefined && found.size > 0 && Object.keys(operations).length === 0) {
    diagnostics.push(
      docs.finding(
        "RG602",
        ["paths"],
        "no operation of the document can be imported",
        "see the other findings for why each was left out",
      ),
    );
  } else if (found.size === 0 && only === undefined) {
    diagnostics.push(
      docs.finding(
        "RG602",
        data["paths"] === undefined ? [] : ["paths"],
        "the document describes no operations (no paths with operations)",
        "add operations under `paths:`",
      ),
    );
  }
  const auth = security.auth();
  return {
    // without a scheme to send, no operation has credentials to choose between
    operations:
      auth === undefined
        ? Object.fromEntries(
            Object.entries(operations).map(([id, o]) => {
              const rest = { ...o };
              delete rest.auth;
              return [id, rest];
            }),
          )
        : operations,
    sources,
    schemas: converter.schemas,
    idempotencySources,
    ...(auth === undefined ? {} : { auth }),
    diagnostics: [...diagnostics, ...converter.diagnostics],
  };
}

/** Every operation of the document by operationId; operations without one, or with a repeated one, are reported. */
function findOperations(
  docs: DocumentSet,
  data: Raw,
  diagnostics: Diagnostic[],
): Map<string, Found> {
  const found = new Map<string, Found>();
  const paths = isObject(data["paths"]) ? data["paths"] : {};
  for (const [path, rawItem] of Object.entries(paths)) {
    const resolved = docs.deref(rawItem, ["paths", path]);
    if ("problem" in resolved) {
      diagnostics.push(
        docs.finding("RG603", ["paths", path, "$ref"], resolved.problem, resolved.hint),
      );
      continue;
    }
    if (!isObject(resolved.value)) continue;
    const item = resolved.value;
    for (const method of HTTP_METHODS) {
      const node = item[method];
      if (!isObject(node)) continue;
      const at: Path = [...resolved.path, method];
      const id = node["operationId"];
      if (typeof id !== "string" || id === "") {
        diagnostics.push(
          docs.findingAtKey(
            "RG605",
            at,
            `${method.toUpperCase()} ${path} has no operationId: it is not imported`,
            `add \`operationId: ${suggestId(method, path)}\` to import it`,
          ),
        );
        continue;
      }
      const previous = found.get(id);
      if (previous) {
        diagnostics.push(
          docs.finding(
            "RG610",
            [...at, "operationId"],
            `operationId "${id}" is also used by ${previous.method.toUpperCase()} ${previous.path}`,
            "operationIds are unique in a document (OpenAPI 3): rename one",
          ),
        );
        continue;
      }
      found.set(id, { id, method, path, at, node, item, itemPath: resolved.path });
    }
  }
  return found;
}

function suggestId(method: string, path: string): string {
  const words = path.split(/[^A-Za-z0-9]+/).filter((w) => w !== "");
  return method + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join("");
}

type Converted =
  | { operation: Omit<OperationInput, "method" | "path">; idempotencyAt?: Path }
  | { problem: string; hint?: string };

function convertOperation(
  docs: DocumentSet,
  converter: SchemaConverter,
  op: Found,
  keyHeaders: ReadonlySet<string>,
  diagnostics: Diagnostic[],
): Converted {
  const out: Omit<OperationInput, "method" | "path"> = {};
  const description =
    typeof op.node["summary"] === "string"
      ? op.node["summary"]
      : typeof op.node["description"] === "string"
        ? op.node["description"]
        : undefined;
  if (description !== undefined) out.description = description;

  // --- parameters: the path item's, overridden by the operation's (same name and location)
  const params = new Map<string, { value: Raw; path: Path; listed: Path }>();
  let idempotencyAt: Path | undefined;
  for (const [list, listPath] of [
    [op.item["parameters"], [...op.itemPath, "parameters"]],
    [op.node["parameters"], [...op.at, "parameters"]],
  ] as const) {
    if (!Array.isArray(list)) continue;
    list.forEach((raw: unknown, i: number) => {
      const resolved = docs.deref(raw, [...listPath, i]);
      if ("problem" in resolved) {
        diagnostics.push(
          docs.finding(
            "RG603",
            [...listPath, i, "$ref"],
            resolved.problem,
            resolved.hint ?? "fix the reference, or declare the parameter inline",
          ),
        );
        return;
      }
      const p = resolved.value;
      if (!isObject(p) || typeof p["name"] !== "string" || typeof p["in"] !== "string") return;
      params.set(`${p["in"]}\0${p["name"]}`, {
        value: p,
        path: resolved.path,
        listed: [...listPath, i],
      });
    });
  }
  const opLabel = op.id;
  for (const { value: p, path, listed } of params.values()) {
    const name = p["name"] as string;
    const where = p["in"] as string;
    const label = `parameter ${name} of ${opLabel}`;
    if (where === "header" && keyHeaders.has(name.toLowerCase())) {
      out.idempotency = { header: name };
      idempotencyAt = listed;
      continue;
    }
    if (where === "header" || where === "cookie") {
      if (p["required"] === true) {
        converter.report(
          path,
          `required ${where} ${label} is not part of the generated input`,
          where === "header"
            ? "send it with the client's `headers` option"
            : "send the cookie with the client's `headers` option",
        );
      }
      continue;
    }
    if (where !== "path" && where !== "query") continue;
    const scalar = parameterType(docs, converter, p, path, label);
    if (where === "path") {
      if (!scalar || scalar.type === "array") {
        if (scalar)
          converter.report(
            path,
            `path ${label} is an array: typed as a string`,
            "send the path segment as text",
          );
        continue;
      }
      out.params ??= {};
      out.params[name] = {
        type: scalar.type,
        ...(scalar.enum ? { enum: scalar.enum } : {}),
        ...(typeof p["description"] === "string" ? { description: p["description"] } : {}),
      };
    } else {
      if (!scalar) continue;
      out.query ??= {};
      out.query[name] = {
        type: scalar.type,
        ...(scalar.items ? { items: { type: scalar.items } } : {}),
        ...(scalar.enum ? { enum: scalar.enum } : {}),
        ...(p["required"] === true ? { required: true } : {}),
        ...(typeof p["description"] === "string" ? { description: p["description"] } : {}),
      };
    }
  }
  // path parameters the template names but no parameter declares stay strings; params: must then list them all
  if (out.params) {
    for (const m of op.path.matchAll(/\{([^{}]*)\}/g)) out.params[m[1]!] ??= { type: "string" };
    const named = Object.entries(out.params).filter(([name]) => op.path.includes(`{${name}}`));
    if (named.length === 0) delete out.params;
    else out.params = Object.fromEntries(named);
  }

  const idempotent = op.node["x-idempotent"];
  if (typeof idempotent === "boolean") {
    out.idempotent = idempotent;
    idempotencyAt ??= [...op.at, "x-idempotent"];
  }

  // --- request body: JSON only
  if (op.node["requestBody"] !== undefined) {
    const resolved = docs.deref(op.node["requestBody"], [...op.at, "requestBody"]);
    if ("problem" in resolved) {
      diagnostics.push(
        docs.finding("RG603", [...op.at, "requestBody", "$ref"], resolved.problem, resolved.hint),
      );
      return { problem: "its request body cannot be resolved" };
    }
    const content =
      isObject(resolved.value) && isObject(resolved.value["content"])
        ? resolved.value["content"]
        : {};
    const media = Object.keys(content).find((m) => JSON_MEDIA.test(m));
    if (media === undefined) {
      const kinds = Object.keys(content);
      if (kinds.length > 0)
        return {
          problem: `its request body is ${kinds.join(", ")}: generated clients send JSON`,
          hint: "add an application/json request body, or leave the operation out of this policy with `operations:`",
        };
    } else {
      const mediaNode = content[media];
      const schema = isObject(mediaNode) ? mediaNode["schema"] : undefined;
      out.body =
        schema === undefined
          ? {}
          : converter.convert(
              schema,
              [...resolved.path, "content", media, "schema"],
              `request body of ${opLabel}`,
            );
    }
  }

  // --- the success response: the JSON schemas of the 2xx responses
  const responses = isObject(op.node["responses"]) ? op.node["responses"] : {};
  const schemas: TypeSchemaInput[] = [];
  const other: string[] = [];
  for (const [code, raw] of Object.entries(responses).sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (!/^2(\d\d|XX)$/i.test(code)) continue;
    const resolved = docs.deref(raw, [...op.at, "responses", code]);
    if ("problem" in resolved) {
      diagnostics.push(
        docs.finding(
          "RG603",
          [...op.at, "responses", code, "$ref"],
          resolved.problem,
          resolved.hint,
        ),
      );
      return { problem: `its ${code} response cannot be resolved` };
    }
    const content =
      isObject(resolved.value) && isObject(resolved.value["content"])
        ? resolved.value["content"]
        : {};
    const media = Object.keys(content).find((m) => JSON_MEDIA.test(m));
    if (media === undefined) {
      other.push(...Object.keys(content).map((m) => `${code} ${m}`));
      continue;
    }
    const mediaNode = content[media];
    const schema = isObject(mediaNode) ? mediaNode["schema"] : undefined;
    schemas.push(
      schema === undefined
        ? {}
        : converter.convert(
            schema,
            [...resolved.path, "content", media, "schema"],
            `response ${code} of ${opLabel}`,
          ),
    );
  }
  if (schemas.length === 0 && other.length > 0) {
    return {
      problem: `its success response is ${other.join(", ")}: generated clients read JSON`,
      hint: "add an application/json response, or leave the operation out of this policy with `operations:`",
    };
  }
  const distinct = [...new Map(schemas.map((s) => [JSON.stringify(s), s])).values()];
  if (distinct.length === 1) out.response = distinct[0]!;
  else if (distinct.length > 1) out.response = { anyOf: distinct };
  return { operation: out, ...(idempotencyAt ? { idempotencyAt } : {}) };
}

type ScalarType = "string" | "number" | "integer" | "boolean";

/** The type of a path or query parameter: a scalar (with enum), or for query an array of scalars. */
function parameterType(
  docs: DocumentSet,
  converter: SchemaConverter,
  p: Raw,
  path: Path,
  label: string,
):
  | { type: ScalarType | "array"; items?: ScalarType; enum?: (string | number | boolean)[] }
  | undefined {
  if (p["schema"] === undefined) {
    converter.report(
      path,
      `${label} has no schema (content-encoded parameters are not supported): it is left out`,
      "declare it with `schema: { type: string }`",
    );
    return undefined;
  }
  const schema = scalarOf(docs, p["schema"], [...path, "schema"]);
  if ("problem" in schema) {
    converter.report(
      [...path, "schema"],
      `${label}: ${schema.problem}: it is left out`,
      "parameters are strings, numbers, integers, booleans, or (in the query) arrays of them",
    );
    return undefined;
  }
  if (schema.type !== "array")
    return { type: schema.type, ...(schema.enum ? { enum: schema.enum } : {}) };
  const items: ReturnType<typeof scalarOf> =
    schema.items === undefined
      ? { type: "string" }
      : scalarOf(docs, schema.items, schema.itemsPath ?? path);
  if ("problem" in items || items.type === "array") {
    converter.report(
      [...path, "schema"],
      `${label}: array items must be scalars: it is left out`,
      undefined,
    );
    return undefined;
  }
  return { type: "array", items: items.type, ...(items.enum ? { enum: items.enum } : {}) };
}

function scalarOf(
  docs: DocumentSet,
  raw: unknown,
  path: Path,
):
  | {
      type: ScalarType | "array";
      enum?: (string | number | boolean)[];
      items?: unknown;
      itemsPath?: Path;
    }
  | { problem: string } {
  const resolved = docs.deref(raw, path);
  if ("problem" in resolved) return { problem: resolved.problem };
  const s = resolved.value;
  if (!isObject(s)) return { problem: "its schema is not a mapping" };
  let type = s["type"];
  if (Array.isArray(type)) {
    const others = type.filter((t) => t !== "null");
    type = others.length === 1 ? others[0] : undefined;
  }
  if (type === undefined && Array.isArray(s["enum"]))
    type = typeof s["enum"][0] === "number" ? "number" : "string";
  if (
    type !== "string" &&
    type !== "number" &&
    type !== "integer" &&
    type !== "boolean" &&
    type !== "array"
  ) {
    return {
      problem: `its schema is ${type === undefined ? "untyped" : `of type ${JSON.stringify(type)}`}`,
    };
  }
  const values = Array.isArray(s["enum"])
    ? s["enum"].filter((v): v is string | number | boolean =>
        ["string", "number", "boolean"].includes(typeof v),
      )
    : [];
  return {
    type,
    ...(values.length > 0 ? { enum: values } : {}),
    ...(type === "array" ? { items: s["items"], itemsPath: [...resolved.path, "items"] } : {}),
  };
}

/**
 * Merges the document's operations under the policy: the policy's `operations:` select by
 * operationId and override resilience settings; keys the document supplies cannot be set there.
 */
export function mergeOpenApi(
  policySource: SourceDocument,
  policy: PolicyInput,
  description: SourceDocument | DocumentSet,
): {
  policy: PolicyInput | undefined;
  sources: Readonly<Record<string, SourceRef>>;
  /** Where the document makes each operation keyed or idempotent, unless the policy overrides it. */
  idempotencySources: Readonly<Record<string, SourceRef>>;
  diagnostics: Diagnostic[];
} {
  const docs = description instanceof DocumentSet ? description : DocumentSet.single(description);
  const document = docs.root;
  const diagnostics: Diagnostic[] = [];
  const listed = policy.operations;
  const options = typeof policy.openapi === "object" ? policy.openapi : undefined;
  const imported = importOpenApi(docs, {
    ...(listed === undefined ? {} : { only: Object.keys(listed) }),
    ...(options?.idempotencyHeaders ? { idempotencyHeaders: options.idempotencyHeaders } : {}),
  });
  diagnostics.push(...imported.diagnostics);
  const file = policySource.file;
  if (policy.schemas !== undefined) {
    diagnostics.push(
      diagnostic(
        "RG609",
        file,
        policySource.keySpanOf(["schemas"]),
        "schemas: cannot be set when the operations come from an OpenAPI document",
        "describe the schemas in the document's components/schemas",
      ),
    );
  }
  if (policy.auth !== undefined) {
    diagnostics.push(
      diagnostic(
        "RG609",
        file,
        policySource.keySpanOf(["auth"]),
        "auth: cannot be set when the operations come from an OpenAPI document",
        "the document's components/securitySchemes and security say which credentials each operation sends",
      ),
    );
  }
  const known = allOperationIds(docs);
  const operations: Record<string, OperationInput> = {};
  if (listed === undefined) {
    Object.assign(operations, imported.operations);
  } else {
    for (const [name, own] of Object.entries(listed)) {
      for (const key of DOCUMENT_KEYS) {
        if (own[key] === undefined) continue;
        diagnostics.push(
          diagnostic(
            "RG609",
            file,
            policySource.keySpanOf(["operations", name, key]),
            `${key} of operation ${name} comes from the OpenAPI document (${document.file}) and cannot be set here`,
            "change it in the document, or remove it here",
          ),
        );
      }
      const base = imported.operations[name];
      if (base === undefined) {
        if (!known.includes(name)) {
          const suggestion = didYouMean(name, known);
          diagnostics.push(
            diagnostic(
              "RG604",
              file,
              policySource.keySpanOf(["operations", name]),
              `operation "${name}" is not an operationId of ${document.file}`,
              suggestion
                ? `did you mean "${suggestion}"?`
                : known.length > 0
                  ? `the document's operationIds: ${known.slice(0, 12).join(", ")}${known.length > 12 ? ", …" : ""}`
                  : "the document has no operationIds",
            ),
          );
        }
        continue;
      }
      const overrides = Object.fromEntries(
        Object.entries(own).filter(
          ([k, v]) => v !== undefined && !(DOCUMENT_KEYS as readonly string[]).includes(k),
        ),
      );
      operations[name] = { ...base, ...overrides };
    }
  }
  const failed = diagnostics.some((d) => d.severity === "error");
  // the merged policy names no document, and its schemas are the imported ones
  const rest = { ...policy };
  delete rest.openapi;
  delete rest.schemas;
  delete rest.auth;
  return {
    policy: failed
      ? undefined
      : {
          ...rest,
          operations,
          ...(Object.keys(imported.schemas).length === 0 ? {} : { schemas: imported.schemas }),
          ...(imported.auth === undefined ? {} : { auth: imported.auth }),
        },
    sources: imported.sources,
    idempotencySources: Object.fromEntries(
      Object.entries(imported.idempotencySources).filter(
        ([name]) =>
          listed?.[name]?.idempotency === undefined && listed?.[name]?.idempotent === undefined,
      ),
    ),
    diagnostics,
  };
}

/** The operationIds a description declares, in document order (for suggestions). */
function allOperationIds(docs: DocumentSet): string[] {
  const out: string[] = [];
  const data = docs.root.data;
  const paths = isObject(data) && isObject(data["paths"]) ? data["paths"] : {};
  for (const [path, raw] of Object.entries(paths)) {
    const resolved = docs.deref(raw, ["paths", path]);
    const item = "value" in resolved ? resolved.value : undefined;
    if (!isObject(item)) continue;
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (isObject(op) && typeof op["operationId"] === "string") out.push(op["operationId"]);
    }
  }
  return out;
}

/** The document a policy names under `openapi:`, as written (relative to the policy). */
export function documentOf(data: unknown): string | undefined {
  if (!isObject(data)) return undefined;
  const raw = data["openapi"];
  if (typeof raw === "string") return raw;
  if (isObject(raw) && typeof raw["document"] === "string") return raw["document"];
  return undefined;
}
