/**
 * `check`: load, validate and normalise every policy a command names, reporting all problems of
 * all files in one run. Reading files happens here; every stage below is a pure function.
 */
import { dirname, posix, resolve } from "node:path";
import { analyze, contextFromDocuments } from "../analyze/index.js";
import { diagnostic, sortDiagnostics, type Diagnostic } from "../diagnostics/diagnostic.js";
import { SourceTexts } from "../diagnostics/format.js";
import { loadYaml, SourceDocument } from "../language/parse.js";
import type { ResolvedPolicy, SourceRef } from "../model/resolved.js";
import { normalize, type ProjectContext } from "../model/normalize.js";
import { Policy, ProjectConfig, type ProjectConfigInput } from "../language/schema.js";
import { checkServiceSource, isServiceDocument, type ResolvedService } from "../model/service.js";
import { analyzeServices } from "../analyze/services.js";
import { checkStructure } from "../language/structure.js";
import { validate } from "../language/validate.js";
import { DEFAULT_POLICY_GLOB, displayPath, expandInputs } from "../source/inputs.js";
import { outsideProblem, readInput, type ReadCode, type ReadOutcome } from "../source/read.js";
import { clientNames, findClashes } from "../model/names.js";
import { moduleName } from "../model/identifiers.js";
import { SERVICE_RUNTIME_IMPORTS, serviceNames } from "../model/names.js";
import { isOpenApiDocument } from "../openapi/description.js";
import { DocumentSet, gatherDocuments, refFile } from "../openapi/references.js";
import { documentOf, mergeOpenApi } from "../openapi/import.js";

export interface CheckOptions {
  /** Directory that relative arguments and displayed paths are relative to. Defaults to process.cwd(). */
  readonly cwd?: string;
  /**
   * Read policies, OpenAPI documents and `$ref`s outside the project root too (docs/security.md).
   * By default such a file is an error (RG115) and is never read.
   */
  readonly allowOutsideProject?: boolean;
}

export interface Project {
  /** Absolute path of resgen.config.yaml. */
  readonly file: string;
  readonly config: ProjectConfigInput;
}

export interface CheckResult {
  /** Policies that loaded without errors, resolved; sorted by file. */
  readonly policies: readonly ResolvedPolicy[];
  /** Service policies (`kind: service`) that loaded without errors, resolved; sorted by file. */
  readonly services: readonly ResolvedService[];
  /** Project files that were read and valid, by absolute path. */
  readonly projects: ReadonlyMap<string, Project>;
  /** Every problem found, sorted by file and position. */
  readonly diagnostics: readonly Diagnostic[];
  /** Texts of the files read, for formatting diagnostics. */
  readonly sources: SourceTexts;
  /** The parsed policy and project files, by the file name diagnostics and the model use. */
  readonly documents: ReadonlyMap<string, SourceDocument>;
  /** Number of policy files examined. */
  readonly fileCount: number;
  /** For each policy file (by displayed path): its absolute path and the project file governing it. */
  readonly files: ReadonlyMap<string, { readonly absolute: string; readonly config: string | undefined }>;
  /** Arguments that matched nothing (a usage error: exit code 2). */
  readonly unmatched: readonly string[];
}

export async function check(paths: readonly string[], options: CheckOptions = {}): Promise<CheckResult> {
  const cwd = options.cwd ?? process.cwd();
  const sources = new SourceTexts();
  const diagnostics: Diagnostic[] = [];
  const projects = new Map<string, Project | undefined>();
  const documents = new Map<string, SourceDocument>();

  // Policy files are read all at once (one at a time, a large project waits on the disk most of
  // the time) and parsed in order. A settled read never rejects, so none goes unhandled.
  // Every read goes through readInput: regular files only, their size checked first (src/source/read.ts).
  const reads = new Map<string, Promise<ReadOutcome>>();
  const startRead = (file: string) => {
    if (!reads.has(file)) reads.set(file, readInput(file));
  };
  /**
   * A file read as YAML (or JSON) and registered for positions, once however often it is asked
   * for (a policy input may also be a file of an OpenAPI description): the document, or why not
   * (`read`: whether the file was read, its problems then being findings of their own; `code`:
   * the code that reports a file that was not). A file outside `root` is never read, so nothing
   * of it can appear in a code frame.
   */
  const parsed = new Map<string, Promise<SourceDocument | Unread>>();
  const readDocument = async (file: string, root: string | undefined): Promise<SourceDocument | Unread> => {
    if (root !== undefined && !options.allowOutsideProject) {
      const outside = await outsideProblem(file, root);
      if (outside && "problem" in outside) return { reason: outside.problem, read: false, code: outside.code, hint: `the project root is ${displayPath(root, cwd) || "."}; pass --allow-outside-project to read files outside it` };
    }
    let result = parsed.get(file);
    if (result === undefined) {
      startRead(file);
      result = reads.get(file)!.then((read) => {
        const shown = displayPath(file, cwd);
        if ("problem" in read) return { reason: read.problem, read: false, code: read.code };
        sources.set(shown, read.text);
        const loaded = loadYaml(shown, read.text);
        diagnostics.push(...loaded.diagnostics);
        if (!loaded.ok) return { reason: `${shown} could not be read as YAML or JSON`, read: true, code: "RG004" };
        documents.set(shown, loaded.source);
        return loaded.source;
      });
      parsed.set(file, result);
    }
    return result;
  };
  /** A file given to check (a policy, a project file): unreadable is an error of its own (RG004, RG003, RG116). */
  const readSource = async (file: string): Promise<SourceDocument | undefined> => {
    const result = await readDocument(file, undefined);
    if (result instanceof SourceDocument) return result;
    if (!result.read) {
      const shown = displayPath(file, cwd);
      sources.set(shown, "");
      diagnostics.push(diagnostic(result.code, shown, { start: 0, end: 0 }, `cannot read ${shown}: ${result.reason}`, result.hint));
    }
    return undefined;
  };

  const loadProject = async (file: string): Promise<Project | undefined> => {
    if (projects.has(file)) return projects.get(file);
    const source = await readSource(file);
    let project: Project | undefined;
    if (source) {
      const result = validate(ProjectConfig, source);
      diagnostics.push(...result.diagnostics);
      if (result.value) project = { file, config: result.value };
    }
    projects.set(file, project);
    return project;
  };

  const inputs = await expandInputs(
    paths,
    cwd,
    async (configFile) => {
      const project = await loadProject(configFile);
      const globs = project?.config.policies ?? DEFAULT_POLICY_GLOB;
      return typeof globs === "string" ? [globs] : globs;
    },
    { allowOutsideProject: options.allowOutsideProject === true },
  );

  for (const file of inputs.missing) await readSource(file);
  // a project's glob that climbs out of it, or matched files outside it (through a link): reported
  // at the glob, and never walked or read
  const refused = [
    ...inputs.outsideGlobs.map(({ glob, config }) => ({ config, message: `the policy glob "${glob}" reaches outside the project` })),
    ...inputs.outside.map(({ file, config }) => ({ config, message: `the policy glob matches ${displayPath(file, cwd)}, which is outside the project` })),
  ];
  for (const { config, message } of refused) {
    const shown = displayPath(config, cwd);
    const hint = `policies are files inside ${displayPath(dirname(config), cwd) || "."}; pass --allow-outside-project to read files outside it`;
    diagnostics.push(diagnostic("RG115", shown, documents.get(shown)?.spanOf(["policies"]) ?? { start: 0, end: 0 }, message, hint));
  }

  // the OpenAPI description a policy names, with the files its $refs reach, read once however
  // many policies name it; null: reported
  const descriptions = new Map<string, DocumentSet | null>();
  const readOpenApi = async (policyFile: string, config: string | undefined, policy: SourceDocument): Promise<DocumentSet | null | undefined> => {
    const named = documentOf(policy.data);
    if (named === undefined) return undefined;
    const full = resolve(dirname(policyFile), named);
    // the document and its $refs must lie inside the project of the policy that names it
    const project = projectRoot(policyFile, config);
    const key = `${project}\0${full}`;
    if (descriptions.has(key)) return descriptions.get(key);
    const root = await readDocument(full, project);
    let set: DocumentSet | null = null;
    if (root instanceof SourceDocument) {
      set = new DocumentSet(root, full, (from, file) => resolve(dirname(from), refFile(file)));
      const walk = gatherDocuments(set);
      for (let step = walk.next(); !step.done; ) {
        const loaded = await readDocument(step.value, project);
        step = walk.next(loaded instanceof SourceDocument ? loaded : loaded.code === "RG115" ? `${loaded.reason}, which resgen never reads (--allow-outside-project reads it)` : loaded.reason);
      }
    } else if (!root.read) {
      const at = typeof (policy.data as Record<string, unknown>)["openapi"] === "string" ? ["openapi"] : ["openapi", "document"];
      const code = root.code === "RG004" ? "RG601" : root.code;
      diagnostics.push(diagnostic(code, policy.file, policy.spanOf(at), `cannot read the OpenAPI document ${displayPath(full, cwd)}: ${root.reason}`, root.hint ?? "the path is relative to the policy file"));
    }
    descriptions.set(key, set);
    return set;
  };

  const policies: ResolvedPolicy[] = [];
  // the project file's `checks:` governing each policy file (docs/policy.md, "The project file")
  const checksOf = new Map<string, ProjectConfigInput["checks"]>();
  const services: ResolvedService[] = [];
  const openapiOnly = new Set<string>();
  const seen = new Map<string, string>();
  const factories = new Map<string, ResolvedPolicy>();
  /** The module file of each service policy checked so far, and its service. */
  const serviceModules = new Map<string, string>();
  for (const { file } of inputs.policies) startRead(file);
  // Every input is read, and the OpenAPI descriptions the policies name are loaded, before any
  // file is checked: a description's files may sit next to the policies and match the same glob.
  const loaded: { file: string; config: string | undefined; source: SourceDocument }[] = [];
  for (const { file, config } of inputs.policies) {
    const source = await readSource(file);
    if (!source) continue;
    loaded.push({ file, config, source });
    if (!isOpenApiDocument(source.data) && !isServiceDocument(source)) await readOpenApi(file, config, source);
  }
  const described = new Set([...descriptions.values()].flatMap((set) => set?.keys ?? []));
  for (const { file, config, source } of loaded) {
    const project = config ? await loadProject(config) : undefined;
    // an OpenAPI document (or a file of one) next to the policies is read by the policy that names it
    if (isOpenApiDocument(source.data) || described.has(file)) {
      openapiOnly.add(file);
      continue;
    }
    const context = project ? { configFile: displayPath(project.file, cwd), config: project.config } : {};
    if (isServiceDocument(source)) {
      const checked = checkServiceSource(source, context);
      diagnostics.push(...checked.diagnostics);
      if (!checked.service) continue;
      const names = serviceNames(checked.service.service);
      const clash = (SERVICE_RUNTIME_IMPORTS as readonly string[]).includes(names.factory)
        ? `becomes ${names.factory}(), the runtime function its module calls`
        : factories.has(`${names.module}.ts`)
          ? `becomes the module ${names.module}.ts, as dependency "${factories.get(`${names.module}.ts`)!.dependency}" does`
          : undefined;
      if (clash !== undefined) {
        diagnostics.push(diagnostic("RG301", source.file, source.spanOf(["service"]), `service "${checked.service.service}" ${clash}`, "rename the service"));
        continue;
      }
      serviceModules.set(`${names.module}.ts`, checked.service.service);
      services.push(checked.service);
      continue;
    }
    const result = checkPolicySource(source, context, await readOpenApi(file, config, source));
    diagnostics.push(...result.diagnostics);
    const policy = result.policy;
    if (!policy) continue;
    const previous = seen.get(policy.dependency);
    if (previous !== undefined) {
      diagnostics.push(
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
    const outputs = [`${clientNames(policy.dependency).factory}()`, `${moduleName(policy.dependency)}.ts`];
    const service = serviceModules.get(outputs[1]!);
    if (service !== undefined) {
      diagnostics.push(diagnostic("RG301", policy.file, source.spanOf(["dependency"]), `dependency "${policy.dependency}" becomes the module ${outputs[1]}, as service "${service}" does`, "rename one of them"));
      continue;
    }
    const hit = outputs.find((output) => factories.has(output));
    if (hit !== undefined) {
      const other = factories.get(hit)!;
      diagnostics.push(diagnostic("RG301", policy.file, source.spanOf(["dependency"]), `dependency "${policy.dependency}" and "${other.dependency}" (${other.file}) both become ${hit}`, "rename one of them"));
      continue;
    }
    for (const output of outputs) factories.set(output, policy);
    seen.set(policy.dependency, policy.file);
    policies.push(policy);
    checksOf.set(policy.file, project?.config.checks);
  }

  // semantic checks run on the policies that resolved; positions may point into project files
  diagnostics.push(...analyze(policies, contextFromDocuments(documents, (file) => checksOf.get(file))));
  diagnostics.push(...analyzeServices(services, policies, contextFromDocuments(documents)));

  return {
    policies,
    services,
    projects: new Map([...projects].filter((e): e is [string, Project] => e[1] !== undefined)),
    diagnostics: sortDiagnostics(diagnostics),
    sources,
    documents,
    fileCount: inputs.policies.length - openapiOnly.size,
    files: new Map(inputs.policies.filter((p) => !openapiOnly.has(p.file)).map((p) => [displayPath(p.file, cwd), { absolute: p.file, config: p.config }])),
    unmatched: inputs.unmatched,
  };
}

/**
 * Validates and resolves one loaded policy. Pure: the unit the CLI, the tests and the property
 * tests share. Returns the resolved policy only when the file has no errors.
 *
 * @param openapi the OpenAPI description the policy names under `openapi:` (one document, or the
 *   documents its `$ref`s reach), loaded by the caller; null when reading it failed (already reported)
 */
export function checkPolicySource(
  source: SourceDocument,
  project: ProjectContext = {},
  openapi?: SourceDocument | DocumentSet | null,
): { policy: ResolvedPolicy | undefined; diagnostics: Diagnostic[] } {
  const structural = checkStructure(source, project.config?.defaults?.transport ?? "http");
  const result = validate(Policy, source);
  const diagnostics = [...structural, ...result.diagnostics];
  if (!result.value || diagnostics.length > 0) return { policy: undefined, diagnostics };
  let input = result.value;
  let imported: Readonly<Record<string, SourceRef>> = {};
  let keyedBy: Readonly<Record<string, SourceRef>> = {};
  const findings: Diagnostic[] = [];
  if (input.openapi !== undefined) {
    if (!openapi) {
      if (openapi === undefined) diagnostics.push(diagnostic("RG601", source.file, source.spanOf(["openapi"]), "the OpenAPI document this policy names was not provided", "check the policy together with its document"));
      return { policy: undefined, diagnostics };
    }
    const merged = mergeOpenApi(source, input, openapi);
    findings.push(...merged.diagnostics);
    if (!merged.policy) return { policy: undefined, diagnostics: [...diagnostics, ...findings] };
    input = merged.policy;
    // operations the policy does not list are located in the document
    imported = Object.fromEntries(Object.entries(merged.sources).filter(([name]) => result.value?.operations?.[name] === undefined));
    keyedBy = merged.idempotencySources;
  }
  const normalized = normalize(input, source.file, project);
  const policy = {
    ...normalized,
    operations: normalized.operations.map((op) => ({
      ...op,
      ...(Object.hasOwn(imported, op.name) ? { source: imported[op.name]! } : {}),
      ...(Object.hasOwn(keyedBy, op.name) ? { provenance: { ...op.provenance, idempotency: { origin: "operation" as const, source: keyedBy[op.name]! } } } : {}),
    })),
  };
  for (const clash of findClashes(policy)) {
    diagnostics.push(diagnostic("RG301", source.file, source.keySpanOf(clash.operation.source.path), clash.message, clash.hint));
  }
  return { policy: diagnostics.length > 0 ? undefined : policy, diagnostics: [...diagnostics, ...findings] };
}

/** Loads, validates and resolves one policy text. */
export function checkPolicyText(
  file: string,
  text: string,
  project: ProjectContext = {},
): { policy: ResolvedPolicy | undefined; diagnostics: Diagnostic[] } {
  const loaded = loadYaml(file, text);
  if (!loaded.ok) return { policy: undefined, diagnostics: [...loaded.diagnostics] };
  const result = checkPolicySource(loaded.source, project);
  return { policy: result.policy, diagnostics: sortDiagnostics(result.diagnostics) };
}

/**
 * Loads, validates, resolves and analyzes several policy texts together, as `check` does for
 * files (the docs generator and tests use it). The analyzer runs on the policies without errors.
 */
export function checkTexts(
  files: readonly { readonly file: string; readonly text: string }[],
  project: ProjectContext = {},
): { policies: ResolvedPolicy[]; services: ResolvedService[]; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const policies: ResolvedPolicy[] = [];
  const services: ResolvedService[] = [];
  const documents = new Map<string, SourceDocument>();
  for (const { file, text } of files) {
    const loaded = loadYaml(file, text);
    diagnostics.push(...loaded.diagnostics);
    if (loaded.ok) documents.set(file, loaded.source);
  }
  // the OpenAPI descriptions the policies name, loaded first: their files are not policies
  const descriptions = new Map<string, DocumentSet | null>();
  for (const [file, source] of documents) {
    const named = documentOf(source.data);
    if (named === undefined || isOpenApiDocument(source.data) || isServiceDocument(source)) continue;
    const target = posix.normalize(posix.join(posix.dirname(file), named));
    if (descriptions.has(target)) continue;
    const root = documents.get(target);
    if (root === undefined) {
      descriptions.set(target, null);
      continue;
    }
    const set = new DocumentSet(root, target, (from, ref) => posix.normalize(posix.join(posix.dirname(from), refFile(ref))));
    const walk = gatherDocuments(set);
    for (let step = walk.next(); !step.done; ) {
      const given = files.some((f) => f.file === step.value);
      step = walk.next(documents.get(step.value) ?? (given ? `${step.value} could not be read as YAML or JSON` : "no such file"));
    }
    descriptions.set(target, set);
  }
  const described = new Set([...descriptions.values()].flatMap((set) => set?.keys ?? []));
  for (const [file, source] of documents) {
    // OpenAPI documents (and the files of one) among the texts are read by the policies that name them
    if (isOpenApiDocument(source.data) || described.has(file)) continue;
    if (isServiceDocument(source)) {
      const checked = checkServiceSource(source, project);
      diagnostics.push(...checked.diagnostics);
      if (checked.service) services.push(checked.service);
      continue;
    }
    const named = documentOf(source.data);
    let openapi: DocumentSet | null | undefined;
    if (named !== undefined) {
      const target = posix.normalize(posix.join(posix.dirname(file), named));
      openapi = descriptions.get(target) ?? null;
      if (!openapi && !files.some((f) => f.file === target)) {
        const at = typeof (source.data as Record<string, unknown>)["openapi"] === "string" ? ["openapi"] : ["openapi", "document"];
        diagnostics.push(diagnostic("RG601", file, source.spanOf(at), `cannot read the OpenAPI document ${target}: no such file`, "the path is relative to the policy file"));
      }
    }
    const result = checkPolicySource(source, project, openapi);
    diagnostics.push(...result.diagnostics);
    if (result.policy) policies.push(result.policy);
  }
  diagnostics.push(...analyze(policies, contextFromDocuments(documents, () => project.config?.checks)));
  diagnostics.push(...analyzeServices(services, policies, contextFromDocuments(documents)));
  return { policies, services, diagnostics: sortDiagnostics(diagnostics) };
}

/** A file that was not read or parsed, and why. */
interface Unread {
  readonly reason: string;
  readonly read: boolean;
  readonly code: ReadCode;
  readonly hint?: string;
}

/** The project root of a policy file: the folder of its project file, else its own folder. */
function projectRoot(file: string, config: string | undefined): string {
  return dirname(config ?? file);
}
