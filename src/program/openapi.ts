/**
 * The pipeline's OpenAPI step: the description each policy names, with the files its `$ref`s
 * reach, read once however many policies name it.
 */
import { dirname, resolve } from "node:path";
import { diagnostic } from "../diagnostics/diagnostic.js";
import type { DiagnosticSink } from "../diagnostics/diagnostic.js";
import { SourceDocument } from "../language/parse.js";
import { documentOf } from "../openapi/import.js";
import { DocumentSet, gatherDocuments, refFile } from "../openapi/references.js";
import type { Task } from "../source/task.js";
import type { Loader } from "./loader.js";

/** The descriptions the policies name. */
export interface Descriptions {
  /**
   * By policy file (absolute): its description; null when it could not be read (reported).
   * A policy that names none is absent.
   */
  readonly byPolicy: ReadonlyMap<string, DocumentSet | null>;
  /** Every file of every description (absolute): such a file among the inputs is not a policy. */
  readonly files: ReadonlySet<string>;
}

/**
 * Reads the description of every policy in `policies` that names one. The document and its
 * `$ref`s must lie inside the project of the policy that names it (RG115).
 */
export function* resolveDescriptions(
  loader: Loader,
  sink: DiagnosticSink,
  policies: readonly {
    readonly file: string;
    readonly config: string | undefined;
    readonly source: SourceDocument;
  }[],
): Task<Descriptions> {
  const byKey = new Map<string, DocumentSet | null>();
  const byPolicy = new Map<string, DocumentSet | null>();
  for (const { file, config, source: policy } of policies) {
    const named = documentOf(policy.data);
    if (named === undefined) continue;
    const full = resolve(dirname(file), named);
    const project = dirname(config ?? file);
    const key = `${project}\0${full}`;
    if (!byKey.has(key))
      byKey.set(key, yield* readDescription(loader, sink, policy, full, project));
    byPolicy.set(file, byKey.get(key)!);
  }
  return { byPolicy, files: new Set([...byKey.values()].flatMap((set) => set?.keys ?? [])) };
}

function* readDescription(
  loader: Loader,
  sink: DiagnosticSink,
  policy: SourceDocument,
  full: string,
  project: string,
): Task<DocumentSet | null> {
  const root = yield* loader.document(full, project);
  if (root instanceof SourceDocument) {
    const set = new DocumentSet(root, full, (from, file) => resolve(dirname(from), refFile(file)));
    const walk = gatherDocuments(set);
    for (let step = walk.next(); !step.done;) {
      const loaded = yield* loader.document(step.value, project);
      step = walk.next(
        loaded instanceof SourceDocument
          ? loaded
          : loaded.code === "RG115"
            ? `${loaded.reason}, which resgen never reads (--allow-outside-project reads it)`
            : loaded.reason,
      );
    }
    return set;
  }
  if (!root.read) {
    const at =
      typeof (policy.data as Record<string, unknown>)["openapi"] === "string"
        ? ["openapi"]
        : ["openapi", "document"];
    const code = root.code === "RG004" ? "RG601" : root.code;
    sink.report(
      diagnostic(
        code,
        policy.file,
        policy.spanOf(at),
        `cannot read the OpenAPI document ${loader.shown(full)}: ${root.reason}`,
        root.hint ?? "the path is relative to the policy file",
      ),
    );
  }
  return null;
}
