/**
 * Reading and parsing the files of one run through its host: each file is read once however
 * often it is asked for (a policy input may also be a file of an OpenAPI description), its text
 * registered for code frames, its YAML problems reported once.
 */
import { diagnostic, type DiagnosticSink } from "../diagnostics/diagnostic.js";
import { SourceTexts } from "../diagnostics/format.js";
import { loadYaml, SourceDocument } from "../language/parse.js";
import { ProjectConfig, type ProjectConfigInput } from "../language/schema.js";
import { validate } from "../language/validate.js";
import type { Host } from "../source/host.js";
import { displayPath } from "../source/inputs.js";
import type { ReadCode, ReadOutcome } from "../source/read.js";
import { wait, type Maybe, type Task } from "../source/task.js";

/** A project file that was read and is valid. */
export interface Project {
  /** Absolute path of resgen.config.yaml. */
  readonly file: string;
  readonly config: ProjectConfigInput;
}

/** A file that was not read or parsed, and why. */
export interface Unread {
  readonly reason: string;
  /** Whether the file was read (its problems then being findings of their own, already reported). */
  readonly read: boolean;
  /** The code that reports a file that was not read. */
  readonly code: ReadCode;
  readonly hint?: string;
}

/** The files of one run, read through `host`, with what they hold. */
export class Loader {
  /** Texts of the files read, by displayed path, for formatting diagnostics. */
  readonly sources = new SourceTexts();
  /** The parsed files, by displayed path. */
  readonly documents = new Map<string, SourceDocument>();
  private readonly reads = new Map<string, Maybe<ReadOutcome>>();
  private readonly parsed = new Map<string, SourceDocument | Unread>();
  private readonly projectFiles = new Map<string, Project | undefined>();

  constructor(
    readonly host: Host,
    private readonly sink: DiagnosticSink,
    private readonly allowOutsideProject: boolean,
  ) {}

  /** `file` as diagnostics name it: relative to the working directory. */
  shown(file: string): string {
    return displayPath(file, this.host.cwd);
  }

  /**
   * Starts reading `file` without waiting for it. Policy files are all started at once: read one
   * at a time, a large project would wait on the disk most of the time.
   */
  prefetch(file: string): void {
    if (!this.reads.has(file)) this.reads.set(file, this.host.readFile(file));
  }

  /**
   * `file` read as YAML (or JSON) and registered for positions, or why not. With a `root`, a file
   * outside it is never read (unless outside files are allowed), so nothing of it can appear in
   * a code frame.
   */
  *document(file: string, root?: string): Task<SourceDocument | Unread> {
    if (
      root !== undefined &&
      !this.allowOutsideProject &&
      !(yield* wait(this.host.isInside(root, file)))
    ) {
      return {
        reason: "it is outside the project",
        read: false,
        code: "RG115",
        hint: `the project root is ${this.shown(root) || "."}; pass --allow-outside-project to read files outside it`,
      };
    }
    const known = this.parsed.get(file);
    if (known !== undefined) return known;
    this.prefetch(file);
    const read = yield* wait(this.reads.get(file)!);
    const again = this.parsed.get(file);
    if (again !== undefined) return again;
    let result: SourceDocument | Unread;
    const shown = this.shown(file);
    if ("problem" in read) result = { reason: read.problem, read: false, code: read.code };
    else {
      this.sources.set(shown, read.text);
      const loaded = loadYaml(shown, read.text);
      this.sink.report(loaded.diagnostics);
      if (loaded.ok) {
        this.documents.set(shown, loaded.source);
        result = loaded.source;
      } else
        result = {
          reason: `${shown} could not be read as YAML or JSON`,
          read: true,
          code: "RG004",
        };
    }
    this.parsed.set(file, result);
    return result;
  }

  /** A file given to the command (a policy, a project file): one not read is an error of its own (RG004, RG003, RG116). */
  *source(file: string): Task<SourceDocument | undefined> {
    const result = yield* this.document(file);
    if (result instanceof SourceDocument) return result;
    if (!result.read) {
      const shown = this.shown(file);
      this.sources.set(shown, "");
      this.sink.report(
        diagnostic(
          result.code,
          shown,
          { start: 0, end: 0 },
          `cannot read ${shown}: ${result.reason}`,
          result.hint,
        ),
      );
    }
    return undefined;
  }

  /** The project file `file`, read and validated once; undefined when it is unreadable or invalid (reported). */
  *project(file: string): Task<Project | undefined> {
    if (this.projectFiles.has(file)) return this.projectFiles.get(file);
    const source = yield* this.source(file);
    let project: Project | undefined;
    if (source) {
      const result = validate(ProjectConfig, source);
      this.sink.report(result.diagnostics);
      if (result.value?.platform === "web" && result.value.runtime === "package") {
        this.sink.report(
          diagnostic(
            "RG308",
            this.shown(file),
            source.spanOf(["runtime"]),
            "`runtime: package` cannot be used with `platform: web`: the packaged runtime keeps ambient deadlines in AsyncLocalStorage",
            "remove `runtime: package`: under `platform: web` the runtime is written into the output folder",
          ),
        );
      }
      if (result.value) project = { file, config: result.value };
    }
    this.projectFiles.set(file, project);
    return project;
  }

  /** The project files read that were valid, by absolute path. */
  projects(): Map<string, Project> {
    return new Map(
      [...this.projectFiles].filter((e): e is [string, Project] => e[1] !== undefined),
    );
  }
}
