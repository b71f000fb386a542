/**
 * Fallbacks: an optional dependency should degrade rather than fail its caller, and a constant
 * served in place of a response must have the response's shape (callers and generated types
 * trust it).
 */
import type { ResolvedPolicy } from "../policy/model.js";
import { finding, setAt, type AnalyzeContext, type Finding } from "./context.js";
import { firstMismatch } from "./json-value.js";

export function checkFallback(policy: ResolvedPolicy, ctx: AnalyzeContext): Finding[] {
  const out: Finding[] = [];
  for (const op of policy.operations) {
    const provenance = op.provenance["fallback"];
    if (!policy.essential && op.fallback === null && (provenance?.origin ?? "default") === "default") {
      out.push(
        finding(
          ctx,
          policy,
          "RG215",
          [{ ref: op.source, key: true }],
          `${policy.dependency} is not essential (essential: false), but this operation has no fallback: when the dependency fails, the error reaches the caller`,
          "add `fallback: { kind: stale }` or `{ kind: value, value: … }`, or `fallback: { kind: none }` if the caller handles the failure",
          op,
        ),
      );
    }
    const fallback = op.fallback;
    if (fallback?.kind === "value" && op.response !== undefined) {
      const mismatch = firstMismatch(fallback.value, op.response, policy.schemas);
      if (mismatch) {
        const source = setAt(provenance);
        out.push(
          finding(
            ctx,
            policy,
            "RG216",
            [{ ref: source && { file: source.file, path: [...source.path, "value"] } }, { ref: source, key: true }, { ref: op.source, key: true }],
            `the fallback value does not match the response schema: at ${mismatch.at}, ${mismatch.message}`,
            "serve a value of the response's shape (callers cannot tell it from a real response except by the degraded flag), or use `kind: stale`",
            op,
          ),
        );
      }
    }
  }
  return out;
}
