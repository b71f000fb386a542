/** Shared by the target tests: builds a project for some targets into a scratch folder. */
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Ajv, type ValidateFunction } from "ajv";
import { parse } from "yaml";
import { build, type BuildResult } from "../../src/build/build.js";
import type { TargetName } from "../../src/targets/index.js";
import { PACKAGE_ROOT } from "../../src/version.js";

export const OUT = join(PACKAGE_ROOT, "test/targets/__out__");

export async function buildTargets(
  input: string,
  targets: readonly TargetName[],
  name: string,
): Promise<BuildResult> {
  const out = join(OUT, name);
  rmSync(out, { recursive: true, force: true });
  return build([input], {
    cwd: PACKAGE_ROOT,
    out,
    targets,
    check: true,
    allowOutsideProject: true,
  });
}

/** The files a build would write, by path. */
export function emitted(result: BuildResult): Map<string, string> {
  const files = new Map<string, string>();
  for (const plan of result.plans)
    for (const c of plan.changes) if (c.kind !== "remove") files.set(c.path, c.content);
  return files;
}

/** Where the published mesh schemas are: ../shared/schemas next to the repository. */
export const SHARED_SCHEMAS = join(PACKAGE_ROOT, "..", "shared", "schemas");

interface Crd {
  spec: {
    group: string;
    names: { kind: string };
    versions: { name: string; schema: { openAPIV3Schema: object } }[];
  };
}

/** A validator per "apiVersion kind", from the published CRD files (call only when SHARED_SCHEMAS exists). */
export function crdValidators(): Map<string, ValidateFunction> {
  const ajv = new Ajv({ allErrors: true, strict: false });
  // Kubernetes extensions: ajv needs them declared; CEL rules (x-kubernetes-validations) are the API server's
  for (const keyword of [
    "x-kubernetes-int-or-string",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-validations",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-embedded-resource",
  ]) {
    ajv.addKeyword({ keyword });
  }
  ajv.addFormat("int32", {
    type: "number",
    validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31,
  });
  ajv.addFormat("int64", { type: "number", validate: (n: number) => Number.isInteger(n) });
  ajv.addFormat("double", { type: "number", validate: () => true });
  ajv.addFormat("float", { type: "number", validate: () => true });
  ajv.addFormat("byte", /^[A-Za-z0-9+/]*={0,2}$/);
  ajv.addFormat("date-time", {
    type: "string",
    validate: (s: string) => !Number.isNaN(Date.parse(s)),
  });
  const out = new Map<string, ValidateFunction>();
  for (const folder of ["istio", "linkerd"]) {
    for (const file of readdirSync(join(SHARED_SCHEMAS, folder)).filter((f) =>
      f.endsWith(".yaml"),
    )) {
      const crd = parse(readFileSync(join(SHARED_SCHEMAS, folder, file), "utf8")) as Crd;
      for (const version of crd.spec.versions) {
        out.set(
          `${crd.spec.group}/${version.name} ${crd.spec.names.kind}`,
          ajv.compile(version.schema.openAPIV3Schema),
        );
      }
    }
  }
  return out;
}
