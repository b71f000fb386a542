/**
 * The pipeline's cross-policy rules: what no single file can be judged on. Two policies may not
 * declare one dependency (RG113), and no two dependencies or services may become the same
 * factory or module file (RG301), a service included. Candidates are judged in file order; the later one of a clash
 * is reported and left out.
 */
import { diagnostic, type DiagnosticSink } from "../diagnostics/diagnostic.js";
import type { SourceDocument } from "../language/parse.js";
import type { ProjectConfigInput } from "../language/schema.js";
import { moduleName } from "../model/identifiers.js";
import { clientNames, SERVICE_RUNTIME_IMPORTS, serviceNames } from "../model/names.js";
import type { ResolvedPolicy } from "../model/resolved.js";
import type { ResolvedService } from "../model/service.js";

/** A file that resolved on its own, before the rules across files. */
export type Candidate =
  | {
      readonly kind: "policy";
      readonly policy: ResolvedPolicy;
      readonly source: SourceDocument;
      readonly checks: ProjectConfigInput["checks"];
    }
  | {
      readonly kind: "service";
      readonly service: ResolvedService;
      readonly source: SourceDocument;
    };

/** The candidates the rules accept, in order, and the project `checks:` governing each policy (by file). */
export interface Accepted {
  readonly policies: ResolvedPolicy[];
  readonly services: ResolvedService[];
  readonly checks: ReadonlyMap<string, ProjectConfigInput["checks"]>;
}

/** Applies the rules across files to `candidates` (in file order), reporting into `sink`. */
export function crossPolicyRules(candidates: readonly Candidate[], sink: DiagnosticSink): Accepted {
  const policies: ResolvedPolicy[] = [];
  const services: ResolvedService[] = [];
  const checks = new Map<string, ProjectConfigInput["checks"]>();
  /** The file declaring each dependency accepted so far. */
  const declared = new Map<string, string>();
  /** The factories (`name()`) and module files (`name.ts`) of the dependencies accepted so far. */
  const factories = new Map<string, ResolvedPolicy>();
  /** The module file of each service accepted so far, and its service. */
  const serviceModules = new Map<string, string>();
  for (const candidate of candidates) {
    const { source } = candidate;
    if (candidate.kind === "service") {
      const { service } = candidate;
      const names = serviceNames(service.service);
      const clash = SERVICE_RUNTIME_IMPORTS.includes(names.factory)
        ? `becomes ${names.factory}(), the runtime function its module calls`
        : factories.has(`${names.module}.ts`)
          ? `becomes the module ${names.module}.ts, as dependency "${factories.get(`${names.module}.ts`)!.dependency}" does`
          : serviceModules.has(`${names.module}.ts`)
            ? `becomes the module ${names.module}.ts, as service "${serviceModules.get(`${names.module}.ts`)!}" does`
            : undefined;
      if (clash !== undefined) {
        sink.report(
          diagnostic(
            "RG301",
            source.file,
            source.spanOf(["service"]),
            `service "${service.service}" ${clash}`,
            "rename the service",
          ),
        );
        continue;
      }
      serviceModules.set(`${names.module}.ts`, service.service);
      services.push(service);
      continue;
    }
    const { policy } = candidate;
    const previous = declared.get(policy.dependency);
    if (previous !== undefined) {
      sink.report(
        diagnostic(
          "RG113",
          policy.file,
          source.spanOf(["dependency"]),
          `dependency "${policy.dependency}" is already declared in ${previous}`,
          "each dependency has exactly one policy file; merge them or rename one",
        ),
      );
      continue;
    }
    // two dependencies may not share a factory, nor a module file (`ab` and `AB` have two
    // factories but one module, ab.ts)
    const outputs = [
      `${clientNames(policy.dependency).factory}()`,
      `${moduleName(policy.dependency)}.ts`,
    ];
    const service = serviceModules.get(outputs[1]!);
    if (service !== undefined) {
      sink.report(
        diagnostic(
          "RG301",
          policy.file,
          source.spanOf(["dependency"]),
          `dependency "${policy.dependency}" becomes the module ${outputs[1]!}, as service "${service}" does`,
          "rename one of them",
        ),
      );
      continue;
    }
    const hit = outputs.find((output) => factories.has(output));
    if (hit !== undefined) {
      const other = factories.get(hit)!;
      sink.report(
        diagnostic(
          "RG301",
          policy.file,
          source.spanOf(["dependency"]),
          `dependency "${policy.dependency}" and "${other.dependency}" (${other.file}) both become ${hit}`,
          "rename one of them",
        ),
      );
      continue;
    }
    for (const output of outputs) factories.set(output, policy);
    declared.set(policy.dependency, policy.file);
    policies.push(policy);
    checks.set(policy.file, candidate.checks);
  }
  return { policies, services, checks };
}
