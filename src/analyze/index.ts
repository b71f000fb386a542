/**
 * The analyzer: semantic checks over resolved policies, after validation and normalisation.
 * Each family of checks is a pure function of a policy (chains: of all policies) and the context;
 * a check that fails on odd input is reported, never allowed to crash the run.
 */
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import type { ResolvedPolicy } from "../model/resolved.js";
import { checkBreaker } from "./breaker.js";
import { checkBulkhead } from "./bulkhead.js";
import { checkChains } from "./chains.js";
import { checkCoalesce } from "./coalesce.js";
import {
  mergeFindings,
  place,
  toDiagnostic,
  type AnalyzeContext,
  type Finding,
} from "./context.js";
import { checkEndpoints } from "./endpoints.js";
import { checkFallback } from "./fallback.js";
import { checkIdempotency } from "./idempotency.js";
import { checkRateLimit } from "./rate-limit.js";
import { checkRetry } from "./retry.js";
import { checkSchemas } from "./schemas.js";
import { checkTimeouts } from "./timeouts.js";

export { contextFromDocuments, type AnalyzeContext } from "./context.js";

export type PolicyCheck = (policy: ResolvedPolicy, ctx: AnalyzeContext) => Finding[];

/** The per-policy families, in the order their findings are produced (output is sorted anyway). */
export const CHECKS: Readonly<Record<string, PolicyCheck>> = {
  idempotency: checkIdempotency,
  timeouts: checkTimeouts,
  retry: checkRetry,
  breaker: checkBreaker,
  bulkhead: checkBulkhead,
  rateLimit: checkRateLimit,
  endpoints: checkEndpoints,
  fallback: checkFallback,
  coalesce: checkCoalesce,
  schemas: checkSchemas,
};

export function analyze(policies: readonly ResolvedPolicy[], ctx: AnalyzeContext): Diagnostic[] {
  const findings: Finding[] = [];
  const guarded = (name: string, policy: ResolvedPolicy, run: () => Finding[]) => {
    try {
      findings.push(...run());
    } catch (error) {
      let at: { file: string; span: { start: number; end: number } };
      try {
        at = place(ctx, policy, []);
      } catch {
        at = { file: policy.file, span: { start: 0, end: 1 } };
      }
      findings.push({
        code: "RG299",
        ...at,
        message: `the ${name} checks failed on this policy (${error instanceof Error ? error.message : String(error)}); the other checks ran`,
        hint: "this is a bug in resgen: please report it with the policy",
      });
    }
  };
  for (const policy of policies) {
    for (const [name, check] of Object.entries(CHECKS))
      guarded(name, policy, () => check(policy, ctx));
  }
  if (policies.length > 0) guarded("chains", policies[0]!, () => checkChains(policies, ctx));
  return mergeFindings(findings).map(toDiagnostic);
}
