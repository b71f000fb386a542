/**
 * Fallbacks: an optional dependency should degrade rather than fail its caller, and a constant
 * served in place of a response must have the response's shape (callers and generated types
 * trust it). A stale fallback exists only on retry-safe reads, since an earlier response to a
 * write belongs to another request (docs/runtime.md, "Fallback"), and an optional dependency
 * whose only fallback is stale should say what a miss does. A stale fallback keeps a response's
 * data, so an HTTP operation with one declares its response.
 */
import type { ResolvedPolicy } from "../model/resolved.js";
import { isRetrySafeRead } from "../model/reads.js";
import { finding, setAt, type AnalyzeContext, type Finding } from "./context.js";
import { firstMismatch } from "./json-value.js";

export function checkFallback(policy: ResolvedPolicy, ctx: AnalyzeContext): Finding[] {
  const out: Finding[] = [];
  for (const op of policy.operations) {
    const provenance = op.provenance["fallback"];
    if (
      !policy.essential &&
      op.fallback === null &&
      (provenance?.origin ?? "absent") === "absent"
    ) {
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
    const source = setAt(provenance);
    if (fallback?.kind === "stale" && !isRetrySafeRead(op, policy.transport)) {
      const inherited =
        provenance?.origin === "policy"
          ? " (inherited from the policy's `fallback`)"
          : provenance?.origin === "project"
            ? " (inherited from the project defaults)"
            : "";
      const what =
        policy.transport === "http"
          ? `${op.method ?? "GET"} ${op.path ?? "/"}`
          : op.idempotencyKey
            ? "a keyed write"
            : "an operation not marked `idempotent: true`";
      out.push(
        finding(
          ctx,
          policy,
          "RG222",
          [
            { ref: source, key: true },
            { ref: op.source, key: true },
          ],
          `a stale fallback${inherited} on ${what}, which is not a retry-safe read: the last response cached belongs to another request, and would be served to this one`,
          policy.transport === "http"
            ? "only GET and HEAD may have a stale fallback: give this operation `fallback: { kind: none }`, a value or a provided one"
            : "only a function operation with `idempotent: true` and no idempotency key is a read: give this one `fallback: { kind: none }`, a value or a provided one",
          op,
        ),
      );
    } else if (fallback?.kind === "stale") {
      if (policy.transport === "http" && !op.response) {
        // the client reads no body without a response schema: a success leaves nothing to keep,
        // so the fallback never has an entry to serve, in memory or in the store
        out.push(
          finding(
            ctx,
            policy,
            "RG235",
            [
              { ref: source, key: true },
              { ref: op.source, key: true },
            ],
            `a stale fallback on ${op.method ?? "GET"} ${op.path ?? "/"}, which declares no response: the client reads no body, so a success leaves nothing to keep and the fallback never has an entry to serve`,
            "declare the operation's `response:` schema, or give it another fallback",
            op,
          ),
        );
      }
      if (fallback.otherwise === null && !policy.essential) {
        out.push(
          finding(
            ctx,
            policy,
            "RG223",
            [
              { ref: source, key: true },
              { ref: op.source, key: true },
            ],
            `${policy.dependency} is not essential (essential: false), but this operation's only fallback is stale: with no entry for the request (the first outage after a start, a new user), the failure reaches the caller`,
            "declare what a miss does: `otherwise: { kind: value, value: … }` or `otherwise: { kind: provided }` under the stale fallback",
            op,
          ),
        );
      }
    }
    const constant =
      fallback?.kind === "value"
        ? { value: fallback.value, at: ["value"] }
        : fallback?.kind === "stale" && fallback.otherwise?.kind === "value"
          ? { value: fallback.otherwise.value, at: ["otherwise", "value"] }
          : undefined;
    if (constant && op.response !== undefined) {
      const mismatch = firstMismatch(constant.value, op.response, policy.schemas);
      if (mismatch) {
        out.push(
          finding(
            ctx,
            policy,
            "RG216",
            [
              { ref: source && { file: source.file, path: [...source.path, ...constant.at] } },
              { ref: source, key: true },
              { ref: op.source, key: true },
            ],
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

export { isRetrySafeRead };
