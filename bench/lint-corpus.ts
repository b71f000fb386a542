// How the ESLint plugin does on real public code: `npm run bench:lint-corpus -- [corpus.tsv]
// [scratch dir]`. docs/eslint-plugin.md ("Measured on real code") has the latest figures.
//
// The corpus is a TSV of labelled locations (id, repo, path, commit, lines, rule, expected,
// reasoning): each row says whether a correct rule reports inside `lines` of `path` at `commit`.
// The files are not in this repository, so this is not part of `npm test`. For each row this
// script lints the file as a user would meet it:
//
//   in its tree   when a bare git mirror of the repository (<mirrors>/<owner>+<name>/repo) has
//                 the pinned commit, the file's package folder (nearest package.json up from the
//                 file; only its source and JSON files, bounded in count and size) is extracted
//                 at that commit into the scratch folder, so relative imports resolve, with the
//                 repository's own packages it depends on (workspaceSiblings), mapped by name;
//   alone         otherwise the file <files>/<id>.<ext>, fetched beforehand, is linted by itself.
//
// Two configurations per row: `configs.recommended` with @typescript-eslint/parser and no type
// information, and `configs["recommended-type-checked"]` with a program built from a generated
// tsconfig that includes the file. The scratch folder has its own package.json with the HTTP,
// retry and breaker libraries' types a user would have installed (installed once with npm,
// reused after); linting itself reads only local files. Inline `eslint-disable` comments are
// ignored: the files' authors wrote them for other rules, and a bare `eslint-disable-next-line`
// would hide the finding being scored.
//
// A row counts as reported when a finding of its rule lies inside one of its line ranges, with
// 2 lines of slack, or 15 where the corpus marks the number `~` (estimated). LINE_OVERRIDES
// below replaces a row's ranges where the row's own text cannot be scored as written.
//
//   --files DIR    where <id>.<ext> files are for rows linted alone (default /tmp/corpus/files)
//   --mirrors DIR  bare git mirrors (default /work/.mirror)
//   --only IDS     comma-separated row ids
//   --plugin FILE  the plugin's entry module (default: this checkout's eslint-plugin/index.ts), to
//                  score another version of the rules, e.g. one exported with git archive
//   --json         print the result as JSON instead of the report
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import tsParser from "@typescript-eslint/parser";
import { Linter } from "eslint";
import type { ResgenPlugin } from "../eslint-plugin/index.js";

const RULE_OF: Readonly<Record<string, string>> = {
  "R1-timeout": "require-timeout",
  "R2-retry-write": "no-retry-non-idempotent",
  "R3-retry-breaker": "retry-inside-breaker",
};

/**
 * Rows whose `lines` column cannot be scored as written, with the ranges used instead. Every
 * entry says why; the labels themselves are never changed here.
 */
const LINE_OVERRIDES: Readonly<Record<string, { readonly lines: string; readonly why: string }>> = {
  "HO-21": {
    lines: "12; 30; 48; 68; 88; 106; 128; 146; 166",
    why: "the row names the ServerAPI.get/put/delete calls 'below' line 12 without numbers; these are all ServerAPI calls in the file at the pinned commit",
  },
};

/** The libraries whose types a user of the rules would have; versions pinned for repeatability. */
const SCRATCH_DEPENDENCIES: Readonly<Record<string, string>> = {
  axios: "1.21.1",
  got: "16.1.0",
  "node-fetch": "3.3.2",
  undici: "8.12.4",
  ky: "2.1.0",
  "p-retry": "9.0.0",
  "async-retry": "1.3.3",
  "axios-retry": "4.5.0",
  "fetch-retry": "6.0.0",
  cockatiel: "4.0.0",
  opossum: "10.0.0",
  "@types/node": "20.19.43",
  "@types/async-retry": "1.4.9",
  "@types/opossum": "8.1.9",
  typescript: "5.9.3",
};

/** Bounds on a package folder extracted from a mirror; past them only the file's folder is. */
const MAX_TREE_FILES = 3000;
const MAX_TREE_BYTES = 40 * 1024 * 1024;
/** Workspace packages extracted beside the file's own, and package.json files read to find them. */
const MAX_SIBLINGS = 12;
const MAX_MANIFESTS = 400;
const SOURCE_FILE = /\.(?:[cm]?[jt]sx?|json)$/;
const CONFIGS = ["syntactic", "type-checked"] as const;
type ConfigName = (typeof CONFIGS)[number];

interface Row {
  readonly id: string;
  readonly repo: string;
  readonly file: string;
  readonly commit: string;
  readonly lines: string;
  readonly rule: string;
  readonly expected: "report" | "clean";
}

interface Placed {
  /** Absolute path of the file to lint, inside the scratch folder. */
  readonly abs: string;
  /** Root of the extracted tree (or of the lone file's folder), where the tsconfig goes. */
  readonly root: string;
  readonly source: "tree" | "alone";
  readonly note?: string;
  /** Workspace packages of the repository the file's package depends on: name → folder. */
  readonly siblings: Readonly<Record<string, string>>;
}

interface Finding {
  readonly rule: string;
  readonly line: number;
  readonly message: string;
}

interface LintResult {
  readonly findings: readonly Finding[];
  readonly parseError?: string;
}

type Outcome = "tp" | "fp" | "fn" | "tn";

interface RowResult {
  readonly said: "report" | "clean";
  readonly outcome: Outcome;
  readonly hits: readonly Finding[];
  /** Findings of the row's rule elsewhere in the file, to tell a misplaced finding from none. */
  readonly elsewhere: readonly number[];
  readonly parseError?: string;
}

const args = process.argv.slice(2);
const option = (name: string, fallback: string): string => {
  const at = args.indexOf(name);
  return at >= 0 && args[at + 1] !== undefined ? args[at + 1]! : fallback;
};
const positional = args.filter(
  (a, i) =>
    !a.startsWith("--") &&
    !["--files", "--mirrors", "--only", "--plugin"].includes(args[i - 1] ?? ""),
);
const corpusPath = path.resolve(positional[0] ?? "../shared/lint-corpus/corpus.tsv");
const scratch = path.resolve(positional[1] ?? "/tmp/resgen-lint-corpus");
const filesDir = path.resolve(option("--files", "/tmp/corpus/files"));
const mirrors = path.resolve(option("--mirrors", "/work/.mirror"));
const only = new Set(
  option("--only", "")
    .split(",")
    .filter((s) => s !== ""),
);
const asJson = args.includes("--json");
const pluginPath = path.resolve(
  option("--plugin", fileURLToPath(new URL("../eslint-plugin/index.ts", import.meta.url))),
);
const plugin = ((await import(pathToFileURL(pluginPath).href)) as { default: ResgenPlugin })
  .default;

main();

function main(): void {
  const started = Date.now();
  const rows = readCorpus(corpusPath).filter((r) => only.size === 0 || only.has(r.id));
  installScratch();
  const linter = new Linter({ cwd: scratch });
  const placed = new Map<string, Placed>();
  const lintCache = new Map<string, LintResult>();
  const results: Array<{
    row: Row;
    placed: Placed | null;
    ranges: ReadonlyArray<readonly [number, number]>;
    byConfig: Partial<Record<ConfigName, RowResult>>;
  }> = [];
  const elapsed: Record<ConfigName, number> = { syntactic: 0, "type-checked": 0 };

  for (const row of rows) {
    const key = `${row.repo}@${row.commit}:${row.file}`;
    let where = placed.get(key) ?? null;
    if (!where) {
      where = place(row);
      if (where) placed.set(key, where);
    }
    const ranges = rangesOf(LINE_OVERRIDES[row.id]?.lines ?? row.lines);
    const byConfig: Partial<Record<ConfigName, RowResult>> = {};
    if (where) {
      for (const config of CONFIGS) {
        const cacheKey = `${config}\0${where.abs}`;
        let result = lintCache.get(cacheKey);
        if (!result) {
          const t0 = performance.now();
          result = lint(linter, where, config === "type-checked");
          elapsed[config] += performance.now() - t0;
          lintCache.set(cacheKey, result);
        }
        byConfig[config] = score(row, ranges, result);
      }
    }
    results.push({ row, placed: where, ranges, byConfig });
  }

  const totals = {} as Record<ConfigName, Record<string, Record<Outcome | "missing", number>>>;
  for (const config of CONFIGS) {
    totals[config] = {};
    for (const { row, byConfig } of results) {
      const rule = RULE_OF[row.rule] ?? row.rule;
      const t = (totals[config][rule] ??= { tp: 0, fp: 0, fn: 0, tn: 0, missing: 0 });
      const r = byConfig[config];
      t[r ? r.outcome : "missing"]++;
    }
  }

  if (asJson) {
    const ratio = (a: number, b: number): number | null => (a + b === 0 ? null : a / (a + b));
    const out = {
      corpus: corpusPath,
      plugin: pluginPath,
      corpusSha256: createHash("sha256").update(fs.readFileSync(corpusPath)).digest("hex"),
      scratch,
      seconds: (Date.now() - started) / 1000,
      lintSeconds: {
        syntactic: elapsed.syntactic / 1000,
        "type-checked": elapsed["type-checked"] / 1000,
      },
      lineOverrides: LINE_OVERRIDES,
      totals: Object.fromEntries(
        CONFIGS.map((config) => [
          config,
          Object.fromEntries(
            Object.entries(totals[config]).map(([rule, t]) => [
              rule,
              { ...t, precision: ratio(t.tp, t.fp), recall: ratio(t.tp, t.fn) },
            ]),
          ),
        ]),
      ),
      rows: results.map(({ row, placed: where, ranges, byConfig }) => ({
        id: row.id,
        repo: row.repo,
        file: row.file,
        commit: row.commit,
        rule: RULE_OF[row.rule] ?? row.rule,
        expected: row.expected,
        ranges,
        source: where?.source ?? "missing",
        note: where?.note,
        results: byConfig,
      })),
    };
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return;
  }

  const pct = (a: number, b: number): string => (a + b === 0 ? "n/a" : (a / (a + b)).toFixed(2));
  const lines: string[] = [];
  lines.push(
    `corpus ${corpusPath} (${rows.length} rows), scratch ${scratch}`,
    `plugin ${pluginPath}`,
    `${results.filter((r) => r.placed?.source === "tree").length} rows linted in their tree, ${
      results.filter((r) => r.placed?.source === "alone").length
    } alone, ${results.filter((r) => !r.placed).length} missing`,
    "",
    "config        rule                       TP  FP  FN  TN  precision  recall",
  );
  for (const config of CONFIGS) {
    for (const [rule, t] of Object.entries(totals[config])) {
      lines.push(
        `${config.padEnd(13)} ${rule.padEnd(25)} ${[t.tp, t.fp, t.fn, t.tn]
          .map((n) => String(n).padStart(3))
          .join(" ")}  ${pct(t.tp, t.fp).padStart(9)}  ${pct(t.tp, t.fn).padStart(6)}${
          t.missing ? `  (${t.missing} missing)` : ""
        }`,
      );
    }
    const all = Object.values(totals[config]).reduce(
      (a, t) => ({ tp: a.tp + t.tp, fp: a.fp + t.fp, fn: a.fn + t.fn, tn: a.tn + t.tn }),
      { tp: 0, fp: 0, fn: 0, tn: 0 },
    );
    lines.push(
      `${config.padEnd(13)} ${"all".padEnd(25)} ${[all.tp, all.fp, all.fn, all.tn]
        .map((n) => String(n).padStart(3))
        .join(" ")}  ${pct(all.tp, all.fp).padStart(9)}  ${pct(all.tp, all.fn).padStart(6)}`,
    );
  }
  for (const config of CONFIGS) {
    lines.push("", `False positives and false negatives, ${config}:`);
    for (const { row, byConfig } of results) {
      const r = byConfig[config];
      if (!r || r.outcome === "tp" || r.outcome === "tn") continue;
      const rule = RULE_OF[row.rule] ?? row.rule;
      const where = `${row.file}:${(LINE_OVERRIDES[row.id]?.lines ?? row.lines).replace(/\s*\([^)]*\)/g, "")}`;
      if (r.outcome === "fp") {
        for (const hit of r.hits) {
          lines.push(`  FP ${row.id} ${rule} ${row.file}:${hit.line}  ${hit.message}`);
        }
      } else {
        const seen = r.elsewhere.length
          ? ` (this rule reports at lines ${r.elsewhere.join(", ")})`
          : "";
        const parse = r.parseError ? ` [parse error: ${r.parseError}]` : "";
        lines.push(`  FN ${row.id} ${rule} ${where}  no finding in range${seen}${parse}`);
      }
    }
  }
  lines.push("", "Rows:");
  for (const { row, placed: where, byConfig } of results) {
    const cell = (c: ConfigName): string => {
      const r = byConfig[c];
      return r
        ? `${r.said}${r.outcome === "fp" || r.outcome === "fn" ? ` (${r.outcome.toUpperCase()})` : ""}`
        : "missing";
    };
    lines.push(
      `  ${row.id} ${(RULE_OF[row.rule] ?? row.rule).padEnd(24)} expected ${row.expected.padEnd(6)}  syntactic ${cell(
        "syntactic",
      ).padEnd(
        11,
      )}  type-checked ${cell("type-checked").padEnd(11)}  ${where?.source ?? "missing"}${
        where?.note ? ` (${where.note})` : ""
      }${LINE_OVERRIDES[row.id] ? " [lines overridden]" : ""}`,
    );
  }
  lines.push(
    "",
    `lint time: syntactic ${(elapsed.syntactic / 1000).toFixed(1)} s, type-checked ${(
      elapsed["type-checked"] / 1000
    ).toFixed(1)} s; total ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  process.stdout.write(`${lines.join("\n")}\n`);
}

/** Parses the corpus TSV; the header row names the columns. */
function readCorpus(file: string): Row[] {
  const [header, ...body] = fs.readFileSync(file, "utf8").trimEnd().split("\n");
  const columns = (header ?? "").split("\t");
  const at = (name: string): number => {
    const i = columns.indexOf(name);
    if (i < 0) throw new Error(`${file}: no column ${name}`);
    return i;
  };
  const [id, repo, p, commit, lines, rule, expected] = [
    "id",
    "repo",
    "path",
    "commit",
    "lines",
    "rule",
    "expected",
  ].map(at) as [number, number, number, number, number, number, number];
  return body.map((line) => {
    const cells = line.split("\t");
    const verdict = cells[expected];
    if (verdict !== "report" && verdict !== "clean") {
      throw new Error(`${file}: row ${cells[id] ?? "?"} has expected=${verdict ?? ""}`);
    }
    return {
      id: cells[id] ?? "",
      repo: cells[repo] ?? "",
      file: cells[p] ?? "",
      commit: cells[commit] ?? "",
      lines: cells[lines] ?? "",
      rule: cells[rule] ?? "",
      expected: verdict,
    };
  });
}

/**
 * Line ranges with their slack: `12`, `37-51`, `~490-505` (both ends estimated) and `356-~410`
 * (only the end estimated), separated by `;`, with free text in parentheses ignored.
 */
function rangesOf(spec: string): Array<readonly [number, number]> {
  const out: Array<readonly [number, number]> = [];
  for (const m of spec.replace(/\([^)]*\)/g, "").matchAll(/(~?)(\d+)(?:\s*-\s*(~?)(\d+))?/g)) {
    const [, startEstimated, a, endEstimated, b] = m;
    const start = Number(a);
    const end = b === undefined ? start : Number(b);
    out.push([start - (startEstimated ? 15 : 2), end + (startEstimated || endEstimated ? 15 : 2)]);
  }
  return out;
}

function git(gitDir: string, argv: readonly string[], input?: Buffer): Buffer | null {
  const r = spawnSync("git", [`--git-dir=${gitDir}`, ...argv], {
    maxBuffer: 512 * 1024 * 1024,
    ...(input ? { input } : {}),
  });
  return r.status === 0 ? r.stdout : null;
}

/** Puts the row's file into the scratch folder: its package folder from a mirror, or alone. */
function place(row: Row): Placed | null {
  const slug = `${row.repo.replace("/", "+")}@${row.commit.slice(0, 12)}`;
  const mirror = path.join(mirrors, row.repo.replace("/", "+"), "repo");
  const hasCommit =
    fs.existsSync(mirror) && git(mirror, ["cat-file", "-e", `${row.commit}:${row.file}`]) !== null;
  if (hasCommit) {
    const root = path.join(scratch, "trees", slug);
    const abs = path.join(root, row.file);
    const pkg = packageFolder(mirror, row.commit, row.file);
    const siblings = workspaceSiblings(mirror, row.commit, pkg);
    const folders = [pkg, ...Object.values(siblings)];
    const marker = path.join(
      root,
      `.extracted-${createHash("sha1").update(folders.join("\n")).digest("hex")}`,
    );
    let note: string | undefined = pkg === "" ? "package root: repository root" : `package ${pkg}`;
    const names = Object.keys(siblings);
    if (names.length > 0) note += `, with workspace packages ${names.join(", ")}`;
    if (!fs.existsSync(marker)) {
      const listing = treeFiles(mirror, row.commit, pkg);
      let files = listing.files;
      if (listing.files.length > MAX_TREE_FILES || listing.bytes > MAX_TREE_BYTES) {
        files = treeFiles(mirror, row.commit, path.posix.dirname(row.file), false).files;
        note = `package ${pkg || "(root)"} too large; the file's folder only`;
      }
      let bytes = listing.bytes;
      for (const folder of Object.values(siblings)) {
        const more = treeFiles(mirror, row.commit, folder);
        if (files.length + more.files.length > MAX_TREE_FILES) break;
        if (bytes + more.bytes > MAX_TREE_BYTES) break;
        files = files.concat(more.files);
        bytes += more.bytes;
      }
      if (!files.includes(row.file)) files.push(row.file);
      fs.mkdirSync(root, { recursive: true });
      const tar = git(mirror, ["archive", "--format=tar", row.commit, "--", ...files]);
      if (!tar) throw new Error(`git archive failed for ${row.id}`);
      const x = spawnSync("tar", ["-x", "-C", root], { input: tar, maxBuffer: 1024 * 1024 });
      if (x.status !== 0) throw new Error(`tar failed for ${row.id}: ${x.stderr.toString()}`);
      fs.writeFileSync(marker, `${files.length} files\n`);
    }
    return { abs, root, source: "tree", note, siblings };
  }
  const lone = fs.existsSync(filesDir)
    ? fs.readdirSync(filesDir).find((f) => f.startsWith(`${row.id}.`))
    : undefined;
  if (!lone) return null;
  const root = path.join(scratch, "alone", slug);
  const abs = path.join(root, row.file);
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  fs.copyFileSync(path.join(filesDir, lone), abs);
  const reason = fs.existsSync(mirror) ? "pinned commit not in the mirror" : "no mirror";
  return { abs, root, source: "alone", note: reason, siblings: {} };
}

/**
 * The packages of the repository's workspace that the file's package depends on, directly or
 * through each other (at most MAX_SIBLINGS): in a monorepo checkout they are linked (or mapped by
 * the repository's tsconfig `paths`), so a user's type checker reads their sources.
 */
function workspaceSiblings(
  mirror: string,
  commit: string,
  pkg: string,
): Readonly<Record<string, string>> {
  if (pkg === "") return {};
  const manifests = new Map<string, string>();
  const listing = git(mirror, ["ls-tree", "-r", "--name-only", "--full-tree", commit]);
  for (const file of (listing ?? Buffer.alloc(0)).toString("utf8").split("\n")) {
    if (!/(^|\/)package\.json$/.test(file) || file.includes("node_modules/")) continue;
    if (manifests.size >= MAX_MANIFESTS) break;
    const manifest = readManifest(mirror, commit, file);
    if (manifest?.name) manifests.set(manifest.name, path.posix.dirname(file));
  }
  const found: Record<string, string> = {};
  const queue = [pkg];
  while (queue.length > 0 && Object.keys(found).length < MAX_SIBLINGS) {
    const folder = queue.shift()!;
    const manifest = readManifest(mirror, commit, `${folder}/package.json`);
    for (const name of dependencyNames(manifest)) {
      const dir = manifests.get(name);
      if (dir === undefined || dir === pkg || dir === "." || name in found) continue;
      if (Object.keys(found).length >= MAX_SIBLINGS) break;
      found[name] = dir;
      queue.push(dir);
    }
  }
  return found;
}

interface Manifest {
  readonly name?: string;
  readonly dependencies?: Record<string, string>;
  readonly devDependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
}

function readManifest(mirror: string, commit: string, file: string): Manifest | null {
  const text = git(mirror, ["show", `${commit}:${file}`]);
  if (!text) return null;
  try {
    return JSON.parse(text.toString("utf8")) as Manifest;
  } catch {
    return null;
  }
}

function dependencyNames(manifest: Manifest | null): string[] {
  if (!manifest) return [];
  return [
    ...Object.keys(manifest.dependencies ?? {}),
    ...Object.keys(manifest.peerDependencies ?? {}),
    ...Object.keys(manifest.devDependencies ?? {}),
  ];
}

/** The nearest folder at or above the file that has a package.json at that commit ("" = root). */
function packageFolder(mirror: string, commit: string, file: string): string {
  let dir = path.posix.dirname(file);
  for (;;) {
    const candidate = dir === "." ? "package.json" : `${dir}/package.json`;
    if (git(mirror, ["cat-file", "-e", `${commit}:${candidate}`]) !== null) {
      return dir === "." ? "" : dir;
    }
    if (dir === "." || dir === "") return path.posix.dirname(file);
    dir = path.posix.dirname(dir);
  }
}

/** Source and JSON files under `dir` at `commit` (recursively unless told otherwise). */
function treeFiles(
  mirror: string,
  commit: string,
  dir: string,
  recursive = true,
): { files: string[]; bytes: number } {
  const spec = dir === "" || dir === "." ? [] : [`${dir}/`];
  const out = git(mirror, [
    "ls-tree",
    "-l",
    "--full-tree",
    ...(recursive ? ["-r"] : []),
    commit,
    "--",
    ...spec,
  ]);
  const files: string[] = [];
  let bytes = 0;
  for (const line of (out ?? Buffer.alloc(0)).toString("utf8").split("\n")) {
    const m = /^\d+ blob [0-9a-f]+\s+(\d+)\t(.+)$/.exec(line);
    if (!m) continue;
    const file = m[2]!;
    if (!SOURCE_FILE.test(file) || file.includes("node_modules/")) continue;
    files.push(file);
    bytes += Number(m[1]);
  }
  return { files, bytes };
}

/** Installs the scratch project's libraries once; later runs reuse them (no network needed). */
function installScratch(): void {
  fs.mkdirSync(scratch, { recursive: true });
  const manifest = {
    name: "resgen-lint-corpus-scratch",
    private: true,
    type: "module",
    dependencies: SCRATCH_DEPENDENCIES,
  };
  const manifestPath = path.join(scratch, "package.json");
  const wanted = `${JSON.stringify(manifest, null, 2)}\n`;
  const current = fs.existsSync(manifestPath) ? fs.readFileSync(manifestPath, "utf8") : "";
  const installed = Object.keys(SCRATCH_DEPENDENCIES).every((name) =>
    fs.existsSync(path.join(scratch, "node_modules", name, "package.json")),
  );
  let same = false;
  try {
    same =
      JSON.stringify((JSON.parse(current) as { dependencies?: unknown }).dependencies) ===
      JSON.stringify(SCRATCH_DEPENDENCIES);
  } catch {
    same = false;
  }
  if (installed && same) return;
  fs.writeFileSync(manifestPath, wanted);
  process.stderr.write(`installing the corpus libraries into ${scratch} ...\n`);
  const r = spawnSync("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts"], {
    cwd: scratch,
    stdio: ["ignore", "inherit", "inherit"],
    timeout: 300_000,
  });
  if (r.status !== 0) throw new Error(`npm install in ${scratch} failed`);
}

/** A tsconfig beside the tree that includes just the file; imports pull in the rest. */
function tsconfigFor(where: Placed): string {
  const file = path.join(
    where.root,
    `tsconfig.corpus-${createHash("sha1").update(where.abs).digest("hex").slice(0, 12)}.json`,
  );
  const config = {
    compilerOptions: {
      target: "ES2022",
      module: "ESNext",
      moduleResolution: "Bundler",
      lib: ["ES2023", "DOM", "DOM.Iterable"],
      allowJs: true,
      checkJs: false,
      jsx: "preserve",
      esModuleInterop: true,
      allowSyntheticDefaultImports: true,
      allowImportingTsExtensions: true,
      resolveJsonModule: true,
      skipLibCheck: true,
      noEmit: true,
      strict: false,
      types: ["node"],
      typeRoots: [path.join(scratch, "node_modules", "@types")],
      // workspace packages resolve to their sources, as a monorepo's own tsconfig maps them
      paths: Object.fromEntries(
        Object.entries(where.siblings).flatMap(([name, dir]) => {
          const at = path.join(where.root, dir);
          return [
            [name, [`${at}/src/index.ts`, `${at}/src/index.tsx`, `${at}/index.ts`, `${at}/src`]],
            [`${name}/*`, [`${at}/src/*`, `${at}/*`]],
          ];
        }),
      ),
    },
    files: [where.abs],
  };
  fs.writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`);
  return file;
}

function lint(linter: Linter, where: Placed, typed: boolean): LintResult {
  const code = fs.readFileSync(where.abs, "utf8");
  const jsLike = /\.[cm]?jsx?$/.test(where.abs);
  const parserOptions: Linter.ParserOptions = typed
    ? { project: tsconfigFor(where), tsconfigRootDir: where.root }
    : {};
  if (jsLike) parserOptions.ecmaFeatures = { jsx: true };
  const config: Linter.Config[] = [
    {
      files: ["**/*.{ts,tsx,mts,cts,js,jsx,mjs,cjs}"],
      languageOptions: { parser: tsParser, sourceType: "module", parserOptions },
      linterOptions: { noInlineConfig: true, reportUnusedDisableDirectives: "off" },
    },
    typed ? plugin.configs["recommended-type-checked"] : plugin.configs.recommended,
  ];
  const messages = linter.verify(code, config, { filename: where.abs });
  const fatal = messages.find((m) => m.fatal === true);
  const findings = messages
    .filter((m) => m.ruleId?.startsWith("resgen/") === true)
    .map((m) => ({ rule: m.ruleId!.slice("resgen/".length), line: m.line, message: m.message }));
  return fatal ? { findings, parseError: fatal.message } : { findings };
}

function score(
  row: Row,
  ranges: ReadonlyArray<readonly [number, number]>,
  result: LintResult,
): RowResult {
  const rule = RULE_OF[row.rule] ?? row.rule;
  const ofRule = result.findings.filter((f) => f.rule === rule);
  const hits = ofRule.filter((f) => ranges.some(([a, b]) => f.line >= a && f.line <= b));
  const elsewhere = [...new Set(ofRule.filter((f) => !hits.includes(f)).map((f) => f.line))];
  const said = hits.length > 0 ? "report" : "clean";
  const outcome: Outcome =
    said === "report"
      ? row.expected === "report"
        ? "tp"
        : "fp"
      : row.expected === "report"
        ? "fn"
        : "tn";
  return {
    said,
    outcome,
    hits,
    elsewhere,
    ...(result.parseError ? { parseError: result.parseError } : {}),
  };
}
