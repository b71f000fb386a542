/**
 * The printer every generated TypeScript module is written with. Code is written as tagged
 * templates that read like their output (`code`); the printer indents, wraps what does not fit in
 * WIDTH columns (argument lists, object literals, union types, JSDoc) and collects the imports.
 *
 * A document is text, an import symbol, a list of documents, or a layout node. Layout follows
 * Wadler's "prettier printer": a `group` is printed on one line when it fits, else its `line`s
 * become line breaks, and groups inside it are measured again. There is no formatting pass: what
 * is printed is the output, so emission is one walk over the document, deterministic for the
 * same input.
 *
 * An import is a value (ImportSymbol, src/model/names.ts): printing one writes its name and adds
 * it to the module's imports, which `printModule` writes, de-duplicated and sorted, above the
 * code. A module imports exactly what its code names.
 */
import type { ImportSymbol } from "../model/names.js";

/** Columns an emitted line may take (a string literal longer than that stays whole). */
export const WIDTH = 100;

/** One unit of indentation. */
const INDENT = 2;

interface Line {
  readonly kind: "line";
  /** Printed as nothing rather than a space when its group fits on one line. */
  readonly soft: boolean;
  /** Always a line break; the groups around it never fit on one line. */
  readonly hard: boolean;
}
interface Group {
  readonly kind: "group";
  readonly contents: Doc;
}
interface Indent {
  readonly kind: "indent";
  readonly by: number;
  readonly contents: Doc;
}
interface IfBreak {
  readonly kind: "ifBreak";
  readonly broken: Doc;
  readonly flat: Doc;
}
interface JsDoc {
  readonly kind: "jsdoc";
  readonly text: string;
}

/** Something the printer prints. */
export type Doc = string | ImportSymbol | Line | Group | Indent | IfBreak | JsDoc | readonly Doc[];

/** What a template may interpolate: a document, a number, or nothing (`null`, `undefined`, `false`). */
export type Printable = Doc | number | null | undefined | false;

/** A space, or a line break when its group does not fit. */
export const line: Doc = { kind: "line", soft: false, hard: false };
/** Nothing, or a line break when its group does not fit. */
export const softline: Doc = { kind: "line", soft: true, hard: false };
/** A line break. */
export const hardline: Doc = { kind: "line", soft: false, hard: true };

/** An empty line: what separates top-level statements. */
export const blankLine: Doc = [hardline, hardline];

/** `contents` on one line if it fits in what is left of the line, else with its lines broken. */
export function group(...contents: Doc[]): Doc {
  return { kind: "group", contents };
}

/** Line breaks inside `contents` indent `by` more columns. */
export function indent(contents: Doc, by = INDENT): Doc {
  return { kind: "indent", by, contents };
}

/** `broken` where the enclosing group is broken onto lines, `flat` where it fits on one. */
export function ifBreak(broken: Doc, flat: Doc = ""): Doc {
  return { kind: "ifBreak", broken, flat };
}

/** `docs` with `separator` between them. */
export function join(separator: Doc, docs: readonly Doc[]): Doc {
  const out: Doc[] = [];
  docs.forEach((d, i) => {
    if (i > 0) out.push(separator);
    out.push(d);
  });
  return out;
}

/** One document per line. */
export function lines(docs: readonly Doc[]): Doc {
  return join(hardline, docs);
}

/**
 * A JSDoc comment of `text` (already made safe by docText), on one line where it fits, else as a
 * block wrapped to the width at the indentation it is printed at. Empty text prints nothing.
 */
export function jsdoc(text: string | undefined): Doc {
  return text === undefined || text === "" ? "" : { kind: "jsdoc", text };
}

/**
 * A bracketed, comma-separated list: `(a, b)` on one line, or one item per line with a trailing
 * separator. `space` pads the one-line form (`{ a, b }`); `separator` is `,` (`;` in type literals).
 */
export function list(
  open: string,
  items: readonly Doc[],
  close: string,
  options: { readonly space?: boolean; readonly separator?: string } = {},
): Doc {
  if (items.length === 0) return open + close;
  const separator = options.separator ?? ",";
  const edge = options.space === true ? line : softline;
  return group(
    open,
    indent([edge, join([separator, line], items), ifBreak(separator)]),
    edge,
    close,
  );
}

/** `{ key: value, ... }`, one property per line when it does not fit. */
export function objectLiteral(properties: readonly Doc[]): Doc {
  return list("{", properties, "}", { space: true });
}

/** `test ? yes : no`, with `?` and `:` starting indented lines when it does not fit. */
export function conditional(test: Doc, yes: Doc, no: Doc): Doc {
  return group(test, indent([line, "? ", yes, line, ": ", no]));
}

interface Template {
  /** Lines of the dedented template: text, or the index of an interpolated value. */
  readonly lines: readonly {
    readonly indent: number;
    readonly parts: readonly (string | number)[];
  }[];
}

const templates = new WeakMap<TemplateStringsArray, Template>();

/**
 * Code as it reads in the output. A template that starts with a line break is dedented: its
 * lines keep their indentation relative to each other, and a multi-line value interpolated on an
 * indented line is indented with it. A line holding only a value that is nothing (`null`,
 * `undefined`, `false`, `""` or `[]`) is left out.
 */
export function code(strings: TemplateStringsArray, ...values: Printable[]): Doc {
  let template = templates.get(strings);
  if (template === undefined) templates.set(strings, (template = parseTemplate(strings)));
  const out: Doc[] = [];
  let first = true;
  for (const { indent: by, parts } of template.lines) {
    if (parts.length === 1 && typeof parts[0] === "number" && isNothing(values[parts[0]])) continue;
    if (!first) out.push(hardline);
    first = false;
    const content = parts.map((p) => (typeof p === "number" ? printable(values[p]) : p));
    out.push(by === 0 ? content : [" ".repeat(by), indent(content, by)]);
  }
  return out;
}

function printable(value: Printable): Doc {
  if (value === null || value === undefined || value === false) return "";
  return typeof value === "number" ? String(value) : value;
}

function isNothing(value: Printable): boolean {
  return (
    value === null ||
    value === undefined ||
    value === false ||
    value === "" ||
    (Array.isArray(value) && value.length === 0)
  );
}

function parseTemplate(strings: TemplateStringsArray): Template {
  const raw: (string | number)[][] = [[]];
  strings.forEach((s, i) => {
    const pieces = s.split("\n");
    pieces.forEach((piece, j) => {
      if (j > 0) raw.push([]);
      if (piece !== "") raw[raw.length - 1]!.push(piece);
    });
    if (i < strings.length - 1) raw[raw.length - 1]!.push(i);
  });
  const blank = (parts: readonly (string | number)[]) =>
    parts.every((p) => typeof p === "string" && p.trim() === "");
  const block = strings[0]!.startsWith("\n");
  if (block) raw.shift();
  if (raw.length > 1 && blank(raw[raw.length - 1]!)) raw.pop();
  const leading = (parts: readonly (string | number)[]) =>
    typeof parts[0] === "string" ? /^ */.exec(parts[0])![0].length : 0;
  const dedentable = raw.filter((parts, i) => (block || i > 0) && !blank(parts));
  const dedent = dedentable.length === 0 ? 0 : Math.min(...dedentable.map(leading));
  return {
    lines: raw.map((parts, i) => {
      if (blank(parts)) return { indent: 0, parts: [] };
      const cut = block || i > 0 ? dedent : 0;
      const own = leading(parts) - cut;
      const rest = [...parts];
      if (typeof rest[0] === "string") {
        rest[0] = rest[0].slice(cut + own);
        if (rest[0] === "") rest.shift();
      }
      return { indent: own, parts: rest };
    }),
  };
}

/** How the lines of a group are printed: as spaces (or nothing), or as line breaks. */
type Mode = typeof FLAT | typeof BREAK;
const FLAT = 0;
const BREAK = 1;

/**
 * The printer's stack of what is left to print, as three parallel arrays (indentation, mode,
 * document) rather than one of tuples: printing allocates nothing per step.
 */
interface Stack {
  readonly indents: number[];
  readonly modes: Mode[];
  readonly docs: Doc[];
}

const spaces: string[] = [];

/** `n` spaces, made once per width. */
function pad(n: number): string {
  return (spaces[n] ??= " ".repeat(n));
}

/** The text of `doc` and the imports it names, in the order first printed. */
export function print(
  doc: Doc,
  width = WIDTH,
): { readonly text: string; readonly imports: readonly ImportSymbol[] } {
  const out: string[] = [];
  const imports = new Map<string, ImportSymbol>();
  const stack: Stack = { indents: [0], modes: [BREAK], docs: [doc] };
  const { indents, modes, docs } = stack;
  const push = (indentation: number, mode: Mode, d: Doc) => {
    indents.push(indentation);
    modes.push(mode);
    docs.push(d);
  };
  let column = 0;
  while (docs.length > 0) {
    const indentation = indents.pop()!;
    const mode = modes.pop()!;
    const d = docs.pop()!;
    if (typeof d === "string") {
      out.push(d);
      column += d.length;
    } else if (isArray(d)) {
      for (let i = d.length - 1; i >= 0; i--) push(indentation, mode, d[i]!);
    } else {
      switch (d.kind) {
        case "import": {
          const key = `${d.from}\0${d.name}`;
          const seen = imports.get(key);
          // a name used as a value anywhere is imported as a value
          if (seen === undefined || (seen.typeOnly && !d.typeOnly)) imports.set(key, d);
          out.push(d.name);
          column += d.name.length;
          break;
        }
        case "line":
          if (mode === FLAT && !d.hard) {
            if (!d.soft) {
              out.push(" ");
              column += 1;
            }
          } else {
            trimTrailingSpaces(out);
            out.push("\n", pad(indentation));
            column = indentation;
          }
          break;
        case "group":
          push(
            indentation,
            mode === BREAK && !fits(d.contents, stack, width - column) ? BREAK : FLAT,
            d.contents,
          );
          break;
        case "indent":
          push(indentation + d.by, mode, d.contents);
          break;
        case "ifBreak":
          push(indentation, mode, mode === BREAK ? d.broken : d.flat);
          break;
        case "jsdoc": {
          const text = comment(d.text, column, width);
          out.push(text.replace(/\n/g, "\n" + pad(column)));
          column += text.length - text.lastIndexOf("\n") - 1;
          break;
        }
      }
    }
  }
  trimTrailingSpaces(out);
  return { text: out.join(""), imports: [...imports.values()] };
}

function isArray(doc: Doc): doc is readonly Doc[] {
  return Array.isArray(doc);
}

const fitModes: Mode[] = [];
const fitDocs: Doc[] = [];

/**
 * Whether `next`, printed flat, and what follows it on `rest` up to the next possible line break
 * fit in `width` columns. A hard line break or a JSDoc comment inside `next` never fits.
 */
function fits(next: Doc, rest: Stack, width: number): boolean {
  fitModes.length = fitDocs.length = 0;
  fitModes.push(FLAT);
  fitDocs.push(next);
  let restIndex = rest.docs.length;
  let left = width;
  while (left >= 0) {
    if (fitDocs.length === 0) {
      if (restIndex === 0) return true;
      restIndex--;
      fitModes.push(rest.modes[restIndex]!);
      fitDocs.push(rest.docs[restIndex]!);
      continue;
    }
    const mode = fitModes.pop()!;
    const d = fitDocs.pop()!;
    if (typeof d === "string") left -= d.length;
    else if (isArray(d)) {
      for (let i = d.length - 1; i >= 0; i--) {
        fitModes.push(mode);
        fitDocs.push(d[i]!);
      }
    } else {
      switch (d.kind) {
        case "import":
          left -= d.name.length;
          break;
        case "line":
          if (mode === BREAK) return true;
          if (d.hard) return false;
          if (!d.soft) left -= 1;
          break;
        case "group":
        case "indent":
          fitModes.push(mode);
          fitDocs.push(d.contents);
          break;
        case "ifBreak":
          fitModes.push(mode);
          fitDocs.push(mode === BREAK ? d.broken : d.flat);
          break;
        case "jsdoc":
          return mode === BREAK;
      }
    }
  }
  return false;
}

/** Drops the spaces a line ends in (a broken line's separator, an empty line's indentation). */
function trimTrailingSpaces(out: string[]): void {
  while (out.length > 0) {
    const last = out[out.length - 1]!;
    let end = last.length;
    while (end > 0 && (last.charCodeAt(end - 1) === 32 || last.charCodeAt(end - 1) === 9)) end--;
    if (end === last.length && end > 0) return;
    if (end > 0) {
      out[out.length - 1] = last.slice(0, end);
      return;
    }
    out.pop();
  }
}

/** A JSDoc comment starting at `column`: one line where it fits, else a block of wrapped lines. */
function comment(text: string, column: number, width: number): string {
  const one = `/** ${text} */`;
  if (!text.includes("\n") && column + one.length <= width) return one;
  const body = text.split("\n").flatMap((l) => wrap(l.trimEnd(), width - column - 3));
  return ["/**", ...body.map((l) => (l === "" ? " *" : ` * ${l}`)), " */"].join("\n");
}

/**
 * `text` in lines of at most `width` columns, broken at spaces. Code spans (`` `...` ``) and
 * `{@link ...}` are not broken; a list item's continuation lines are indented under its text. A
 * word longer than the width keeps a line of its own.
 */
export function wrap(text: string, width: number): string[] {
  if (text.length <= width) return [text];
  const hanging = " ".repeat(
    /^\s*(?:[-*+]|\d+[.)])\s+/.exec(text)?.[0].length ?? /^\s*/.exec(text)![0].length,
  );
  const out: string[] = [];
  let current = "";
  for (const { space, word } of splitWords(text)) {
    if (current === "") current = out.length === 0 ? space + word : hanging + word;
    else if (current.length + space.length + word.length <= width) current += space + word;
    else {
      out.push(current);
      current = hanging + word;
    }
  }
  if (current !== "") out.push(current);
  return out;
}

/**
 * Words of a line with the spaces before each, split at spaces outside code spans and
 * `{@link}`s. Where a line is not broken, its spaces stay as they were.
 */
function splitWords(text: string, spans = true): { space: string; word: string }[] {
  const words: { space: string; word: string }[] = [];
  let space = "";
  let word = "";
  let inCode = false;
  let braces = 0;
  for (const ch of text) {
    if (ch === " " && ((!inCode && braces === 0) || !spans)) {
      if (word !== "") {
        words.push({ space, word });
        space = word = "";
      }
      space += ch;
      continue;
    }
    if (ch === "`") inCode = !inCode;
    else if (!inCode && ch === "{") braces++;
    else if (!inCode && ch === "}" && braces > 0) braces--;
    word += ch;
  }
  if (word !== "") words.push({ space, word });
  // a backtick or brace left open is no span: break at every space instead
  return spans && (inCode || braces > 0) ? splitWords(text, false) : words;
}

/**
 * The import declarations of `symbols`: one per module, modules in code-point order, and in each
 * the values, then the types, each in code-point order; a name imported as a value and a type is
 * imported once, as a value. `specifier` maps a symbol's module to the one the import names.
 */
export function importDeclarations(
  symbols: readonly ImportSymbol[],
  specifier: (from: string) => string = (from) => from,
): Doc {
  const byModule = new Map<string, Map<string, ImportSymbol>>();
  for (const s of symbols) {
    const from = specifier(s.from);
    let names = byModule.get(from);
    if (names === undefined) byModule.set(from, (names = new Map<string, ImportSymbol>()));
    const seen = names.get(s.name);
    if (seen === undefined || (seen.typeOnly && !s.typeOnly)) names.set(s.name, s);
  }
  const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return lines(
    [...byModule.keys()].sort(order).map((from) => {
      const named = [...byModule.get(from)!.values()];
      const values = named
        .filter((s) => !s.typeOnly)
        .map((s) => s.name)
        .sort(order);
      const types = named
        .filter((s) => s.typeOnly)
        .map((s) => `type ${s.name}`)
        .sort(order);
      return code`import ${list("{", [...values, ...types], "}", { space: true })} from ${JSON.stringify(from)};`;
    }),
  );
}

/**
 * A module's text: the imports `body` names, a blank line, then `body`, ending in a line break.
 * `specifier` maps a symbol's module to the one the import names (`runtime: package` imports the
 * runtime from the resgen package instead of the output folder).
 */
export function printModule(body: Doc, specifier?: (from: string) => string): string {
  const printed = print(body);
  const imports =
    printed.imports.length === 0
      ? ""
      : print(importDeclarations(printed.imports, specifier)).text + "\n\n";
  return `${imports}${printed.text}\n`;
}
