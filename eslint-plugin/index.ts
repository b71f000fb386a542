import type { TSESLint } from "@typescript-eslint/utils";
import { VERSION } from "../src/version.js";
import noRetryNonIdempotent from "./rules/no-retry-non-idempotent.js";
import requireTimeout from "./rules/require-timeout.js";
import retryInsideBreaker from "./rules/retry-inside-breaker.js";

/** Every rule of the plugin, by the name it has after the `resgen/` prefix. */
export const rules = {
  "require-timeout": requireTimeout,
  "no-retry-non-idempotent": noRetryNonIdempotent,
  "retry-inside-breaker": retryInsideBreaker,
} satisfies Record<string, TSESLint.RuleModule<string, readonly unknown[]>>;

type Plugin = TSESLint.FlatConfig.Plugin & {
  meta: { name: string; version: string };
  rules: typeof rules;
  configs: {
    recommended: TSESLint.FlatConfig.Config;
    "recommended-type-checked": TSESLint.FlatConfig.Config;
  };
};

const plugin: Plugin = {
  meta: { name: "resgen/eslint-plugin", version: VERSION },
  rules,
  configs: {} as Plugin["configs"],
};

const recommendedRules: TSESLint.FlatConfig.Rules = {
  "resgen/require-timeout": "error",
  "resgen/no-retry-non-idempotent": "error",
  "resgen/retry-inside-breaker": "error",
};

plugin.configs.recommended = {
  name: "resgen/recommended",
  plugins: { resgen: plugin },
  rules: recommendedRules,
};

plugin.configs["recommended-type-checked"] = {
  name: "resgen/recommended-type-checked",
  plugins: { resgen: plugin },
  rules: {
    ...recommendedRules,
    "resgen/retry-inside-breaker": ["error", { useTypeInformation: true }],
  },
};

export const configs = plugin.configs;
export const meta = plugin.meta;
export default plugin;
