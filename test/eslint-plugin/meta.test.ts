import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import plugin, { configs, rules } from "../../eslint-plugin/index.js";
import { DOCS_BASE } from "../../eslint-plugin/utils/create-rule.js";
import { VERSION } from "../../src/version.js";

const root = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const names = Object.keys(rules).sort();
const basenames = (dir: string, suffix: string): string[] =>
  readdirSync(root(dir))
    .filter((f) => f.endsWith(suffix))
    .map((f) => f.slice(0, -suffix.length))
    .sort();

/** The parts of a JSON schema the meta-test reads. */
interface Schema {
  readonly description?: string;
  readonly properties?: Record<string, Schema>;
  readonly items?: Schema | Schema[];
}

/** Every `properties` entry anywhere in a schema, with its path. */
function properties(
  schema: Schema | Schema[] | undefined,
  path = "options",
): { path: string; schema: Schema }[] {
  if (schema === undefined) return [];
  if (Array.isArray(schema)) return schema.flatMap((s, i) => properties(s, `${path}[${i}]`));
  const found: { path: string; schema: Schema }[] = [];
  for (const [key, value] of Object.entries(schema.properties ?? {})) {
    found.push({ path: `${path}.${key}`, schema: value });
    found.push(...properties(value, `${path}.${key}`));
  }
  if (schema.items) found.push(...properties(schema.items, `${path}[]`));
  return found;
}

describe("plugin shape", () => {
  it("names itself and carries the package version", () => {
    expect(plugin.meta).toEqual({ name: "resgen/eslint-plugin", version: VERSION });
  });

  it("rule files, doc pages and test files match the rule names", () => {
    expect(basenames("eslint-plugin/rules", ".ts")).toEqual(names);
    expect(basenames("eslint-plugin/docs", ".md")).toEqual(names);
    expect(basenames("test/eslint-plugin/rules", ".test.ts")).toEqual(names);
    for (const name of names) expect(name).toMatch(/^[a-z]+(-[a-z]+)*$/);
  });

  it("configs.recommended registers the plugin as resgen and turns on every recommended rule", () => {
    expect(configs.recommended.plugins?.["resgen"]).toBe(plugin);
    const enabled = Object.keys(configs.recommended.rules ?? {}).sort();
    const recommended = names
      .filter((n) => rules[n as keyof typeof rules].meta.docs?.recommended === true)
      .map((n) => `resgen/${n}`);
    expect(enabled).toEqual(recommended.sort());
    expect(enabled).toHaveLength(3);
  });

  it("configs['recommended-type-checked'] enables the same rules and opts into type information", () => {
    const typed = configs["recommended-type-checked"];
    expect(typed.plugins?.["resgen"]).toBe(plugin);
    expect(Object.keys(typed.rules ?? {}).sort()).toEqual(
      Object.keys(configs.recommended.rules ?? {}).sort(),
    );
    expect(typed.rules?.["resgen/retry-inside-breaker"]).toEqual([
      "error",
      { useTypeInformation: true },
    ]);
  });
});

describe.each(names)("rule %s", (name) => {
  const rule = rules[name as keyof typeof rules];
  const source = readFileSync(root(`eslint-plugin/rules/${name}.ts`), "utf8");
  const doc = readFileSync(root(`eslint-plugin/docs/${name}.md`), "utf8");
  const test = readFileSync(root(`test/eslint-plugin/rules/${name}.test.ts`), "utf8");

  it("is created under its own name with a docs URL pointing at its page", () => {
    expect(rule.name).toBe(name);
    const docs = rule.meta.docs;
    expect(docs?.url).toBe(`${DOCS_BASE}${name}.md`);
    expect(docs?.description.length ?? 0).toBeGreaterThan(10);
    expect(docs?.requiresTypeChecking).toBe(false);
    expect(doc.startsWith(`# resgen/${name}\n`)).toBe(true);
  });

  it("declares suggestions exactly when it offers them, and tests them", () => {
    const offers = /\bsuggest:/.test(source);
    expect(rule.meta.hasSuggestions ?? false).toBe(offers);
    expect(/\bsuggestions:/.test(test)).toBe(offers);
  });

  it("describes every option in its schema and on its page", () => {
    const props = properties(rule.meta.schema as unknown as Schema[]);
    const topLevel = props.filter((p) => /^options\[0\]\.[A-Za-z]+$/.test(p.path));
    expect(topLevel.length).toBeGreaterThan(0);
    for (const { path, schema } of props) {
      expect(
        typeof schema.description === "string" && schema.description.length > 20,
        `${path} needs a description`,
      ).toBe(true);
    }
    for (const { path } of topLevel) expect(doc).toContain(`\`${path.split(".").pop()!}\``);
  });

  it("has a message for every id it reports, and reports every message it declares", () => {
    for (const id of Object.keys(rule.meta.messages)) expect(source).toContain(`"${id}"`);
    for (const id of Object.keys(rule.meta.messages)) {
      if (rule.meta.hasSuggestions && /^add[A-Z]/.test(id)) continue;
      expect(test, `${id} has a test`).toContain(`messageId: "${id}"`);
    }
  });

  it("has no focused or skipped tests", () => {
    expect(test).not.toMatch(/\b(it|describe|test)\.(only|skip)\b|\bonly:\s*true/);
  });
});
