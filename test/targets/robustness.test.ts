/**
 * Property test: odd but valid policies (extreme numbers, layers on and off, HTTP and gRPC
 * operations) never make a target fail. Every YAML document still validates against the
 * published CRD schema, every service config is accepted by @grpc/grpc-js, and every note is an
 * RG4xx code inside the policy file.
 */
import { existsSync } from "node:fs";
import * as grpc from "@grpc/grpc-js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseAllDocuments, stringify } from "yaml";
import { contextFromDocuments } from "../../src/analyze/index.js";
import { checkTexts } from "../../src/program/check.js";
import { loadYaml } from "../../src/language/parse.js";
import { EMITTERS } from "../../src/targets/index.js";
import { crdValidators, SHARED_SCHEMAS } from "./helpers.js";

// in range for every setting (docs/policy.md, "Ranges"): above the 10ms deadline margin and 1ms per breaker bucket
const duration = fc.oneof(
  fc.integer({ min: 11, max: 100_000 }).map((n) => `${n}ms`),
  fc.constantFrom("11ms", "1h", "0.5s", "12.5ms"),
);
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const strip = (o: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
/** A count window holds at most `calls` calls: minCalls above it is an error (RG106). */
const fitMinCalls = (b: Record<string, unknown>) => {
  const calls = (b["window"] as { calls?: number } | undefined)?.calls;
  return calls !== undefined && typeof b["minCalls"] === "number" && b["minCalls"] > calls
    ? { ...b, minCalls: calls }
    : b;
};
const condition = fc.oneof(
  fc.constantFrom("timeout", "network"),
  fc.integer({ min: 100, max: 599 }),
);

const retry = fc
  .record({
    maxAttempts: maybe(fc.integer({ min: 1, max: 100 })),
    backoff: maybe(
      fc
        .record({
          base: maybe(duration),
          cap: maybe(duration),
          multiplier: maybe(fc.double({ min: 1, max: 10, noNaN: true })),
          jitter: maybe(fc.constantFrom("none", "full", "equal", "decorrelated")),
        })
        .map(strip),
    ),
    on: maybe(fc.uniqueArray(condition, { maxLength: 6 })),
    retryAfter: maybe(
      fc.oneof(
        fc.constantFrom("honor", "ignore"),
        duration.map((max) => ({ max })),
      ),
    ),
  })
  .map(strip);

const operation = fc
  .record({
    method: maybe(fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE")),
    path: fc.constantFrom("/a", "/a/{id}", "/a.b/{id}/c+d/{other}"),
    grpc: maybe(
      fc.record({
        service: fc.constantFrom("x.v1.S", "S", "a_b.c.D"),
        method: fc.constantFrom("Get", "Put"),
      }),
    ),
    idempotent: maybe(fc.boolean()),
    idempotency: maybe(fc.constant({ header: "Idempotency-Key" })),
    timeout: maybe(
      fc
        .record({ attempt: maybe(duration), total: maybe(duration), connect: maybe(duration) })
        .map(strip),
    ),
    retry: maybe(fc.oneof(fc.constant(false as const), retry)),
    hedge: maybe(
      fc.oneof(
        fc.constant(false as const),
        fc
          .record({ delay: maybe(duration), maxAttempts: maybe(fc.integer({ min: 2, max: 10 })) })
          .map(strip),
      ),
    ),
    fallback: maybe(fc.constantFrom({ kind: "none" }, { kind: "stale" }, { kind: "provided" })),
  })
  .map((op) => {
    const o = strip(op);
    // an operation without a method has no path either (a function call, perhaps a gRPC method)
    if (o["method"] === undefined) delete o["path"];
    return o;
  });

const policy = fc
  .record({
    transport: fc.constantFrom("http", "function"),
    latency: maybe(
      fc
        .record({
          p99: maybe(duration),
          p999: maybe(duration),
          rps: maybe(fc.double({ min: 0.001, max: 1e6, noNaN: true })),
        })
        .map(strip),
    ),
    retry: maybe(
      fc
        .record({
          maxAttempts: maybe(fc.integer({ min: 1, max: 100 })),
          budget: maybe(
            fc.oneof(
              fc.constant(false as const),
              fc
                .record({
                  maxTokens: maybe(fc.integer({ min: 1, max: 10_000 })),
                  tokenRatio: maybe(fc.double({ min: 0.0001, max: 1, noNaN: true })),
                })
                .map(strip),
            ),
          ),
        })
        .map(strip),
    ),
    breaker: maybe(
      fc
        .record({
          failureRate: maybe(fc.double({ min: 0.001, max: 1, noNaN: true })),
          minCalls: maybe(fc.integer({ min: 1, max: 100_000 })),
          window: maybe(
            fc.oneof(
              fc.record({ duration }),
              fc.record({ calls: fc.integer({ min: 1, max: 1000 }) }),
            ),
          ),
          slowCall: maybe(fc.record({ duration })),
        })
        .map(strip)
        .map(fitMinCalls),
    ),
    bulkhead: maybe(
      fc
        .record({
          maxConcurrent: maybe(fc.integer({ min: 1, max: 100_000 })),
          maxQueue: maybe(fc.integer({ min: 0, max: 100 })),
          overflow: maybe(fc.constantFrom("reject", "drop-oldest")),
        })
        .map(strip),
    ),
    operations: fc.dictionary(fc.constantFrom("get", "put", "create", "list"), operation, {
      minKeys: 1,
      maxKeys: 3,
    }),
  })
  .map((p) => {
    const ops = Object.fromEntries(
      Object.entries(p.operations).map(([k, o]) => [
        k,
        p.transport === "http" && o["method"] === undefined
          ? { ...o, method: "GET", path: "/a" }
          : o,
      ]),
    );
    return { version: 1, dependency: "dep", ...strip(p), operations: ops };
  });

describe("targets robustness", () => {
  it("never fail on odd but valid policies, and their output stays valid for each engine", () => {
    const validate = existsSync(SHARED_SCHEMAS) ? crdValidators() : undefined;
    let emitted = 0;
    fc.assert(
      fc.property(policy, (p) => {
        const text = stringify(p);
        const { policies, diagnostics } = checkTexts([{ file: "dep.yaml", text }]);
        if (policies.length === 0 || diagnostics.some((d) => d.severity === "error")) return;
        const loaded = loadYaml("dep.yaml", text);
        if (!loaded.ok) return;
        const ctx = {
          locate: contextFromDocuments(new Map([["dep.yaml", loaded.source]])),
          sourcePath: () => "dep.yaml",
        };
        for (const emit of Object.values(EMITTERS)) {
          const out = emit(policies, ctx);
          for (const d of out.diagnostics) {
            expect(d.code).toMatch(/^RG4\d\d$/);
            expect(d.file).toBe("dep.yaml");
            expect(d.span.start).toBeLessThanOrEqual(text.length);
          }
          for (const [path, content] of out.files) {
            emitted++;
            if (path.endsWith(".json")) {
              const client = new grpc.Client("127.0.0.1:9", grpc.credentials.createInsecure(), {
                "grpc.service_config": content,
              });
              client.close();
              continue;
            }
            for (const doc of parseAllDocuments(content)) {
              const value = doc.toJS() as { apiVersion: string; kind: string };
              const check = validate?.get(`${value.apiVersion} ${value.kind}`);
              if (check && !check(value))
                expect.fail(`${path}: ${JSON.stringify(check.errors)}\n${content}`);
            }
          }
        }
      }),
      { numRuns: 150, seed: 42 },
    );
    // many generated policies have errors (retry and hedge together, attempt ≥ total); enough do not
    expect(emitted).toBeGreaterThan(30);
  });
});
