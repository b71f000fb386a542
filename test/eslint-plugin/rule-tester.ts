import {
  RuleTester,
  type InvalidTestCase,
  type ValidTestCase,
} from "@typescript-eslint/rule-tester";
import type { TSESLint } from "@typescript-eslint/utils";
import * as espree from "espree";
import { afterAll, describe, it } from "vitest";

RuleTester.afterAll = afterAll;
RuleTester.describe = describe;
RuleTester.it = it;
RuleTester.itOnly = it.only;

/** A case that uses TypeScript syntax runs under the TypeScript parser only. */
export type Valid<O extends readonly unknown[]> =
  string | (ValidTestCase<O> & { readonly tsOnly?: boolean });
export type Invalid<M extends string, O extends readonly unknown[]> = InvalidTestCase<M, O> & {
  readonly tsOnly?: boolean;
};

export const PARSERS = ["espree", "typescript"] as const;
export type ParserName = (typeof PARSERS)[number];

function tester(parser: ParserName): RuleTester {
  if (parser === "typescript") return new RuleTester();
  return new RuleTester({
    languageOptions: { parser: espree, ecmaVersion: "latest", sourceType: "module" },
    defaultFilenames: { ts: "file.js", tsx: "file.jsx" },
  });
}

/** Runs one rule's table under both parsers; `tsOnly` cases are left out under espree. */
export function runUnderBothParsers<M extends string, O extends readonly unknown[]>(
  name: string,
  rule: TSESLint.RuleModule<M, O>,
  cases: { valid: readonly Valid<O>[]; invalid: readonly Invalid<M, O>[] },
): void {
  for (const parser of PARSERS) {
    const keep = (c: { tsOnly?: boolean }): boolean => parser === "typescript" || c.tsOnly !== true;
    const strip = <T extends { tsOnly?: boolean }>(c: T): Omit<T, "tsOnly"> => {
      const rest = { ...c };
      delete rest.tsOnly;
      return rest;
    };
    const valid = cases.valid.map((c) => (typeof c === "string" ? { code: c } : c));
    // The tester bundles its own copy of @typescript-eslint/utils; the rule module is the same shape.
    const testedRule = rule as unknown as Parameters<RuleTester["run"]>[1] as never;
    tester(parser).run<M, O>(`${name} (${parser})`, testedRule, {
      valid: valid.filter(keep).map(strip),
      invalid: cases.invalid.filter(keep).map(strip),
    });
  }
}
