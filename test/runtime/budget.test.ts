import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { RetryBudget } from "../../templates/runtime/index.js";

describe("retry budget (gRPC A6 throttling)", () => {
  it("starts full, charges the failure first, then allows a retry only while tokens > max/2", () => {
    const budget = new RetryBudget({ maxTokens: 10, tokenRatio: 0.5 });
    expect(budget.tokens).toBe(10);
    for (let i = 0; i < 4; i++) budget.onFailure();
    expect(budget.tokens).toBe(6);
    expect(budget.allowsRetry()).toBe(true);
    budget.onFailure();
    expect(budget.tokens).toBe(5);
    expect(budget.allowsRetry()).toBe(false);
    budget.onSuccess();
    expect(budget.tokens).toBe(5.5);
    expect(budget.allowsRetry()).toBe(true);
  });

  it("keeps tokens within [0, maxTokens] (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000 }),
        fc.double({ min: 0, max: 5, noNaN: true }),
        fc.array(fc.boolean(), { maxLength: 3_000 }),
        (maxTokens, tokenRatio, outcomes) => {
          const budget = new RetryBudget({ maxTokens, tokenRatio });
          for (const ok of outcomes) {
            if (ok) budget.onSuccess();
            else budget.onFailure();
            expect(budget.tokens).toBeGreaterThanOrEqual(0);
            expect(budget.tokens).toBeLessThanOrEqual(maxTokens);
          }
        },
      ),
    );
  });
});
