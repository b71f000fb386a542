/**
 * docs/security.md names, for every guarantee, the test that proves it: a file and the beginnings
 * of its tests' names. A test renamed, moved or deleted would leave a guarantee that nothing
 * proves, so every name the page quotes must begin the title of a test in the file it names.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../src/version.js";

interface Citation {
  readonly file: string;
  readonly name: string | undefined;
}

/**
 * The citations of each paragraph or table row: a `test/….ts` path, or "same file" (the path a
 * row or paragraph above began with), then the quoted beginnings of test names that follow it, up
 * to the next path.
 */
function citations(text: string): Citation[] {
  const found: Citation[] = [];
  let anchor: string | undefined;
  for (const block of text.split(/\n\s*\n/)) {
    const units = block.trimStart().startsWith("|") ? block.split("\n") : [block];
    for (const unit of units) {
      const line = unit.replace(/\s+/g, " ");
      let current: string | undefined;
      const token = /`(test\/[^`]+\.ts)`|same file|"([^"]+)"/g;
      for (const match of line.matchAll(token)) {
        if (match[1] !== undefined) {
          // a row's first citation is what "same file" means in the rows after it
          if (current === undefined) anchor = match[1];
          current = match[1];
          found.push({ file: current, name: undefined });
        } else if (match[0] === "same file") {
          current = anchor;
        } else if (current !== undefined && match[2] !== undefined) {
          found.push({ file: current, name: match[2] });
        }
      }
    }
  }
  return found;
}

/** The titles of a file's tests and describe blocks, as written (placeholders and all). */
function titles(source: string): string[] {
  const quoted = /\b(?:it|test|describe)(?:\.each\([^)]*\))?\(\s*(["'`])(.+?)\1/g;
  return [...source.matchAll(quoted)].map(([, , title = ""]) => title);
}

const page = readFileSync(join(PACKAGE_ROOT, "docs", "security.md"), "utf8");
const cited = citations(page.replace(/```[\s\S]*?```/g, ""));

describe("docs/security.md", () => {
  it("cites tests for the runtime as well as the compiler", () => {
    const files = new Set(cited.map((c) => c.file));
    expect(files.has("test/build/hostile-files.test.ts")).toBe(true);
    expect(files.has("test/store/stale-secrets.test.ts")).toBe(true);
    expect(files.has("test/services/route-matching.test.ts")).toBe(true);
    expect(cited.filter((c) => c.name !== undefined).length).toBeGreaterThan(40);
  });

  it.each(cited.flatMap((c) => (c.name === undefined ? [] : [[c.file, c.name] as const])))(
    "%s has a test whose name begins %j",
    (file, name) => {
      const found = titles(readFileSync(join(PACKAGE_ROOT, file), "utf8"));
      expect(
        found.filter((title) => title.startsWith(name)),
        `titles of ${file}`,
      ).not.toEqual([]);
    },
  );

  it.each([...new Set(cited.map((c) => c.file))])("names a file that exists: %s", (file) => {
    expect(existsSync(join(PACKAGE_ROOT, file))).toBe(true);
  });
});
