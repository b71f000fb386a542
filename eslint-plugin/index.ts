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

/** The plugin object: `import resgen from "resgen/eslint-plugin"`. */
export interface ResgenPlugin {
  readonly meta: { readonly name: string; readonly version: string };
  readonly rules: typeof rules;
  readonly configs: {
    /** Registers the plugin as `resgen` and turns on every rule; syntactic, no type information. */
    readonly recommended: TSESLint.FlatConfig.Config;
    /** The same rules, with the options that use type information switched on. */
    readonly "recommended-type-checked": TSESLint.FlatConfig.Config;
  };
}

/** Plugin name and version, as ESLint shows them in caches and `--print-config`. */
export const meta = { name: "resgen/eslint-plugin", version: VERSION } as const;

const recommendedRules: TSESLint.FlatConfig.Rules = {
  "resgen/require-timeout": "error",
  "resgen/no-retry-non-idempotent": "error",
  "resgen/retry-inside-breaker": "error",
};

// The configs refer to the plugin object that holds them, so it is filled in two steps.
const registered: TSESLint.FlatConfig.Plugin = { meta, rules };

export const configs: ResgenPlugin["configs"] = {
  recommended: {
    name: "resgen/recommended",
    plugins: { resgen: registered },
    rules: recommendedRules,
  },
  "recommended-type-checked": {
    name: "resgen/recommended-type-checked",
    plugins: { resgen: registered },
    rules: {
      ...recommendedRules,
      "resgen/retry-inside-breaker": ["error", { useTypeInformation: true }],
    },
  },
};

const plugin: ResgenPlugin = Object.assign(registered, { meta, rules, configs });

export default plugin;
