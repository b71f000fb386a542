import type { ESLintUtils, TSESLint } from "@typescript-eslint/utils";
import { docsUrl } from "../../src/version.js";

/** Extra documentation metadata every resgen rule declares. */
export interface ResgenRuleDocs {
  /** Whether `configs.recommended` turns the rule on. */
  readonly recommended: boolean;
  /** Whether the rule needs type information (never true: type use is an opt-in option). */
  readonly requiresTypeChecking: boolean;
}

/**
 * Where the rule documentation lives; each rule's page is `<base><rule-name>.md`, a page of
 * eslint-plugin/docs/, which ships in the package.
 */
export const DOCS_BASE = docsUrl("eslint-plugin/docs/");

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `defaults` with `given` laid over it, objects merged key by key at every depth. */
function merge(
  defaults: Record<string, unknown>,
  given: Record<string, unknown>,
): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...defaults };
  for (const [key, value] of Object.entries(given)) {
    const base = merged[key];
    merged[key] = isPlainObject(base) && isPlainObject(value) ? merge(base, value) : value;
  }
  return merged;
}

/**
 * The options a rule runs with: each default (copied, so a rule cannot change it), replaced by the
 * option the user gave in its place, or merged with it when both are objects.
 */
function withDefaults(defaults: readonly unknown[], given: readonly unknown[]): unknown[] {
  return structuredClone(defaults).map((fallback, i) => {
    const option = given[i];
    if (option === undefined) return fallback;
    return isPlainObject(fallback) && isPlainObject(option) ? merge(fallback, option) : option;
  });
}

type RuleDefinition<Options extends readonly unknown[], MessageIds extends string> = Readonly<
  ESLintUtils.RuleWithMetaAndName<Options, MessageIds, ResgenRuleDocs>
>;

type Rule<Options extends readonly unknown[], MessageIds extends string> = TSESLint.RuleModule<
  MessageIds,
  Options,
  ResgenRuleDocs
> & { name: string };

/**
 * A rule with its documentation URL filled in and its options defaulted from
 * `meta.defaultOptions` before `create` sees them: what typescript-eslint's `RuleCreator` makes,
 * written here so the plugin loads nothing of typescript-eslint at run time.
 */
export function createRule<Options extends readonly unknown[], MessageIds extends string>({
  meta,
  name,
  create,
}: RuleDefinition<Options, MessageIds>): Rule<Options, MessageIds> {
  const defaults = meta.defaultOptions ?? [];
  return {
    meta: { ...meta, docs: { ...meta.docs, url: `${DOCS_BASE}${name}.md` } },
    name,
    create(context) {
      return create(context, withDefaults(defaults, context.options) as unknown as Options);
    },
  };
}
