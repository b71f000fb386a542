/**
 * The programmatic API of resgen. The CLI is a thin layer over these functions.
 */
export { analyze, contextFromDocuments, type AnalyzeContext } from "./analyze/index.js";
export {
  check,
  checkPolicyText,
  checkPolicySource,
  checkProgram,
  checkTexts,
  type CheckOptions,
  type CheckResult,
  type PipelineOptions,
  type Project,
} from "./program/check.js";
export { fileSystemHost, MemoryHost, type Host, type PathKind } from "./source/host.js";
export { runAsync, runSync, type Maybe, type Task } from "./source/task.js";
export {
  CODES,
  type Code,
  type CodeInfo,
  type ExitCategory,
  type Severity,
} from "./diagnostics/codes.js";
export {
  DiagnosticSink,
  exitCode,
  sortDiagnostics,
  type Diagnostic,
  type Span,
} from "./diagnostics/diagnostic.js";
export {
  format,
  formatJson,
  formatPretty,
  formatSarif,
  SourceTexts,
  type Format,
} from "./diagnostics/format.js";
export {
  explain,
  renderExplainJson,
  renderExplainText,
  type ExplainOptions,
  type ExplainReport,
} from "./explain/explain.js";
export type * from "./model/resolved.js";
export { normalize, DEFAULTS, type ConfigSettings } from "./model/normalize.js";
export {
  Policy,
  ProjectConfig,
  type PolicyInput,
  type ProjectConfigInput,
} from "./language/schema.js";
export {
  EMITTERS,
  emitTargets,
  parseTargets,
  TARGETS,
  type MeshTarget,
  type TargetContext,
  type TargetName,
} from "./targets/index.js";
export { VERSION } from "./version.js";
