/**
 * Findings: diagnostics before they name the operations they concern. A check that looks at
 * each operation finds the same problem once per operation when the setting is inherited; the
 * findings at one place with one code and one message become one diagnostic that lists them
 * ("operations a, b: …"). The analyzer and the targets' mapping reports both merge through here.
 */
import type { Code } from "./codes.js";
import { diagnostic, type Diagnostic, type Span } from "./diagnostic.js";

export interface Finding {
  readonly code: Code;
  readonly file: string;
  readonly span: Span;
  readonly message: string;
  readonly hint?: string;
  /** The operations the finding concerns; none for a finding about the dependency as a whole. */
  readonly operations?: readonly string[];
}

/** One finding per code, place and message, in first-seen order, with the operations of all of them. */
export function mergeFindings(findings: Iterable<Finding>): Finding[] {
  const byKey = new Map<string, Finding>();
  for (const f of findings) {
    const key = `${f.code}\0${f.file}\0${f.span.start}\0${f.span.end}\0${f.message}`;
    const seen = byKey.get(key);
    if (!seen) byKey.set(key, f);
    else if (f.operations) {
      const operations = [
        ...(seen.operations ?? []),
        ...f.operations.filter((o) => !seen.operations?.includes(o)),
      ];
      byKey.set(key, { ...seen, operations });
    }
  }
  return [...byKey.values()];
}

/** The diagnostic of a finding: `prefix`, then the operations it concerns, then its message. */
export function findingDiagnostic(f: Finding, prefix = ""): Diagnostic {
  const ops = f.operations ?? [];
  const subject =
    ops.length === 0 ? "" : `${ops.length === 1 ? "operation" : "operations"} ${ops.join(", ")}: `;
  return diagnostic(f.code, f.file, f.span, prefix + subject + f.message, f.hint);
}
