/**
 * The entry points of checking: `check` over the file system, `checkTexts` and
 * `checkPolicyText` over texts in memory. Each is a thin wrapper over the one pipeline
 * (src/program/pipeline.ts), so every rule applies whichever of them is used.
 */
import { basename } from "node:path";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import type { ConfigSettings } from "../model/normalize.js";
import type { ResolvedPolicy } from "../model/resolved.js";
import type { ResolvedService } from "../model/service.js";
import { fileSystemHost, MemoryHost } from "../source/host.js";
import { CONFIG_FILE } from "../source/inputs.js";
import { runAsync, runSync } from "../source/task.js";
import { checkProgram, type CheckResult } from "./pipeline.js";

export { checkProgram, type CheckResult, type PipelineOptions, type Project } from "./pipeline.js";
export { checkPolicySource } from "./resolve.js";

/** How `check` reads its inputs. */
export interface CheckOptions {
  /** Directory that relative arguments and displayed paths are relative to. Defaults to process.cwd(). */
  readonly cwd?: string;
  /**
   * Read policies, OpenAPI documents and `$ref`s outside the project root too (docs/security.md).
   * By default such a file is an error (RG115) and is never read.
   */
  readonly allowOutsideProject?: boolean;
}

/** Loads, validates, resolves and analyzes every policy `paths` name, reporting all problems of all files in one run. */
export function check(paths: readonly string[], options: CheckOptions = {}): Promise<CheckResult> {
  return runAsync(
    checkProgram(fileSystemHost(options.cwd ?? process.cwd()), paths, {
      allowOutsideProject: options.allowOutsideProject === true,
    }),
  );
}

/**
 * Loads, validates, resolves and analyzes several policy texts together, as `check` does for
 * files (the docs generator and tests use it): the texts are files in memory, named by `file`,
 * every one of them an input but a `resgen.config.yaml`, which is the project file of the policies
 * in its folder and below, as on disk; `project` applies where there is none.
 */
export function checkTexts(
  files: readonly { readonly file: string; readonly text: string }[],
  project?: ConfigSettings,
): { policies: ResolvedPolicy[]; services: ResolvedService[]; diagnostics: Diagnostic[] } {
  // a project file among the texts governs the policies beside it, as resgen.config.yaml does on disk
  const policies = files.filter((f) => basename(f.file) !== CONFIG_FILE).map((f) => f.file);
  const result = runSync(
    checkProgram(
      new MemoryHost(files.map((f) => [f.file, f.text])),
      policies,
      project === undefined ? {} : { project },
    ),
  );
  return {
    policies: [...result.policies],
    services: [...result.services],
    diagnostics: [...result.diagnostics],
  };
}

/**
 * Loads, validates and resolves one policy text, without the analyzer: the unit the property
 * tests and the normalisation tests share. An OpenAPI document it names is not available.
 */
export function checkPolicyText(
  file: string,
  text: string,
  project: ConfigSettings = {},
): { policy: ResolvedPolicy | undefined; diagnostics: Diagnostic[] } {
  const result = runSync(
    checkProgram(new MemoryHost([[file, text]]), [file], { project, analyze: false }),
  );
  return { policy: result.policies[0], diagnostics: [...result.diagnostics] };
}
