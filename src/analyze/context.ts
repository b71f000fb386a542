/**
 * What every analyzer check shares: the context (a locator over the loaded documents, and which
 * optional checks are on), findings, and how they become diagnostics.
 */
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { findingDiagnostic, type Finding } from "../diagnostics/finding.js";
import type { SourceDocument } from "../language/parse.js";
import { locatorFromDocuments, type Locator, type Place } from "../model/locate.js";
import type { Provenance, ResolvedPolicy } from "../model/resolved.js";

export { mergeFindings, type Finding } from "../diagnostics/finding.js";
export {
  finding,
  inOperation,
  inPolicy,
  place,
  projectFile,
  sectionRef,
  setAt,
  type Locator,
  type Place,
} from "../model/locate.js";

export interface AnalyzeContext extends Locator {
  /**
   * Whether an optional check runs for the policy: the project file's `checks:` may turn it off
   * (docs/policy.md, "The project file"). Every check runs when this is absent.
   */
  readonly enabled?: (policy: ResolvedPolicy, check: OptionalCheck) => boolean;
}

/**
 * A context over the documents a check loaded, by the file name the model uses.
 *
 * @param checks the project file's `checks:` governing each policy file, when there is one
 */
export function contextFromDocuments(
  documents: ReadonlyMap<string, SourceDocument>,
  checks?: (
    policyFile: string,
  ) => { readonly [K in OptionalCheck]?: boolean | undefined } | undefined,
): AnalyzeContext {
  const locator = locatorFromDocuments(documents);
  return checks
    ? { ...locator, enabled: (policy, check) => checks(policy.file)?.[check] !== false }
    : locator;
}

/** The checks `checks:` in resgen.config.yaml can turn off. */
export type OptionalCheck = "unmeasuredTimeouts";

/** Whether `check` runs for `policy` under `ctx`. */
export function isEnabled(
  ctx: AnalyzeContext,
  policy: ResolvedPolicy,
  check: OptionalCheck,
): boolean {
  return ctx.enabled?.(policy, check) ?? true;
}

/**
 * For a finding about a layer the policy inherits from the project defaults (docs/policy.md, "The
 * project file"): " (retry inherited from resgen.config.yaml:5:3)", naming the line that turned
 * the layer on; "" when the layer was set in the policy or the operation, or is absent.
 */
export function inherited(
  ctx: AnalyzeContext,
  layer: string,
  provenance: Provenance | undefined,
): string {
  if (provenance?.origin !== "project" || !provenance.source) return "";
  const at = ctx.where?.(provenance.source) ?? provenance.source.file;
  return ` (${layer} inherited from ${at})`;
}

/**
 * Candidate places for a derived value: the inputs it was computed from (`latency.p999`), then
 * the key of the section they sit in (`latency:`); nothing for a value that is not derived.
 */
export function derivedFrom(provenance: Provenance | undefined): Place[] {
  if (provenance?.origin !== "derived") return [];
  return [
    ...(provenance.inputs ?? []).map((i) => ({ ref: i.source })),
    { ref: provenance.source, key: true },
  ];
}

/** A number for messages: integers as is, others with up to two decimals. */
export function num(n: number): string {
  return Number.isInteger(n) ? String(n) : String(Math.round(n * 100) / 100);
}

/** The diagnostic of one finding, naming the operations it concerns (src/diagnostics/finding.ts). */
export function toDiagnostic(f: Finding): Diagnostic {
  return findingDiagnostic(f);
}
