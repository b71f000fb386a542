/**
 * Service policies through `resgen check`: validation with positions, the analyzer's RG501,
 * RG502, RG503 and RG504, admission.reserve, and the checkout example and docs/services.md clean.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { check, checkTexts } from "../../src/program/check.js";
import { repoRoot } from "./helpers.js";

const at = (text: string, d: { span: { start: number } }) => {
  const before = text.slice(0, d.span.start).split("\n");
  return `${before.length}:${before.at(-1)!.length + 1}`;
};

describe("service policies", () => {
  it("resolves defaults and the project's deadline header", () => {
    const text = "version: 1\nkind: service\nservice: shop\nadmission: { maxConcurrent: 8 }\n";
    const r = checkTexts([{ file: "shop.yaml", text }], {
      config: { deadline: { header: "X-Deadline-Ms" } },
    });
    expect(r.diagnostics).toEqual([]);
    expect(r.services[0]).toMatchObject({
      service: "shop",
      deadline: {
        edgeMs: 5_000,
        maxMs: 30_000,
        header: "x-deadline-ms",
        format: "ms",
        grpcTimeout: true,
        expiredStatus: 504,
      },
      admission: { maxConcurrent: 8, maxQueue: 8, queueTimeoutMs: 500 },
      rejection: { status: 503, retryAfterS: 1 },
      defaultPriority: "normal",
    });
  });

  it("points at what is wrong: a unitless duration, an unknown key, a bad status, a rule matching nothing", () => {
    const text = [
      "version: 1",
      "kind: service",
      "service: shop",
      "deadline: { edge: 300, maxx: 2s }",
      "reject: { status: 500 }",
      "priorities:",
      "  rules:",
      "    - { priority: low }",
      "",
    ].join("\n");
    const r = checkTexts([{ file: "shop.yaml", text }]);
    expect(r.diagnostics.map((d) => `${d.code} ${at(text, d)}`)).toEqual([
      "RG104 4:19",
      "RG101 4:24",
      "RG107 5:19",
      "RG102 8:7",
    ]);
    expect(r.services).toEqual([]);
  });

  it("reports a maximum below the edge deadline (error) and an edge deadline the essential dependencies cannot fit in (warning)", () => {
    const service =
      "version: 1\nkind: service\nservice: shop\ncalls: [stock, ledger]\ndeadline: { edge: 200ms, max: 100ms }\nadmission: { maxConcurrent: 10 }\n";
    const stock =
      "version: 1\ndependency: stock\ntimeout: { attempt: 150ms, total: 1s }\noperations:\n  get: { method: GET, path: /s }\n  list: { method: GET, path: /l, timeout: { attempt: 120ms } }\nbulkhead: false\n";
    const pay =
      "version: 1\ndependency: pay\ntimeout: { attempt: 300ms, total: 1s }\noperations:\n  get: { method: GET, path: /p }\nbulkhead: false\n";
    const r = checkTexts([
      { file: "shop.yaml", text: service },
      { file: "stock.yaml", text: stock },
      { file: "pay.yaml", text: pay },
    ]);
    expect(
      r.diagnostics.map((d) => `${d.code} ${d.severity} ${at(service, d)} ${d.message}`),
    ).toEqual([
      'RG503 warning 4:16 calls names "ledger", but no dependency policy checked with this service declares it',
      "RG501 error 5:31 the maximum deadline (100ms) is shorter than the edge deadline (200ms): requests without a deadline would get more time than any caller may ask for",
    ]);
    // pay is not in calls:, and stock's shortest attempt (120ms) fits in 200ms
    const tight = service.replace("edge: 200ms, max: 100ms", "edge: 100ms");
    const again = checkTexts([
      { file: "shop.yaml", text: tight },
      { file: "stock.yaml", text: stock },
    ]);
    expect(again.diagnostics.filter((d) => d.code === "RG502").map((d) => d.message)).toEqual([
      "the edge deadline (100ms) is shorter than one attempt at each essential dependency: stock 120ms = 120ms",
    ]);
  });

  it("does not call a dependency unknown (RG503) when its policy was checked and has errors", () => {
    const service =
      "version: 1\nkind: service\nservice: shop\ncalls: [stock, ledger]\nadmission: { maxConcurrent: 10 }\n";
    const stock =
      "version: 1\ndependency: stock\ntimeout: { attempt: 150ms, total: 1s }\noperations:\n  get: { method: GET, path: /s }\n";
    // an error in ledger's policy: a timeout that is not a duration
    const ledger =
      "version: 1\ndependency: ledger\ntimeout: { attempt: soon }\noperations:\n  get: { method: GET, path: /l }\n";
    const r = checkTexts([
      { file: "shop.yaml", text: service },
      { file: "stock.yaml", text: stock },
      { file: "ledger.yaml", text: ledger },
    ]);
    const codes = r.diagnostics.map((d) => `${d.code} ${d.file}`);
    expect(codes.some((c) => c.endsWith("ledger.yaml"))).toBe(true);
    expect(codes.filter((c) => c.startsWith("RG503"))).toEqual([]);
    // a name that no file declares is still unknown
    const typo = checkTexts([
      { file: "shop.yaml", text: service.replace("ledger]", "ledgr]") },
      { file: "stock.yaml", text: stock },
      { file: "ledger.yaml", text: ledger },
    ]);
    expect(typo.diagnostics.filter((d) => d.code === "RG503").map((d) => d.message)).toEqual([
      'calls names "ledgr", but no dependency policy checked with this service declares it',
    ]);
  });

  it("resolves an adaptive limit only when asked for", () => {
    const text =
      "version: 1\nkind: service\nservice: shop\nadmission: { maxConcurrent: 50, adaptive: { latency: 150ms, minLimit: 5 } }\n";
    const r = checkTexts([{ file: "shop.yaml", text }]);
    expect(r.diagnostics).toEqual([]);
    expect(r.services[0]?.admission).toEqual({
      maxConcurrent: 50,
      maxQueue: 50,
      queueTimeoutMs: 500,
      adaptive: { minLimit: 5, latencyMs: 150, backoff: 0.9 },
    });
  });

  it("resolves admission.reserve only when set, and points at a reserve that leaves the lowest priority no slot", () => {
    const text =
      "version: 1\nkind: service\nservice: shop\nadmission: { maxConcurrent: 8, reserve: { critical: 2, high: 3 } }\n";
    const r = checkTexts([{ file: "shop.yaml", text }]);
    expect(r.diagnostics).toEqual([]);
    expect(r.services[0]?.admission).toEqual({
      maxConcurrent: 8,
      maxQueue: 8,
      queueTimeoutMs: 500,
      reserve: { critical: 2, high: 3 },
    });
    const full =
      "version: 1\nkind: service\nservice: shop\nadmission:\n  maxConcurrent: 4\n  reserve: { critical: 2, normal: 2 }\n";
    const bad = checkTexts([{ file: "shop.yaml", text: full }]);
    expect(
      bad.diagnostics.map((d) => `${d.code} ${d.severity} ${at(full, d)} ${d.message}`),
    ).toEqual([
      "RG106 error 6:12 admission.reserve keeps 4 slots, but admission.maxConcurrent is 4: at least one slot must be left for the lowest priority",
    ]);
    const low =
      "version: 1\nkind: service\nservice: shop\nadmission: { reserve: { critical: -1, low: 1 } }\n";
    expect(
      checkTexts([{ file: "shop.yaml", text: low }])
        .diagnostics.map((d) => d.code)
        .sort(),
    ).toEqual(["RG101", "RG106"]);
  });

  it("warns about a service without admission (RG504), at its name", () => {
    const text = "version: 1\nkind: service\nservice: shop\ncalls: []\n";
    expect(
      checkTexts([{ file: "shop.yaml", text }]).diagnostics.map(
        (d) => `${d.code} ${d.severity} ${at(text, d)}`,
      ),
    ).toEqual(["RG504 warning 3:1"]);
  });

  it("refuses a service whose module would overwrite another generated module", () => {
    const shop = "version: 1\nkind: service\nservice: shop\ncalls: []\n";
    const dep =
      "version: 1\ndependency: shop-service\noperations:\n  get: { method: GET, path: /s }\nbulkhead: false\ntimeout: { attempt: 500ms }\n";
    const r = checkTexts([
      { file: "shop.yaml", text: shop },
      { file: "dep.yaml", text: dep },
      { file: "shop2.yaml", text: shop },
    ]);
    expect(r.diagnostics.map((d) => `${d.code} ${d.file} ${d.message}`)).toEqual([
      'RG301 shop.yaml service "shop" becomes the module shop-service.ts, as dependency "shop-service" does',
      'RG301 shop2.yaml service "shop" becomes the module shop-service.ts, as dependency "shop-service" does',
    ]);
  });

  it("keeps dependency policies working with or without kind: dependency", () => {
    const text =
      "version: 1\nkind: dependency\ndependency: stock\noperations:\n  get: { method: GET, path: /s }\nbulkhead: false\ntimeout: { attempt: 500ms }\n";
    expect(checkTexts([{ file: "stock.yaml", text }]).diagnostics).toEqual([]);
  });

  it("passes every service policy in docs/services.md, in the checkout example in place of its own", async () => {
    const doc = readFileSync(join(repoRoot, "docs/services.md"), "utf8");
    const blocks = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)]
      .map((m) => m[1]!)
      .filter((y) => /^kind: service$/m.test(y));
    expect(blocks.length).toBeGreaterThan(0);
    const dir = mkdtempSync(join(tmpdir(), "resgen-services-doc-"));
    try {
      cpSync(
        join(repoRoot, "examples/checkout/resgen.config.yaml"),
        join(dir, "resgen.config.yaml"),
      );
      cpSync(join(repoRoot, "examples/checkout/resilience"), join(dir, "resilience"), {
        recursive: true,
      });
      for (const text of blocks) {
        writeFileSync(join(dir, "resilience/checkout-service.yaml"), text);
        const r = await check(["."], { cwd: dir });
        expect(r.diagnostics.map((d) => `${d.code} ${d.message}`)).toEqual([]);
        if (/reserve:/.test(text))
          expect(r.services[0]?.admission?.reserve).toEqual({ critical: 2, high: 4 });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("passes the checkout example, service policy included, with 0 errors and 0 warnings", async () => {
    const r = await check(["examples/checkout"], { cwd: repoRoot });
    expect(r.diagnostics).toEqual([]);
    expect(r.services.map((s) => s.service)).toEqual(["checkout"]);
  });
});
