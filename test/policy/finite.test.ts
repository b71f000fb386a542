/**
 * Property test: whatever numbers a policy holds (zero, tiny fractions, 1e308, hundreds of
 * digits), the resolved model never holds NaN or Infinity, every duration in it is within the
 * longest any setting accepts, and derived sizes stay within their ranges. Inputs out of range
 * are refused with a positioned diagnostic instead.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkPolicyText, checkTexts } from "../../src/program/check.js";
import { MAX_DURATION_MS } from "../../src/language/durations.js";
import type { ResolvedPolicy } from "../../src/model/resolved.js";
import { RANGES } from "../../src/language/schema.js";

/** Digits as a YAML scalar: ordinary values most of the time, extremes often enough to matter. */
const extreme = fc.constantFrom(
  "0",
  "0.0001",
  "0.0000000000000000000001",
  "1e308",
  "1" + "0".repeat(400),
  "9".repeat(40),
  "0." + "0".repeat(400) + "1",
  "179769313486231570000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
);
const ordinary = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 2, max: 10 }).map(String) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 1000 }).map(String) },
  {
    weight: 1,
    arbitrary: fc.double({ min: 0.001, max: 100, noNaN: true }).map((n) => n.toFixed(3)),
  },
);
const number = fc.oneof({ weight: 8, arbitrary: ordinary }, { weight: 1, arbitrary: extreme });
const fraction = fc.oneof(
  { weight: 8, arbitrary: fc.double({ min: 0.001, max: 1, noNaN: true }).map((n) => n.toFixed(4)) },
  { weight: 1, arbitrary: extreme },
);
const rate = fc.oneof(
  fraction,
  number.map((n) => `"${n}%"`),
);
const duration = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.oneof(
      fc.integer({ min: 1, max: 5000 }).map((n) => `${n}ms`),
      fc.double({ min: 0.5, max: 59, noNaN: true }).map((n) => `${n.toFixed(1)}s`),
      fc.integer({ min: 1, max: 59 }).map((n) => `${n}m`),
    ),
  },
  // any number with any unit: zero, fractions that round to nothing, hundreds of digits, hours past every range
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.oneof(extreme, ordinary), fc.constantFrom("ms", "s", "m", "h"))
      .map(([n, unit]) => `${n}${unit}`),
  },
);

const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 2 });
/** A YAML flow mapping of the defined entries, or undefined when none is. */
const flow = (entries: Record<string, string | undefined>): string | undefined => {
  const set = Object.entries(entries).filter((e): e is [string, string] => e[1] !== undefined);
  return set.length === 0 ? undefined : `{ ${set.map(([k, v]) => `${k}: ${v}`).join(", ")} }`;
};
const section = (shape: Record<string, fc.Arbitrary<string | undefined>>) =>
  fc.record(shape).map(flow);

const sections = {
  latency: section({
    p50: maybe(duration),
    p95: maybe(duration),
    p99: maybe(duration),
    p999: maybe(duration),
    rps: maybe(number),
  }),
  timeout: section({ attempt: maybe(duration), total: maybe(duration), connect: maybe(duration) }),
  deadline: section({ margin: maybe(duration) }),
  retry: fc
    .record({
      maxAttempts: maybe(number),
      backoff: section({ base: maybe(duration), cap: maybe(duration), multiplier: maybe(number) }),
      retryAfter: maybe(duration.map((d) => `{ max: ${d} }`)),
      budget: section({ maxTokens: maybe(number), tokenRatio: maybe(fraction) }),
    })
    .map((r) => flow(r)),
  breaker: fc
    .record({
      failureRate: maybe(rate),
      slowCall: maybe(fc.tuple(duration, rate).map(([d, r]) => `{ duration: ${d}, rate: ${r} }`)),
      window: maybe(
        fc.oneof(
          section({ duration: maybe(duration), buckets: maybe(number) }),
          number.map((n) => `{ calls: ${n} }`),
        ),
      ),
      minCalls: maybe(number),
      openFor: maybe(duration),
      halfOpen: section({ maxCalls: maybe(number), successes: maybe(number) }),
    })
    .map((r) => flow(r)),
  bulkhead: section({
    maxConcurrent: maybe(number),
    maxQueue: maybe(number),
    queueTimeout: maybe(duration),
  }).map((b) => b ?? "{}"),
  hedge: section({ delay: maybe(duration), maxAttempts: maybe(number), budget: maybe(rate) }),
  fallback: section({
    kind: fc.constant("stale"),
    maxAge: maybe(duration),
    maxEntries: maybe(number),
  }),
};

const policyText = fc
  .record(
    Object.fromEntries(
      Object.entries(sections).map(([k, arb]) => [
        k,
        maybe(arb as fc.Arbitrary<string | undefined>),
      ]),
    ),
  )
  .map((chosen) => {
    const lines = ["version: 1", "dependency: things"];
    for (const [key, value] of Object.entries(chosen))
      if (value !== undefined) lines.push(`${key}: ${value}`);
    lines.push(
      "operations:",
      "  get: { method: GET, path: /things }",
      "  list: { method: GET, path: /all, timeout: { attempt: 2s }, hedge: false }",
    );
    return lines.join("\n") + "\n";
  });

/** Every number in the resolved model, by path; JSON values (schemas, fallback values) are data, not settings. */
function numbers(value: unknown, path: string, out: [string, number][]): [string, number][] {
  if (typeof value === "number") out.push([path, value]);
  else if (Array.isArray(value)) value.forEach((v, i) => numbers(v, `${path}[${i}]`, out));
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value))
      if (!["schemas", "body", "response", "value", "provenance", "source"].includes(k))
        numbers(v, `${path}.${k}`, out);
  }
  return out;
}

function assertFinite(policy: ResolvedPolicy): void {
  for (const [path, n] of numbers(policy, "policy", [])) {
    expect(Number.isFinite(n), `${path} = ${n}`).toBe(true);
    expect(n, path).toBeGreaterThanOrEqual(0);
    if (/Ms$/.test(path)) expect(n, path).toBeLessThanOrEqual(MAX_DURATION_MS);
  }
  if (policy.bulkhead)
    expect(policy.bulkhead.maxConcurrent).toBeLessThanOrEqual(RANGES.bulkhead.max);
  for (const op of policy.operations) {
    expect(op.timeout.attemptMs).toBeGreaterThanOrEqual(1);
    expect(op.timeout.attemptMs).toBeLessThanOrEqual(RANGES.attempt.max);
    expect(op.timeout.totalMs).toBeGreaterThanOrEqual(1);
    expect(op.timeout.totalMs).toBeLessThanOrEqual(RANGES.total.max);
  }
  // every formula the model records is a readable number, never "Infinity" or "NaN"
  const formulas = [policy.provenance, ...policy.operations.map((o) => o.provenance)].flatMap((p) =>
    Object.values(p).map((v) => v.formula ?? ""),
  );
  for (const f of formulas) expect(f).not.toMatch(/Infinity|NaN/);
}

describe("resolved models are finite", () => {
  it("holds no NaN or Infinity whatever numbers the policy holds", () => {
    let resolved = 0;
    let refused = 0;
    fc.assert(
      fc.property(policyText, (text) => {
        const { policy, diagnostics } = checkPolicyText("things.yaml", text);
        if (policy) {
          resolved++;
          assertFinite(policy);
        } else {
          refused++;
          for (const d of diagnostics) {
            expect(d.span.start).toBeGreaterThanOrEqual(0);
            expect(d.span.end).toBeLessThanOrEqual(text.length);
            expect(d.message).not.toMatch(/Infinity|NaN/);
          }
        }
      }),
      { numRuns: 1500 },
    );
    // both sides of the property are exercised
    expect(resolved).toBeGreaterThan(200);
    expect(refused).toBeGreaterThan(200);
  });

  it("derives finite values from latency at the edges of its ranges", () => {
    const p99 = fc.constantFrom("1ms", "0.5ms", "59.9m", "1h");
    const rps = fc.constantFrom("0.000001", "1e-300", "1", "999999.999", "1000000");
    fc.assert(
      fc.property(p99, p99, rps, (a, b, r) => {
        const text = `version: 1\ndependency: things\nlatency: { p95: ${a}, p99: ${a}, p999: ${b}, rps: ${r} }\nbulkhead: {}\nhedge: {}\nretry: { maxAttempts: 100, backoff: { base: 1h, cap: 1h } }\noperations:\n  get: { method: GET, path: /things }\n`;
        const { policy, diagnostics } = checkPolicyText("things.yaml", text);
        expect(diagnostics).toEqual([]);
        assertFinite(policy!);
        // the analyzer does its arithmetic on these values too, and must not fail on them
        const analyzed = checkTexts([{ file: "things.yaml", text }]);
        expect(analyzed.diagnostics.map((d) => d.code)).not.toContain("RG299");
        for (const d of analyzed.diagnostics) expect(d.message).not.toMatch(/Infinity|NaN/);
      }),
    );
  });
});
