import tsParser from "@typescript-eslint/parser";
import { Linter } from "eslint";
import * as espree from "espree";
import { describe, expect, it } from "vitest";
import plugin from "../../eslint-plugin/index.js";

/** Unusual but valid code: the rules must neither crash nor report on any of it. */
const JS_SNIPPETS = [
  'class A { #http = null; load() { return this.#http.get("/x"); } }',
  "class B extends C { load() { return super.fetch(url); } }",
  "function* gen() { yield fetch; }\nconst f = gen().next().value; f?.(url, init);",
  "const { [key]: get } = api; get(url);",
  "const [first] = clients; first.post(u, d);",
  "let fetch2 = fetch; fetch2 = other; fetch2(url, { signal });",
  "tag`template ${fetch}`;",
  "function g() { return new.target; }\nimport.meta.url;",
  "outer: for (;;) { try { break outer; } catch {} }",
  "for (;;) { try { return; } catch { continue; } }".replace("return;", "x();"),
  "const o = { get timeout() { return 0; } }; axios.get(u, o);",
  'import axios from "axios";\nconst cfg = { get timeout() { return 0; } };\naxios.get(u, { ...cfg, signal });',
  'import pRetry from "p-retry";\npRetry();\npRetry(...args);\npRetry(42, null);',
  'import { wrap } from "cockatiel";\nwrap();\nwrap(...policies);',
  'import CircuitBreaker from "opossum";\nnew CircuitBreaker();\nconst b = new CircuitBreaker;\nb.fire();',
  'import axiosRetry from "axios-retry";\naxiosRetry();\naxiosRetry(...a);',
  "fetch(...args);",
  'import http from "node:http";\nhttp.request(...args);\nconst req = http.get;\nreq(...args);',
  "const a = b = c; a.post(u);",
  "var x = x; x.fetch();",
  'import axios from "axios";\nconst api = axios.create(...defaults);\napi.defaults.timeout = 1;\napi.get(u);',
  "async function f() { for await (const x of y) { try { return await x.post(u); } catch {} } }",
];

const TS_SNIPPETS = [
  'import type { AxiosInstance } from "axios";\ndeclare const api: AxiosInstance;\napi.get("/x", { timeout: 1 });',
  "enum E { A = 1 }\nnamespace N { export const fetch = 1; }\nconst x = <any>fetch;",
  'abstract class S { abstract fetch(u: string): Promise<unknown>; run() { return this.fetch("/"); } }',
  'class P { constructor(private readonly http: { get(u: string): void }) {} load() { this.http.get("/"); } }',
  'const f = fetch as unknown as (u: string, i: object) => void; f("/", { signal }) satisfies void;',
  "@decorate class D { @field() x = fetch; }",
];

function verify(
  code: string,
  parser: "espree" | "typescript",
  filename: string,
): Linter.LintMessage[] {
  const linter = new Linter();
  return linter.verify(
    code,
    [
      {
        files: ["**/*.js", "**/*.ts"],
        languageOptions: {
          parser: parser === "espree" ? espree : tsParser,
          ecmaVersion: "latest",
          sourceType: "module",
        },
        plugins: { resgen: plugin as never },
        rules: {
          "resgen/require-timeout": ["error", { reportUnresolved: false }],
          "resgen/no-retry-non-idempotent": "error",
          "resgen/retry-inside-breaker": "error",
        },
      },
    ],
    filename,
  );
}

describe("unusual code", () => {
  for (const [i, code] of JS_SNIPPETS.entries()) {
    for (const parser of ["espree", "typescript"] as const) {
      it(`js snippet ${i} (${parser}) lints without errors or reports`, () => {
        expect(
          verify(code, parser, "snippet.js").map((m) => `${m.ruleId ?? "fatal"}: ${m.message}`),
        ).toEqual([]);
      });
    }
  }
  for (const [i, code] of TS_SNIPPETS.entries()) {
    it(`ts snippet ${i} lints without errors or reports`, () => {
      expect(
        verify(code, "typescript", "snippet.ts").map((m) => `${m.ruleId ?? "fatal"}: ${m.message}`),
      ).toEqual([]);
    });
  }
});
