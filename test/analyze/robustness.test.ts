/**
 * Property test: odd but valid policies (extreme numbers, every layer on or off, calls between
 * them) never make the analyzer fail. Every finding is a known code, never the internal-failure
 * one, and points inside its file.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { checkTexts } from "../../src/program/check.js";
import { CODES } from "../../src/diagnostics/codes.js";

const duration = fc.oneof(
  fc.integer({ min: 0, max: 100_000 }).map((n) => `${n}ms`),
  fc.constantFrom("0ms", "1ms", "1h", "0.5s"),
);
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const strip = (o: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

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
    retryAfter: maybe(
      fc.oneof(
        fc.constantFrom("honor", "ignore"),
        duration.map((max) => ({ max })),
      ),
    ),
    budget: maybe(
      fc.oneof(
        fc.constant(false as const),
        fc.record({ maxTokens: maybe(fc.integer({ min: 1, max: 10_000 })) }).map(strip),
      ),
    ),
  })
  .map(strip);

const schema = fc.constantFrom<unknown>(
  { type: "array", items: { $ref: "#/schemas/Item" } },
  { $ref: "#/schemas/Missing" },
  { type: "object", additionalProperties: false },
  { type: "integer", nullable: true },
);

const operation = fc
  .record({
    method: fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE"),
    path: fc.constantFrom("/a", "/a/{id}", "/a/{id}/b/{other}"),
    params: maybe(fc.constantFrom({}, { id: { type: "string" } }, { nope: { type: "integer" } })),
    idempotent: maybe(fc.boolean()),
    idempotency: maybe(fc.constant({ header: "Idempotency-Key" })),
    timeout: maybe(fc.record({ attempt: maybe(duration), total: maybe(duration) }).map(strip)),
    retry: maybe(
      fc.oneof(
        fc.constant(false as const),
        retry.map((r) => strip({ ...r, budget: undefined })),
      ),
    ),
    hedge: maybe(
      fc.oneof(
        fc.constant(false as const),
        fc
          .record({ delay: maybe(duration), maxAttempts: maybe(fc.integer({ min: 2, max: 10 })) })
          .map(strip),
      ),
    ),
    response: maybe(schema),
    fallback: maybe(
      fc.oneof(
        fc.constant({ kind: "none" }),
        fc.constant({ kind: "stale" }),
        fc.jsonValue({ maxDepth: 3 }).map((value) => ({ kind: "value", value })),
      ),
    ),
  })
  .map(strip);

const policy = (name: string, others: readonly string[]) =>
  fc
    .record({
      essential: maybe(fc.boolean()),
      latency: maybe(
        fc
          .record({
            p99: maybe(duration),
            p999: maybe(duration),
            rps: maybe(fc.double({ min: 0.001, max: 1e6, noNaN: true })),
          })
          .map(strip),
      ),
      timeout: maybe(fc.record({ attempt: maybe(duration), total: maybe(duration) }).map(strip)),
      retry: maybe(retry),
      breaker: maybe(
        fc
          .record({
            minCalls: maybe(fc.integer({ min: 1, max: 100_000 })),
            window: maybe(
              fc.oneof(
                fc.record({ duration: duration }),
                fc.record({ calls: fc.integer({ min: 1, max: 1000 }) }),
              ),
            ),
          })
          .map(strip),
      ),
      bulkhead: maybe(
        fc.record({ maxConcurrent: maybe(fc.integer({ min: 1, max: 100_000 })) }).map(strip),
      ),
      hedge: maybe(fc.record({ delay: maybe(duration) }).map(strip)),
      calls: maybe(fc.subarray([...others, "elsewhere"])),
      operations: fc.dictionary(fc.constantFrom("get", "put", "create", "list"), operation, {
        minKeys: 1,
        maxKeys: 3,
      }),
    })
    .map((p) => ({
      version: 1,
      dependency: name,
      ...strip(p),
      schemas: {
        Item: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
      },
    }));

describe("analyzer robustness", () => {
  it("never fails on odd but valid policies", () => {
    const names = ["a", "b", "c"];
    let analyzed = 0;
    let findings = 0;
    fc.assert(
      fc.property(fc.tuple(...names.map((n) => policy(n, names))), (policies) => {
        const files = policies.map((p) => ({ file: `${p.dependency}.yaml`, text: stringify(p) }));
        const { diagnostics, policies: resolved } = checkTexts(files);
        analyzed += resolved.length;
        findings += diagnostics.filter((d) => d.code.startsWith("RG2")).length;
        for (const d of diagnostics) {
          expect(CODES[d.code]).toBeDefined();
          expect(d.code).not.toBe("RG299");
          const text = files.find((f) => f.file === d.file)?.text;
          expect(text, d.file).toBeDefined();
          expect(d.span.start).toBeLessThanOrEqual(text!.length);
          expect(d.span.end).toBeGreaterThanOrEqual(d.span.start);
        }
      }),
      { numRuns: 300 },
    );
    // the generator must produce valid policies, or the property says nothing about the analyzer
    expect(analyzed).toBeGreaterThan(300);
    expect(findings).toBeGreaterThan(300);
  });
});
