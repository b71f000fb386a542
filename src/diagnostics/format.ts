import { CODES } from "./codes.js";
import { countBySeverity, type Acknowledged, type Diagnostic } from "./diagnostic.js";
import { LineIndex, type Position } from "./position.js";
import { docsUrl, REPOSITORY_URL, VERSION } from "../version.js";

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
  /**
   * Diagnostics the project file acknowledges (docs/targets.md, "Acknowledging notes"): the text
   * output counts them in its summary, JSON lists them apart, SARIF as suppressed results.
   */
  readonly acknowledged?: readonly Acknowledged[];
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
      return formatJson(diagnostics, sources, options.acknowledged);
    case "sarif":
      return formatSarif(diagnostics, sources, options.acknowledged);
  }
}

const paint = (on: boolean, code: string) => (s: string) => (on ? `\x1b[${code}m${s}\x1b[0m` : s);

/** Columns of source a code frame shows per line; longer lines are clipped to a window around the caret. */
export const FRAME_WIDTH = 120;
/** Of those, how many stay left of the caret when a line is clipped. */
const FRAME_LEAD = 40;
/** Marks the text a clipped line leaves out. */
export const ELLIPSIS = "...";

/**
 * `file:line:col severity CODE message`, then two lines of context with a caret under the node,
 * then the hint: the layout of tsc and Redocly, which editors and terminals turn into links.
 * A context line longer than FRAME_WIDTH is clipped to a window around the caret, marked with
 * ELLIPSIS, so a minified one-line document prints a short frame: the work per diagnostic is
 * bounded by the window, not by the length of the line.
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
  const frame = (d: Diagnostic): void => {
    const index = sources.index(d.file);
    const start = index.position(d.span.start);
    const end = index.position(Math.max(d.span.start, d.span.end - 1));
    const severity = d.severity === "error" ? red("error") : yellow("warning");
    out.push(
      `${cyan(`${d.file}:${start.line}:${start.column}`)} ${severity} ${dim(d.code)} ${d.message}`,
    );
    const gutter = String(start.line).length + 1;
    if (index.text.length > 0 && start.line <= index.lineCount) {
      const first = Math.max(1, start.line - 1);
      const caret = start.column - 1;
      const window = frameWindow(index, first, start.line, caret);
      for (let line = first; line <= start.line; line++) {
        out.push(`${dim(`${String(line).padStart(gutter)} |`)} ${clip(index, line, window)}`);
      }
      const width = end.line === start.line ? Math.max(1, end.column - start.column + 1) : 1;
      const shown = Math.max(1, Math.min(width, 80, window.to - caret));
      out.push(
        `${dim(`${" ".repeat(gutter)} |`)} ${caretPadding(index, start.line, window, caret)}${(d.severity === "error" ? red : yellow)("^".repeat(shown))}`,
      );
    }
    if (d.hint) out.push(`${" ".repeat(gutter)} = hint: ${d.hint}`);
    out.push("");
  };
  // errors and the notes to act on first, each with its frame; then the informational notes of
  // the targets, those that repeat as one group (docs/targets.md, "Reading the notes")
  const { first, groups } = arrange(diagnostics);
  for (const d of first) frame(d);
  if (groups.length > 0) {
    out.push(dim("informational: what the targets leave to the application's client"), "");
  }
  for (const group of groups) {
    const [one] = group;
    if (group.length === 1 && one) {
      frame(one);
      continue;
    }
    const head = group[0]!;
    const note = head.note!;
    const same = group.every((d) => d.note?.text === note.text);
    const message = same ? note.text : CODES[head.code].title;
    out.push(
      `${yellow("warning")} ${dim(head.code)} ${note.target} (${group.length} places): ${message}`,
    );
    for (const d of group) {
      const at = sources.position(d);
      const ops = d.note?.operations ?? [];
      const subject =
        ops.length === 0
          ? ""
          : `${ops.length === 1 ? "operation" : "operations"} ${ops.join(", ")}`;
      const detail = same ? subject : subject === "" ? d.note!.text : `${subject}: ${d.note!.text}`;
      out.push(`  ${cyan(`${d.file}:${at.line}:${at.column}`)}${detail ? `  ${detail}` : ""}`);
    }
    const hint = head.hint;
    if (hint !== undefined && group.every((d) => d.hint === hint)) out.push(`  = hint: ${hint}`);
    out.push("");
  }
  const { errors, warnings } = countBySeverity(diagnostics);
  const acknowledged = options.acknowledged ?? [];
  const where = [...new Set(acknowledged.map((a) => a.file))].join(", ");
  out.push(
    `${plural(errors, "error")}, ${plural(warnings, "warning")}${acknowledged.length > 0 ? ` (${acknowledged.length} acknowledged in ${where})` : ""}`,
  );
  return out.join("\n") + "\n";
}

/**
 * The order of the text output: every diagnostic but the informational notes of the targets, as
 * given; then those notes by code and target, each code of one target as one group in the order
 * given. Errors are never grouped, nor are the notes to act on.
 */
function arrange(diagnostics: readonly Diagnostic[]): {
  first: Diagnostic[];
  groups: Diagnostic[][];
} {
  const first: Diagnostic[] = [];
  const byKey = new Map<string, Diagnostic[]>();
  for (const d of diagnostics) {
    if (d.severity !== "warning" || !d.note?.informational) {
      first.push(d);
      continue;
    }
    const key = `${d.code}\0${d.note.target}`;
    const group = byKey.get(key);
    if (group) group.push(d);
    else byKey.set(key, [d]);
  }
  const groups = [...byKey]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, group]) => group);
  return { first, groups };
}

/** The columns [from, to) of the frame's lines to print: all of them when every line fits. */
interface FrameWindow {
  readonly from: number;
  readonly to: number;
}

function frameWindow(index: LineIndex, first: number, last: number, caret: number): FrameWindow {
  let longest = 0;
  for (let line = first; line <= last; line++) longest = Math.max(longest, index.lineLength(line));
  if (longest <= FRAME_WIDTH) return { from: 0, to: longest };
  // the caret line decides: its end pulls the window left so the window stays full
  const length = index.lineLength(last);
  let from =
    caret < FRAME_WIDTH - FRAME_LEAD
      ? 0
      : Math.max(0, Math.min(caret - FRAME_LEAD, length - FRAME_WIDTH));
  let to = from + FRAME_WIDTH;
  // never cut a surrogate pair in two
  const text = index.text;
  const startOfLast = index.lineStart(last);
  if (from > 0 && isLowSurrogate(text.charCodeAt(startOfLast + from))) from++;
  if (isHighSurrogate(text.charCodeAt(startOfLast + to - 1))) to++;
  return { from, to: Math.max(to, from) };
}

/**
 * One line of a frame, cut to the window, with ELLIPSIS where text is left out. A line that fits
 * in FRAME_WIDTH is printed whole: the line above a clipped caret line is more use whole than cut.
 */
function clip(index: LineIndex, line: number, window: FrameWindow): string {
  const length = index.lineLength(line);
  if (length <= FRAME_WIDTH || (window.from === 0 && length <= window.to))
    return index.lineText(line);
  const start = index.lineStart(line);
  const text = index.text.slice(
    start + Math.min(window.from, length),
    start + Math.min(window.to, length),
  );
  return `${window.from > 0 && length > 0 ? ELLIPSIS : ""}${text}${length > window.to ? ELLIPSIS : ""}`;
}

/** Blanks under the caret line up to the caret, keeping its tabs so the caret lines up under tabbed text. */
function caretPadding(index: LineIndex, line: number, window: FrameWindow, caret: number): string {
  const start = index.lineStart(line);
  const length = index.lineLength(line);
  let pad = window.from > 0 && length > 0 ? " ".repeat(ELLIPSIS.length) : "";
  for (let i = window.from; i < caret; i++)
    pad += i < length && index.text.charCodeAt(start + i) === 9 ? "\t" : " ";
  return pad;
}

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/**
 * Stable, documented JSON: one object per diagnostic with 1-based positions. Acknowledged
 * diagnostics (docs/targets.md, "Acknowledging notes") are listed under `acknowledged`, each with
 * the entry of the project file that acknowledges it, and counted in `summary.acknowledged`.
 */
export function formatJson(
  diagnostics: readonly Diagnostic[],
  sources: SourceTexts,
  acknowledged: readonly Acknowledged[] = [],
): string {
  const row = (d: Diagnostic) => {
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
  };
  const out = {
    diagnostics: diagnostics.map(row),
    ...(acknowledged.length === 0
      ? {}
      : {
          acknowledged: acknowledged.map((a) => {
            const at = sources.index(a.file).position(a.span.start);
            return {
              ...row(a.diagnostic),
              acknowledgedAt: { file: a.file, line: at.line, column: at.column },
            };
          }),
        }),
    summary: {
      ...countBySeverity(diagnostics),
      ...(acknowledged.length === 0 ? {} : { acknowledged: acknowledged.length }),
    },
  };
  return JSON.stringify(out, null, 2) + "\n";
}

/**
 * SARIF 2.1.0, the format GitHub code scanning uploads. Acknowledged diagnostics (docs/targets.md,
 * "Acknowledging notes") follow the others as results with an external, accepted suppression
 * located at the entry of the project file that acknowledges them, which code scanning shows as
 * dismissed.
 */
export function formatSarif(
  diagnostics: readonly Diagnostic[],
  sources: SourceTexts,
  acknowledged: readonly Acknowledged[] = [],
): string {
  const all = [...diagnostics, ...acknowledged.map((a) => a.diagnostic)];
  const used = [...new Set(all.map((d) => d.code))].sort();
  const region = (file: string, span: { start: number; end: number }) => {
    const index = sources.index(file);
    const start = index.position(span.start);
    const end = index.position(span.end);
    return {
      startLine: start.line,
      startColumn: start.column,
      endLine: end.line,
      endColumn: Math.max(end.column, end.line === start.line ? start.column + 1 : 1),
    };
  };
  const location = (file: string, span: { start: number; end: number }) => ({
    physicalLocation: {
      artifactLocation: { uri: file.split("\\").join("/") },
      region: region(file, span),
    },
  });
  const result = (d: Diagnostic) => ({
    ruleId: d.code,
    ruleIndex: used.indexOf(d.code),
    level: d.severity,
    message: { text: d.hint ? `${d.message}\nHint: ${d.hint}` : d.message },
    locations: [location(d.file, d.span)],
  });
  const log = {
    $schema: "https://json.schemastore.org/sarif-2.1.0.json",
    version: "2.1.0",
    runs: [
      {
        tool: {
          driver: {
            name: "resgen",
            version: VERSION,
            informationUri: REPOSITORY_URL,
            rules: used.map((code) => ({
              id: code,
              name: CODES[code].title.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) =>
                (c ?? "").toUpperCase(),
              ),
              shortDescription: { text: CODES[code].title },
              fullDescription: { text: CODES[code].help },
              defaultConfiguration: { level: CODES[code].severity },
              helpUri: docsUrl(`docs/diagnostics.md#${code.toLowerCase()}`),
            })),
          },
        },
        results: [
          ...diagnostics.map(result),
          ...acknowledged.map((a) => ({
            ...result(a.diagnostic),
            suppressions: [
              {
                kind: "external",
                status: "accepted",
                justification: `acknowledged for ${a.diagnostic.note?.target ?? "its target"} in ${a.file}`,
                location: location(a.file, a.span),
              },
            ],
          })),
        ],
      },
    ],
  };
  return JSON.stringify(log, null, 2) + "\n";
}
