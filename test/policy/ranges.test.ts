/**
 * Ranges of numbers and durations (docs/policy.md, "Ranges"): a value outside its range is an
 * error RG106 at the value, wherever it was set; values derived from others are capped to the
 * ranges of the settings they fill.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { check, checkPolicyText, checkTexts } from "../../src/program/check.js";
import type { Diagnostic } from "../../src/diagnostics/diagnostic.js";
import { LineIndex } from "../../src/diagnostics/position.js";
import { JSON_SCHEMAS } from "../../src/language/json-schema.js";
import { loadYaml } from "../../src/language/parse.js";
import { MAX_DURATION_MS, parseDuration } from "../../src/language/durations.js";
import { ProjectConfig } from "../../src/language/schema.js";
import { checkServiceSource } from "../../src/model/service.js";
import { validate } from "../../src/language/validate.js";
import { PACKAGE_ROOT } from "../../src/version.js";
import { at, diagnose, policy } from "../helpers/diagnose.js";

const DIGITS_400 = "1" + "0".repeat(399);

/** The diagnostics of `text` checked with the analyzer, with 1-based positions. */
function analyzed(text: string) {
  const { diagnostics, policies } = checkTexts([{ file: "policy.yaml", text }]);
  return { policies, found: positioned(text, diagnostics) };
}

function positioned(text: string, diagnostics: readonly Diagnostic[]) {
  const index = new LineIndex(text);
  return diagnostics.map((d) => ({
    code: d.code,
    severity: d.severity,
    ...index.position(d.span.start),
    message: d.message,
    hint: d.hint,
  }));
}

/** The single error of `text` (loader and analyzer), which must be RG106. */
function rangeError(text: string) {
  const errors = analyzed(text).found.filter((d) => d.severity === "error");
  expect(errors, JSON.stringify(errors, null, 2)).toHaveLength(1);
  expect(errors[0]!.code).toBe("RG106");
  return errors[0]!;
}

describe("durations that must be positive", () => {
  it("refuses timeout.attempt: 0ms at the value", () => {
    const text = policy("timeout: { attempt: 0ms, total: 2s }\n");
    const d = rangeError(text);
    expect(d).toMatchObject({
      ...at(text, "0ms"),
      message: "timeout.attempt must be at least 1ms, got 0ms",
    });
    expect(d.hint).toBe("a zero attempt timeout fails every attempt at once");
  });

  it("refuses a fraction of a millisecond that rounds to 0ms, and says so", () => {
    const text = policy("timeout: { attempt: 0.0001ms }\n");
    const d = rangeError(text);
    expect(d).toMatchObject({
      ...at(text, "0.0001ms"),
      message: "timeout.attempt must be at least 1ms, got 0.0001ms (0.0001ms rounds to 0ms)",
    });
  });

  it("accepts the smallest positive value, 0.5ms rounded to 1ms", () => {
    const { policy: resolved, diagnostics } = checkPolicyText(
      "p.yaml",
      policy("timeout: { attempt: 0.5ms, total: 1s }\n"),
    );
    expect(diagnostics).toEqual([]);
    expect(resolved!.operations[0]!.timeout.attemptMs).toBe(1);
  });

  it.each([
    ["timeout: { total: 0ms }", "timeout.total"],
    ["timeout: { connect: 0ms }", "timeout.connect"],
    ["latency: { p99: 0.2ms }", "latency.p99"],
    ["breaker: { openFor: 0ms }", "breaker.openFor"],
    ["breaker: { slowCall: { duration: 0ms } }", "breaker.slowCall.duration"],
    ["breaker: { window: { duration: 0ms } }", "breaker.window.duration"],
    ["hedge: { delay: 0ms }", "hedge.delay"],
    ["fallback: { kind: stale, maxAge: 0ms }", "fallback.maxAge"],
  ])("refuses %s", (section, key) => {
    const text = policy(`${section}\n`);
    const d = rangeError(text);
    expect(d.message).toMatch(
      new RegExp(`^${key.replace(/\./g, "\\.")} must be at least 1ms, got 0(\\.2)?ms`),
    );
    expect(d).toMatchObject(at(text, section.includes("0.2ms") ? "0.2ms" : "0ms"));
  });

  it("refuses a breaker window of 0ms as an error, not a warning about a 10ms window", () => {
    const text = policy("breaker: { window: { duration: 0ms } }\n");
    const { found, policies } = analyzed(text);
    expect(policies).toEqual([]);
    expect(found.filter((d) => d.severity === "error").map((d) => d.code)).toEqual(["RG106"]);
  });

  it("refuses a window shorter than 1ms per bucket, which the runtime would stretch to `buckets` ms", () => {
    const text = policy("breaker: { window: { duration: 5ms, buckets: 10 } }\n");
    const d = rangeError(text);
    expect(d).toMatchObject({
      ...at(text, "5ms"),
      message: expect.stringContaining(
        "breaker.window.duration 5ms must be at least 1ms per bucket (10 buckets: 10ms)",
      ) as unknown,
    });
    expect(
      analyzed(policy("breaker: { window: { duration: 10ms, buckets: 10 } }\n")).found.filter(
        (f) => f.severity === "error",
      ),
    ).toEqual([]);
  });
});

describe("rates that must be above 0%", () => {
  it.each([
    ["breaker: { slowCall: { duration: 1s, rate: 0% } }", "breaker.slowCall.rate", "0%"],
    ["breaker: { failureRate: 0% }", "breaker.failureRate", "0%"],
    ["breaker: { failureRate: 0 }", "breaker.failureRate", "0"],
    ["hedge: { budget: 0% }", "hedge.budget", "0%"],
  ])("refuses %s", (section, key, value) => {
    const text = policy(`${section}\n`);
    const d = rangeError(text);
    expect(d.message).toBe(`${key} must be more than 0%, got ${value}`);
    expect(d).toMatchObject(at(text, value === "0" ? "0 }" : value));
  });

  it("accepts a tiny positive rate", () => {
    expect(
      diagnose(
        policy("breaker: { failureRate: 0.01%, slowCall: { duration: 1s, rate: 0.000001 } }\n"),
      ),
    ).toEqual([]);
  });
});

describe("maximums: no duration or number is infinite", () => {
  it("refuses a 400-digit duration instead of an infinite openFor", () => {
    const text = policy(`breaker: { openFor: ${DIGITS_400}ms }\n`);
    const d = rangeError(text);
    expect(d).toMatchObject({
      ...at(text, DIGITS_400),
      message: expect.stringContaining(
        "breaker.openFor: duration 1000000000…0000ms (402 characters) is longer than 168h (7 days)",
      ) as unknown,
    });
    expect(d.message).not.toContain("Infinity");
  });

  it("parseDuration never returns a non-finite or over-long value", () => {
    for (const text of [
      `${DIGITS_400}ms`,
      `${DIGITS_400}.5h`,
      "1e400ms",
      "99999999999999999999h",
      "169h",
      "10081m",
    ]) {
      const parsed = parseDuration(text);
      if (parsed.ok)
        expect(Number.isFinite(parsed.value) && parsed.value <= MAX_DURATION_MS, text).toBe(true);
    }
    expect(parseDuration(`${DIGITS_400}ms`)).toMatchObject({ ok: false, range: true });
    expect(parseDuration("168h")).toEqual({ ok: true, value: MAX_DURATION_MS });
    expect(parseDuration("169h")).toMatchObject({ ok: false, range: true });
  });

  it.each([
    ["timeout: { attempt: 61m }", "timeout.attempt must be at most 1h, got 61m"],
    ["timeout: { total: 25h }", "timeout.total must be at most 24h, got 25h"],
    ["breaker: { openFor: 2h }", "breaker.openFor must be at most 1h, got 2h"],
    ["deadline: { margin: 2m }", "deadline.margin must be at most 1m, got 2m"],
    [
      "fallback: { kind: stale, maxAge: 169h }",
      "fallback.maxAge: duration 169h is longer than 168h (7 days), the longest any setting accepts",
    ],
  ])("refuses %s", (section, message) => {
    expect(rangeError(policy(`${section}\n`)).message).toBe(message);
  });

  it("refuses latency.rps: 1e308, which derived a bulkhead of 2e307", () => {
    const text = policy("latency: { p99: 100ms, rps: 1e308 }\nbulkhead: {}\n");
    const d = rangeError(text);
    expect(d).toMatchObject({
      ...at(text, "1e308"),
      message: "latency.rps must be at most 1000000, got 1e+308",
    });
  });

  it("refuses a number with hundreds of digits (YAML reads it as Infinity) as out of range", () => {
    const text = policy(`retry: { maxAttempts: ${DIGITS_400} }\n`);
    const d = rangeError(text);
    expect(d).toMatchObject({
      ...at(text, DIGITS_400),
      message: "retry.maxAttempts must be at most 100, got a number too large to represent",
    });
  });

  it("caps a derived bulkhead at the largest bulkhead, 100 000", () => {
    const { policy: resolved, diagnostics } = checkPolicyText(
      "p.yaml",
      policy("latency: { p99: 1h, rps: 1000000 }\nbulkhead: {}\n"),
    );
    expect(diagnostics).toEqual([]);
    expect(resolved!.bulkhead!.maxConcurrent).toBe(100_000);
    expect(resolved!.provenance["bulkhead.maxConcurrent"]!.formula).toContain("capped at 100000");
  });

  it("caps a derived attempt timeout at 1h and a derived total at 24h, and warns that the plan does not fit", () => {
    const text = policy(
      "latency: { p999: 1h }\nretry: { maxAttempts: 100, backoff: { base: 1h, cap: 1h }, budget: false }\n",
    );
    const { policy: resolved } = checkPolicyText("p.yaml", text);
    expect(resolved!.operations[0]!.timeout).toMatchObject({
      attemptMs: 3_600_000,
      totalMs: 86_400_000,
    });
    const rg207 = analyzed(text).found.find((d) => d.code === "RG207");
    expect(rg207?.message).toMatch(
      /= 199h exceeds the total timeout 24h: when every attempt times out, only 12 of 100 attempts fit$/,
    );
    expect(rg207?.hint).toBe(
      "lower timeout.attempt or set maxAttempts: 12 (timeout.total is at most 24h)",
    );
  });
});

describe("bounds between two keys", () => {
  it("refuses a count window smaller than minCalls: the breaker could never open", () => {
    const text = policy("breaker: { window: { calls: 5 }, minCalls: 6 }\n");
    const d = rangeError(text);
    expect(d).toMatchObject({
      ...at(text, "6 }"),
      message:
        "breaker.minCalls 6 must be at most window.calls 5: a count window of 5 calls never holds 6, so the breaker can never open",
    });
    expect(
      analyzed(policy("breaker: { window: { calls: 6 }, minCalls: 6 }\n")).found.filter(
        (f) => f.severity === "error",
      ),
    ).toEqual([]);
  });

  it("points at window.calls when minCalls is the default 20", () => {
    const text = policy("breaker: { window: { calls: 5 } }\n");
    const d = rangeError(text);
    expect(d).toMatchObject({
      ...at(text, "5 }"),
      message: expect.stringContaining(
        "breaker.minCalls 20 (the default) must be at most window.calls 5",
      ) as unknown,
    });
  });

  it("refuses backoff.base above backoff.cap, at base", () => {
    const text = policy("retry: { backoff: { base: 2s, cap: 1s }, budget: false }\n");
    const d = rangeError(text);
    expect(d).toMatchObject({
      ...at(text, "2s"),
      message: expect.stringContaining(
        "operation get: retry.backoff.base 2s must be at most retry.backoff.cap 1s",
      ) as unknown,
    });
  });

  it("compares the effective values: an operation's base against the policy's cap", () => {
    const text = policy(
      "retry: { backoff: { cap: 1s }, budget: false }\n",
      "  get:\n    method: GET\n    path: /things\n    retry: { backoff: { base: 3s } }\n",
    );
    const d = rangeError(text);
    expect(d).toMatchObject({
      ...at(text, "3s"),
      message: expect.stringContaining(
        "retry.backoff.base 3s must be at most retry.backoff.cap 1s",
      ) as unknown,
    });
  });

  it("refuses a base above the default cap of 1s", () => {
    const d = rangeError(policy("retry: { backoff: { base: 1500ms }, budget: false }\n"));
    expect(d.message).toContain(
      "retry.backoff.base 1.5s must be at most retry.backoff.cap 1s (the default)",
    );
  });

  it("refuses a deadline margin that leaves no time for any attempt", () => {
    const text = policy("deadline: { margin: 2s }\ntimeout: { attempt: 500ms, total: 1s }\n");
    const d = rangeError(text);
    expect(d).toMatchObject({
      ...at(text, "2s"),
      message: expect.stringContaining(
        "deadline.margin 2s must be below the total timeout 1s",
      ) as unknown,
    });
  });
});

describe("project defaults and service policies", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("refuses out-of-range defaults in resgen.config.yaml, at the value in that file", () => {
    const text =
      "version: 1\ndefaults:\n  breaker: { openFor: 0ms, minCalls: 0 }\n  retry: { backoff: { cap: 2h } }\n";
    const loaded = loadYaml("resgen.config.yaml", text);
    if (!loaded.ok) throw new Error("yaml");
    const found = positioned(text, validate(ProjectConfig, loaded.source).diagnostics);
    expect(found.map((d) => d.code)).toEqual(["RG106", "RG106", "RG106"]);
    expect(found).toContainEqual(
      expect.objectContaining({
        ...at(text, "0ms"),
        message: "defaults.breaker.openFor must be at least 1ms, got 0ms",
      }),
    );
    expect(found).toContainEqual(
      expect.objectContaining({
        ...at(text, "0 }"),
        message: "defaults.breaker.minCalls must be at least 1, got 0",
      }),
    );
    expect(found).toContainEqual(
      expect.objectContaining({
        ...at(text, "2h"),
        message: "defaults.retry.backoff.cap must be at most 1h, got 2h",
      }),
    );
  });

  it("points at the project file when its default base exceeds the policy's cap", async () => {
    const dir = mkdtempSync(join(tmpdir(), "resgen-ranges-"));
    dirs.push(dir);
    const config =
      'version: 1\npolicies: "*.yaml"\ndefaults:\n  retry: { backoff: { base: 2s } }\n';
    writeFileSync(join(dir, "resgen.config.yaml"), config);
    writeFileSync(
      join(dir, "things.yaml"),
      policy("retry: { backoff: { cap: 1s }, budget: false }\n"),
    );
    const result = await check([dir], { cwd: dir });
    const errors = result.diagnostics.filter((d) => d.severity === "error");
    expect(errors.map((d) => [d.code, d.file])).toEqual([["RG106", "resgen.config.yaml"]]);
    expect(new LineIndex(config).position(errors[0]!.span.start)).toEqual(at(config, "2s"));
  });

  it("refuses out-of-range service settings, and a minimum limit above the maximum", () => {
    const text =
      "version: 1\nkind: service\nservice: checkout\ndeadline: { edge: 0ms, max: 25h }\nadmission: { maxConcurrent: 10, adaptive: { latency: 0ms, minLimit: 20 } }\n";
    const loaded = loadYaml("checkout-service.yaml", text);
    if (!loaded.ok) throw new Error("yaml");
    const result = checkServiceSource(loaded.source);
    expect(result.service).toBeUndefined();
    const found = positioned(text, result.diagnostics);
    expect(found.map((d) => d.code)).toEqual(["RG106", "RG106", "RG106", "RG106"]);
    expect(found).toContainEqual(
      expect.objectContaining({
        ...at(text, "0ms"),
        message: "deadline.edge must be at least 1ms, got 0ms",
      }),
    );
    expect(found).toContainEqual(
      expect.objectContaining({
        ...at(text, "25h"),
        message: "deadline.max must be at most 24h, got 25h",
      }),
    );
    expect(found).toContainEqual(
      expect.objectContaining({
        ...at(text, "0ms", 2),
        message: "admission.adaptive.latency must be at least 1ms, got 0ms",
      }),
    );
    expect(found).toContainEqual(
      expect.objectContaining({
        ...at(text, "20 }"),
        message: "admission.adaptive.minLimit must be at most admission.maxConcurrent (10), got 20",
      }),
    );
  });

  it("bounds minLimit by the default maxConcurrent of 100 when it is omitted", () => {
    const text =
      "version: 1\nkind: service\nservice: checkout\nadmission: { adaptive: { latency: 100ms, minLimit: 101 } }\n";
    const loaded = loadYaml("s.yaml", text);
    if (!loaded.ok) throw new Error("yaml");
    expect(checkServiceSource(loaded.source).diagnostics.map((d) => d.message)).toEqual([
      "admission.adaptive.minLimit must be at most admission.maxConcurrent (100, the default), got 101",
    ]);
  });
});

describe("docs/policy.md lists a range for every number and duration", () => {
  const docs = readFileSync(join(PACKAGE_ROOT, "docs/policy.md"), "utf8");
  const section = docs.slice(docs.indexOf("### Ranges"), docs.indexOf("### Operations"));
  const rows = section.split("\n").filter((l) => l.startsWith("| `"));

  /** Dotted paths of the number and duration leaves of a JSON Schema. */
  function leaves(schema: Record<string, unknown>): string[] {
    const defs = (schema["definitions"] ?? {}) as Record<string, Record<string, unknown>>;
    const out = new Set<string>();
    const visit = (node: unknown, path: string[], depth: number): void => {
      if (node === null || typeof node !== "object" || depth > 12) return;
      const s = node as Record<string, unknown>;
      if (typeof s["$ref"] === "string") {
        visit(defs[s["$ref"].split("/").pop()!], path, depth + 1);
        return;
      }
      const type = s["type"];
      const isDuration = typeof s["pattern"] === "string" && s["pattern"].endsWith("(ms|s|m|h)$");
      if (type === "number" || type === "integer" || isDuration) out.add(path.join("."));
      for (const [key, value] of Object.entries((s["properties"] ?? {}) as Record<string, unknown>))
        visit(value, [...path, key], depth + 1);
      for (const key of ["anyOf", "oneOf", "allOf"])
        for (const sub of (s[key] ?? []) as unknown[]) visit(sub, path, depth + 1);
      if (s["items"]) visit(s["items"], path, depth + 1);
    };
    visit(schema, [], 0);
    return [...out];
  }

  const keysOfRow = (row: string) => {
    const cell = row.split("|")[1]!;
    const names = [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    const first = names[0]!;
    const parent = first.includes(".") ? first.slice(0, first.lastIndexOf(".")) : "";
    // "`latency.p50`, `p90`" abbreviates siblings of the first key
    return names.map((n) =>
      n === first || n.includes(".") || parent === "" ? n : `${parent}.${n}`,
    );
  };
  const documented = new Set(rows.flatMap(keysOfRow));

  it.each([
    ["policy.schema.json", 35],
    ["service.schema.json", 10],
  ] as const)("%s", (name, atLeast) => {
    const schema = JSON.parse(JSON_SCHEMAS[name]!()) as Record<string, unknown>;
    const all = leaves(schema).filter((p) => p !== "version");
    expect(all.length).toBeGreaterThanOrEqual(atLeast);
    expect(all.filter((p) => !documented.has(p))).toEqual([]);
  });
});

describe("adaptive concurrency (bulkhead.adaptive)", () => {
  const text = (adaptive: string, max = "") =>
    policy(`bulkhead: {${max} adaptive: { ${adaptive} } }\n`);

  it("accepts the settings within their ranges, and none at all", () => {
    for (const t of [
      text(""),
      text(
        "minLimit: 2, maxLimit: 200, smoothing: 1, tolerance: 10, window: 1m",
        " maxConcurrent: 20,",
      ),
      text("smoothing: 0.05, tolerance: 1, window: 1ms"),
    ]) {
      expect(analyzed(t).found.filter((d) => d.severity === "error")).toEqual([]);
    }
  });

  it.each([
    ["smoothing: 0", "0", "bulkhead.adaptive.smoothing"],
    ["smoothing: 1.5", "1.5", "bulkhead.adaptive.smoothing"],
    ["tolerance: 0.9", "0.9", "bulkhead.adaptive.tolerance"],
    ["tolerance: 11", "11", "bulkhead.adaptive.tolerance"],
    ["minLimit: 0", "0", "bulkhead.adaptive.minLimit"],
    ["maxLimit: 100001", "100001", "bulkhead.adaptive.maxLimit"],
    ["window: 0ms", "0ms", "bulkhead.adaptive.window"],
    ["window: 2m", "2m", "bulkhead.adaptive.window"],
  ])("refuses %s at the value", (setting, value, key) => {
    const t = text(setting);
    const d = rangeError(t);
    const where = at(t, setting);
    expect(d).toMatchObject({
      line: where.line,
      column: where.column + setting.length - value.length,
    });
    expect(d.message).toContain(key);
  });

  it("refuses minLimit above maxLimit at minLimit, with both values", () => {
    const t = text("minLimit: 50, maxLimit: 40");
    const d = rangeError(t);
    expect(d).toMatchObject({
      ...at(t, "50"),
      message: "bulkhead.adaptive.minLimit must be at most bulkhead.adaptive.maxLimit (40), got 50",
    });
    expect(d.hint).toBe("lower minLimit to 40 or less, or raise maxLimit to 50");
  });

  it("refuses a starting maxConcurrent outside [minLimit, maxLimit] at maxConcurrent", () => {
    const high = text("maxLimit: 40", " maxConcurrent: 64,");
    expect(rangeError(high)).toMatchObject({
      ...at(high, "64"),
      message:
        "bulkhead.maxConcurrent is where the adaptive limit starts, so at most bulkhead.adaptive.maxLimit (40), got 64",
    });
    const low = text("minLimit: 8", " maxConcurrent: 4,");
    expect(rangeError(low)).toMatchObject({
      ...at(low, "4,"),
      message:
        "bulkhead.maxConcurrent is where the adaptive limit starts, so at least bulkhead.adaptive.minLimit (8), got 4",
    });
  });

  it("resolves the defaults: the limit starts at maxConcurrent, maxLimit twice that", () => {
    const { policies } = analyzed(text("", " maxConcurrent: 30,"));
    expect(policies[0]!.bulkhead).toMatchObject({
      maxConcurrent: 30,
      adaptive: { minLimit: 1, maxLimit: 60, smoothing: 0.2, tolerance: 1.5, windowMs: 1_000 },
    });
  });

  it("starts from the Little's law size when latency derives maxConcurrent", () => {
    const { policies } = analyzed(
      `version: 1\ndependency: things\nlatency: { p99: 100ms, rps: 200 }\nbulkhead: { adaptive: {} }\noperations:\n  get:\n    method: GET\n    path: /things/{id}\n`,
    );
    // ceil(200 × 0.1 × 2) = 40
    expect(policies[0]!.bulkhead).toMatchObject({ maxConcurrent: 40, adaptive: { maxLimit: 80 } });
  });
});

describe("a rate limit kept in Redis (rateLimit.store, rateLimit.replicas)", () => {
  const text = (limit: string) => policy(`rateLimit: { rate: 100/s, ${limit} }\n`);
  const errors = (t: string) => analyzed(t).found.filter((d) => d.severity === "error");

  it("accepts store: redis with its replicas, and a limit in memory without", () => {
    for (const t of [text("store: redis, replicas: 4"), text("store: memory"), text("burst: 2")])
      expect(errors(t)).toEqual([]);
  });

  it("refuses store: redis without replicas at the store, saying why it needs them", () => {
    const t = text("store: redis");
    expect(errors(t)).toEqual([
      expect.objectContaining({
        ...at(t, "redis"),
        code: "RG106",
        message: expect.stringContaining("needs rateLimit.replicas") as unknown,
        hint: expect.stringContaining("add replicas") as unknown,
      }),
    ]);
  });

  it.each([
    ["store: memory, replicas: 4", "4", "read only with store: redis"],
    ["replicas: 2", "2", "read only with store: redis"],
    ["store: redis, replicas: 0", "0", "rateLimit.replicas"],
    ["store: redis, replicas: 10001", "10001", "rateLimit.replicas"],
  ])("refuses %s at the value", (limit, value, says) => {
    const t = text(limit);
    const found = errors(t);
    expect(found).toHaveLength(1);
    const where = at(t, limit);
    expect(found[0]).toMatchObject({
      line: where.line,
      column: where.column + limit.length - value.length,
      message: expect.stringContaining(says) as unknown,
    });
  });
});
