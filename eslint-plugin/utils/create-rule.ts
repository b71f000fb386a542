import { ESLintUtils } from "@typescript-eslint/utils";

/** Where the rule documentation lives; each rule's page is `<base><rule-name>.md`. */
export const DOCS_BASE = "https://github.com/resgen-dev/resgen/blob/main/eslint-plugin/docs/";

/** Extra documentation metadata every resgen rule declares. */
export interface ResgenRuleDocs {
  /** Whether `configs.recommended` turns the rule on. */
  readonly recommended: boolean;
  /** Whether the rule needs type information (never true: type use is an opt-in option). */
  readonly requiresTypeChecking: boolean;
}

export const createRule = ESLintUtils.RuleCreator<ResgenRuleDocs>(
  (name) => `${DOCS_BASE}${name}.md`,
);
