/**
 * The targets besides the TypeScript client: each is a pure function from resolved policies to
 * files (under a folder named after the target) and a mapping report.
 */
import { diagnostic, type Diagnostic } from "../diagnostics/diagnostic.js";
import { place } from "../model/locate.js";
import type { ResolvedPolicy } from "../model/resolved.js";
import { emitGrpc } from "./grpc.js";
import { emitIstio } from "./istio.js";
import { emitLinkerd } from "./linkerd.js";
import {
  effectiveRetry,
  MappingReport,
  routeOf,
  TARGETS,
  type MeshTarget,
  type Target,
  type TargetContext,
  type TargetName,
} from "./report.js";
import { GRPC_MAX_ATTEMPTS } from "./grpc.js";

export { TARGETS, type MeshTarget, type TargetContext, type TargetName };

export const EMITTERS: Readonly<Record<MeshTarget, Target>> = {
  istio: emitIstio,
  linkerd: emitLinkerd,
  grpc: emitGrpc,
};

/** Parses target names as given on the command line ("istio,grpc", repeated); undefined entries are reported. */
export function parseTargets(values: readonly string[]): {
  targets: TargetName[];
  unknown: string[];
} {
  const targets = new Set<TargetName>();
  const unknown: string[] = [];
  for (const value of values) {
    for (const part of value
      .split(",")
      .map((p) => p.trim())
      .filter(Boolean)) {
      if ((TARGETS as readonly string[]).includes(part)) targets.add(part as TargetName);
      else unknown.push(part);
    }
  }
  return { targets: TARGETS.filter((t) => targets.has(t)), unknown };
}

/** Whether a path (relative to the output folder) belongs to one of `targets`. */
export function ownedBy(targets: readonly TargetName[]): (path: string) => boolean {
  const meshes = TARGETS.filter((t): t is MeshTarget => t !== "ts");
  return (path) => {
    const folder = meshes.find((t) => path.startsWith(`${t}/`));
    return folder === undefined ? targets.includes("ts") : targets.includes(folder);
  };
}

/**
 * Emits every mesh target of `targets` (ts is emitted by src/emit). A target that fails is
 * reported (RG417), never allowed to crash the run: the other targets still run, and the error
 * keeps the build from writing an output folder that lacks the failed target's files.
 */
export function emitTargets(
  policies: readonly ResolvedPolicy[],
  targets: readonly TargetName[],
  ctx: TargetContext,
): { files: Map<string, string>; diagnostics: Diagnostic[] } {
  const files = new Map<string, string>();
  const diagnostics: Diagnostic[] = [];
  for (const target of targets) {
    if (target === "ts") continue;
    try {
      const out = EMITTERS[target](policies, ctx);
      const layered = targets.includes("ts") ? layeredRetries(policies, target, ctx) : [];
      for (const [path, text] of out.files) files.set(path, text);
      diagnostics.push(...out.diagnostics, ...layered);
    } catch (error) {
      diagnostics.push(targetFailure(target, policies, ctx, error));
    }
  }
  return { files, diagnostics };
}

/** A target's failure as a diagnostic, at the first policy's `dependency` (else the start of its file). */
function targetFailure(
  target: MeshTarget,
  policies: readonly ResolvedPolicy[],
  ctx: TargetContext,
  error: unknown,
): Diagnostic {
  const first = policies[0];
  let at = { file: first?.file ?? "", span: { start: 0, end: 0 } };
  if (first) {
    try {
      at = place(ctx.locate, first, [
        { ref: { file: first.file, path: ["dependency"] }, key: true },
      ]);
    } catch {
      // the position is a courtesy: the failure is reported at the start of the file instead
    }
  }
  const reason = error instanceof Error ? error.message : String(error);
  return diagnostic(
    "RG417",
    at.file,
    at.span,
    `the ${target} target failed on these policies (${reason}); nothing is written`,
    "this is a bug in resgen: please report it with the policies",
  );
}

/** Operations retried both by the generated client and by the engine of `target` (RG416). */
function layeredRetries(
  policies: readonly ResolvedPolicy[],
  target: MeshTarget,
  ctx: TargetContext,
): Diagnostic[] {
  const report = new MappingReport(target, ctx);
  for (const policy of policies) {
    for (const op of policy.operations) {
      const retry = effectiveRetry(op);
      if (!retry) continue;
      if (target === "grpc" ? !op.grpc : !routeOf(op)) continue;
      const n = retry.maxAttempts;
      const below = target === "grpc" ? Math.min(n, GRPC_MAX_ATTEMPTS) : n;
      const effect =
        target === "linkerd"
          ? `each of the client's ${n} attempts is retried again as far as Linkerd's budget allows`
          : `up to ${n} × ${below} = ${n * below} attempts per call`;
      report.noteSetting(
        policy,
        op,
        "RG416",
        "retry.maxAttempts",
        `built for ts and ${target}, the generated client and ${target} both retry: ${effect}`,
        "let one engine retry: build this policy for ts or for the mesh, not both",
      );
    }
  }
  return report.diagnostics();
}
