/**
 * Every diagnostic resgen can report, in one table. The docs table in docs/diagnostics.md is
 * generated from this list (a test keeps them in sync), so a code cannot exist undocumented.
 */
export type Severity = "error" | "warning";

export interface CodeInfo {
  readonly severity: Severity;
  /** One line: what the code means. */
  readonly title: string;
  /** Why it matters and how to fix it, for the docs table. */
  readonly help: string;
  /**
   * A policy that triggers the code. docs/diagnostics.md shows it with the output resgen really
   * prints for it, so the docs cannot drift from the checker.
   */
  readonly example?: string;
}

export const CODES = {
  RG001: {
    severity: "error",
    title: "YAML syntax error",
    help: "The file is not valid YAML. Fix the syntax at the position shown; nothing else in the file is checked until it parses.",
    example: "version: 1\ndependency: [payments\noperations: {}\n",
  },
  RG002: {
    severity: "error",
    title: "Duplicate key",
    help: "A mapping names the same key twice, so one of the two values would be silently lost. Keep one.",
    example: "version: 1\ndependency: payments\nretry: { maxAttempts: 2 }\nretry: { maxAttempts: 3 }\noperations:\n  get: { method: GET, path: /charges }\n",
  },
  RG003: {
    severity: "error",
    title: "Document refused: too large or too many aliases",
    help: "Policies are small files. A document over 1 MiB, or one that expands aliases beyond the limit (an alias bomb), is refused before it can exhaust memory.",
  },
  RG004: {
    severity: "error",
    title: "File cannot be read",
    help: "The file does not exist or is not readable. Check the path or the policy glob in resgen.config.yaml.",
  },
  RG005: {
    severity: "error",
    title: "Document is not a mapping",
    help: "A policy file holds one YAML mapping (`version: 1`, `dependency: …`, …). An empty file, a list or a scalar is not a policy.",
    example: "- version: 1\n- dependency: payments\n",
  },
  RG101: {
    severity: "error",
    title: "Unknown key",
    help: "The key is not part of the policy language. It is usually a typo: the hint names the nearest valid key.",
    example: "version: 1\ndependency: payments\nretry:\n  maxAttemps: 3\noperations:\n  get: { method: GET, path: /charges }\n",
  },
  RG102: {
    severity: "error",
    title: "Missing required key",
    help: "A required key is absent. The position is the mapping that should contain it.",
    example: "version: 1\ndependency: payments\noperations:\n  createCharge:\n    path: /charges\n",
  },
  RG103: {
    severity: "error",
    title: "Wrong type",
    help: "The value has the wrong type (for example a list where a mapping is expected).",
    example: "version: 1\ndependency: payments\nessential: [yes]\noperations:\n  get: { method: GET, path: /charges }\n",
  },
  RG104: {
    severity: "error",
    title: "Invalid duration",
    help: "Durations are a non-negative number with a unit: `250ms`, `1.5s`, `2m`, `1h`. A bare number is refused because `250` could mean milliseconds or seconds.",
    example: "version: 1\ndependency: payments\ntimeout: { attempt: 250 }\noperations:\n  get: { method: GET, path: /charges }\n",
  },
  RG105: {
    severity: "error",
    title: "Invalid rate",
    help: "Rates are a fraction between 0 and 1 (`0.5`) or a percentage between 0% and 100% (`50%`).",
    example: "version: 1\ndependency: payments\nbreaker: { failureRate: 150% }\noperations:\n  get: { method: GET, path: /charges }\n",
  },
  RG106: {
    severity: "error",
    title: "Value out of range",
    help: "A number is outside the range the setting accepts (for example `maxAttempts: 0`). The message gives the bound.",
    example: "version: 1\ndependency: payments\nretry: { maxAttempts: 0 }\noperations:\n  get: { method: GET, path: /charges }\n",
  },
  RG107: {
    severity: "error",
    title: "Value not allowed",
    help: "The value is not one of the allowed choices (for example `jitter: random`). The message lists them.",
    example: "version: 1\ndependency: payments\nretry: { backoff: { jitter: random } }\noperations:\n  get: { method: GET, path: /charges }\n",
  },
  RG108: {
    severity: "error",
    title: "Invalid name",
    help: "Dependency and operation names become TypeScript identifiers: start with a letter, then letters, digits, `-` or `_`.",
    example: "version: 1\ndependency: 2fa-codes\noperations:\n  get: { method: GET, path: /codes }\n",
  },
  RG109: {
    severity: "error",
    title: "Invalid path template",
    help: "Operation paths start with `/` and write parameters as `{name}`. `:id` and unbalanced braces are refused.",
    example: "version: 1\ndependency: payments\noperations:\n  get: { method: GET, path: \"/charges/:id\" }\n",
  },
  RG110: {
    severity: "error",
    title: "Unsupported policy version",
    help: "This resgen reads `version: 1`. Add it at the top of the file.",
    example: "version: 2\ndependency: payments\noperations:\n  get: { method: GET, path: /charges }\n",
  },
  RG111: {
    severity: "error",
    title: "Invalid schema reference",
    help: "`$ref` must have the form `#/schemas/Name`.",
    example: "version: 1\ndependency: payments\noperations:\n  get: { method: GET, path: /charges, response: { $ref: Charge } }\n",
  },
  RG112: {
    severity: "error",
    title: "Conflicting settings",
    help: "Two keys that exclude each other are both set (for example a breaker window with both `duration` and `calls`). Keep one.",
    example: "version: 1\ndependency: payments\nbreaker: { window: { duration: 10s, calls: 100 } }\noperations:\n  get: { method: GET, path: /charges }\n",
  },
  RG113: {
    severity: "error",
    title: "Duplicate dependency",
    help: "Two policy files declare the same dependency; each dependency has exactly one policy.",
  },
  RG114: {
    severity: "error",
    title: "No policies found",
    help: "The paths or the policy glob matched no file. Check the arguments or `policies:` in resgen.config.yaml.",
  },
  RG301: {
    severity: "error",
    title: "Generated names collide",
    help: "Two dependencies, or two operations of one dependency, would become the same TypeScript name (for example `get-charge` and `getCharge` both become `getCharge()`), or a path parameter is called `query` or `body`, which the method's input already uses. Rename one.",
    example: "version: 1\ndependency: payments\noperations:\n  get-charge: { method: GET, path: /charges/a }\n  getCharge: { method: GET, path: /charges/b }\n",
  },
  RG302: {
    severity: "error",
    title: "Refusing to overwrite a file resgen did not generate",
    help: "The output folder holds a file at a path resgen wants to write, and the file does not start with resgen's generated-file header, so it may be someone's work. Move it, or choose another `out` folder. Nothing is written while this is unresolved.",
  },
  RG303: {
    severity: "error",
    title: "Output path outside the output folder",
    help: "resgen writes only inside its output folder. A path that would resolve outside it is refused.",
  },
} as const satisfies Record<string, CodeInfo>;

export type Code = keyof typeof CODES;
