/**
 * Validating and resolving one loaded policy file: the pure unit of the pipeline that turns a
 * parsed document (and the OpenAPI description it names) into a resolved policy or service.
 */
import { diagnostic, type Diagnostic } from "../diagnostics/diagnostic.js";
import type { SourceDocument } from "../language/parse.js";
import { Policy } from "../language/schema.js";
import { checkStructure } from "../language/structure.js";
import { validate } from "../language/validate.js";
import { findClashes } from "../model/names.js";
import { normalize, type ConfigSettings } from "../model/normalize.js";
import type { ResolvedPolicy, SourceRef } from "../model/resolved.js";
import { mergeOpenApi } from "../openapi/import.js";
import type { DocumentSet } from "../openapi/references.js";

/**
 * Validates and resolves one loaded policy. Pure: the unit the pipeline, the tests and the
 * property tests share. Returns the resolved policy only when the file has no errors.
 *
 * @param openapi the OpenAPI description the policy names under `openapi:` (one document, or the
 *   documents its `$ref`s reach), loaded by the caller; null when reading it failed (already reported)
 */
export function checkPolicySource(
  source: SourceDocument,
  project: ConfigSettings = {},
  openapi?: SourceDocument | DocumentSet | null,
): { policy: ResolvedPolicy | undefined; diagnostics: Diagnostic[] } {
  const structural = checkStructure(source, project.config?.defaults?.transport ?? "http");
  const result = validate(Policy, source);
  const diagnostics = [...structural, ...result.diagnostics];
  if (!result.value || diagnostics.length > 0) return { policy: undefined, diagnostics };
  let input = result.value;
  let imported: Readonly<Record<string, SourceRef>> = {};
  let keyedBy: Readonly<Record<string, SourceRef>> = {};
  const findings: Diagnostic[] = [];
  if (input.openapi !== undefined) {
    if (!openapi) {
      if (openapi === undefined)
        diagnostics.push(
          diagnostic(
            "RG601",
            source.file,
            source.spanOf(["openapi"]),
            "the OpenAPI document this policy names was not provided",
            "check the policy together with its document",
          ),
        );
      return { policy: undefined, diagnostics };
    }
    const merged = mergeOpenApi(source, input, openapi);
    findings.push(...merged.diagnostics);
    if (!merged.policy) return { policy: undefined, diagnostics: [...diagnostics, ...findings] };
    input = merged.policy;
    // operations the policy does not list are located in the document
    imported = Object.fromEntries(
      Object.entries(merged.sources).filter(
        ([name]) => result.value?.operations?.[name] === undefined,
      ),
    );
    keyedBy = merged.idempotencySources;
  }
  const normalized = normalize(input, source.file, project);
  const policy = {
    ...normalized,
    operations: normalized.operations.map((op) => ({
      ...op,
      ...(Object.hasOwn(imported, op.name) ? { source: imported[op.name]! } : {}),
      ...(Object.hasOwn(keyedBy, op.name)
        ? {
            provenance: {
              ...op.provenance,
              idempotency: { origin: "operation" as const, source: keyedBy[op.name]! },
            },
          }
        : {}),
    })),
  };
  for (const clash of findClashes(policy)) {
    diagnostics.push(
      diagnostic(
        "RG301",
        source.file,
        source.keySpanOf(clash.operation.source.path),
        clash.message,
        clash.hint,
      ),
    );
  }
  return {
    policy: diagnostics.length > 0 ? undefined : policy,
    diagnostics: [...diagnostics, ...findings],
  };
}
