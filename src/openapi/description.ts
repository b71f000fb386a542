/**
 * Reading an OpenAPI document loaded with its YAML nodes: what kind of document it is, JSON
 * pointers, and the values they name (following `$ref`s across files is documents.ts's job).
 */
import type { Path } from "../language/parse.js";

export type Raw = Record<string, unknown>;
export const isObject = (v: unknown): v is Raw =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/** A scalar as YAML wrote it (`3.1`, `"3.0.3"`, `true`, `~`), or undefined for a mapping or a list. */
function scalarText(value: unknown): string | undefined {
  if (
    value === null ||
    typeof value === "string" ||
    typeof value === "number" ||
    typeof value === "boolean" ||
    typeof value === "bigint"
  )
    return String(value);
  return undefined;
}

/** The OpenAPI versions resgen reads. */
export type OpenApiVersion = "3.0" | "3.1";

/** The version of the document, or why it is not an OpenAPI 3.0 / 3.1 description. */
export function documentVersion(
  data: unknown,
): { version: OpenApiVersion } | { problem: string; hint: string; path: Path } {
  if (!isObject(data))
    return {
      problem: "the document is not a mapping",
      hint: "an OpenAPI description starts with `openapi: 3.1.0`",
      path: [],
    };
  if (data["swagger"] !== undefined) {
    const swagger = scalarText(data["swagger"]);
    return {
      problem: `Swagger ${swagger === undefined ? "" : `${swagger} `}is not supported: resgen reads OpenAPI 3.0 and 3.1`,
      hint: "convert the description to OpenAPI 3 (e.g. with swagger2openapi)",
      path: ["swagger"],
    };
  }
  const raw = data["openapi"];
  if (raw === undefined)
    return {
      problem: 'the document has no "openapi" version field',
      hint: "an OpenAPI description starts with `openapi: 3.1.0` (or 3.0.x)",
      path: [],
    };
  const text = scalarText(raw);
  if (text === undefined)
    return {
      problem: 'the "openapi" version field is not a version number',
      hint: "write the version as a string, e.g. `openapi: 3.1.0`",
      path: ["openapi"],
    };
  const match = /^3\.([01])(\.\d+)?(-[\w.]+)?$/.exec(text);
  if (!match)
    return {
      problem: `OpenAPI version "${text}" is not supported: resgen reads 3.0.x and 3.1.x`,
      hint: "write the version as a string, e.g. `openapi: 3.1.0`",
      path: ["openapi"],
    };
  if (data["paths"] !== undefined && !isObject(data["paths"]))
    return {
      problem: '"paths" is not a mapping of paths to path items',
      hint: "write `paths: { /items: { get: … } }`",
      path: ["paths"],
    };
  return { version: match[1] === "0" ? "3.0" : "3.1" };
}

/** The document path a local JSON pointer (`#/components/schemas/Pet`) names, or undefined for another document. */
export function pointerPath(ref: string): Path | undefined {
  if (!ref.startsWith("#")) return undefined;
  const pointer = ref.slice(1);
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) return undefined;
  return pointer
    .slice(1)
    .split("/")
    .map((s) => {
      let decoded = s;
      try {
        decoded = decodeURIComponent(s);
      } catch {
        // a stray % stays as written
      }
      return decoded.replace(/~1/g, "/").replace(/~0/g, "~");
    });
}

/** The value at `path` in the document's data, or undefined. */
export function valueAt(data: unknown, path: Path): unknown {
  let node = data;
  for (const segment of path) {
    if (Array.isArray(node)) {
      const i = Number(segment);
      if (!Number.isInteger(i) || String(i) !== String(segment)) return undefined;
      node = node[i];
    } else if (isObject(node)) {
      if (!Object.hasOwn(node, String(segment))) return undefined;
      node = node[String(segment)];
    } else {
      return undefined;
    }
  }
  return node;
}

/** "#/components/schemas has no Pets (did you mean …)"-style text for a missing pointer target. */
export function describeMissing(data: unknown, target: Path): string {
  let node = data;
  for (let i = 0; i < target.length; i++) {
    const next = valueAt(node, [target[i]!]);
    if (next === undefined) {
      const parent =
        "#/" +
        target
          .slice(0, i)
          .map((s) => String(s).replace(/~/g, "~0").replace(/\//g, "~1"))
          .join("/");
      const keys = isObject(node) ? Object.keys(node) : [];
      const near = keys.find((k) => k.toLowerCase() === String(target[i]).toLowerCase());
      return `${parent === "#/" ? "the document" : parent} has no "${String(target[i])}"${near ? ` (there is "${near}")` : ""}`;
    }
    node = next;
  }
  return "the target is empty";
}

/** Whether a loaded YAML document is an OpenAPI (or Swagger) description rather than a policy. */
export function isOpenApiDocument(data: unknown): boolean {
  if (!isObject(data) || data["version"] !== undefined || data["dependency"] !== undefined)
    return false;
  return (
    (data["openapi"] !== undefined &&
      (data["paths"] !== undefined ||
        data["info"] !== undefined ||
        data["components"] !== undefined ||
        data["webhooks"] !== undefined)) ||
    data["swagger"] !== undefined
  );
}
