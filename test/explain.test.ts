import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { main, type Io } from "../src/cli/cli.js";
import { checkTexts } from "../src/program/check.js";
import { explain, renderExplainText, type ExplainReport } from "../src/explain/explain.js";
import { PACKAGE_ROOT } from "../src/version.js";

const run = async (...args: string[]) => {
  let stdout = "";
  let stderr = "";
  const io: Io = {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    cwd: PACKAGE_ROOT,
    color: false,
  };
  const code = await main(["node", "resgen", ...args], io);
  return { code, stdout, stderr };
};

const PAYMENTS = "examples/checkout/resilience/payments.yaml";
const CONFIG = "examples/checkout/resgen.config.yaml";
/** line:col of the `jitter: full` value in the project file, wherever edits move it. */
const JITTER_AT = (() => {
  const lines = readFileSync(join(PACKAGE_ROOT, CONFIG), "utf8").split("\n");
  const line = lines.findIndex((l) => /backoff: \{.*jitter: full/.test(l));
  return `${line + 1}:${lines[line]!.indexOf("full") + 1}`;
})();
/** The runtime's order: the breaker admits each attempt, inside the retry loop (templates/runtime/call.ts). */
const ORDER = [
  "deadline",
  "fallback",
  "bulkhead",
  "retry",
  "breaker",
  "attempt timeout",
  "transport",
];

describe("resgen explain", () => {
  it("prints the stack of payments.yaml in call order, with provenance and the worst case", async () => {
    const r = await run("explain", PAYMENTS);
    expect(r.code).toBe(0);
    const text = r.stdout;
    for (const op of ["getCharge", "createCharge"]) {
      const section = text.slice(text.indexOf(`\n${op}  `));
      const layers = [...section.matchAll(/^ {2}(\d)\. ([a-z ]+?) {2}/gm)]
        .slice(0, ORDER.length)
        .map((m) => `${m[1]!}. ${m[2]!}`);
      expect(layers).toEqual(ORDER.map((l, i) => `${i + 1}. ${l}`));
    }
    expect(text).toMatch(/timeout\.attempt +500ms +policy \(payments\.yaml:8:21\)/);
    expect(text).toMatch(
      new RegExp(`retry\\.backoff\\.jitter +full +project defaults \\(${CONFIG}:${JITTER_AT}\\)`),
    );
    expect(text).toMatch(/bulkhead\.overflow +reject +built-in default reject/);
    expect(text).toContain(
      "3 attempts × 500ms + backoff 50ms + 100ms = 1650ms, within the total 2s",
    );
    expect(text).toContain("50 calls (one second at 50 rps) → 150 attempts without a budget (3×)");
    expect(text).toContain(
      "with the budget at most 101 attempts (2.02×): gRPC A6 retry budget: N + maxTokens/2 + 1 = 50 + 100/2 + 1 = 101",
    );
    expect(text).toContain(
      "bulkhead (Little's law): 50 rps × p99 250ms = 12.5 in flight when healthy; 50 rps × attempt 500ms = 25 when every attempt times out; maxConcurrent 25",
    );
  });

  it("gives the same values as JSON", async () => {
    const r = await run("explain", PAYMENTS, "--format", "json");
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as ExplainReport;
    expect(report.operations.map((o) => o.name)).toEqual(["getCharge", "createCharge"]);
    const create = report.operations[1]!;
    expect(create.stack.map((l) => l.layer)).toEqual(ORDER);
    expect(create.worstCase).toMatchObject({
      maxAttempts: 3,
      plan: "retry",
      maxTimeMs: 1650,
      totalMs: 2000,
      fitsInTotal: true,
      attemptsWithinTotal: 3,
      outage: {
        calls: 50,
        attemptsWithoutBudget: 150,
        amplificationWithoutBudget: 3,
        attemptsWithBudget: 101,
        amplificationWithBudget: 2.02,
      },
    });
    const settings = new Map(create.stack.flatMap((l) => l.settings.map((s) => [s.key, s])));
    expect(settings.get("timeout.attempt")).toEqual({
      key: "timeout.attempt",
      value: 500,
      text: "500ms",
      origin: "policy",
      source: `${PAYMENTS}:8:21`,
    });
    expect(settings.get("retry.backoff.jitter")).toMatchObject({
      value: "full",
      origin: "project",
      source: `${CONFIG}:${JITTER_AT}`,
    });
    expect(settings.get("retry.budget.maxTokens")).toMatchObject({ value: 100, origin: "project" });
    expect(settings.get("idempotency")).toMatchObject({
      value: "key",
      text: "idempotency key Idempotency-Key",
      origin: "operation",
    });
    expect(report.littlesLaw).toEqual({
      rps: 50,
      p99Ms: 250,
      inFlightHealthy: 12.5,
      attemptMs: 500,
      inFlightAllTimingOut: 25,
      maxConcurrent: 25,
    });
    // the text shows every value the JSON carries
    const text = (await run("explain", PAYMENTS, "--operation", "createCharge")).stdout;
    for (const s of settings.values()) expect(text).toContain(s.text);
  });

  it("--operation limits the report to one operation; an unknown one is a usage error", async () => {
    const one = await run("explain", PAYMENTS, "--operation", "getCharge");
    expect(one.code).toBe(0);
    expect(one.stdout).toContain("\ngetCharge  GET /charges/{chargeId}\n");
    expect(one.stdout).not.toContain("createCharge");
    const unknown = await run("explain", PAYMENTS, "--operation", "refund");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(
      'payments has no operation "refund"; it has getCharge, createCharge',
    );
  });

  it("shows derived values with their formula", async () => {
    const r = await run(
      "explain",
      "examples/checkout/resilience/inventory.yaml",
      "--operation",
      "getStock",
    );
    expect(r.stdout).toMatch(/timeout\.attempt +180ms +derived: 1\.5 × p999 \(120ms\) = 180ms/);
    expect(r.stdout).toContain(
      "3 attempts × 180ms + backoff 50ms + 100ms = 690ms, within the total 1s",
    );
  });

  it("counts hedged copies and the hedge budget for a hedged read", async () => {
    const r = await run(
      "explain",
      "examples/checkout/resilience/recommendations.yaml",
      "--operation",
      "getRecommendations",
      "--format",
      "json",
    );
    const op = (JSON.parse(r.stdout) as ExplainReport).operations[0]!;
    expect(op.stack.map((l) => [l.layer, l.active])).toContainEqual(["hedge", true]);
    expect(op.stack.map((l) => [l.layer, l.active])).toContainEqual(["retry", false]);
    expect(op.worstCase).toMatchObject({
      plan: "hedge",
      maxAttempts: 2,
      maxTimeMs: 295,
      // the hedge budget starts with max(1, 100 × 5%) = 5 tokens and earns 5% a call
      outage: { calls: 200, attemptsWithoutBudget: 400, attemptsWithBudget: 215 },
    });
  });

  it("takes exactly one readable policy file (exit 2 otherwise)", async () => {
    const many = await run("explain", "examples/checkout");
    expect(many.code).toBe(2);
    expect(many.stderr).toMatch(
      /explain takes exactly one policy file; "examples\/checkout" matches [2-9]/,
    );
    const missing = await run("explain", "test/fixtures/analyze/missing.yaml");
    expect(missing.code).toBe(2);
    expect(missing.stdout).toContain(
      "error RG004 cannot read test/fixtures/analyze/missing.yaml: no such file",
    );
  });

  it("lists the policy's warnings, except calls it cannot resolve from one file", async () => {
    const r = await run("explain", "test/fixtures/analyze/rg211.yaml", "--format", "json");
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as ExplainReport).findings).toEqual([
      expect.objectContaining({
        code: "RG211",
        severity: "warning",
        at: "test/fixtures/analyze/rg211.yaml:5:13",
      }),
    ]);
    const gateway = await run(
      "explain",
      "test/fixtures/analyze/chain/gateway.yaml",
      "--format",
      "json",
    );
    expect((JSON.parse(gateway.stdout) as ExplainReport).findings).toEqual([]);
  });

  it("refuses a policy with errors and prints them", async () => {
    const r = await run("explain", "test/fixtures/check/three-problems.yaml");
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("error RG104");
  });

  it("says a non-retry-safe operation is attempted once, whatever it inherits", () => {
    const text =
      "version: 1\ndependency: orders\nretry: { maxAttempts: 3, budget: {} }\noperations:\n  create: { method: POST, path: /orders }\n";
    const { policies } = checkTexts([{ file: "orders.yaml", text }]);
    const report = explain(policies[0]!);
    const op = report.operations[0]!;
    expect(op.worstCase).toMatchObject({
      maxAttempts: 1,
      plan: "single",
      outage: { attemptsWithoutBudget: 100, attemptsWithBudget: null },
    });
    expect(op.stack.find((l) => l.layer === "retry")).toMatchObject({
      active: false,
      note: expect.stringContaining("attempted once") as unknown,
    });
    expect(renderExplainText(report)).toContain("attempts      1: attempted once (not retry-safe)");
  });
});

describe("explain: coalescing", () => {
  const text =
    'version: 1\ndependency: catalog\nbulkhead: { maxConcurrent: 10 }\ncoalesce: true\noperations:\n  getProduct: { method: GET, path: "/products/{id}" }\n  updateProduct: { method: PUT, path: "/products/{id}" }\n';
  const report = explain(checkTexts([{ file: "catalog.yaml", text }]).policies[0]!);
  const layer = (op: string) =>
    report.operations.find((o) => o.name === op)!.stack.find((l) => l.layer === "coalesce");

  it("shows the layer after the deadline, with the identity and where it was set", () => {
    const stack = report.operations[0]!.stack.map((l) => l.layer);
    expect(stack.slice(0, 3)).toEqual(["deadline", "coalesce", "fallback"]);
    expect(layer("getProduct")).toMatchObject({
      active: true,
      settings: [{ key: "coalesce", value: true, origin: "policy" }],
    });
    expect(layer("getProduct")!.settings[0]!.text).toContain("Authorization");
  });

  it("says why the policy's coalesce skips a write", () => {
    expect(layer("updateProduct")).toMatchObject({ active: false });
    expect(layer("updateProduct")!.settings[0]!.formula).toContain("retry-safe reads");
    expect(renderExplainText(report)).toContain("2. coalesce");
  });

  it("has no coalesce layer where nothing speaks of it", () => {
    const plain = explain(
      checkTexts([{ file: "p.yaml", text: text.replace("coalesce: true\n", "") }]).policies[0]!,
    );
    expect(plain.operations[0]!.stack.map((l) => l.layer)).not.toContain("coalesce");
  });
});

describe("explain: the rate limit", () => {
  const text = [
    "version: 1",
    "dependency: maps",
    "latency: { rps: 30 }",
    "retry: { maxAttempts: 3 }",
    "rateLimit: { rate: 6000/min, burst: 20, maxWait: 50ms, quota: 120/s }",
    "operations:",
    "  route: { method: GET, path: /route }",
    "  tiles: { method: GET, path: /tiles, rateLimit: { rate: 5/s } }",
    "  ping: { method: GET, path: /ping, rateLimit: false }",
  ].join("\n");
  const { policies } = checkTexts([{ file: "maps.yaml", text }]);
  const report = explain(policies[0]!);
  const layer = (op: string) =>
    report.operations.find((o) => o.name === op)!.stack.find((l) => l.layer === "rate limit");

  it("sits between the retry loop and the breaker, with the worst-case offered load", () => {
    const route = report.operations.find((o) => o.name === "route")!;
    const names = route.stack.map((l) => l.layer);
    expect(names.indexOf("rate limit")).toBe(names.indexOf("breaker") - 1);
    expect(names.indexOf("rate limit")).toBe(names.indexOf("retry") + 1);
    expect(layer("route")?.settings.map((s) => [s.key, s.text])).toEqual([
      ["rateLimit.rate", "6000/min (100/s)"],
      ["rateLimit.burst", "20"],
      ["rateLimit.maxWait", "50ms"],
      ["rateLimit.maxPause", "1m"],
      ["rateLimit.quota", "120/s"],
      ["offered load", "worst case rps 30 × 3 attempts = 90/s"],
    ]);
  });

  it("shows an operation's own limit, and one turned off", () => {
    expect(layer("tiles")?.settings[0]).toMatchObject({ text: "5/s", origin: "operation" });
    expect(layer("tiles")?.note).toContain("its own");
    expect(layer("ping")).toMatchObject({ active: false, note: "turned off: rateLimit: false" });
    expect(renderExplainText(report)).toContain("rate limit");
  });
});

describe("explain: a rate limit kept in Redis", () => {
  it("offers it every replica's load, as RG230 counts it: latency.rps is one replica's", () => {
    const text = [
      "version: 1",
      "dependency: vendor",
      "latency: { rps: 30 }",
      "retry: { maxAttempts: 3 }",
      "rateLimit: { rate: 500/s, store: redis, replicas: 4 }",
      "operations:",
      "  quote: { method: GET, path: /quote }",
    ].join("\n");
    const { policies } = checkTexts([{ file: "vendor.yaml", text }]);
    const limit = explain(policies[0]!)
      .operations[0]!.stack.find((l) => l.layer === "rate limit")!
      .settings.find((s) => s.key === "offered load");
    expect(limit).toMatchObject({
      value: 360,
      text: "worst case rps 30 × 4 replicas × 3 attempts = 360/s",
    });
  });
});

describe("explain: an adaptive bulkhead", () => {
  const text = (bulkhead: string) =>
    [
      "version: 1",
      "dependency: inventory",
      "latency: { p99: 100ms, rps: 200 }",
      `bulkhead: ${bulkhead}`,
      "operations:",
      "  reserve: { method: GET, path: /stock }",
    ].join("\n");
  const layer = (bulkhead: string) => {
    const { policies } = checkTexts([{ file: "inventory.yaml", text: text(bulkhead) }]);
    const report = explain(policies[0]!);
    return {
      report,
      layer: report.operations[0]!.stack.find((l) => l.layer === "bulkhead")!,
    };
  };

  it("lists the adaptive settings after the starting limit, derived by Little's law, with their origins", () => {
    const { report, layer: b } = layer("{ adaptive: { minLimit: 4, window: 500ms } }");
    expect(b.settings.map((s) => [s.key, s.text, s.origin])).toEqual([
      ["bulkhead.maxConcurrent", "40", "derived"],
      ["bulkhead.adaptive.minLimit", "4", "policy"],
      ["bulkhead.adaptive.maxLimit", "80", "default"],
      ["bulkhead.adaptive.smoothing", "0.2", "default"],
      ["bulkhead.adaptive.tolerance", "1.5", "default"],
      ["bulkhead.adaptive.window", "500ms", "policy"],
      ["bulkhead.maxQueue", "0", "default"],
      ["bulkhead.queueTimeout", "0ms", "default"],
      ["bulkhead.overflow", "reject", "default"],
    ]);
    expect(b.note).toBe("adaptive: from 40, within 4 to 80");
    expect(renderExplainText(report)).toContain("(adaptive: from 40, within 4 to 80)");
    // Little's law's line names the bounds next to the start
    expect(report.littlesLaw).toMatchObject({
      maxConcurrent: 40,
      adaptive: { minLimit: 4, maxLimit: 80 },
    });
    expect(renderExplainText(report)).toContain("maxConcurrent 40, adaptive between 4 and 80");
  });

  it("says nothing of adaptation for a static bulkhead", () => {
    const { report, layer: b } = layer("{ maxConcurrent: 30 }");
    expect(b.note).toBeUndefined();
    expect(report.littlesLaw).not.toHaveProperty("adaptive");
    expect(b.settings.some((s) => s.key.startsWith("bulkhead.adaptive"))).toBe(false);
  });
});
