/**
 * Every Istio and Linkerd document resgen emits validates against the CustomResourceDefinition
 * schemas the projects publish (spec.versions[].schema.openAPIV3Schema), read from ../shared.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { Ajv, type ValidateFunction } from "ajv";
import { beforeAll, describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import type { BuildResult } from "../../src/build.js";
import { buildTargets, emitted, SHARED_SCHEMAS } from "./helpers.js";

const present = existsSync(SHARED_SCHEMAS);

interface Crd {
  spec: { group: string; names: { kind: string }; versions: { name: string; schema: { openAPIV3Schema: object } }[] };
}

/** A validator per apiVersion and kind, from the CRD files of one folder. */
function validators(): Map<string, ValidateFunction> {
  const ajv = new Ajv({ allErrors: true, strict: false });
  // Kubernetes extensions: ajv needs them declared; CEL rules (x-kubernetes-validations) are the API server's
  for (const keyword of ["x-kubernetes-int-or-string", "x-kubernetes-preserve-unknown-fields", "x-kubernetes-validations", "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type", "x-kubernetes-embedded-resource"]) {
    ajv.addKeyword({ keyword });
  }
  ajv.addFormat("int32", { type: "number", validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
  ajv.addFormat("int64", { type: "number", validate: (n: number) => Number.isInteger(n) });
  ajv.addFormat("double", { type: "number", validate: () => true });
  ajv.addFormat("float", { type: "number", validate: () => true });
  ajv.addFormat("byte", /^[A-Za-z0-9+/]*={0,2}$/);
  ajv.addFormat("date-time", { type: "string", validate: (s: string) => !Number.isNaN(Date.parse(s)) });
  const out = new Map<string, ValidateFunction>();
  for (const folder of ["istio", "linkerd"]) {
    for (const file of readdirSync(join(SHARED_SCHEMAS, folder)).filter((f) => f.endsWith(".yaml"))) {
      const crd = parse(readFileSync(join(SHARED_SCHEMAS, folder, file), "utf8")) as Crd;
      for (const version of crd.spec.versions) {
        out.set(`${crd.spec.group}/${version.name} ${crd.spec.names.kind}`, ajv.compile(version.schema.openAPIV3Schema));
      }
    }
  }
  return out;
}

describe("emitted mesh resources against the published CRD schemas", () => {
  const builds: Record<string, BuildResult> = {};
  let validate: Map<string, ValidateFunction>;

  beforeAll(async () => {
    if (!present) return;
    validate = validators();
    builds["checkout"] = await buildTargets("examples/checkout", ["istio", "linkerd"], "crd-checkout");
    builds["lossy"] = await buildTargets("test/targets/fixtures/lossy", ["istio", "linkerd"], "crd-lossy");
  });

  it.skipIf(!present)(`every Istio and Linkerd document validates (schemas read from ${SHARED_SCHEMAS}; skipped where that folder is absent)`, () => {
    const kinds = new Set<string>();
    for (const [name, result] of Object.entries(builds)) {
      expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
      for (const [path, text] of emitted(result)) {
        for (const doc of parseAllDocuments(text)) {
          const value = doc.toJS() as { apiVersion: string; kind: string };
          const key = `${value.apiVersion} ${value.kind}`;
          const check = validate.get(key);
          expect(check, `${name} ${path}: no published schema for ${key}`).toBeDefined();
          const ok = check!(value);
          expect(ok ? [] : check!.errors, `${name} ${path} (${key})`).toEqual([]);
          kinds.add(key);
        }
      }
    }
    expect([...kinds].sort()).toEqual(["linkerd.io/v1alpha2 ServiceProfile", "networking.istio.io/v1 DestinationRule", "networking.istio.io/v1 VirtualService"]);
  });

  it.skipIf(!present)("the validator does reject a document the schema forbids (so a pass means something)", () => {
    const vs = validate.get("networking.istio.io/v1 VirtualService")!;
    expect(vs({ apiVersion: "networking.istio.io/v1", kind: "VirtualService", spec: { http: [{ retries: { attempts: "three" } }] } })).toBe(false);
    const sp = validate.get("linkerd.io/v1alpha2 ServiceProfile")!;
    expect(sp({ apiVersion: "linkerd.io/v1alpha2", kind: "ServiceProfile", spec: { retryBudget: { retryRatio: 0.2 } } })).toBe(false);
  });
});
