/**
 * Lint cost of the resgen ESLint plugin on a generated corpus, measured side by side in one
 * process: ESLint with no rules, with one trivial rule (the cost of traversing at all), with
 * `configs.recommended` plus that rule, with a typical set of core rules, and with those core
 * rules plus `configs.recommended`. Then, with type information, the corpus's TypeScript files
 * written to a scratch folder with a tsconfig: typescript-eslint's `recommended-type-checked`
 * alone, and with `configs["recommended-type-checked"]` added. Prints tables with the median
 * CPU time per corpus pass and the ratios. Runs of the configurations are interleaved.
 *
 *   npx tsx bench/lint.ts [files=300] [runs=5]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import tsParser from "@typescript-eslint/parser";
import { Linter } from "eslint";
import tseslint from "typescript-eslint";
import plugin from "../eslint-plugin/index.js";

const FILES = Number(process.argv[2] ?? 300);
const RUNS = Number(process.argv[3] ?? 5);

interface SourceFile {
  readonly name: string;
  readonly code: string;
}

const SERVICES = [
  "payments",
  "inventory",
  "shipping",
  "ledger",
  "catalog",
  "search",
  "profile",
  "pricing",
  "tax",
  "fraud",
];

/** Ordinary application code around the calls the rules look at. */
function filler(i: number, ts: boolean): string {
  const t = (type: string): string => (ts ? `: ${type}` : "");
  return `
export function normalise${i}(items${t("Array<{ id: string; qty: number; price: number }>")})${t("number")} {
  let total = 0;
  for (const item of items) {
    if (item.qty <= 0) continue;
    const line = item.qty * item.price;
    total += line > 10_000 ? line * 0.95 : line;
  }
  return Math.round(total * 100) / 100;
}

export class Cache${i} {
  ${ts ? "private readonly entries = new Map<string, { value: unknown; at: number }>();" : "entries = new Map();"}
  get(key${t("string")}) {
    const hit = this.entries.get(key);
    if (!hit || Date.now() - hit.at > 60_000) return undefined;
    return hit.value;
  }
  set(key${t("string")}, value${t("unknown")}) {
    this.entries.set(key, { value, at: Date.now() });
    if (this.entries.size > 1000) {
      const oldest = [...this.entries.entries()].sort((a, b) => a[1].at - b[1].at)[0];
      if (oldest) this.entries.delete(oldest[0]);
    }
  }
}

export const summarise${i} = (orders${t("Array<{ status: string; total: number }>")}) =>
  orders.reduce((acc, o) => ({ ...acc, [o.status]: (acc[o.status] ?? 0) + o.total }), ${ts ? "{} as Record<string, number>" : "{}"});
`;
}

/** One of several service-client shapes, clean or with the mistakes the rules catch. */
function clientCode(i: number): string {
  const service = SERVICES[i % SERVICES.length]!;
  const url = `http://${service}.internal`;
  switch (i % 5) {
    case 0:
      return `import axios from "axios";
import pRetry from "p-retry";
const api = axios.create({ baseURL: "${url}", timeout: ${1000 + i} });
export const get${i} = (id) => api.get(\`/items/\${id}\`);
export const create${i} = (body) => pRetry(() => api.post("/items", body), { retries: 3 });
`;
    case 1:
      return `export async function load${i}(id, signal) {
  const res = await fetch("${url}/things/" + id, { signal: AbortSignal.any([signal, AbortSignal.timeout(2000)]) });
  if (!res.ok) throw new Error("failed " + res.status);
  return res.json();
}
export const ping${i} = () => fetch("${url}/health");
`;
    case 2:
      return `import CircuitBreaker from "opossum";
import pRetry from "p-retry";
import got from "got";
const client = got.extend({ prefixUrl: "${url}", timeout: { request: 1500 } });
const breaker = new CircuitBreaker((id) => client.get("x/" + id).json(), { timeout: 2000 });
export const fetch${i} = (id) => pRetry(() => breaker.fire(id), { retries: 2 });
`;
    case 3:
      return `import { retry, circuitBreaker, wrap, handleAll, ConsecutiveBreaker, ExponentialBackoff } from "cockatiel";
const breaker = circuitBreaker(handleAll, { halfOpenAfter: 5000, breaker: new ConsecutiveBreaker(3) });
export const policy${i} = wrap(retry(handleAll, { maxAttempts: 3, backoff: new ExponentialBackoff() }), breaker);
export async function run${i}(fn) { return policy${i}.execute(fn); }
`;
    default:
      return `import axios from "axios";
axios.defaults.timeout = 3000;
export async function deliver${i}(event) {
  const key = event.id;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await axios.post("${url}/events", event, { headers: { "Idempotency-Key": key } });
    } catch (error) {
      await new Promise((r) => setTimeout(r, 100 * 2 ** attempt));
    }
  }
  throw new Error("gave up");
}
`;
  }
}

export function corpus(count: number): SourceFile[] {
  return Array.from({ length: count }, (_, i) => {
    const ts = i % 2 === 1;
    return {
      name: `src/module-${i}.${ts ? "ts" : "js"}`,
      code: clientCode(i) + filler(i, ts) + filler(i + count, ts),
    };
  });
}

const CORE_RULES: Linter.RulesRecord = {
  "no-unused-vars": "error",
  "no-undef": "off",
  "no-unreachable": "error",
  "no-constant-condition": "error",
  "no-dupe-keys": "error",
  "no-fallthrough": "error",
  "prefer-const": "error",
  eqeqeq: "error",
  "no-shadow": "error",
  "no-use-before-define": "error",
  "no-loop-func": "error",
  "require-await": "error",
  "no-await-in-loop": "error",
  complexity: ["error", 20],
};

function config(rules: Linter.RulesRecord, withPlugin: boolean): Linter.Config[] {
  return [
    { files: ["**/*.js"], languageOptions: { ecmaVersion: "latest", sourceType: "module" } },
    { files: ["**/*.ts"], languageOptions: { parser: tsParser } },
    ...(withPlugin ? [plugin.configs.recommended] : []),
    { files: ["**/*.js", "**/*.ts"], rules },
  ];
}

/**
 * One lint pass over the corpus. Time is the process's CPU time (user + system), which other
 * load on the machine disturbs far less than wall-clock time.
 */
function pass(
  linter: Linter,
  files: readonly SourceFile[],
  cfg: Linter.Config[],
): { ms: number; problems: number } {
  const start = process.cpuUsage();
  let problems = 0;
  for (const file of files) problems += linter.verify(file.code, cfg, file.name).length;
  const used = process.cpuUsage(start);
  return { ms: (used.user + used.system) / 1000, problems };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function main(): void {
  const files = corpus(FILES);
  const lines = files.reduce((n, f) => n + f.code.split("\n").length, 0);
  const linter = new Linter();
  const variants = [
    { label: "no rules", cfg: config({}, false) },
    { label: "one trivial rule", cfg: config({ "no-debugger": "error" }, false) },
    { label: "resgen recommended", cfg: config({ "no-debugger": "error" }, true) },
    { label: "core rules", cfg: config(CORE_RULES, false) },
    { label: "core rules + resgen", cfg: config(CORE_RULES, true) },
  ];
  // Warm up parsers and JIT once per variant, then interleave runs so drift hits all alike.
  for (const v of variants) pass(linter, files, v.cfg);
  const times = new Map<string, number[]>(variants.map((v) => [v.label, []]));
  const problems = new Map<string, number>();
  for (let run = 0; run < RUNS; run++) {
    for (const v of variants) {
      const result = pass(linter, files, v.cfg);
      times.get(v.label)!.push(result.ms);
      problems.set(v.label, result.problems);
    }
  }
  const ms = (label: string): number => median(times.get(label)!);
  console.log(
    `Corpus: ${files.length} files (${lines} lines), half .js (espree), half .ts (@typescript-eslint/parser); median of ${RUNS} runs.\n`,
  );
  console.log("| configuration | CPU ms per pass | CPU ms per file | problems | ratio |");
  console.log("| --- | ---: | ---: | ---: | ---: |");
  const rows: [string, string][] = [
    ["no rules", "no rules"],
    ["one trivial rule", "no rules"],
    ["resgen recommended", "one trivial rule"],
    ["core rules", "core rules"],
    ["core rules + resgen", "core rules"],
  ];
  for (const [label, base] of rows) {
    const ratio = ms(label) / ms(base);
    console.log(
      `| ${label} | ${ms(label).toFixed(1)} | ${(ms(label) / files.length).toFixed(3)} | ${problems.get(label) ?? 0} | ${label === base ? "1.00" : `${ratio.toFixed(2)} vs ${base}`} |`,
    );
  }
  const added = ms("core rules + resgen") - ms("core rules");
  const alone = ms("resgen recommended") - ms("one trivial rule");
  console.log(
    `\nresgen adds ${added.toFixed(1)} CPU ms per pass (${((added / files.length) * 1000).toFixed(0)} µs per file) on top of the core rules,`,
  );
  console.log(
    `and ${alone.toFixed(1)} CPU ms (${((alone / files.length) * 1000).toFixed(0)} µs per file) on top of a traversal with one trivial rule.`,
  );
  console.log(
    '("no rules" skips the rule traversal altogether, so it is only a floor for parsing.)',
  );
  typed(files.filter((f) => f.name.endsWith(".ts")));
}

/**
 * The type-checked configs on the corpus's TypeScript files, linted in place in a scratch folder
 * so one program covers them all, as it does for a user with a tsconfig.
 */
function typed(tsFiles: readonly SourceFile[]): void {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "resgen-bench-lint-"));
  try {
    const files = tsFiles.map((f) => ({ name: path.join(root, f.name), code: f.code }));
    for (const f of files) {
      fs.mkdirSync(path.dirname(f.name), { recursive: true });
      fs.writeFileSync(f.name, f.code);
    }
    fs.writeFileSync(
      path.join(root, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { target: "ES2022", module: "NodeNext", strict: true, noEmit: true },
        include: ["src/**/*.ts"],
      }),
    );
    const base: Linter.Config[] = [
      ...(tseslint.configs.recommendedTypeChecked as Linter.Config[]),
      {
        files: ["**/*.ts"],
        languageOptions: {
          parser: tsParser,
          parserOptions: { project: "./tsconfig.json", tsconfigRootDir: root },
        },
      },
    ];
    const variants = [
      { label: "typescript-eslint recommended-type-checked", cfg: base },
      {
        label: "+ resgen recommended-type-checked",
        cfg: [...base, plugin.configs["recommended-type-checked"]],
      },
    ];
    const linter = new Linter({ cwd: root });
    for (const v of variants) pass(linter, files, v.cfg);
    const times = variants.map(() => [] as number[]);
    const problems = variants.map(() => 0);
    for (let run = 0; run < RUNS; run++) {
      variants.forEach((v, i) => {
        const result = pass(linter, files, v.cfg);
        times[i]!.push(result.ms);
        problems[i] = result.problems;
      });
    }
    const [alone, withResgen] = times.map(median) as [number, number];
    console.log(
      `\nWith type information: the ${files.length} .ts files in one program; median of ${RUNS} runs.\n`,
    );
    console.log("| configuration | CPU ms per pass | CPU ms per file | problems | ratio |");
    console.log("| --- | ---: | ---: | ---: | ---: |");
    variants.forEach((v, i) => {
      const ms = i === 0 ? alone : withResgen;
      console.log(
        `| ${v.label} | ${ms.toFixed(1)} | ${(ms / files.length).toFixed(3)} | ${problems[i] ?? 0} | ${i === 0 ? "1.00" : `${(ms / alone).toFixed(2)} vs the first`} |`,
      );
    });
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

// Run only when executed, so the corpus generator can be imported.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href)
  main();
