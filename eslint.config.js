// ESLint for the repository's own code (npm run lint). Generated output, snapshots and fixtures
// are ignored: their bytes are what the tests compare, and the fixtures are wrong on purpose.
import { defineConfig, globalIgnores } from "eslint/config";
import tseslint from "typescript-eslint";

// The rules relaxed below for the repository's own code, and their stock strictTypeChecked
// settings. A setting that is a bare severity would keep the relaxed options, so it is given the
// rule's default options explicitly.
const RELAXED = [
  "no-non-null-assertion",
  "restrict-template-expressions",
  "no-confusing-void-expression",
];
const stockRules = Object.assign(
  {},
  ...tseslint.configs.strictTypeChecked.map((config) => config.rules ?? {}),
);
const stock = Object.fromEntries(
  RELAXED.map((name) => {
    const setting = stockRules[`@typescript-eslint/${name}`];
    const options = tseslint.plugin.rules[name].defaultOptions;
    return [`@typescript-eslint/${name}`, Array.isArray(setting) ? setting : [setting, ...options]];
  }),
);

export default defineConfig(
  globalIgnores([
    "dist/",
    "examples/**/generated/",
    "test/**/fixtures/",
    "test/**/expected/",
    "test/**/__out__/",
    ".vitest-tmp/",
    "bench/results/",
  ]),
  tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: {
      reportUnusedDisableDirectives: "error",
    },
    rules: {
      // Off: almost every `!` here reads an index, a regex group or a Map entry whose presence the
      // line above checked; noUncheckedIndexedAccess types those reads `T | undefined`, and
      // no-unnecessary-type-assertion still reports a `!` that the types do not need.
      "@typescript-eslint/no-non-null-assertion": "off",
      // Numbers are what a compiler of timeouts and rates prints (`${ms}ms`); their text is exact.
      // Objects, arrays, nullish values, booleans and any in a template stay errors.
      // Every option is spelled out: any option left out would take the rule's lax default.
      "@typescript-eslint/restrict-template-expressions": [
        "error",
        {
          allowAny: false,
          allowArray: false,
          allowBoolean: false,
          allowNever: false,
          allowNullish: false,
          allowNumber: true,
          allowRegExp: false,
        },
      ],
      // `() => listener(x)` as a callback reads as a statement; returning a void call from a
      // braced function body is still reported.
      "@typescript-eslint/no-confusing-void-expression": ["error", { ignoreArrowShorthand: true }],
    },
  },
  {
    // The runtime is copied into every project's generated folder, where it must pass the stock
    // strictTypeChecked config (docs/build.md, "Guarantees of the generated code"): the
    // relaxations above do not apply to it.
    files: ["templates/runtime/**/*.ts"],
    rules: stock,
  },
  {
    // Outside tsconfig.json: the demo runs under tsx against the generated client, and the
    // JavaScript files are entry points and this file; they get the syntactic rules only.
    files: ["examples/checkout/demo/**", "**/*.js"],
    extends: [tseslint.configs.disableTypeChecked],
  },
);
