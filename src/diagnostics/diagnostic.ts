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
  /** Set on the notes of `resgen build --target` (docs/targets.md, "Reading the notes"). */
  readonly note?: TargetNote;
}

/**
 * What a target's note is about, so the text output can group the notes that repeat (docs/targets.md,
 * "Reading the notes") and a project file can acknowledge them per target.
 */
export interface TargetNote {
  /** The target that made the note: istio, linkerd or grpc. */
  readonly target: string;
  /**
   * Whether the note only says that a setting stays in the application's client: the target
   * leaves it out, and nothing the target does differs from the policy.
   */
  readonly informational: boolean;
  /** The operations the note names (none for a note about the dependency). */
  readonly operations: readonly string[];
  /** The message without the target and the operations. */
  readonly text: string;
}

/**
 * A diagnostic `resgen build` counts but does not print, because the project file acknowledges
 * its code for its target (docs/targets.md, "Acknowledging notes"): the entry that does.
 */
export interface Acknowledged {
  readonly diagnostic: Diagnostic;
  /** The project file, as diagnostics name it, and the span of the list entry naming the code. */
  readonly file: string;
  readonly span: Span;
}

/** A diagnostic of `code`, with the code's severity. */
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

/**
 * Orders by file, then position, then code, and drops exact repeats: the order and the single
 * de-duplication of a {@link DiagnosticSink}, for a list collected elsewhere.
 */
export function sortDiagnostics(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  const sink = new DiagnosticSink();
  sink.report(diagnostics);
  return sink.all();
}

/**
 * Where every stage of a run reports its diagnostics. It keeps one of each diagnostic (by code,
 * file, span and message, so a problem reached by two routes, such as a file named twice, is
 * reported once) and hands them back ordered by file, position, code and message.
 */
export class DiagnosticSink {
  private readonly byKey = new Map<string, Diagnostic>();

  /** Adds diagnostics; a repeat of one already reported is dropped. */
  report(diagnostics: Diagnostic | Iterable<Diagnostic>): void {
    for (const d of isDiagnostic(diagnostics) ? [diagnostics] : diagnostics) {
      const key = `${d.code}\0${d.file}\0${d.span.start}\0${d.span.end}\0${d.message}`;
      if (!this.byKey.has(key)) this.byKey.set(key, d);
    }
  }

  /** Whether an error has been reported. */
  hasErrors(): boolean {
    for (const d of this.byKey.values()) if (d.severity === "error") return true;
    return false;
  }

  /** Everything reported, each once, sorted. */
  all(): Diagnostic[] {
    return [...this.byKey.values()].sort(
      (a, b) =>
        compare(a.file, b.file) ||
        a.span.start - b.span.start ||
        compare(a.code, b.code) ||
        compare(a.message, b.message),
    );
  }
}

function isDiagnostic(value: Diagnostic | Iterable<Diagnostic>): value is Diagnostic {
  return typeof (value as Diagnostic).code === "string";
}

/**
 * The exit status of a command that reported `diagnostics` (docs/build.md, "Exit codes"): 2 when
 * any has the exit category `usage` or `internal`, else 1 with errors, or with more warnings than
 * `maxWarnings`, else 0.
 */
export function exitCode(
  diagnostics: readonly Diagnostic[],
  options: { readonly maxWarnings?: number | undefined } = {},
): 0 | 1 | 2 {
  if (diagnostics.some((d) => CODES[d.code].exit !== "findings")) return 2;
  const { errors, warnings } = countBySeverity(diagnostics);
  if (errors > 0) return 1;
  return options.maxWarnings !== undefined && warnings > options.maxWarnings ? 1 : 0;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** How many of `diagnostics` are errors, and how many warnings. */
export function countBySeverity(diagnostics: readonly Diagnostic[]): {
  errors: number;
  warnings: number;
} {
  let errors = 0;
  for (const d of diagnostics) if (d.severity === "error") errors++;
  return { errors, warnings: diagnostics.length - errors };
}
