import type { TSESLint } from "@typescript-eslint/utils";
import type { ESLint, Linter } from "eslint";
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
  /** Typed with ESLint's own config type, so `defineConfig([resgen.configs.recommended])` checks. */
  readonly configs: {
    /** Registers the plugin as `resgen` and turns on every rule; syntactic, no type information. */
    readonly recommended: Linter.Config;
    /** The same rules, with the options that use type information switched on. */
    readonly "recommended-type-checked": Linter.Config;
  };
}

/** Plugin name and version, as ESLint shows them in caches and `--print-config`. */
export const meta = { name: "resgen/eslint-plugin", version: VERSION } as const;

const recommendedRules: Linter.RulesRecord = {
  "resgen/require-timeout": "error",
  "resgen/no-retry-non-idempotent": "error",
  "resgen/retry-inside-breaker": "error",
};

// The configs refer to the plugin object that holds them, so it is filled in two steps. The rules
// are typed by @typescript-eslint/utils; ESLint's plugin type describes the same objects.
const registered = { meta, rules } as unknown as ESLint.Plugin;

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
      "resgen/require-timeout": ["error", { useTypeInformation: true }],
      "resgen/no-retry-non-idempotent": ["error", { useTypeInformation: true }],
      "resgen/retry-inside-breaker": ["error", { useTypeInformation: true }],
    },
  },
};

const plugin: ResgenPlugin = Object.assign(registered, { meta, rules, configs });

export default plugin;
