import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { networkError, RetryBudget } from "../../templates/runtime/index.js";
import { after, harness, operation, track } from "./helpers.js";

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

describe("retry budget in thousandths of a token", () => {
  it("has no float drift at the strict boundary: 100 tokens, ratio 0.1, 50 failures and 10 successes leave exactly 51", () => {
    const budget = new RetryBudget({ maxTokens: 100, tokenRatio: 0.1 });
    for (let i = 0; i < 50; i++) budget.onFailure();
    for (let i = 0; i < 10; i++) budget.onSuccess();
    expect(budget.tokens).toBe(51);
    budget.onFailure();
    // exactly maxTokens / 2: the strict > refuses the retry
    expect(budget.tokens).toBe(50);
    expect(budget.allowsRetry()).toBe(false);
  });

  it("shows a figure rounded to the thousandth in health()", () => {
    const budget = new RetryBudget({ maxTokens: 3, tokenRatio: 0.1 });
    budget.onFailure();
    for (let i = 0; i < 7; i++) budget.onSuccess();
    expect(budget.health()).toEqual({ tokens: 2.7, maxTokens: 3, allowsRetry: true });
    // more than three decimals in tokenRatio are rounded, as gRPC does
    expect(new RetryBudget({ maxTokens: 10, tokenRatio: 0.12345 }).tokenRatio).toBe(0.123);
  });

  it("with 3 tokens, 1 failure and 5 successes, gives a failing call 1 attempt, not 2 (virtual time)", async () => {
    const h = harness({ budget: { maxTokens: 3, tokenRatio: 0.1 } });
    const op = operation({
      retry: {
        maxAttempts: 3,
        backoff: { baseMs: 10, capMs: 10, multiplier: 1, jitter: "none" },
        on: ["network"],
        retryAfter: null,
      },
    });
    // one retried failure, then its retry succeeds: 3 → 2 → 2.1; four more successes: 2.5
    let n = 0;
    const first = track(
      h.dep.call(op, () =>
        after(h.clock, 5, () => {
          if (n++ === 0) throw networkError("reset");
          return "ok";
        }),
      ),
      h.clock,
    );
    await h.clock.advance(100);
    expect(first.value).toBe("ok");
    for (let i = 0; i < 4; i++) {
      const ok = track(
        h.dep.call(op, () => after(h.clock, 5, () => "ok")),
        h.clock,
      );
      await h.clock.advance(10);
      expect(ok.value).toBe("ok");
    }
    expect(h.dep.health().budget?.tokens).toBe(2.5);
    let attempts = 0;
    const failing = track(
      h.dep.call(op, () =>
        after(h.clock, 5, () => {
          attempts++;
          throw networkError("reset");
        }),
      ),
      h.clock,
    );
    await h.clock.advance(1_000);
    // 2.5 − 1 = 1.5 = maxTokens / 2: no retry (floats made it 1.5000000000000004 and retried)
    expect(attempts).toBe(1);
    expect(failing.error).toMatchObject({ kind: "budget-exhausted" });
  });
});
