/**
 * An overrides document or a `reconfigure()` change is read by its own properties only
 * (docs/runtime.md, "Reconfiguration"): a key named after something every object inherits
 * (`constructor`, `__proto__`, `toString`, …) is no setting, at any level, and is refused with a
 * problem naming its path; nothing of the change is applied. A property a change only inherits
 * is never read.
 */
import { describe, expect, it } from "vitest";
import {
  createDependency,
  createVirtualClock,
  ReconfigurationError,
} from "../../templates/runtime/index.js";
import { breakerSettings, dependencySettings, operation } from "./helpers.js";
import { documentText, LEVELS, PROTOTYPE_NAMES } from "../helpers/prototype.js";

function stack(overrides?: string) {
  const dep = createDependency(
    dependencySettings({
      breaker: { ...breakerSettings, slowCall: { durationMs: 500, rate: 0.5 } },
      bulkhead: { maxConcurrent: 4, maxQueue: 2, queueTimeoutMs: 10, overflow: "reject" },
      rateLimit: { rate: 10, periodMs: 1_000, burst: 5, maxWaitMs: 0, maxPauseMs: 1_000 },
    }),
    { clock: createVirtualClock(1_000), random: () => 0.5 },
  );
  dep.operations({ getCharge: operation() }, overrides);
  return dep;
}

describe("reconfigure: inherited names are no settings", () => {
  it("refuses every Object.prototype name at every level, naming its path, and applies nothing", () => {
    const dep = stack();
    const before = JSON.stringify(dep.settings());
    let cases = 0;
    for (const level of LEVELS) {
      for (const name of PROTOTYPE_NAMES) {
        for (const value of ["1", "{}", '{"minCalls":5}']) {
          const text = documentText(level, name, value);
          const change: unknown = JSON.parse(text);
          const path = [...level, name].join(".");
          const result = dep.reconfigure(change);
          expect(result.applied, text).toBe(false);
          const problems = result.applied ? [] : result.problems;
          expect(
            problems.some((p) => p.startsWith(`${path}:`) || p.startsWith(`${path} `)),
            `${text}: ${problems.join("; ")}`,
          ).toBe(true);
          expect(JSON.stringify(dep.settings()), text).toBe(before);
          // the same document at creation: refused, no operations registered
          expect(() => stack(text), text).toThrow(ReconfigurationError);
          cases++;
        }
      }
    }
    expect(cases).toBe(LEVELS.length * PROTOTYPE_NAMES.length * 3);
  });

  it("beside a valid setting, an inherited name still refuses the whole change", () => {
    const dep = stack();
    const before = JSON.stringify(dep.settings());
    const change: unknown = JSON.parse('{"breaker":{"minCalls":7,"__proto__":{"minCalls":9}}}');
    const result = dep.reconfigure(change);
    expect(result).toEqual({
      applied: false,
      problems: [expect.stringMatching(/^breaker\.__proto__: not reconfigurable/)],
    });
    expect(JSON.stringify(dep.settings())).toBe(before);
  });

  it("never reads a setting a change only inherits", () => {
    const dep = stack();
    const before = JSON.stringify(dep.settings());
    const inherited = Object.create({
      breaker: { minCalls: 7 },
      operations: { getCharge: { timeout: { attemptMs: 100 } } },
    }) as object;
    expect(dep.reconfigure(inherited)).toEqual({ applied: true, changed: [] });
    const nested = { breaker: Object.create({ minCalls: 7 }) as object };
    expect(dep.reconfigure(nested)).toEqual({ applied: true, changed: [] });
    expect(JSON.stringify(dep.settings())).toBe(before);
  });
});
