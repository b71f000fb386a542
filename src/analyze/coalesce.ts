/**
 * Coalescing (docs/runtime.md, "Coalescing"): only a retry-safe read may share one response
 * among identical calls in flight (RG228), and only where the runtime sees the request's
 * identity and can answer every caller alike: not over `transport: function`, not with a
 * fallback each caller provides (RG229). The policy's `coalesce` applies only where it can
 * (src/model/normalize.ts), so these findings are about an operation's own `coalesce: true`.
 */
import type { ResolvedPolicy } from "../model/resolved.js";
import { isRetrySafeRead } from "../model/reads.js";
import { finding, setAt, type AnalyzeContext, type Finding } from "./context.js";

export function checkCoalesce(policy: ResolvedPolicy, ctx: AnalyzeContext): Finding[] {
  const out: Finding[] = [];
  for (const op of policy.operations) {
    if (!op.coalesce) continue;
    const at = [
      { ref: setAt(op.provenance["coalesce"]), key: true },
      { ref: op.source, key: true },
    ];
    if (!isRetrySafeRead(op, policy.transport)) {
      const what =
        policy.transport === "http"
          ? `${op.method ?? "GET"} ${op.path ?? "/"}${op.idempotency === "key" ? " (a keyed write)" : ""}`
          : "a function operation";
      out.push(
        finding(
          ctx,
          policy,
          "RG228",
          at,
          `coalesce: true on ${what}, which is not a retry-safe read: identical calls in flight would share one response, so what each call asks the dependency to do would be done once for all of them`,
          policy.transport === "http"
            ? "only GET and HEAD operations that are retry-safe may coalesce: remove `coalesce` here"
            : "remove `coalesce` here: a function transport's request is made by the caller (RG229)",
          op,
        ),
      );
      continue;
    }
    if (policy.transport === "function") {
      out.push(
        finding(
          ctx,
          policy,
          "RG229",
          at,
          "coalesce: true on a function operation: the caller makes the request itself, so the runtime cannot see its method, URL or credentials, and two users' calls could share one answer",
          "remove `coalesce` here; coalesce in the function you pass, where the request's identity is known",
          op,
        ),
      );
      continue;
    }
    const f = op.fallback;
    if (f?.kind === "provided" || (f?.kind === "stale" && f.otherwise?.kind === "provided")) {
      out.push(
        finding(
          ctx,
          policy,
          "RG229",
          [...at, { ref: setAt(op.provenance["fallback"]), key: true }],
          "coalesce: true with a fallback the caller provides: calls that share one chain would share one fallback, the first caller's, so each caller's own function could not answer for it",
          "use a value or stale fallback (`otherwise: { kind: value, value: … }`), or remove `coalesce` here",
          op,
        ),
      );
    }
  }
  return out;
}
