/**
 * The runtime stack is real, tested TypeScript in templates/runtime; it is copied into the
 * output byte for byte, behind the generated-file header.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PACKAGE_ROOT } from "../version.js";
import { header } from "../model/header.js";
import { RUNTIME_DIR, TELEMETRY_DIR } from "../model/layout.js";

let cache: ReadonlyMap<string, string> | undefined;

/** The runtime's files by output path (`runtime/breaker.ts`), with headers. */
export function emitRuntime(): ReadonlyMap<string, string> {
  if (cache) return cache;
  const dir = join(PACKAGE_ROOT, "templates", "runtime");
  const files = new Map<string, string>();
  for (const name of readdirSync(dir)
    .filter((f) => f.endsWith(".ts"))
    .sort()) {
    const text = readFileSync(join(dir, name), "utf8").replace(/\r\n/g, "\n");
    files.set(
      `${RUNTIME_DIR}/${name}`,
      header(`its runtime (templates/runtime/${name})`) + "\n" + text,
    );
  }
  cache = files;
  return files;
}

/**
 * The OpenTelemetry adapter (templates/telemetry/opentelemetry.ts), copied like the runtime but
 * only into projects whose config says `telemetry: opentelemetry`: it imports `@opentelemetry/api`,
 * which then is the project's dependency, never the runtime's.
 */
export function emitTelemetry(): ReadonlyMap<string, string> {
  const name = "opentelemetry.ts";
  const text = readFileSync(join(PACKAGE_ROOT, "templates", TELEMETRY_DIR, name), "utf8").replace(
    /\r\n/g,
    "\n",
  );
  return new Map([
    [
      `${TELEMETRY_DIR}/${name}`,
      header(`its telemetry adapter (templates/${TELEMETRY_DIR}/${name})`) + "\n" + text,
    ],
  ]);
}
