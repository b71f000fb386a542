import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  backoffDelay,
  exponentialDelay,
  type BackoffSettings,
  type Jitter,
} from "../../templates/runtime/index.js";

const settings = (jitter: Jitter): BackoffSettings => ({
  baseMs: 100,
  capMs: 1_000,
  multiplier: 2,
  jitter,
});

describe("backoff", () => {
  it("grows exponentially and is capped: exp = min(cap, base × multiplier^(n−1))", () => {
    expect([1, 2, 3, 4, 5].map((n) => exponentialDelay(settings("none"), n))).toEqual([
      100, 200, 400, 800, 1_000,
    ]);
  });

  it("applies each jitter formula to the capped exponential", () => {
    const r = (): number => 0.25;
    expect(backoffDelay(settings("none"), 3, 0, r)).toBe(400);
    expect(backoffDelay(settings("full"), 3, 0, r)).toBe(100);
    expect(backoffDelay(settings("equal"), 3, 0, r)).toBe(250);
    expect(backoffDelay(settings("decorrelated"), 3, 200, r)).toBe(100 + 0.25 * (600 - 100));
    expect(backoffDelay(settings("full"), 10, 0, () => 0.999)).toBeLessThan(1_000);
    expect(backoffDelay(settings("decorrelated"), 3, 5_000, () => 0.999)).toBeCloseTo(
      100 + 0.999 * 900,
    );
  });

  it("stays finite and within the cap after 1,000 attempts", () => {
    for (const jitter of ["none", "full", "equal", "decorrelated"] as const) {
      let previous = 100;
      for (let n = 1; n <= 1_000; n++)
        previous = backoffDelay(settings(jitter), n, previous, Math.random);
      expect(Number.isFinite(previous)).toBe(true);
      expect(previous).toBeLessThanOrEqual(1_000);
    }
  });

  it("always returns a delay within [0, cap] (property)", () => {
    fc.assert(
      fc.property(
        fc.record({
          baseMs: fc.double({ min: 0, max: 1e6, noNaN: true }),
          capMs: fc.double({ min: 0, max: 1e7, noNaN: true }),
          multiplier: fc.double({ min: 1, max: 10, noNaN: true }),
          jitter: fc.constantFrom<Jitter>("none", "full", "equal", "decorrelated"),
        }),
        fc.integer({ min: 1, max: 100_000 }),
        fc.double({ min: 0, max: 1e9, noNaN: true }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (s, n, previous, u) => {
          const delay = backoffDelay(s, n, previous, () => u);
          expect(delay).toBeGreaterThanOrEqual(0);
          expect(delay).toBeLessThanOrEqual(s.capMs);
        },
      ),
    );
  });
});
