/**
 * Where the model's values sit in their files: the locator that turns a SourceRef back into a
 * span, and the rules for choosing the node a finding points at.
 *
 * A finding points at the YAML node responsible. For a value set in a file (the operation, the
 * policy or the project file's `defaults:`) that is where it was set; for a value derived from
 * `latency` it is the latency entry it came from; for a built-in default it is the operation (or
 * the section) that inherits it.
 */
import type { Code } from "../diagnostics/codes.js";
import type { Span } from "../diagnostics/diagnostic.js";
import type { Finding } from "../diagnostics/finding.js";
import { LineIndex } from "../diagnostics/position.js";
import type { SourceDocument } from "../language/parse.js";
import type { Provenance, ResolvedOperation, ResolvedPolicy, SourceRef } from "./resolved.js";

/** Turns a {@link SourceRef} back into a place in the file it names. */
export interface Locator {
  /** Span of the value at `ref`, or undefined when the file was not loaded or has no such node. */
  readonly locate: (ref: SourceRef) => Span | undefined;
  /** Span of the key of the pair at `ref` (the value when there is no key); undefined as above. */
  readonly locateKey: (ref: SourceRef) => Span | undefined;
  /** `file:line:col` of the key at `ref`, for messages that name another place; undefined as above. */
  readonly where?: (ref: SourceRef) => string | undefined;
  /** The value at `ref` as the file wrote it (a list entry's index is its position there); undefined as above. */
  readonly valueAt?: (ref: SourceRef) => unknown;
}

/** A locator over the documents a check loaded, by the file name the model uses. */
export function locatorFromDocuments(documents: ReadonlyMap<string, SourceDocument>): Locator {
  const find = (ref: SourceRef): SourceDocument | undefined => {
    const doc = documents.get(ref.file);
    return doc && doc.has(ref.path) ? doc : undefined;
  };
  const lines = new Map<SourceDocument, LineIndex>();
  return {
    locate: (ref) => find(ref)?.spanOf(ref.path),
    locateKey: (ref) => find(ref)?.keySpanOf(ref.path),
    valueAt: (ref) => {
      let value = find(ref)?.data;
      for (const step of ref.path)
        value =
          value !== null && typeof value === "object"
            ? (value as Record<string | number, unknown>)[step]
            : undefined;
      return value;
    },
    where: (ref) => {
      const doc = find(ref);
      if (!doc) return undefined;
      let index = lines.get(doc);
      if (!index) lines.set(doc, (index = new LineIndex(doc.text)));
      const { line, column } = index.position(doc.keySpanOf(ref.path).start);
      return `${ref.file}:${line}:${column}`;
    },
  };
}

/** One candidate place for a finding: a ref, and whether to point at its key or its value. */
export interface Place {
  readonly ref: SourceRef | undefined;
  readonly key?: boolean;
}

/**
 * The first candidate place that exists in a loaded document. The last resort is the start of
 * the policy file, so a finding is never lost for want of a position.
 */
export function place(
  ctx: Locator,
  policy: ResolvedPolicy,
  candidates: readonly Place[],
): { file: string; span: Span } {
  for (const c of candidates) {
    if (!c.ref) continue;
    const span = c.key ? ctx.locateKey(c.ref) : ctx.locate(c.ref);
    if (span) return { file: c.ref.file, span };
  }
  return { file: policy.file, span: ctx.locate(policy.source) ?? { start: 0, end: 1 } };
}

/** Where a value was set, when it was set in a file (operation, policy or project defaults). */
export function setAt(provenance: Provenance | undefined): SourceRef | undefined {
  if (!provenance?.source) return undefined;
  return provenance.origin === "operation" ||
    provenance.origin === "policy" ||
    provenance.origin === "project"
    ? provenance.source
    : undefined;
}

/** A path in the policy file. */
export function inPolicy(policy: ResolvedPolicy, ...path: (string | number)[]): SourceRef {
  return { file: policy.file, path };
}

/** A path under an operation of the policy file. */
export function inOperation(
  policy: ResolvedPolicy,
  op: ResolvedOperation,
  ...path: (string | number)[]
): SourceRef {
  return { file: policy.file, path: [...op.source.path, ...path] };
}

/**
 * The project file the policy's inherited values come from, if any value came from it; used to
 * point at a whole section of `defaults:` whose keys were all left at their defaults.
 */
export function projectFile(policy: ResolvedPolicy): string | undefined {
  const all = [policy.provenance, ...policy.operations.map((o) => o.provenance)];
  for (const table of all)
    for (const p of Object.values(table))
      if (p.origin === "project" && p.source) return p.source.file;
  return undefined;
}

/** Where a dependency-level section (breaker, bulkhead, retry) is declared: the policy or the project defaults. */
export function sectionRef(policy: ResolvedPolicy, section: string): SourceRef | undefined {
  const own = inPolicy(policy, section);
  const p = policy.provenance[section];
  const origin = p?.origin;
  if ((origin === "project" || origin === "policy") && p?.source) return p.source;
  if (origin === "project") {
    const file = projectFile(policy);
    return file === undefined ? own : { file, path: ["defaults", section] };
  }
  return own;
}

/**
 * A finding about `policy` (and `operation`, when it concerns one), at the first of `candidates`
 * that exists: what the analyzer's checks and the targets' mapping reports both make.
 */
export function finding(
  ctx: Locator,
  policy: ResolvedPolicy,
  code: Code,
  candidates: readonly Place[],
  message: string,
  hint?: string,
  operation?: ResolvedOperation,
): Finding {
  const at = place(ctx, policy, candidates);
  return {
    code,
    ...at,
    message,
    ...(hint === undefined ? {} : { hint }),
    ...(operation ? { operations: [operation.name] } : {}),
  };
}
