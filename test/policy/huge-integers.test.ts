/**
 * An integer far out of range (docs/policy.md, "Ranges"): past its field's maximum and past the
 * largest safe integer, it is one RG106 at the field's own bound, not one per bound.
 */
import { describe, expect, it } from "vitest";
import { at, diagnose, policy } from "../helpers/diagnose.js";

describe("an integer past the largest safe integer", () => {
  it.each([
    ["retry:\n  maxAttempts: 99999999999999999999\n", "retry.maxAttempts must be at most 100"],
    [
      "rateLimit: { rate: 100/s, burst: 99999999999999999999 }\n",
      "rateLimit.burst must be at most 1000000",
    ],
  ])("is one error at the declared bound: %s", (section, message) => {
    const text = policy(section);
    const found = diagnose(text).filter((d) => d.code === "RG106");
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject(at(text, "99999999999999999999"));
    expect(found[0]!.message).toContain(message);
  });
});
