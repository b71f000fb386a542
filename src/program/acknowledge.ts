/**
 * `targets.acknowledge` of the project file (docs/targets.md, "Acknowledging notes"): per target,
 * the warning codes of its notes that were reviewed. The entries are checked when the project
 * file is read; `resgen build` then counts the notes they name without printing them.
 */
import { CODES, type Code } from "../diagnostics/codes.js";
import { diagnostic, type Diagnostic, type Span } from "../diagnostics/diagnostic.js";
import type { SourceDocument } from "../language/parse.js";
import type { ProjectConfigInput } from "../language/schema.js";

/** The targets whose notes can be acknowledged, as the project file names them. */
const MESHES = ["istio", "linkerd", "grpc"] as const;

/** Whether `code` is the code of a target's note, so one that may be acknowledged. */
function isTargetCode(code: Code): boolean {
  return code.startsWith("RG4");
}

/** The codes acknowledged for each target (only the valid entries), by target name. */
export function acknowledgedCodes(config: ProjectConfigInput): Map<string, Set<string>> {
  const codes = new Map<string, Set<string>>();
  for (const target of MESHES) {
    const listed = (config.targets?.acknowledge?.[target] ?? []).filter(
      (code) => problemOf(code) === undefined,
    );
    if (listed.length > 0) codes.set(target, new Set(listed));
  }
  return codes;
}

/** Where the project file acknowledges `code` for `target`: the span of its first entry. */
export function acknowledgementAt(
  config: ProjectConfigInput,
  source: SourceDocument,
  target: string,
  code: string,
): Span | undefined {
  const list = config.targets?.acknowledge?.[target as (typeof MESHES)[number]] ?? [];
  const index = list.indexOf(code);
  return index < 0 ? undefined : source.spanOf(["targets", "acknowledge", target, index]);
}

/** Each entry that cannot be acknowledged, as an error at the entry (RG107). */
export function acknowledgeProblems(
  config: ProjectConfigInput,
  source: SourceDocument,
): Diagnostic[] {
  const problems: Diagnostic[] = [];
  for (const target of MESHES) {
    const list = config.targets?.acknowledge?.[target] ?? [];
    list.forEach((code, index) => {
      const problem = problemOf(code);
      if (problem === undefined) return;
      problems.push(
        diagnostic(
          "RG107",
          source.file,
          source.spanOf(["targets", "acknowledge", target, index]),
          `${JSON.stringify(code)} cannot be acknowledged for ${target}: ${problem}`,
          "list the warning codes of the target's notes (RG401–RG414, RG416, RG418–RG421) that were reviewed",
        ),
      );
    });
  }
  return problems;
}

/** Why `code` may not be acknowledged, or undefined when it may. */
function problemOf(code: string): string | undefined {
  if (!Object.hasOwn(CODES, code)) return "it is not a resgen code";
  const known = code as Code;
  if (!isTargetCode(known))
    return "it is not a note of the targets; only the warnings of resgen build --target can be acknowledged";
  if (CODES[known].severity === "error") return "it is an error, and errors cannot be acknowledged";
  return undefined;
}
