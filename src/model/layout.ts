/**
 * The layout of an output folder: the folders resgen writes beside the generated modules, the
 * barrel's name, and the targets, each of which but `ts` writes a folder of its own name. The
 * model's names avoid all of them, so they live below every stage that writes one.
 */

/** The folder of the copied runtime stack. */
export const RUNTIME_DIR = "runtime";

/** The folder of the OpenTelemetry adapter (`telemetry: opentelemetry`). */
export const TELEMETRY_DIR = "telemetry";

/** The barrel's module name: `index.ts` of the output folder (src/emit/index.ts writes it). */
export const BARREL_MODULE = "index";

export const TARGETS = ["ts", "istio", "linkerd", "grpc"] as const;
export type TargetName = (typeof TARGETS)[number];
/** The targets other than the TypeScript client: each writes under a folder of its own name. */
export type MeshTarget = Exclude<TargetName, "ts">;
