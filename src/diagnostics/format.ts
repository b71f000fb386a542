import { CODES } from "./codes.js";
import { countBySeverity, type Diagnostic } from "./diagnostic.js";
import { LineIndex, type Position } from "./position.js";
import { VERSION } from "../version.js";

export type Format = "pretty" | "json" | "sarif";
export const FORMATS: readonly Format[] = ["pretty", "json", "sarif"];

/** The texts diagnostics point into, by file name, so formatters can turn offsets into lines. */
export class SourceTexts {
  private readonly indexes = new Map<string, LineIndex>();

  set(file: string, text: string): void {
    this.indexes.set(file, new LineIndex(text));
  }

  index(file: string): LineIndex {
    let index = this.indexes.get(file);
    if (!index) {
      index = new LineIndex("");
      this.indexes.set(file, index);
    }
    return index;
  }

  position(d: Diagnostic): Position {
    return this.index(d.file).position(d.span.start);
  }
}

export interface FormatOptions {
  readonly color?: boolean;
}

export function format(
  fmt: Format,
  diagnostics: readonly Diagnostic[],
  sources: SourceTexts,
  options: FormatOptions = {},
): string {
  switch (fmt) {
    case "pretty":
      return formatPretty(diagnostics, sources, options);
    case "json":
      return formatJson(diagnostics, sources);
    case "sarif":
      return formatSarif(diagnostics, sources);
  }
}

const paint = (on: boolean, code: string) => (s: string) => (on ? `\x1b[${code}m${s}\x1b[0m` : s);

/**
 * `file:line:col severity CODE message`, then two lines of context with a caret under the node,
 * then the hint: the layout of tsc and Redocly, which editors and terminals turn into links.
 */
export function formatPretty(
  diagnostics: readonly Diagnostic[],
  sources: SourceTexts,
  options: FormatOptions = {},
): string {
  const color = options.color ?? false;
  const red = paint(color, "31");
  const yellow = paint(color, "33");
  const dim = paint(color, "2");
  const cyan = paint(color, "36");
  const out: string[] = [];
  for (const d of diagnostics) {
    const index = sources.index(d.file);
    const start = index.position(d.span.start);
    const end = index.position(Math.max(d.span.start, d.span.end - 1));
    const severity = d.severity === "error" ? red("error") : yellow("warning");
    out.push(`${cyan(`${d.file}:${start.line}:${start.column}`)} ${severity} ${dim(d.code)} ${d.message}`);
    const gutter = String(start.line).length + 1;
    for (let line = Math.max(1, start.line - 1); line <= start.line && index.text.length > 0; line++) {
      if (line > index.lineCount) break;
      out.push(`${dim(`${String(line).padStart(gutter)} |`)} ${index.lineText(line)}`);
    }
    if (index.lineCount >= start.line && index.text.length > 0) {
      const width = end.line === start.line ? Math.max(1, end.column - start.column + 1) : 1;
      const text = index.lineText(start.line);
      // keep tabs in the padding so the caret lines up under tabbed text
      const pad = text.slice(0, start.column - 1).replace(/[^\t]/g, " ");
      out.push(`${dim(`${" ".repeat(gutter)} |`)} ${pad}${(d.severity === "error" ? red : yellow)("^".repeat(Math.min(width, 80)))}`);
    }
    if (d.hint) out.push(`${" ".repeat(gutter)} = hint: ${d.hint}`);
    out.push("");
  }
  const { errors, warnings } = countBySeverity(diagnostics);
  out.push(`${plural(errors, "error")}, ${plural(warnings, "warning")}`);
  return out.join("\n") + "\n";
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** Stable, documented JSON: one object per diagnostic with 1-based positions. */
export function formatJson(diagnostics: readonly Diagnostic[], sources: SourceTexts): string {
  const rows = diagnostics.map((d) => {
    const start = sources.position(d);
    const end = sources.index(d.file).position(d.span.end);
    return {
      code: d.code,
      severity: d.severity,
      file: d.file,
      line: start.line,
      column: start.column,
      endLine: end.line,
      endColumn: end.column,
      message: d.message,
      ...(d.hint === undefined ? {} : { hint: d.hint }),
    };
  });
  return JSON.stringify({ diagnostics: rows, summary: countBySeverity(diagnostics) }, null, 2) + "\n";
}

/** SARIF 2.1.0, the format GitHub code scanning uploads. */
export function formatSarif(diagnostics: readonly Diagnostic[], sources: SourceTexts): string {
  const used = [...new Set(diagnostics.map((d) => d.code))].sort();
  const log = {
    $schema: "https://json.schemastore.org/sarif-2.1.0.json",
    version: "2.1.0",
    runs: [
      {
        tool: {
          driver: {
            name: "resgen",
            version: VERSION,
            informationUri: "https://github.com/resgen-dev/resgen",
            rules: used.map((code) => ({
              id: code,
              name: CODES[code].title.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? "").toUpperCase()),
              shortDescription: { text: CODES[code].title },
              fullDescription: { text: CODES[code].help },
              defaultConfiguration: { level: CODES[code].severity },
              helpUri: `https://github.com/resgen-dev/resgen/blob/main/docs/diagnostics.md#${code.toLowerCase()}`,
            })),
          },
        },
        results: diagnostics.map((d) => {
          const start = sources.position(d);
          const end = sources.index(d.file).position(d.span.end);
          return {
            ruleId: d.code,
            ruleIndex: used.indexOf(d.code),
            level: d.severity,
            message: { text: d.hint ? `${d.message}\nHint: ${d.hint}` : d.message },
            locations: [
              {
                physicalLocation: {
                  artifactLocation: { uri: d.file.split("\\").join("/") },
                  region: {
                    startLine: start.line,
                    startColumn: start.column,
                    endLine: end.line,
                    endColumn: Math.max(end.column, end.line === start.line ? start.column + 1 : 1),
                  },
                },
              },
            ],
          };
        }),
      },
    ],
  };
  return JSON.stringify(log, null, 2) + "\n";
}
