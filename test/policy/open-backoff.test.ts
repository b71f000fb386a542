/**
 * `breaker.openFor: { base, cap, multiplier }` through every stage (docs/policy.md,
 * "Open-duration backoff"): validation at the value, the analyzer's cap ≥ base, the resolved
 * model and the settings the client is given, explain's sequence, and the mesh notes.
 */
import { describe, expect, it } from "vitest";
import { emitClient, settingsHash } from "../../src/emit/client.js";
import { explain, renderExplainText } from "../../src/explain/explain.js";
import { checkTexts } from "../../src/program/check.js";

const policy = (openFor: string, breaker = `breaker:\n  openFor: ${openFor}\n`) =>
  `version: 1\ndependency: ledger\nlatency: { p50: 20ms, p99: 80ms, p999: 200ms, rps: 50 }\nbulkhead: { maxConcurrent: 10 }\n${breaker}operations:\n  get: { method: GET, path: /entries }\n`;

const check = (text: string) => checkTexts([{ file: "ledger.yaml", text }]);
const errors = (text: string) =>
  check(text)
    .diagnostics.filter((d) => d.severity === "error")
    .map((d) => ({
      code: d.code,
      // the text the diagnostic points at
      at: text.slice(d.span.start, d.span.end),
      message: d.message,
    }));

describe("breaker.openFor with backoff", () => {
  it("resolves base, cap and multiplier, and the client gets them as openBackoff", () => {
    const { policies, diagnostics } = check(policy("{ base: 5s, cap: 5m, multiplier: 3 }"));
    expect(diagnostics).toEqual([]);
    expect(policies[0]!.breaker).toMatchObject({
      openForMs: 5_000,
      openBackoff: { capMs: 300_000, multiplier: 3 },
    });
    expect(emitClient(policies[0]!)).toContain("openBackoff: { capMs: 300000, multiplier: 3 }");
  });

  it("takes the backoff from the project defaults, and a policy's own openFor replaces it whole", () => {
    const config = {
      file: "resgen.config.yaml",
      text: "version: 1\ndefaults:\n  breaker: { openFor: { base: 2s, cap: 1m, multiplier: 4 } }\n",
    };
    const inherited = checkTexts([
      config,
      { file: "ledger.yaml", text: policy("", "breaker: {}\n") },
    ]);
    expect(inherited.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(inherited.policies[0]!.breaker).toMatchObject({
      openForMs: 2_000,
      openBackoff: { capMs: 60_000, multiplier: 4 },
    });
    const own = checkTexts([config, { file: "ledger.yaml", text: policy("10s") }]);
    expect(own.policies[0]!.breaker?.openForMs).toBe(10_000);
    expect(own.policies[0]!.breaker?.openBackoff).toBeUndefined();
  });

  it("defaults the multiplier to 2, and a plain duration has no backoff", () => {
    expect(check(policy("{ base: 5s, cap: 1m }")).policies[0]!.breaker?.openBackoff).toEqual({
      capMs: 60_000,
      multiplier: 2,
    });
    const plain = check(policy("30s")).policies[0]!;
    expect(plain.breaker?.openBackoff).toBeUndefined();
    expect(emitClient(plain)).not.toContain("openBackoff");
  });

  it("refuses a cap below the base at the cap, and a multiplier below 1 at the multiplier", () => {
    expect(errors(policy("{ base: 5s, cap: 2s }"))).toEqual([
      expect.objectContaining({ code: "RG106", at: "2s" }),
    ]);
    expect(errors(policy("{ base: 5s, cap: 5m, multiplier: 0.5 }"))).toEqual([
      expect.objectContaining({ code: "RG106", at: "0.5" }),
    ]);
    expect(errors(policy("{ base: 0ms, cap: 5m }"))).toEqual([
      expect.objectContaining({ code: "RG106", at: "0ms" }),
    ]);
    expect(errors(policy("{ cap: 5m }"))).toEqual([expect.objectContaining({ code: "RG102" })]);
  });

  it("explains the sequence of open periods", () => {
    const p = check(policy("{ base: 5s, cap: 5m }")).policies[0]!;
    const text = renderExplainText(explain(p));
    expect(text).toContain("5s, 10s, 20s, 40s, 80s, 160s … 5m, then 5m until a trial succeeds");
    const capped = check(policy("{ base: 1m, cap: 1m }")).policies[0]!;
    expect(renderExplainText(explain(capped))).toContain("1m, then 1m until a trial succeeds");
  });

  it("gives the client a settings hash that changes with the backoff", () => {
    const a = check(policy("{ base: 5s, cap: 5m }")).policies[0]!;
    const b = check(policy("{ base: 5s, cap: 4m }")).policies[0]!;
    expect(settingsHash(a)).toMatch(/^[0-9a-f]{16}$/);
    expect(settingsHash(a)).not.toBe(settingsHash(b));
    expect(emitClient(a)).toContain(`const policyHash = "${settingsHash(a)}";`);
  });

  it("leaves client.breaker out of a client without a breaker, and keeps snapshot()", () => {
    const none = check(policy("", "breaker: false\n")).policies[0]!;
    const text = emitClient(none);
    expect(text).not.toContain("readonly breaker:");
    expect(text).not.toContain("controlOf");
    expect(text).toContain("snapshot(): DependencySnapshot;");
  });
});
