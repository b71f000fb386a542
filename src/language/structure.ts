/**
 * Checks the schema cannot express: rules that depend on other keys (HTTP operations need a
 * method and a path), path templates, and keys that exclude each other. They read the raw data
 * defensively, so they run even when the schema found other problems in the same file.
 */
import { diagnostic, type Diagnostic } from "../diagnostics/diagnostic.js";
import type { SourceDocument } from "./parse.js";

type Raw = Record<string, unknown>;
const isObject = (v: unknown): v is Raw => v !== null && typeof v === "object" && !Array.isArray(v);

/** Validates a path template; returns what is wrong with it, or undefined. */
export function checkPathTemplate(path: string): { message: string; hint?: string } | undefined {
  if (!path.startsWith("/"))
    return {
      message: `path "${path}" must start with "/"`,
      hint: `write "/${path.replace(/^\/*/, "")}"`,
    };
  if (/[?#]/.test(path))
    return {
      message: `path "${path}" contains a query or fragment`,
      hint: "declare query parameters under `query:`",
    };
  const colon = /\/:([A-Za-z_][A-Za-z0-9_]*)/.exec(path);
  if (colon)
    return {
      message: `path parameter ":${colon[1]!}" is not in {} form`,
      hint: `write "{${colon[1]!}}"`,
    };
  let depth = 0;
  for (const ch of path) {
    if (ch === "{") depth++;
    else if (ch === "}") depth--;
    if (depth < 0 || depth > 1)
      return {
        message: `path "${path}" has unbalanced braces`,
        hint: "write parameters as {name}",
      };
  }
  if (depth !== 0)
    return { message: `path "${path}" has an unclosed "{"`, hint: "write parameters as {name}" };
  const seen = new Set<string>();
  for (const m of path.matchAll(/\{([^{}]*)\}/g)) {
    const name = m[1]!;
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      return {
        message: `path parameter "{${name}}" is not a valid name`,
        hint: "letters, digits and _, starting with a letter",
      };
    if (seen.has(name)) return { message: `path parameter "{${name}}" appears twice` };
    seen.add(name);
  }
  return undefined;
}

/**
 * @param defaultTransport the transport the project defaults give policies that set none
 */
export function checkStructure(
  source: SourceDocument,
  defaultTransport: "http" | "function" = "http",
): Diagnostic[] {
  const data = source.data;
  if (!isObject(data)) return [];
  const out: Diagnostic[] = [];
  const file = source.file;
  const transport =
    data["transport"] === "function" || data["transport"] === "http"
      ? data["transport"]
      : defaultTransport;

  const operations = data["operations"];
  // with `openapi:`, operations come from the document and the ones listed only override settings
  const imported = data["openapi"] !== undefined;
  if (operations === undefined && !imported) {
    out.push(
      diagnostic(
        "RG102",
        file,
        source.parentSpanOf(["operations"]),
        'missing required key "operations"',
        "declare the operations, or take them from an OpenAPI document with `openapi: ./api.yaml`",
      ),
    );
  }
  if (isObject(operations)) {
    if (Object.keys(operations).length === 0) {
      out.push(
        diagnostic(
          "RG102",
          file,
          source.spanOf(["operations"]),
          "operations is empty: declare at least one operation",
        ),
      );
    }
    for (const [name, op] of Object.entries(operations)) {
      if (!isObject(op)) continue;
      if (transport === "http" && !imported) {
        for (const key of ["method", "path"] as const) {
          if (op[key] === undefined) {
            out.push(
              diagnostic(
                "RG102",
                file,
                source.keySpanOf(["operations", name]),
                `missing required key "${key}" in operation "${name}" (transport: http needs a method and a path)`,
                key === "method" ? "add e.g. `method: GET`" : "add e.g. `path: /items/{id}`",
              ),
            );
          }
        }
      }
      if (typeof op["path"] === "string") {
        const problem = checkPathTemplate(op["path"]);
        if (problem)
          out.push(
            diagnostic(
              "RG109",
              file,
              source.spanOf(["operations", name, "path"]),
              problem.message,
              problem.hint,
            ),
          );
      }
    }
  }

  const window = isObject(data["breaker"]) ? data["breaker"]["window"] : undefined;
  if (
    isObject(window) &&
    window["calls"] !== undefined &&
    (window["duration"] !== undefined || window["buckets"] !== undefined)
  ) {
    out.push(
      diagnostic(
        "RG112",
        file,
        source.keySpanOf(["breaker", "window", "calls"]),
        "breaker.window sets both a count window (calls) and a time window (duration/buckets)",
        "keep { calls } for a count window, or { duration, buckets } for a time window",
      ),
    );
  }
  return out;
}
