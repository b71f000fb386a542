/**
 * An OpenAPI description split across files: the root document a policy names and the documents
 * its `$ref`s reach (`./schemas.yaml#/Pet`, `common.yaml`), addressed by one {@link Path} so the
 * importer can follow references from file to file and still point every problem at its file,
 * line and column.
 *
 * A path into the root document is the plain JSON path. A path into another document starts
 * with a marker segment naming that document, then the JSON path inside it.
 */
import type { Code } from "../diagnostics/codes.js";
import { diagnostic, type Diagnostic, type Span } from "../diagnostics/diagnostic.js";
import type { Path, SourceDocument } from "../language/parse.js";
import { describeMissing, isObject, pointerPath, valueAt } from "./description.js";

const MARKER = "\u0000document:";
/** A reference with a scheme (`https:`, `file:`): not a path next to the description. */
const REMOTE = /^[a-z][a-z0-9+.-]*:/i;

/** What to do about a reference resgen cannot follow. */
export const BUNDLE_HINT = "bundle the description into one file (e.g. `redocly bundle`)";

export class DocumentSet {
  readonly #documents = new Map<string, SourceDocument>();
  readonly #unreadable = new Map<string, string>();

  /**
   * @param root The document the policy names.
   * @param rootKey Its key: an absolute path on disk, or a normalised relative one for in-memory texts.
   * @param locate The key of `file` (as a `$ref` writes it) referred to from the document keyed `from`.
   */
  constructor(
    readonly root: SourceDocument,
    readonly rootKey: string,
    private readonly locate: (from: string, file: string) => string,
  ) {
    this.#documents.set(rootKey, root);
  }

  /** A description of one self-contained document. */
  static single(root: SourceDocument): DocumentSet {
    return new DocumentSet(root, root.file, (_from, file) => file);
  }

  /** Adds a document a `$ref` reaches. */
  add(key: string, document: SourceDocument): void {
    this.#documents.set(key, document);
  }

  /** Records that the document keyed `key` could not be read, and why (e.g. "no such file"). */
  unreadable(key: string, reason: string): void {
    this.#unreadable.set(key, reason);
  }

  /** The keys of every document of the description, root first. */
  get keys(): string[] {
    return [...this.#documents.keys()];
  }

  /** The keys of the other documents that the references of the document keyed `key` name. */
  referencedBy(key: string): string[] {
    const document = this.#documents.get(key);
    return document === undefined
      ? []
      : filesReferenced(document.data).map((file) => this.locate(key, file));
  }

  /** Whether the document keyed `key` has been added or found unreadable. */
  knows(key: string): boolean {
    return this.#documents.has(key) || this.#unreadable.has(key);
  }

  /** A finding at the value at `path`, in whichever file it is. */
  finding(code: Code, path: Path, message: string, hint?: string): Diagnostic {
    return diagnostic(code, this.fileOf(path), this.spanOf(path), message, hint);
  }

  /** A finding at the key of the pair at `path` (at the value when there is no key). */
  findingAtKey(code: Code, path: Path, message: string, hint?: string): Diagnostic {
    return diagnostic(code, this.fileOf(path), this.keySpanOf(path), message, hint);
  }

  /** The file (as diagnostics show it) that `path` points into. */
  fileOf(path: Path): string {
    return this.#split(path).document.file;
  }

  spanOf(path: Path): Span {
    const { document, local } = this.#split(path);
    return document.spanOf(local);
  }

  keySpanOf(path: Path): Span {
    const { document, local } = this.#split(path);
    return document.keySpanOf(local);
  }

  /** The value at `path`, or undefined. */
  valueAt(path: Path): unknown {
    const { document, local } = this.#split(path);
    return valueAt(document.data, local);
  }

  /** The JSON path of `path` inside its own document. */
  localPath(path: Path): Path {
    return this.#split(path).local;
  }

  /**
   * Where `ref`, written at `from`, points: a path into this set, or why it cannot be followed.
   * A local pointer (`#/components/schemas/Pet`) is read in the document that holds it.
   */
  resolve(ref: string, from: Path): { path: Path } | { problem: string; hint?: string } {
    const hash = ref.indexOf("#");
    const file = hash < 0 ? ref : ref.slice(0, hash);
    const pointer = pointerPath(hash < 0 ? "#" : ref.slice(hash));
    if (pointer === undefined)
      return { problem: `$ref "${ref}" is not a JSON pointer (after # comes /)` };
    const here = this.#split(from).key;
    if (file === "") return { path: this.#pathIn(here, pointer) };
    if (REMOTE.test(file))
      return {
        problem: `$ref "${ref}" names a remote document; resgen reads files next to the description, never the network`,
        hint: BUNDLE_HINT,
      };
    const key = this.locate(here, file);
    const reason = this.#unreadable.get(key);
    if (reason !== undefined || !this.#documents.has(key)) {
      return {
        problem: `$ref "${ref}" names a file that cannot be read: ${reason ?? "not loaded"}`,
        hint: "the path is relative to the file the $ref is in",
      };
    }
    return { path: this.#pathIn(key, pointer) };
  }

  /**
   * Follows `$ref`s from the value at `path` until a value that is not a reference (path items,
   * parameters, request bodies, responses), from file to file. Cycles of pure references and
   * missing targets are problems; the chain is bounded.
   */
  deref(
    value: unknown,
    path: Path,
  ): { value: unknown; path: Path } | { problem: string; hint?: string } {
    const seen = new Set<string>();
    const chain: string[] = [];
    let current = value;
    let at = path;
    while (isObject(current) && typeof current["$ref"] === "string") {
      const ref = current["$ref"];
      const target = this.resolve(ref, at);
      if ("problem" in target) return target;
      const id = JSON.stringify(target.path);
      if (seen.has(id) || seen.size > 32)
        return { problem: `$ref "${ref}" refers to itself through ${chain.join(" → ")}` };
      seen.add(id);
      chain.push(ref);
      const next = this.valueAt(target.path);
      if (next === undefined)
        return { problem: `$ref "${ref}" points at nothing: ${this.describeMissing(target.path)}` };
      current = next;
      at = target.path;
    }
    return { value: current, path: at };
  }

  /** "#/components/schemas has no Pets"-style text for a path that points at nothing. */
  describeMissing(path: Path): string {
    const { document, local } = this.#split(path);
    return describeMissing(document.data, local);
  }

  #pathIn(key: string, local: Path): Path {
    return key === this.rootKey ? local : [`${MARKER}${key}`, ...local];
  }

  #split(path: Path): { key: string; document: SourceDocument; local: Path } {
    const first = path[0];
    if (typeof first === "string" && first.startsWith(MARKER)) {
      const key = first.slice(MARKER.length);
      const document = this.#documents.get(key);
      if (document !== undefined) return { key, document, local: path.slice(1) };
    }
    return { key: this.rootKey, document: this.root, local: path };
  }
}

/** The files the `$ref`s of `data` name (the part before `#`, when there is one; never a URL). */
function filesReferenced(data: unknown): string[] {
  const found: string[] = [];
  const walk = (node: unknown, depth: number): void => {
    if (depth > 256) return;
    if (Array.isArray(node)) {
      for (const item of node) walk(item, depth + 1);
      return;
    }
    if (!isObject(node)) return;
    const ref = node["$ref"];
    if (typeof ref === "string") {
      const file = ref.split("#")[0]!;
      if (file !== "" && !REMOTE.test(file)) found.push(file);
    }
    for (const [key, value] of Object.entries(node)) if (key !== "$ref") walk(value, depth + 1);
  };
  walk(data, 0);
  return found;
}

/** The most files one description may span. */
export const MAX_DOCUMENTS = 256;

/**
 * Walks the description from its root, file by file, and asks for every document a `$ref`
 * names: it yields the document's key and is resumed with the loaded document, or with the
 * reason it cannot be read. Drive it with whatever reads files (from disk, or from texts given).
 */
export function* gatherDocuments(
  set: DocumentSet,
): Generator<string, void, SourceDocument | string> {
  const queue = [set.rootKey];
  for (let key = queue.shift(); key !== undefined; key = queue.shift()) {
    for (const next of set.referencedBy(key)) {
      if (set.knows(next)) continue;
      if (set.keys.length >= MAX_DOCUMENTS) {
        set.unreadable(next, `the description spans more than ${MAX_DOCUMENTS} files`);
        continue;
      }
      const loaded = yield next;
      if (typeof loaded === "string") set.unreadable(next, loaded);
      else {
        set.add(next, loaded);
        queue.push(next);
      }
    }
  }
}

/** The part of a `$ref` before `#`, as a file path (percent-escapes decoded). */
export function refFile(file: string): string {
  try {
    return decodeURIComponent(file);
  } catch {
    return file;
  }
}
