/**
 * Every link resgen emits starts with the one base URL of src/version.ts, and every page or file it
 * names ships in the package (docs/build.md, "Links"): SARIF's informationUri and helpUri, the
 * ESLint rules' docs URLs and the JSON Schemas' $id.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { rules } from "../../eslint-plugin/index.js";
import { CODES, type Code } from "../../src/diagnostics/codes.js";
import { diagnostic } from "../../src/diagnostics/diagnostic.js";
import { formatSarif, SourceTexts } from "../../src/diagnostics/format.js";
import { JSON_SCHEMAS } from "../../src/language/json-schema.js";
import { PACKAGE_ROOT, REPOSITORY_URL } from "../../src/version.js";
import { shippedFiles } from "./pack.js";

/** Every string value that is a web address, with where it was found; `$schema` names a standard. */
function urlsIn(value: unknown, where: string): { where: string; url: string }[] {
  if (typeof value === "string") return /^https?:\/\//.test(value) ? [{ where, url: value }] : [];
  if (Array.isArray(value)) return value.flatMap((item, i) => urlsIn(item, `${where}[${i}]`));
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([key, item]) =>
    key === "$schema" ? [] : urlsIn(item, `${where}.${key}`),
  );
}

/** A SARIF log with one finding of every code, so every rule's helpUri is in it. */
function sarifOfEveryCode(): unknown {
  const all = (Object.keys(CODES) as Code[]).map((code) =>
    diagnostic(code, "resilience/payments.yaml", { start: 0, end: 1 }, "message"),
  );
  return JSON.parse(formatSarif(all, new SourceTexts()));
}

function emitted(): { where: string; url: string }[] {
  const schemas = Object.entries(JSON_SCHEMAS).flatMap(([name, render]) => [
    ...urlsIn(JSON.parse(render()), `schema ${name}`),
    ...urlsIn(
      JSON.parse(readFileSync(join(PACKAGE_ROOT, "schema", name), "utf8")),
      `schema/${name}`,
    ),
  ]);
  return [
    ...urlsIn(sarifOfEveryCode(), "sarif"),
    ...Object.entries(rules).flatMap(([name, rule]) => urlsIn(rule.meta, `rule ${name}`)),
    ...schemas,
  ];
}

/** The anchor GitHub gives a Markdown heading. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const heading = /^#{1,6} (.+)$/.exec(line);
    if (!fenced && heading) anchors.add(slug(heading[1]!));
  }
  return anchors;
}

describe("links", () => {
  const urls = emitted();
  let shipped = new Set<string>();

  beforeAll(async () => {
    shipped = new Set(await shippedFiles());
  }, 60_000);

  it("finds the links of every kind", () => {
    const at = (suffix: string) => urls.filter((u) => u.where.endsWith(suffix)).length;
    expect(at(".informationUri")).toBe(1);
    expect(at(".helpUri")).toBe(Object.keys(CODES).length);
    expect(at(".docs.url")).toBe(Object.keys(rules).length);
    // each schema as rendered and as committed under schema/
    expect(at(".$id")).toBe(2 * Object.keys(JSON_SCHEMAS).length);
  });

  it("start with the one base URL", () => {
    const outside = urls.filter(
      ({ url }) => url !== REPOSITORY_URL && !url.startsWith(`${REPOSITORY_URL}/`),
    );
    expect(outside).toEqual([]);
  });

  it("name files that ship in the package, and headings those pages have", () => {
    const broken: string[] = [];
    for (const { where, url } of urls) {
      if (url === REPOSITORY_URL) continue;
      const match = /^\/(?:blob|raw)\/main\/([^#]+)(?:#(.+))?$/.exec(
        url.slice(REPOSITORY_URL.length),
      );
      if (!match) {
        broken.push(`${where}: ${url} is not a file of the repository`);
        continue;
      }
      const [, path, anchor] = match;
      if (!shipped.has(path!)) {
        broken.push(`${where}: ${path!} is not in the package's files`);
        continue;
      }
      if (anchor !== undefined) {
        const anchors = anchorsOf(readFileSync(join(PACKAGE_ROOT, path!), "utf8"));
        if (!anchors.has(anchor)) broken.push(`${where}: ${path!} has no heading #${anchor}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("package.json names the same repository, homepage and issue tracker", () => {
    const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as {
      repository?: { type?: string; url?: string };
      homepage?: string;
      bugs?: { url?: string };
    };
    expect(pkg.repository).toEqual({ type: "git", url: `git+${REPOSITORY_URL}.git` });
    expect(pkg.homepage).toBe(`${REPOSITORY_URL}#readme`);
    expect(pkg.bugs).toEqual({ url: `${REPOSITORY_URL}/issues` });
  });

  it("the base URL is written once, in src/version.ts", () => {
    const host = new URL(REPOSITORY_URL);
    const needle = `${host.host}${host.pathname}`;
    const found: string[] = [];
    for (const dir of ["src", "eslint-plugin", "scripts", "bin"]) {
      for (const entry of readdirSync(join(PACKAGE_ROOT, dir), {
        recursive: true,
        withFileTypes: true,
      })) {
        if (!entry.isFile() || !/\.(ts|js)$/.test(entry.name)) continue;
        const file = join(entry.parentPath, entry.name);
        const text = readFileSync(file, "utf8");
        if (text.includes(needle) || text.includes("resgen.dev"))
          found.push(relative(PACKAGE_ROOT, file));
      }
    }
    expect(found).toEqual(["src/version.ts"]);
  });
});
