/**
 * The check pipeline: one run over a host, in steps, every step reporting into one sink.
 *
 *   find inputs → load → resolve OpenAPI descriptions → resolve each file → cross-policy rules
 *   → analyze → result
 *
 * `check` runs it over the file system, `checkTexts` and `checkPolicyText` over texts in memory
 * (src/program/check.ts), so every rule applies whichever entry point is used.
 */
import { dirname } from "node:path";
import { analyze, contextFromDocuments } from "../analyze/index.js";
import { analyzeServices } from "../analyze/services.js";
import { diagnostic, DiagnosticSink, type Diagnostic } from "../diagnostics/diagnostic.js";
import type { SourceTexts } from "../diagnostics/format.js";
import type { SourceDocument } from "../language/parse.js";
import type { ConfigSettings } from "../model/normalize.js";
import type { ResolvedPolicy } from "../model/resolved.js";
import { checkServiceSource, isServiceDocument, type ResolvedService } from "../model/service.js";
import { isOpenApiDocument } from "../openapi/description.js";
import type { Host } from "../source/host.js";
import { DEFAULT_POLICY_GLOB, expandInputs, type Inputs } from "../source/inputs.js";
import type { Task } from "../source/task.js";
import { acknowledgeProblems } from "./acknowledge.js";
import { Loader, type Project } from "./loader.js";
import { resolveDescriptions, type Descriptions } from "./openapi.js";
import { checkPolicySource } from "./resolve.js";
import { crossPolicyRules, type Accepted, type Candidate } from "./rules.js";

export type { Project } from "./loader.js";

/** How a run treats its inputs. */
export interface PipelineOptions {
  /**
   * Read policies, OpenAPI documents and `$ref`s outside the project root too (docs/security.md).
   * By default such a file is an error (RG115) and is never read.
   */
  readonly allowOutsideProject?: boolean;
  /**
   * The project every policy is checked in, in place of the project files found next to them
   * (`checkTexts`, `checkPolicyText`).
   */
  readonly project?: ConfigSettings;
  /** Whether the analyzer runs on the policies that resolved (default true). */
  readonly analyze?: boolean;
}

/** What a run found. */
export interface CheckResult {
  /** Policies that loaded without errors, resolved; sorted by file. */
  readonly policies: readonly ResolvedPolicy[];
  /** Service policies (`kind: service`) that loaded without errors, resolved; sorted by file. */
  readonly services: readonly ResolvedService[];
  /** Project files that were read and valid, by absolute path. */
  readonly projects: ReadonlyMap<string, Project>;
  /** Every problem found, each once, sorted by file and position. */
  readonly diagnostics: readonly Diagnostic[];
  /** Texts of the files read, for formatting diagnostics. */
  readonly sources: SourceTexts;
  /** The parsed policy and project files, by the file name diagnostics and the model use. */
  readonly documents: ReadonlyMap<string, SourceDocument>;
  /** Number of policy files examined. */
  readonly fileCount: number;
  /** For each policy file (by displayed path): its absolute path and the project file governing it. */
  readonly files: ReadonlyMap<
    string,
    { readonly absolute: string; readonly config: string | undefined }
  >;
  /** Arguments that matched nothing (each also reported as RG114, a usage error: exit code 2). */
  readonly unmatched: readonly string[];
}

/** A policy input that was read and parsed. */
interface Loaded {
  readonly file: string;
  readonly config: string | undefined;
  readonly source: SourceDocument;
}

/** Checks the policies `paths` name (as `resgen check` takes them), asking `host` for every file. */
export function* checkProgram(
  host: Host,
  paths: readonly string[],
  options: PipelineOptions = {},
): Task<CheckResult> {
  const sink = new DiagnosticSink();
  const loader = new Loader(host, sink, options.allowOutsideProject === true);
  const inputs = yield* findInputs(loader, sink, paths, options);
  const loaded = yield* loadInputs(loader, inputs);
  // every input is read before the descriptions are: a description's files may sit next to the
  // policies and match the same glob, and are then not policies
  const descriptions = yield* resolveDescriptions(
    loader,
    sink,
    loaded.filter(({ source }) => isPolicyDocument(source)),
  );
  const policyFiles = loaded.filter(
    ({ file, source }) => !isOpenApiDocument(source.data) && !descriptions.files.has(file),
  );
  const candidates = yield* resolveFiles(loader, sink, policyFiles, descriptions, options);
  const accepted = crossPolicyRules(candidates, sink);
  if (options.analyze !== false) analyzeAccepted(loader, sink, accepted);
  const descriptionsOnly = new Set(
    loaded.filter((input) => !policyFiles.includes(input)).map(({ file }) => file),
  );
  // entries of targets.acknowledge that cannot be acknowledged (docs/targets.md)
  for (const project of loader.projects().values()) {
    const source = loader.documents.get(loader.shown(project.file));
    if (source) sink.report(acknowledgeProblems(project.config, source));
  }
  return summarize(loader, sink, inputs, accepted, descriptionsOnly);
}

/**
 * Step 1: which policy files the arguments mean, the project files governing them read and
 * validated. Arguments that match nothing (RG114), named files that do not exist (RG004) and
 * policy globs that reach outside their project (RG115) are reported here.
 */
function* findInputs(
  loader: Loader,
  sink: DiagnosticSink,
  paths: readonly string[],
  options: PipelineOptions,
): Task<Inputs> {
  const inputs = yield* expandInputs(
    loader.host,
    paths,
    function* (configFile) {
      const project = yield* loader.project(configFile);
      const globs = project?.config.policies ?? DEFAULT_POLICY_GLOB;
      return typeof globs === "string" ? [globs] : globs;
    },
    { allowOutsideProject: options.allowOutsideProject === true },
  );
  for (const file of inputs.missing) yield* loader.source(file);
  for (const arg of inputs.unmatched) {
    loader.sources.set(arg, "");
    sink.report(
      diagnostic(
        "RG114",
        arg,
        { start: 0, end: 0 },
        `no policy files match "${arg}"`,
        "check the arguments, or `policies:` in resgen.config.yaml",
      ),
    );
  }
  // a project's glob that climbs out of it, or matched files outside it (through a link): reported
  // at the glob, and never walked or read
  const refused = [
    ...inputs.outsideGlobs.map(({ glob, config }) => ({
      config,
      message: `the policy glob "${glob}" reaches outside the project`,
    })),
    ...inputs.outside.map(({ file, config }) => ({
      config,
      message: `the policy glob matches ${loader.shown(file)}, which is outside the project`,
    })),
  ];
  for (const { config, message } of refused) {
    const shown = loader.shown(config);
    const hint = `policies are files inside ${loader.shown(dirname(config)) || "."}; pass --allow-outside-project to read files outside it`;
    sink.report(
      diagnostic(
        "RG115",
        shown,
        loader.documents.get(shown)?.spanOf(["policies"]) ?? { start: 0, end: 0 },
        message,
        hint,
      ),
    );
  }
  return inputs;
}

/** Step 2: every policy input read (all started at once) and parsed, in file order. */
function* loadInputs(loader: Loader, inputs: Inputs): Task<Loaded[]> {
  for (const { file } of inputs.policies) loader.prefetch(file);
  const loaded: Loaded[] = [];
  for (const { file, config } of inputs.policies) {
    const source = yield* loader.source(file);
    if (source) loaded.push({ file, config, source });
  }
  return loaded;
}

/** Whether a parsed input is a dependency policy (not an OpenAPI document, not a service policy). */
function isPolicyDocument(source: SourceDocument): boolean {
  return !isOpenApiDocument(source.data) && !isServiceDocument(source);
}

/**
 * Step 4: each policy and service file validated and resolved on its own, in its project, with
 * the description it names (step 3).
 */
function* resolveFiles(
  loader: Loader,
  sink: DiagnosticSink,
  files: readonly Loaded[],
  descriptions: Descriptions,
  options: PipelineOptions,
): Task<Candidate[]> {
  const candidates: Candidate[] = [];
  for (const { file, config, source } of files) {
    const project =
      options.project === undefined && config !== undefined
        ? yield* loader.project(config)
        : undefined;
    const context: ConfigSettings =
      options.project ??
      (project ? { configFile: loader.shown(project.file), config: project.config } : {});
    if (isServiceDocument(source)) {
      if (context.config?.platform === "web") {
        sink.report(
          diagnostic(
            "RG309",
            source.file,
            source.spanOf(["service"]),
            `the service policy cannot be built under \`platform: web\` (${context.configFile ?? "the project file"}): its middleware runs handlers in the request's deadline through AsyncLocalStorage`,
            "build it in a project with `platform: node` (the default)",
          ),
        );
        continue;
      }
      const checked = checkServiceSource(source, context);
      sink.report(checked.diagnostics);
      if (checked.service) candidates.push({ kind: "service", service: checked.service, source });
      continue;
    }
    const result = checkPolicySource(source, context, descriptions.byPolicy.get(file));
    sink.report(result.diagnostics);
    if (result.policy)
      candidates.push({
        kind: "policy",
        policy: result.policy,
        source,
        checks: context.config?.checks,
      });
  }
  return candidates;
}

/** Step 6: the analyzer's checks on the accepted policies and services; positions may point into project files. */
function analyzeAccepted(loader: Loader, sink: DiagnosticSink, accepted: Accepted): void {
  sink.report(
    analyze(
      accepted.policies,
      contextFromDocuments(loader.documents, (file) => accepted.checks.get(file)),
    ),
  );
  sink.report(
    analyzeServices(
      accepted.services,
      accepted.policies,
      contextFromDocuments(loader.documents),
      rejectedDependencies(loader, accepted),
    ),
  );
}

/** The `dependency:` names of policy files that were read but not accepted (they have errors). */
function rejectedDependencies(loader: Loader, accepted: Accepted): Set<string> {
  const kept = new Set(accepted.policies.map((p) => p.dependency));
  const rejected = new Set<string>();
  for (const source of loader.documents.values()) {
    if (!isPolicyDocument(source)) continue;
    const data = source.data;
    const name =
      data !== null && typeof data === "object" && "dependency" in data ? data.dependency : null;
    if (typeof name === "string" && !kept.has(name)) rejected.add(name);
  }
  return rejected;
}

/** Step 7: the result of the run. */
function summarize(
  loader: Loader,
  sink: DiagnosticSink,
  inputs: Inputs,
  accepted: Accepted,
  descriptionsOnly: ReadonlySet<string>,
): CheckResult {
  // the files of OpenAPI descriptions among the inputs are not policies; unreadable inputs are
  const examined = inputs.policies.filter(({ file }) => !descriptionsOnly.has(file));
  return {
    policies: accepted.policies,
    services: accepted.services,
    projects: loader.projects(),
    diagnostics: sink.all(),
    sources: loader.sources,
    documents: loader.documents,
    fileCount: examined.length,
    files: new Map(
      examined.map((p) => [loader.shown(p.file), { absolute: p.file, config: p.config }]),
    ),
    unmatched: inputs.unmatched,
  };
}
