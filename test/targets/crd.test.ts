/**
 * Every Istio and Linkerd document resgen emits validates against the CustomResourceDefinition
 * schemas the projects publish (spec.versions[].schema.openAPIV3Schema), read from ../shared.
 */
import { existsSync } from "node:fs";
import type { ValidateFunction } from "ajv";
import { beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import type { BuildResult } from "../../src/build/build.js";
import { buildTargets, crdValidators as validators, emitted, SHARED_SCHEMAS } from "./helpers.js";

const present = existsSync(SHARED_SCHEMAS);

describe("emitted mesh resources against the published CRD schemas", () => {
  const builds: Record<string, BuildResult> = {};
  let validate: Map<string, ValidateFunction>;

  beforeAll(async () => {
    if (!present) return;
    validate = validators();
    builds["checkout"] = await buildTargets(
      "examples/checkout",
      ["istio", "linkerd"],
      "crd-checkout",
    );
    builds["lossy"] = await buildTargets(
      "test/targets/fixtures/lossy",
      ["istio", "linkerd"],
      "crd-lossy",
    );
  });

  it.skipIf(!present)(
    `every Istio and Linkerd document validates (schemas read from ${SHARED_SCHEMAS}; skipped where that folder is absent)`,
    () => {
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
      expect([...kinds].sort()).toEqual([
        "linkerd.io/v1alpha2 ServiceProfile",
        "networking.istio.io/v1 DestinationRule",
        "networking.istio.io/v1 VirtualService",
      ]);
    },
  );

  it.skipIf(!present)(
    "the validator does reject a document the schema forbids (so a pass means something)",
    () => {
      const vs = validate.get("networking.istio.io/v1 VirtualService")!;
      expect(
        vs({
          apiVersion: "networking.istio.io/v1",
          kind: "VirtualService",
          spec: { http: [{ retries: { attempts: "three" } }] },
        }),
      ).toBe(false);
      const sp = validate.get("linkerd.io/v1alpha2 ServiceProfile")!;
      expect(
        sp({
          apiVersion: "linkerd.io/v1alpha2",
          kind: "ServiceProfile",
          spec: { retryBudget: { retryRatio: 0.2 } },
        }),
      ).toBe(false);
    },
  );
});
