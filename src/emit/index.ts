/**
 * Emission of a whole output folder: one module per dependency and per service, a barrel, and
 * the runtime. Returns file contents by relative path; writing them is src/build/write.ts's job.
 */
import type { ResolvedPolicy } from "../model/resolved.js";
import type { ResolvedService } from "../model/service.js";
import { emitClient } from "./client.js";
import { emitService } from "./service.js";
import {
  BARREL_MODULE,
  clientNames,
  RUNTIME_MODULE,
  RUNTIME_PACKAGE,
  serviceNames,
  TELEMETRY_MODULE,
} from "../model/names.js";
import { RUNTIME_DIR } from "../model/layout.js";
import { header } from "../model/header.js";
import { moduleName } from "../model/identifiers.js";
import { emitRuntime, emitTelemetry, type Platform } from "./runtime.js";
import { code, lines, list, print, type Doc } from "./printer.js";

export interface EmitContext {
  /** The policy's path as it appears in the header: relative to the project, forward slashes. */
  readonly sourcePath: (policy: ResolvedPolicy) => string;
  /** Service policies of the folder, each with its path as it appears in the header. */
  readonly services?:
    readonly { readonly service: ResolvedService; readonly sourcePath: string }[] | undefined;
  /** `telemetry` of the project file: `opentelemetry` adds the adapter and installs it in every client. */
  readonly telemetry?: "none" | "opentelemetry" | undefined;
  /**
   * `runtime` of the project file: `vendored` (default) writes the runtime into runtime/;
   * `package` imports it from the resgen package (docs/runtime-package.md).
   */
  readonly runtime?: "vendored" | "package" | undefined;
  /** `platform` of the project file: `web` writes the runtime without AsyncLocalStorage. */
  readonly platform?: Platform | undefined;
}

/** File contents by path relative to the output folder, sorted. */
export type EmittedFiles = ReadonlyMap<string, string>;

/**
 * Emits the output folder of checked policies (`check` has already refused names that clash):
 * the client and service modules, the barrel, the runtime and, with telemetry, its adapter.
 */
export function emitOutputFolder(
  policies: readonly ResolvedPolicy[],
  ctx: EmitContext,
): EmittedFiles {
  const files = new Map<string, string>();
  const sorted = [...policies].sort((a, b) =>
    a.dependency < b.dependency ? -1 : a.dependency > b.dependency ? 1 : 0,
  );
  const fromPackage = ctx.runtime === "package";
  // under `runtime: package` every module imports the runtime from the package
  const specifier = fromPackage
    ? (from: string) => (from === RUNTIME_MODULE ? RUNTIME_PACKAGE.generated : from)
    : undefined;
  const barrel: Doc[] = [];
  const reexport = (names: readonly string[], from: string) =>
    code`export ${list("{", names, "}", { space: true })} from ${JSON.stringify(from)};`;
  for (const policy of sorted) {
    const module = moduleName(policy.dependency);
    const path = `${module}.ts`;
    const head = header(ctx.sourcePath(policy));
    const telemetry = ctx.telemetry ?? "none";
    files.set(path, head + "\n" + emitClient(policy, { telemetry, specifier }));
    const n = clientNames(policy.dependency);
    barrel.push(reexport([n.factory, `type ${n.client}`, `type ${n.config}`], `./${module}.js`));
  }
  for (const { service, sourcePath } of [...(ctx.services ?? [])].sort((a, b) =>
    a.service.service < b.service.service ? -1 : 1,
  )) {
    const n = serviceNames(service.service);
    const path = `${n.module}.ts`;
    const head = header(sourcePath);
    files.set(path, head + "\n" + emitService(service, specifier));
    barrel.push(reexport([n.factory], `./${n.module}.js`));
  }
  barrel.push(
    `export * from ${JSON.stringify(fromPackage ? RUNTIME_PACKAGE.public : `./${RUNTIME_DIR}/public.js`)};`,
  );
  if (ctx.telemetry === "opentelemetry")
    barrel.push(
      reexport(["installOpenTelemetry", "type OpenTelemetryOptions"], TELEMETRY_MODULE),
      reexport(["installInboundOpenTelemetry"], TELEMETRY_MODULE),
    );
  files.set(
    `${BARREL_MODULE}.ts`,
    header("the project's policies") + "\n" + print(lines(barrel)).text + "\n",
  );
  if (!fromPackage) for (const [path, text] of emitRuntime(ctx.platform)) files.set(path, text);
  if (ctx.telemetry === "opentelemetry")
    for (const [path, text] of emitTelemetry(ctx.runtime)) files.set(path, text);
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
