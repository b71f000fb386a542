import { CODES, type Code, type Severity } from "./codes.js";

/** A character range in one source file, as 0-based offsets; printed as 1-based line:col. */
export interface Span {
  readonly start: number;
  readonly end: number;
}

export interface Diagnostic {
  readonly code: Code;
  readonly severity: Severity;
  /** Path of the file as the user named it (relative to the working directory when possible). */
  readonly file: string;
  readonly span: Span;
  /** One line: what is wrong. */
  readonly message: string;
  /** How to fix it, when there is something useful to say. */
  readonly hint?: string;
}

export function diagnostic(
  code: Code,
  file: string,
  span: Span,
  message: string,
  hint?: string,
): Diagnostic {
  const d = { code, severity: CODES[code].severity, file, span, message };
  return hint === undefined ? d : { ...d, hint };
}

/** Orders by file, then position, then code, and drops exact repeats (same code, place, message). */
export function sortDiagnostics(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>();
  const unique: Diagnostic[] = [];
  for (const d of diagnostics) {
    const key = `${d.file}\0${d.span.start}\0${d.code}\0${d.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    unique.push(d);
  }
  return unique.sort(
    (a, b) =>
      compare(a.file, b.file) ||
      a.span.start - b.span.start ||
      compare(a.code, b.code) ||
      compare(a.message, b.message),
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function countBySeverity(diagnostics: readonly Diagnostic[]): { errors: number; warnings: number } {
  let errors = 0;
  for (const d of diagnostics) if (d.severity === "error") errors++;
  return { errors, warnings: diagnostics.length - errors };
}
