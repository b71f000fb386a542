/**
 * Checks the schema cannot express: rules that depend on other keys (HTTP operations need a
 * method and a path), path templates, and keys that exclude each other. They read the raw data
 * defensively, so they run even when the schema found other problems in the same file.
 */
import { diagnostic, type Diagnostic } from "../diagnostics/diagnostic.js";
import type { Path, SourceDocument } from "./parse.js";
import { didYouMean } from "./suggest.js";

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

  out.push(...checkAuth(source, transport, imported));

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

/**
 * `auth` (docs/policy.md, "Credentials"): every scheme a requirement names is declared under
 * `auth.schemes`, and credentials are only for the http transport, where the client makes the
 * request. With `openapi:`, the document supplies auth (RG609 reports a policy that sets it).
 */
function checkAuth(
  source: SourceDocument,
  transport: "http" | "function",
  imported: boolean,
): Diagnostic[] {
  const data = source.data as Raw;
  const out: Diagnostic[] = [];
  const file = source.file;
  const operations = isObject(data["operations"]) ? data["operations"] : {};
  const where: Path[] = [];
  if (data["auth"] !== undefined) where.push(["auth"]);
  for (const [name, op] of Object.entries(operations))
    if (isObject(op) && op["auth"] !== undefined) where.push(["operations", name, "auth"]);
  if (imported) return out;
  if (transport === "function") {
    for (const path of where)
      out.push(
        diagnostic(
          "RG118",
          file,
          source.keySpanOf(path),
          "auth is set on a policy whose transport is function: your function makes the request, so the client has nothing to send credentials with",
          "send the credentials from your function, or remove auth",
        ),
      );
    return out;
  }
  const auth = isObject(data["auth"]) ? data["auth"] : undefined;
  const declared =
    auth !== undefined && isObject(auth["schemes"]) ? Object.keys(auth["schemes"]) : [];
  const requirements: Path[] = [
    ...(auth !== undefined && auth["use"] !== undefined ? [["auth", "use"] as Path] : []),
    ...where.filter((p) => p[0] === "operations"),
  ];
  for (const path of requirements) {
    const list = path.reduce<unknown>(
      (node, key) => (isObject(node) ? node[key] : undefined),
      data,
    );
    if (!Array.isArray(list)) continue;
    list.forEach((entry: unknown, i: number) => {
      const names = Array.isArray(entry) ? entry : [entry];
      names.forEach((name: unknown, j: number) => {
        if (typeof name !== "string" || declared.includes(name)) return;
        const at: Path = Array.isArray(entry) ? [...path, i, j] : [...path, i];
        const suggestion = didYouMean(name, declared);
        out.push(
          diagnostic(
            "RG118",
            file,
            source.spanOf(at),
            `auth names the scheme "${name}", which auth.schemes does not declare`,
            suggestion !== undefined
              ? `did you mean "${suggestion}"?`
              : declared.length > 0
                ? `the declared schemes: ${declared.join(", ")}`
                : "declare it under `auth: { schemes: { " + name + ": { type: bearer } } }`",
          ),
        );
      });
    });
  }
  return out;
}
