import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import tsParser from "@typescript-eslint/parser";
import { Linter } from "eslint";
import * as espree from "espree";
import { describe, expect, it } from "vitest";
import plugin from "../../eslint-plugin/index.js";

const DOCS = fileURLToPath(new URL("../../eslint-plugin/docs/", import.meta.url));

/**
 * One example from a rule page: a fenced ```js or ```ts block preceded by `<!-- bad -->` or
 * `<!-- good -->`, optionally with the rule's options as JSON: `<!-- good {"ignoreUrls": [...]} -->`.
 */
export interface DocExample {
  readonly kind: "bad" | "good";
  readonly lang: "js" | "ts";
  readonly options: Record<string, unknown> | null;
  readonly code: string;
  readonly line: number;
}

const EXAMPLE = /<!--\s*(bad|good)(\s+\{[\s\S]*?\})?\s*-->\s*\n```(js|ts)\n([\s\S]*?)\n```/g;

export function extractExamples(markdown: string): DocExample[] {
  const examples: DocExample[] = [];
  for (const match of markdown.matchAll(EXAMPLE)) {
    const [, kind, options, lang, code] = match;
    examples.push({
      kind: kind as "bad" | "good",
      lang: lang as "js" | "ts",
      options: options ? (JSON.parse(options) as Record<string, unknown>) : null,
      code: code!,
      line: markdown.slice(0, match.index).split("\n").length,
    });
  }
  return examples;
}

const parsers = { espree, typescript: tsParser } as const;

/**
 * Examples with `useTypeInformation` are linted with a program, as `file.ts` of a small project
 * whose other files (a retry helper, fetch wrappers) the examples may import.
 */
const TYPED_PROJECT = fileURLToPath(new URL("./fixtures/typed-reach/", import.meta.url));

function isTyped(example: DocExample): boolean {
  return example.options?.["useTypeInformation"] === true;
}

function lint(
  rule: string,
  example: DocExample,
  parser: keyof typeof parsers,
): Linter.LintMessage[] {
  const typed = isTyped(example);
  const linter = new Linter(typed ? { cwd: TYPED_PROJECT } : {});
  const filename = typed
    ? join(TYPED_PROJECT, "file.ts")
    : example.lang === "ts"
      ? "example.ts"
      : "example.js";
  return linter.verify(
    example.code,
    [
      {
        files: ["**/*.js", "**/*.ts"],
        languageOptions: {
          parser: parsers[parser],
          ecmaVersion: "latest",
          sourceType: "module",
          ...(typed
            ? {
                parserOptions: {
                  project: "./tsconfig.json",
                  tsconfigRootDir: TYPED_PROJECT,
                  // Under CI=true the parser would build the program once from the files on disk;
                  // the examples are linted as the text of file.ts, which is not on disk.
                  disallowAutomaticSingleRunInference: true,
                },
              }
            : {}),
        },
        plugins: { resgen: plugin as never },
        rules: { [`resgen/${rule}`]: example.options ? ["error", example.options] : "error" },
      },
    ],
    filename,
  );
}

const ruleNames = Object.keys(plugin.rules);

describe("extractExamples", () => {
  it("reads markers, languages, options and code", () => {
    const md =
      'text\n<!-- bad -->\n```js\nfetch(u);\n```\n\n<!-- good {"wrappers": ["w"]} -->\n```ts\nw(fetch(u));\n```\n```js\nnot marked\n```\n';
    expect(extractExamples(md)).toEqual([
      { kind: "bad", lang: "js", options: null, code: "fetch(u);", line: 2 },
      { kind: "good", lang: "ts", options: { wrappers: ["w"] }, code: "w(fetch(u));", line: 7 },
    ]);
  });
});

describe.each(ruleNames)("docs/%s.md examples", (rule) => {
  const examples = extractExamples(readFileSync(join(DOCS, `${rule}.md`), "utf8"));

  it("has at least one bad and one good example", () => {
    expect(examples.some((e) => e.kind === "bad")).toBe(true);
    expect(examples.some((e) => e.kind === "good")).toBe(true);
  });

  for (const example of examples) {
    const runs =
      example.lang === "ts" || isTyped(example)
        ? (["typescript"] as const)
        : (["espree", "typescript"] as const);
    for (const parser of runs) {
      it(`${example.kind} example at line ${example.line} (${parser})`, () => {
        const messages = lint(rule, example, parser);
        expect(messages.filter((m) => m.fatal)).toEqual([]);
        const own = messages.filter((m) => m.ruleId === `resgen/${rule}`);
        if (example.kind === "bad") expect(own.length).toBeGreaterThan(0);
        else expect(own).toEqual([]);
      });
    }
  }
});

it("every rule page is a rule", () => {
  const pages = readdirSync(DOCS)
    .filter((f) => f.endsWith(".md"))
    .map((f) => f.slice(0, -3));
  expect(pages.sort()).toEqual([...ruleNames].sort());
});
