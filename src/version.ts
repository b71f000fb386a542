import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The package root, found by walking up from this module: the same code runs from `src/`
 * (tests, tsx) and from `dist/src/` (the installed CLI).
 */
export const PACKAGE_ROOT: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: string };
      if (pkg.name === "resgen") return dir;
    } catch {
      // no package.json here: keep walking up
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error("resgen: cannot find its own package.json");
    dir = parent;
  }
})();

/** The version of resgen, named in generated-file headers. */
export const VERSION: string = (
  JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as { version: string }
).version;

/**
 * The one base of every link resgen emits (SARIF `informationUri` and `helpUri`, the ESLint rules'
 * docs URLs, the JSON Schemas' `$id`) and of package.json's `repository`, `homepage` and `bugs`
 * (docs/build.md, "Links").
 */
export const REPOSITORY_URL = "https://github.com/resgen-dev/resgen";

/** The branch the links point into. */
const BRANCH = "main";

/** A page of the package's own files (`docs/diagnostics.md`, `eslint-plugin/docs/…`) on the web. */
export function docsUrl(path: string): string {
  return `${REPOSITORY_URL}/blob/${BRANCH}/${path}`;
}

/** A shipped file's raw bytes on the web (the JSON Schemas, which an editor fetches as JSON). */
export function rawUrl(path: string): string {
  return `${REPOSITORY_URL}/raw/${BRANCH}/${path}`;
}
