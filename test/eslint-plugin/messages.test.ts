import { Linter } from "eslint";
import { describe, expect, it } from "vitest";
import plugin from "../../eslint-plugin/index.js";

// The words of findings, where a template filled with a name used to read badly ("retries a
// opossum circuit breaker").

function messages(code: string): string[] {
  return new Linter()
    .verify(code, [
      { languageOptions: { ecmaVersion: "latest", sourceType: "module" } },
      plugin.configs.recommended,
    ])
    .map((m) => m.message);
}

describe("retry-inside-breaker's words", () => {
  it("names the breaker library after the phrase, whatever its first letter", () => {
    const opossum = messages(
      'import CircuitBreaker from "opossum";\nimport pRetry from "p-retry";\nconst breaker = new CircuitBreaker(send);\nexport const run = () => pRetry(() => breaker.fire(), { retries: 3 });',
    );
    expect(opossum).toHaveLength(1);
    expect(opossum[0]).toContain("retries a circuit breaker (opossum) without stopping");
    expect(opossum[0]).not.toMatch(/\ba opossum\b/);
  });
});
