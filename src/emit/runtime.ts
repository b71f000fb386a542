/**
 * The runtime stack is real, tested TypeScript in templates/runtime; it is copied into the
 * output byte for byte, behind the generated-file header (or, under `runtime: package`, imported
 * from the resgen package, which ships it compiled).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PACKAGE_ROOT } from "../version.js";
import { header } from "../model/header.js";
import { RUNTIME_DIR, TELEMETRY_DIR } from "../model/layout.js";
import { RUNTIME_PACKAGE } from "../model/names.js";

/** What the generated code may use (`platform:` of the project file, docs/platforms.md). */
export type Platform = "node" | "web";

const cache = new Map<Platform, ReadonlyMap<string, string>>();

/**
 * The runtime's files by output path (`runtime/breaker.ts`), with headers. A template named
 * `<name>.web.ts` replaces `<name>.ts` under `platform: web` and is left out otherwise.
 */
export function emitRuntime(platform: Platform = "node"): ReadonlyMap<string, string> {
  const cached = cache.get(platform);
  if (cached) return cached;
  const dir = join(PACKAGE_ROOT, "templates", "runtime");
  const names = readdirSync(dir).filter((f) => f.endsWith(".ts"));
  const variants = new Set(names.filter((f) => f.endsWith(".web.ts")));
  const files = new Map<string, string>();
  for (const name of names.filter((f) => !variants.has(f)).sort()) {
    const variant = name.replace(/\.ts$/, ".web.ts");
    const template = platform === "web" && variants.has(variant) ? variant : name;
    const text = readFileSync(join(dir, template), "utf8").replace(/\r\n/g, "\n");
    files.set(
      `${RUNTIME_DIR}/${name}`,
      header(`its runtime (templates/runtime/${template})`) + "\n" + text,
    );
  }
  cache.set(platform, files);
  return files;
}

/**
 * The OpenTelemetry adapter (templates/telemetry/opentelemetry.ts), copied like the runtime but
 * only into projects whose config says `telemetry: opentelemetry`: it imports `@opentelemetry/api`,
 * which then is the project's dependency, never the runtime's.
 */
export function emitTelemetry(
  runtime: "vendored" | "package" = "vendored",
): ReadonlyMap<string, string> {
  const name = "opentelemetry.ts";
  let text = readFileSync(join(PACKAGE_ROOT, "templates", TELEMETRY_DIR, name), "utf8").replace(
    /\r\n/g,
    "\n",
  );
  // the adapter's one import of the runtime, from the package instead of the output folder
  if (runtime === "package") {
    const vendored = ` from "../${RUNTIME_DIR}/index.js";`;
    if (!text.includes(vendored))
      throw new Error(`internal: templates/${TELEMETRY_DIR}/${name} no longer imports${vendored}`);
    text = text.replace(vendored, ` from "${RUNTIME_PACKAGE.generated}";`);
  }
  return new Map([
    [
      `${TELEMETRY_DIR}/${name}`,
      header(`its telemetry adapter (templates/${TELEMETRY_DIR}/${name})`) + "\n" + text,
    ],
  ]);
}
