/**
 * Reading a YAML file into plain data while keeping the YAML nodes, so any later stage can
 * point at file:line:col for a path into the document.
 */
import { MAX_DOCUMENT_BYTES } from "../source/read.js";
import {
  Composer,
  CST,
  isMap,
  isPair,
  isScalar,
  isSeq,
  Lexer,
  Parser,
  visit,
  YAMLParseError,
  type Document,
  type Node as YamlNode,
  type Pair,
} from "yaml";
import { diagnostic, type Diagnostic, type Span } from "../diagnostics/diagnostic.js";

/** Aliases a document may expand; beyond it the document is refused (a "billion laughs" bomb). */
export const MAX_ALIAS_COUNT = 200;
/**
 * Collections (mappings and lists, block or flow) a document may nest inside one another.
 * Reading YAML into nodes and data recurses once per level, so a few hundred kilobytes of `[`
 * would exhaust the stack; the limit is checked on the parsed tokens, in one pass without
 * recursion, before any of that. It leaves room for OpenAPI schemas nested well past the
 * 64 levels the importer types.
 */
export const MAX_NESTING_DEPTH = 256;

export type PathSegment = string | number;
export type Path = readonly PathSegment[];

/** Where a node came from: a file and a path inside it. */
export interface SourceRef {
  readonly file: string;
  readonly path: Path;
}

/** A parsed YAML file: its plain data and a way back from a path to a span of the text. */
/**
 * A path template written without quotes inside a flow mapping (`{ path: /items/{id} }`): YAML
 * reads its `{` as a nested mapping, and the parser reports errors that do not say so.
 */
const UNQUOTED_PATH = /(?<=[:\s,{[])\/[\w\-.~%/]*\{[\w\-.~%/{}]*/g;

/** Whether the line of `offset` has an unquoted path template. */
function unquotedPathOn(text: string, offset: number): boolean {
  const start = text.lastIndexOf("\n", Math.max(0, offset - 1)) + 1;
  const newline = text.indexOf("\n", offset);
  const line = text.slice(start, newline < 0 ? text.length : newline);
  return unquotedPathsIn(line, start).length > 0;
}

function unquotedPaths(text: string): { path: string; span: { start: number; end: number } }[] {
  const found: { path: string; span: { start: number; end: number } }[] = [];
  let start = 0;
  for (const line of text.split("\n")) {
    // only in flow mappings: a block `path: /x/{id}` is a plain scalar YAML reads as written
    if (line.includes("{") && /\{\s*[\w"']+\s*:/.test(line))
      found.push(...unquotedPathsIn(line, start));
    start += line.length + 1;
  }
  return found;
}

function unquotedPathsIn(
  line: string,
  offset: number,
): { path: string; span: { start: number; end: number } }[] {
  const found: { path: string; span: { start: number; end: number } }[] = [];
  for (const match of line.matchAll(UNQUOTED_PATH)) {
    let path = match[0];
    // the closing braces of the flow mapping are not the path's
    while (path.endsWith("}") && count(path, "}") > count(path, "{")) path = path.slice(0, -1);
    if (!/\{[^{}]+\}/.test(path)) continue;
    const start = offset + match.index;
    found.push({ path, span: { start, end: start + path.length } });
  }
  return found;
}

function count(text: string, char: string): number {
  return text.split(char).length - 1;
}

export class SourceDocument {
  constructor(
    readonly file: string,
    readonly text: string,
    private readonly doc: Document.Parsed | undefined,
    readonly data: unknown,
  ) {}

  /** Span of the value at `path`, or of the nearest existing ancestor if the path does not exist. */
  spanOf(path: Path): Span {
    return this.locate(path).span;
  }

  /** Span of the key of the pair at `path` (for unknown keys), or of the value when there is no key. */
  keySpanOf(path: Path): Span {
    const found = this.locate(path);
    return found.found && found.keySpan ? found.keySpan : found.span;
  }

  /**
   * Where a missing key at `path` should point: the key of its parent mapping (the user sees
   * which mapping lacks it), or the document start for a missing top-level key.
   */
  parentSpanOf(path: Path): Span {
    const found = this.locate(path.slice(0, -1));
    return (
      found.keySpan ?? {
        start: found.span.start,
        end: Math.min(found.span.end, found.span.start + 1),
      }
    );
  }

  /** Whether a value exists at `path` in the document. */
  has(path: Path): boolean {
    return this.locate(path).found;
  }

  private locate(path: Path): { found: boolean; span: Span; keySpan?: Span } {
    let node: unknown = this.doc?.contents ?? null;
    let span: Span = spanOfNode(node) ?? { start: 0, end: Math.min(1, this.text.length) };
    let keySpan: Span | undefined;
    for (const segment of path) {
      let next: unknown;
      let nextKey: Span | undefined;
      if (isMap(node)) {
        const pair = node.items.find((p: Pair) => keyText(p.key) === String(segment));
        if (pair) {
          next = pair.value;
          nextKey = spanOfNode(pair.key);
          // `key:` with no value: point at the key
          if (next === null || next === undefined) {
            return { found: true, span: nextKey ?? span, ...(nextKey ? { keySpan: nextKey } : {}) };
          }
        }
      } else if (isSeq(node) && typeof segment === "number") {
        next = node.items[segment];
      }
      const nextSpan = spanOfNode(next);
      if (next === undefined || !nextSpan)
        return { found: false, span, ...(keySpan ? { keySpan } : {}) };
      node = next;
      span = nextSpan;
      keySpan = nextKey;
    }
    return { found: true, span, ...(keySpan ? { keySpan } : {}) };
  }
}

function keyText(key: unknown): string | undefined {
  if (isScalar(key)) return String(key.value);
  return undefined;
}

function spanOfNode(node: unknown): Span | undefined {
  if (isPair(node)) return spanOfNode(node.key);
  const range = (node as YamlNode | null | undefined)?.range;
  if (!range) return undefined;
  return { start: range[0], end: Math.max(range[1], range[0] + 1) };
}

export interface LoadResult {
  readonly source: SourceDocument;
  readonly diagnostics: readonly Diagnostic[];
  /** False when the data cannot be validated at all (syntax error, refused document). */
  readonly ok: boolean;
}

/** Parses one YAML text. Never throws: every problem becomes a diagnostic. */
export function loadYaml(file: string, text: string): LoadResult {
  const empty = (diagnostics: Diagnostic[]): LoadResult => ({
    source: new SourceDocument(file, text, undefined, undefined),
    diagnostics,
    ok: false,
  });
  if (Buffer.byteLength(text, "utf8") > MAX_DOCUMENT_BYTES) {
    return empty([
      diagnostic(
        "RG003",
        file,
        { start: 0, end: 1 },
        `document is ${Buffer.byteLength(text, "utf8")} bytes, over the ${MAX_DOCUMENT_BYTES} byte limit`,
        "a policy describes one dependency; split generated or pasted content out of it",
      ),
    ]);
  }
  let doc: Document.Parsed;
  try {
    // flow collections (`[`, `{`) are counted on the lexer's tokens first, which is cheap, so
    // a wall of `[` is refused before the parser builds a token tree as deep as it is
    let tokens: CST.Token[] | undefined;
    const deep =
      tooDeepFlow(text, MAX_NESTING_DEPTH) ??
      tooDeep((tokens = [...new Parser().parse(text)]), MAX_NESTING_DEPTH);
    if (deep !== undefined) {
      return empty([
        diagnostic(
          "RG003",
          file,
          { start: deep, end: Math.min(deep + 1, text.length) },
          `document nests mappings and lists more than ${MAX_NESTING_DEPTH} deep`,
          "a policy or API description never needs this depth: flatten it, or name inner schemas and refer to them with $ref",
        ),
      ]);
    }
    doc = compose(tokens!, text.length);
  } catch (error) {
    return empty([
      diagnostic("RG001", file, { start: 0, end: 1 }, `cannot parse YAML: ${String(error)}`),
    ]);
  }
  const diagnostics: Diagnostic[] = [];
  // An unquoted path template breaks the flow mapping around it, and the parser's errors then
  // cascade over the lines after it: say what happened once per such path, and drop the cascade.
  const unquoted = doc.errors.some((e) => unquotedPathOn(text, e.pos[0]))
    ? unquotedPaths(text)
    : [];
  for (const found of unquoted)
    diagnostics.push(
      diagnostic(
        "RG001",
        file,
        found.span,
        `YAML syntax error: the path ${found.path} is not quoted, so YAML reads its "{" as the start of a mapping`,
        `quote the path: "${found.path}"`,
      ),
    );
  for (const e of doc.errors) {
    if (unquoted.length > 0 && e.code !== "DUPLICATE_KEY") continue;
    const span = { start: e.pos[0], end: Math.max(e.pos[1], e.pos[0] + 1) };
    const message = e.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
    if (e.code === "DUPLICATE_KEY")
      diagnostics.push(
        diagnostic(
          "RG002",
          file,
          span,
          "duplicate key: a mapping names this key twice",
          "keep one of the two entries",
        ),
      );
    else
      diagnostics.push(
        diagnostic("RG001", file, span, `YAML syntax error: ${lowerFirst(message)}`),
      );
  }
  visit(doc, {
    Pair(_key, pair) {
      if (isScalar(pair.key) && pair.key.value === "__proto__") {
        diagnostics.push(
          diagnostic(
            "RG006",
            file,
            spanOfNode(pair.key) ?? { start: 0, end: 1 },
            "the key __proto__ is not supported",
            "JavaScript would treat it as a prototype, not data: rename the key",
          ),
        );
      }
    },
  });
  if (diagnostics.length > 0)
    return { source: new SourceDocument(file, text, doc, undefined), diagnostics, ok: false };
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const alias = /alias/i.test(message);
    return {
      source: new SourceDocument(file, text, doc, undefined),
      diagnostics: [
        diagnostic(
          alias ? "RG003" : "RG001",
          file,
          { start: 0, end: 1 },
          alias
            ? `document expands aliases beyond the limit of ${MAX_ALIAS_COUNT}`
            : `cannot read YAML: ${message}`,
          alias ? "write the values out, or use fewer aliases" : undefined,
        ),
      ],
      ok: false,
    };
  }
  const source = new SourceDocument(file, text, doc, data);
  if (data === null || data === undefined || typeof data !== "object" || Array.isArray(data)) {
    return {
      source,
      diagnostics: [
        diagnostic(
          "RG005",
          file,
          source.spanOf([]),
          data === null || data === undefined
            ? "the document is empty"
            : `the document is ${Array.isArray(data) ? "a list" : "a single value"}, not a mapping`,
          "a policy starts with `version: 1` and `dependency: <name>`",
        ),
      ],
      ok: false,
    };
  }
  return { source, diagnostics: [], ok: true };
}

const PARSE_OPTIONS = {
  uniqueKeys: true,
  prettyErrors: false,
  strict: true,
  keepSourceTokens: false,
} as const;

/** `parseDocument` of the yaml package, from tokens already parsed: the first document, an error for any other. */
function compose(tokens: readonly CST.Token[], length: number): Document.Parsed {
  const composer = new Composer(PARSE_OPTIONS);
  let doc: Document.Parsed | undefined;
  for (const next of composer.compose(tokens, true, length)) {
    if (!doc) doc = next;
    else {
      doc.errors.push(
        new YAMLParseError(
          [next.range[0], next.range[1]],
          "MULTIPLE_DOCS",
          "Source contains multiple documents; please use YAML.parseAllDocuments()",
        ),
      );
      break;
    }
  }
  // compose(..., forceDoc = true) always yields a document
  return doc!;
}

/**
 * Offset of a flow collection nested more than `limit` flow collections deep, or undefined:
 * a lower bound of the depth (block collections around them are not counted), from the lexer
 * alone. Offsets count the source text of tokens, as the parser does, not the lexer's markers.
 */
function tooDeepFlow(text: string, limit: number): number | undefined {
  let depth = 0;
  let offset = 0;
  for (const token of new Lexer().lex(text)) {
    switch (token) {
      case CST.DOCUMENT:
      case CST.FLOW_END:
        // a new document, or flow collections the lexer closed for bad indentation
        depth = 0;
        continue;
      case CST.SCALAR:
        continue;
      case "[":
      case "{":
        if (++depth > limit) return offset;
        break;
      case "]":
      case "}":
        if (depth > 0) depth--;
        break;
    }
    offset += token.length;
  }
  return undefined;
}

/**
 * Offset of a collection nested deeper than `limit`, or undefined. Walks the tokens with
 * an explicit stack, so its own depth never depends on the document's.
 */
function tooDeep(tokens: readonly CST.Token[], limit: number): number | undefined {
  const stack: Array<{ token: CST.Token; depth: number }> = tokens.map((token) => ({
    token,
    depth: 0,
  }));
  while (stack.length > 0) {
    const { token, depth } = stack.pop()!;
    let inner = depth;
    if (CST.isCollection(token)) {
      inner = depth + 1;
      if (inner > limit) return token.offset;
    }
    switch (token.type) {
      case "document":
        if (token.value) stack.push({ token: token.value, depth: inner });
        break;
      case "block-map":
      case "block-seq":
      case "flow-collection":
        for (const item of token.items as CST.CollectionItem[]) {
          if (item.key) stack.push({ token: item.key, depth: inner });
          if (item.value) stack.push({ token: item.value, depth: inner });
        }
        break;
      case "block-scalar":
        for (const prop of token.props) stack.push({ token: prop, depth: inner });
        break;
      default:
        break;
    }
  }
  return undefined;
}

function lowerFirst(s: string): string {
  return s.length > 0 ? s[0]!.toLowerCase() + s.slice(1) : s;
}
