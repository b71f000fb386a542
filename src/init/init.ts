/**
 * `resgen init`: scaffolds resgen in a project (docs/quickstart.md). It plans first and writes
 * last: every input is validated, and the project is checked as `resgen build` will read it with
 * the new files in place, before anything is written. It never overwrites a file: an existing
 * one is left alone and reported as skipped, and `.gitattributes` and `.prettierignore` only get
 * the lines they do not have yet. Should a write fail, what it wrote is taken back.
 */
import {
  appendFile,
  lstat,
  mkdir,
  realpath,
  rm,
  stat,
  truncate,
  writeFile,
} from "node:fs/promises";
import { existsSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { DEFAULT_OUT } from "../build/build.js";
import { countBySeverity, type Diagnostic } from "../diagnostics/diagnostic.js";
import { SourceTexts } from "../diagnostics/format.js";
import { loadYaml } from "../language/parse.js";
import { NAME_PATTERN, ProjectConfig } from "../language/schema.js";
import { validate } from "../language/validate.js";
import { moduleName } from "../model/identifiers.js";
import { checkProgram } from "../program/check.js";
import { CONFIG_FILE, DEFAULT_POLICY_GLOB } from "../source/inputs.js";
import { isWithin, readInput } from "../source/read.js";
import { runAsync } from "../source/task.js";
import { overlayHost } from "../source/overlay.js";
import { detectTools } from "./project.js";
import {
  baseUrlPolicy,
  configText,
  eslintConfigText,
  eslintLines,
  openApiPolicy,
  templatePolicy,
} from "./templates.js";

export interface InitOptions {
  /** Where relative paths start (the working directory). */
  readonly cwd: string;
  /** The project folder; defaults to `cwd`. It must exist. */
  readonly dir?: string | undefined;
  /** An OpenAPI description the first policy takes its operations from. */
  readonly openapi?: string | undefined;
  /** The base URL of the dependency: the first policy is hand-written, with one GET operation. */
  readonly baseUrl?: string | undefined;
  /** The dependency's name; by default from the URL's host or the description's file name. */
  readonly name?: string | undefined;
  /** `runtime:` of the project file it writes (docs/runtime-package.md). */
  readonly runtime?: "vendored" | "package" | undefined;
  /** `platform:` of the project file it writes (docs/platforms.md). */
  readonly platform?: "node" | "web" | undefined;
}

/** One file of the plan, by absolute path. */
export type Step =
  | { readonly kind: "write"; readonly file: string; readonly text: string }
  | { readonly kind: "append"; readonly file: string; readonly lines: readonly string[] }
  | { readonly kind: "skip"; readonly file: string; readonly reason: string };

export interface InitPlan {
  readonly ok: true;
  readonly dir: string;
  readonly steps: readonly Step[];
  readonly dependency: string;
  /** The policy file, absolute, and the operations of the client it makes (when init writes it). */
  readonly policy: string;
  readonly operations: readonly string[];
  /** The output folder, absolute. */
  readonly out: string;
  readonly baseUrl: string | undefined;
  /** Lines to add to the project's own ESLint config, when init does not write one. */
  readonly eslintLines: readonly string[] | undefined;
  /** Whether the clients import the runtime from the package, which makes resgen a dependency. */
  readonly runtimePackage: boolean;
  /** Whether package.json says `"type": "module"`, as the generated ES modules need under NodeNext. */
  readonly esm: boolean;
  /** What to install for the ESLint config init writes, when package.json does not have it. */
  readonly install: readonly string[];
  /** Findings of the check (warnings in the new files; anything in files that were there). */
  readonly diagnostics: readonly Diagnostic[];
  readonly sources: SourceTexts;
}

export interface InitRefusal {
  readonly ok: false;
  /** 2: a usage error (bad arguments, missing files); 1: the check found errors in the new files. */
  readonly exit: 1 | 2;
  readonly message: string;
  readonly diagnostics: readonly Diagnostic[];
  readonly sources: SourceTexts;
}

const refuse = (
  exit: 1 | 2,
  message: string,
  diagnostics: readonly Diagnostic[] = [],
  sources = new SourceTexts(),
): InitRefusal => ({ ok: false, exit, message, diagnostics, sources });

/** Plans `init` in `options.dir`; writes nothing. */
export async function planInit(options: InitOptions): Promise<InitPlan | InitRefusal> {
  const dir = resolve(options.cwd, options.dir ?? ".");
  const shown = (file: string) => relative(options.cwd, file).split(sep).join("/") || ".";
  if (!existsSync(dir)) return refuse(2, `${options.dir ?? dir}: no such folder`);
  if (!statSync(dir).isDirectory()) return refuse(2, `${options.dir ?? dir}: not a folder`);

  let baseUrl: string | undefined;
  let host: string | undefined;
  if (options.baseUrl !== undefined) {
    const url = parseBaseUrl(options.baseUrl);
    if (typeof url === "string") return refuse(2, `--base-url ${options.baseUrl}: ${url}`);
    baseUrl = url.pathname === "/" ? url.origin : url.origin + url.pathname.replace(/\/$/, "");
    host = url.hostname;
  }

  let openapi: string | undefined;
  if (options.openapi !== undefined) {
    openapi = resolve(options.cwd, options.openapi);
    if (!existsSync(openapi)) return refuse(2, `--openapi ${options.openapi}: no such file`);
    if (!statSync(openapi).isFile()) return refuse(2, `--openapi ${options.openapi}: not a file`);
    if (!isWithin(await realpath(dir), await realpath(openapi)))
      return refuse(
        2,
        `--openapi ${options.openapi}: outside the project folder ${shown(dir)}; resgen reads only files inside the project (docs/security.md): copy the description into it`,
      );
  }

  const name =
    options.name ??
    (host !== undefined
      ? nameFromHost(host)
      : openapi !== undefined
        ? nameFromFile(openapi)
        : "example");
  if (name === undefined)
    return refuse(
      2,
      `cannot tell the dependency's name from ${options.baseUrl ?? options.openapi ?? ""}: give it with --name <dependency>`,
    );
  if (!new RegExp(NAME_PATTERN).test(name))
    return refuse(
      2,
      `--name ${name}: a dependency's name is a letter, then letters, digits, - or _ (docs/policy.md)`,
    );

  // the project file: the one there, or a new one
  const steps: Step[] = [];
  const added = new Map<string, string>();
  const config = join(dir, CONFIG_FILE);
  let policies = DEFAULT_POLICY_GLOB;
  let out = DEFAULT_OUT;
  if (options.runtime === "package" && options.platform === "web")
    return refuse(
      2,
      "--runtime package cannot be used with --platform web: the packaged runtime keeps ambient deadlines in AsyncLocalStorage (RG308)",
    );
  let runtimePackage = options.runtime === "package";
  if (existsSync(config)) {
    const read = await readInput(config);
    if (!("text" in read)) return refuse(2, `${shown(config)}: ${read.problem}`);
    const sources = new SourceTexts();
    sources.set(shown(config), read.text);
    const loaded = loadYaml(shown(config), read.text);
    const validated = loaded.ok ? validate(ProjectConfig, loaded.source) : undefined;
    const problems = [...loaded.diagnostics, ...(validated?.diagnostics ?? [])];
    if (validated?.value === undefined || countBySeverity(problems).errors > 0)
      return refuse(1, `${shown(config)} has errors: fix them first`, problems, sources);
    const globs = validated.value.policies ?? DEFAULT_POLICY_GLOB;
    policies = typeof globs === "string" ? globs : globs[0]!;
    out = validated.value.out ?? DEFAULT_OUT;
    // init never edits the project file: a setting it would change is the user's to make
    const differs = [
      ["runtime", options.runtime, validated.value.runtime ?? "vendored"],
      ["platform", options.platform, validated.value.platform ?? "node"],
    ].find(([, asked, has]) => asked !== undefined && asked !== has);
    if (differs !== undefined)
      return refuse(
        2,
        `${shown(config)} exists and says ${differs[0] ?? ""}: ${differs[2] ?? ""}: set ${differs[0] ?? ""}: ${differs[1] ?? ""} in it yourself (docs/policy.md, "The project file")`,
      );
    runtimePackage = validated.value.runtime === "package";
    steps.push({ kind: "skip", file: config, reason: "it exists; its policies and out are used" });
  } else {
    const text = configText(policies, out, {
      ...(options.runtime === undefined ? {} : { runtime: options.runtime }),
      ...(options.platform === undefined ? {} : { platform: options.platform }),
    });
    steps.push({ kind: "write", file: config, text });
    added.set(config, text);
  }

  // the first policy, where the project's glob will find it
  const { folder, suffix } = policyPlace(policies);
  const policy = join(dir, folder, moduleName(name) + suffix);
  const outDir = resolve(dir, out);
  const schemaFrom = (file: string, schema: string) =>
    posix(relative(dirname(file), join(dir, "node_modules/resgen/schema", schema)));
  const policyText = (operations: readonly string[]) => {
    const common = { name, schema: schemaFrom(policy, "policy.schema.json"), out };
    if (openapi !== undefined) {
      const ref = posix(relative(dirname(policy), openapi));
      return openApiPolicy({
        ...common,
        openapi: ref.startsWith(".") ? ref : `./${ref}`,
        operations,
      });
    }
    return baseUrl !== undefined ? baseUrlPolicy({ ...common, baseUrl }) : templatePolicy(common);
  };
  const policyLink = await linkOnTheWay(dir, policy);
  let policyStep: number | undefined;
  if (policyLink !== undefined) {
    steps.push({ kind: "skip", file: policy, reason: `${shown(policyLink)} is a symbolic link` });
  } else if (existsSync(policy)) {
    steps.push({ kind: "skip", file: policy, reason: "it exists" });
  } else {
    policyStep = steps.push({ kind: "write", file: policy, text: policyText([]) }) - 1;
    added.set(policy, policyText([]));
  }

  // check the project as `resgen build` will read it, before writing anything
  const checked = await runAsync(checkProgram(overlayHost(options.cwd, added), [dir]));
  const resolved = checked.policies.find((p) => resolve(options.cwd, p.file) === policy);
  // an error in a file init writes, or one that keeps its policy from resolving (in the
  // description it names, say); errors only in files that were there are the project's own
  const refused =
    checked.diagnostics.some(
      (d) => d.severity === "error" && added.has(resolve(options.cwd, d.file)),
    ) ||
    (policyStep !== undefined &&
      resolved === undefined &&
      countBySeverity(checked.diagnostics).errors > 0);
  if (refused)
    return refuse(
      1,
      "nothing written: the new files would not pass resgen check",
      checked.diagnostics,
      checked.sources,
    );
  let operations: readonly string[] = [];
  if (policyStep !== undefined) {
    if (![...checked.files.values()].some((f) => f.absolute === policy))
      return refuse(
        2,
        `nothing written: ${shown(policy)} would not match the project's policies: ${policies}`,
      );
    operations = resolved?.operations.map((op) => op.name) ?? [];
    if (openapi !== undefined)
      steps[policyStep] = { kind: "write", file: policy, text: policyText(operations) };
  }

  // the output folder: generated for GitHub, ignored by the formatters the project uses
  const tools = await detectTools(dir);
  const outRel = posix(relative(dir, outDir));
  const inside = outRel !== "" && !outRel.startsWith("..") && !isAbsolute(outRel);
  const ignored = inside ? outRel : undefined;
  const eslintFile = tools.esm ? "eslint.config.js" : "eslint.config.mjs";
  let lines: readonly string[] | undefined;
  const install: string[] = [];
  if (tools.eslintConfig !== undefined) {
    steps.push({
      kind: "skip",
      file: join(dir, tools.eslintConfig),
      reason: "it exists; add the lines below to it",
    });
    lines = eslintLines(ignored);
  } else if (tools.eslintLegacy !== undefined) {
    steps.push({
      kind: "skip",
      file: join(dir, tools.eslintLegacy),
      reason: `ESLint is configured there the legacy way; the plugin needs a flat config (ESLint 9 or 10): move to ${eslintFile}, with the lines below`,
    });
    lines = eslintLines(ignored);
  } else {
    steps.push(await writeNew(dir, join(dir, eslintFile), eslintConfigText(eslintFile, ignored)));
    install.push(
      ...["eslint", "@typescript-eslint/parser"].filter((p) => !tools.dependencies.has(p)),
    );
  }
  if (inside) {
    const gitattributes = `${outRel}/** linguist-generated=true`;
    steps.push(
      await addLines(
        dir,
        join(dir, ".gitattributes"),
        gitattributes,
        (line) =>
          sameIgnore(line.split(/\s+/)[0] ?? "", outRel) && /\blinguist-generated\b/.test(line),
      ),
    );
    if (tools.prettier)
      steps.push(
        await addLines(dir, join(dir, ".prettierignore"), `${outRel}/`, (line) =>
          sameIgnore(line, outRel),
        ),
      );
  } else {
    steps.push({
      kind: "skip",
      file: join(dir, ".gitattributes"),
      reason: `the output folder ${out} is not inside the project`,
    });
  }

  return {
    ok: true,
    dir,
    steps,
    dependency: name,
    policy,
    operations,
    out: outDir,
    baseUrl,
    eslintLines: lines,
    runtimePackage,
    esm: tools.esm,
    install,
    diagnostics: checked.diagnostics,
    sources: checked.sources,
  };
}

/** Carries out the plan's writes and appends; on a failure, takes back what it did and says why. */
export async function applyInit(
  plan: InitPlan,
): Promise<{ file: string; reason: string } | undefined> {
  const undo: (() => Promise<void>)[] = [];
  for (const step of plan.steps) {
    try {
      if (step.kind === "write") {
        const created = await mkdir(dirname(step.file), { recursive: true });
        if (created !== undefined) undo.push(() => rm(created, { recursive: true, force: true }));
        // "wx": fails rather than replace a file that appeared since the plan was made
        await writeFile(step.file, step.text, { flag: "wx" });
        undo.push(() => rm(step.file, { force: true }));
      } else if (step.kind === "append") {
        const size = existsSync(step.file) ? (await stat(step.file)).size : 0;
        const before = size > 0 ? await readInput(step.file) : { text: "" };
        const text = "text" in before ? before.text : "";
        const lead = text === "" || text.endsWith("\n") ? "" : "\n";
        await appendFile(step.file, lead + step.lines.map((l) => l + "\n").join(""));
        undo.push(() => (size === 0 ? rm(step.file, { force: true }) : truncate(step.file, size)));
      }
    } catch (error) {
      for (const back of undo.reverse()) await back().catch(() => undefined);
      const reason = error instanceof Error ? error.message : String(error);
      return { file: step.file, reason };
    }
  }
  return undefined;
}

/** A base URL: http or https, no credentials, query or fragment (the client appends paths). */
function parseBaseUrl(text: string): URL | string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "not a URL; write it like https://inventory.internal or http://127.0.0.1:8080";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    return `the scheme is ${url.protocol.slice(0, -1)}; the client speaks http and https`;
  if (url.username !== "" || url.password !== "")
    return "credentials do not belong in a base URL: pass them in the client's headers";
  if (url.search !== "" || url.hash !== "")
    return "a base URL has no query or fragment: the client appends each operation's path";
  return url;
}

/** `inventory.internal` → inventory; `api.stripe.com` → stripe; an address or localhost: none. */
function nameFromHost(host: string): string | undefined {
  if (/^[0-9.]+$/.test(host) || host.startsWith("[") || host === "localhost") return undefined;
  const labels = host.split(".");
  const label = labels.find((l) => !["www", "api"].includes(l)) ?? labels[0]!;
  return new RegExp(NAME_PATTERN).test(label) ? label : undefined;
}

/** `payments.openapi.yaml` → payments; a file called just `openapi.yaml`: none. */
function nameFromFile(file: string): string | undefined {
  const stem = basename(file)
    .replace(/\.(ya?ml|json)$/i, "")
    .replace(/[.-](openapi|swagger|api)$/i, "");
  return ["openapi", "swagger", "api"].includes(stem.toLowerCase()) ||
    !new RegExp(NAME_PATTERN).test(stem)
    ? undefined
    : stem;
}

/**
 * The folder a glob's policies are in (its segments before the first with a wildcard), and the
 * end of their names: `resilience/*.yaml` → `resilience`, `.yaml`.
 */
function policyPlace(glob: string): { folder: string; suffix: string } {
  const segments = glob.split("/");
  const last = segments.pop() ?? "";
  const wild = /[*?[\]{}]/;
  const fixed: string[] = [];
  for (const s of segments) {
    if (wild.test(s)) break;
    fixed.push(s);
  }
  const end = /^\*([^*?[\]{}]*)$/.exec(last)?.[1];
  return { folder: fixed.join("/"), suffix: end !== undefined && end !== "" ? end : ".yaml" };
}

/** A new file, unless there is one (or a link on the way to it). */
async function writeNew(dir: string, file: string, text: string): Promise<Step> {
  const link = await linkOnTheWay(dir, file);
  if (link !== undefined)
    return { kind: "skip", file, reason: "a symbolic link is on the way to it" };
  if (existsSync(file)) return { kind: "skip", file, reason: "it exists" };
  return { kind: "write", file, text };
}

/** `line` for a line-based file: created, appended to, or skipped when a line says it already. */
async function addLines(
  dir: string,
  file: string,
  line: string,
  has: (line: string) => boolean,
): Promise<Step> {
  if ((await linkOnTheWay(dir, file)) !== undefined)
    return { kind: "skip", file, reason: "a symbolic link is on the way to it" };
  if (!existsSync(file)) return { kind: "write", file, text: line + "\n" };
  const read = await readInput(file);
  if (!("text" in read)) return { kind: "skip", file, reason: read.problem };
  if (read.text.split(/\r?\n/).some((l) => has(l.trim())))
    return {
      kind: "skip",
      file,
      reason: `it has the line for ${posix(line.split(" ")[0]!)} already`,
    };
  return { kind: "append", file, lines: [line] };
}

/** Whether an ignore pattern names the folder `folder` (with or without `/`, a leading `/`, or `/**`). */
function sameIgnore(pattern: string, folder: string): boolean {
  const bare = (p: string) => p.replace(/^\//, "").replace(/\/(\*\*)?$/, "");
  return bare(pattern) === bare(folder);
}

/** The first symbolic link among `file` and its folders below `dir`, if any. */
async function linkOnTheWay(dir: string, file: string): Promise<string | undefined> {
  const parts = relative(dir, file).split(sep);
  let current = dir;
  for (const part of parts) {
    current = join(current, part);
    try {
      if ((await lstat(current)).isSymbolicLink()) return current;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

function posix(path: string): string {
  return path.split(sep).join("/");
}
