import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { check, checkPolicyText, checkTexts } from "../../src/program/check.js";
import type { Diagnostic } from "../../src/diagnostics/diagnostic.js";

/** Several policies whose problems only show when they are checked together, and one OpenAPI description. */
const FILES: readonly { file: string; text: string }[] = [
  {
    file: "a.yaml",
    text: "version: 1\ndependency: payments\ntimeout: { attempt: 500ms }\noperations:\n  get: { method: GET, path: /charges }\n",
  },
  {
    file: "b.yaml",
    text: "version: 1\ndependency: payments\ntimeout: { attempt: 500ms }\noperations:\n  refund: { method: GET, path: /refunds }\n",
  },
  {
    file: "c.yaml",
    text: "version: 1\ndependency: ledger-entries\noperations:\n  get: { method: GET, path: /entries }\n",
  },
  {
    file: "d.yaml",
    text: "version: 1\ndependency: ledgerEntries\noperations:\n  get: { method: GET, path: /entries }\n",
  },
  { file: "shop.yaml", text: "version: 1\ndependency: shop\nopenapi: ./api.yaml\n" },
  {
    file: "api.yaml",
    text: 'openapi: 3.0.3\ninfo: { title: Shop, version: 1.0.0 }\npaths:\n  /items:\n    get:\n      operationId: list\n      responses:\n        "200": { description: OK, content: { application/json: { schema: { $ref: "#/components/schemas/Nope" } } } }\n',
  },
];

const row = (d: Diagnostic) => `${d.file} ${d.span.start}-${d.span.end} ${d.code} ${d.message}`;

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The files written to a fresh folder, checked by `check` from there. */
async function checkOnDisk(files: readonly { file: string; text: string }[]) {
  const dir = mkdtempSync(join(tmpdir(), "resgen-entry-"));
  dirs.push(dir);
  for (const { file, text } of files) writeFileSync(join(dir, file), text);
  return check(
    files.map((f) => f.file),
    { cwd: dir },
  );
}

describe("every entry point applies every rule", () => {
  it("check and checkTexts report the same diagnostics for the same files, cross-policy rules included", async () => {
    const onDisk = (await checkOnDisk(FILES)).diagnostics.map(row);
    const inMemory = checkTexts(FILES).diagnostics.map(row);
    expect(inMemory).toEqual(onDisk);
    const codes = new Set(inMemory.map((r) => r.split(" ")[2]));
    for (const code of ["RG113", "RG301", "RG603"]) expect(codes, code).toContain(code);
  });

  it("checkTexts reports RG113 for two policies declaring payments, and keeps the first", () => {
    const result = checkTexts(FILES.slice(0, 2));
    const errors = result.diagnostics.filter((d) => d.severity === "error");
    expect(errors.map((d) => [d.file, d.code, d.message])).toEqual([
      ["b.yaml", "RG113", 'dependency "payments" is already declared in a.yaml'],
    ]);
    expect(result.policies.map((p) => p.file)).toEqual(["a.yaml"]);
  });

  it("checkTexts reports RG301 for two dependencies that become one client", () => {
    const errors = checkTexts(FILES.slice(2, 4)).diagnostics.filter((d) => d.severity === "error");
    expect(errors.map((d) => [d.file, d.code])).toEqual([["d.yaml", "RG301"]]);
  });

  it("checkTexts reports RG301 for two services that become one module", () => {
    const service = "version: 1\nkind: service\nservice: shop\nadmission: { maxConcurrent: 8 }\n";
    const errors = checkTexts([
      { file: "a.yaml", text: service },
      { file: "b.yaml", text: service },
    ]).diagnostics.filter((d) => d.severity === "error");
    expect(errors.map((d) => [d.file, d.code, d.message])).toEqual([
      [
        "b.yaml",
        "RG301",
        'service "shop" becomes the module shop-service.ts, as service "shop" does',
      ],
    ]);
  });

  it("checkPolicyText reports what check and checkTexts report for one file", async () => {
    const broken = {
      file: "p.yaml",
      text: "version: 1\ndependency: p\nretry: { maxAtempts: 3 }\noperations:\n  get: { path: /x }\n",
    };
    const onDisk = (await checkOnDisk([broken])).diagnostics.map(row);
    expect(onDisk.length).toBeGreaterThan(1);
    expect(checkTexts([broken]).diagnostics.map(row)).toEqual(onDisk);
    expect(checkPolicyText(broken.file, broken.text).diagnostics.map(row)).toEqual(onDisk);
  });
});

describe("a project file among the texts", () => {
  const config = "defaults:\n  retry: { maxAttempts: 3, backoff: { jitter: none } }\n";
  const policy =
    "version: 1\ndependency: a\ntransport: http\ntimeout: { attempt: 100ms, total: 1s }\nbulkhead: false\noperations:\n  get: { method: GET, path: /x }\n";

  it("governs the policies beside it, and findings about its defaults point into it", () => {
    const { diagnostics } = checkTexts([
      { file: "p/resgen.config.yaml", text: config },
      { file: "p/a.yaml", text: policy },
    ]);
    const jitter = diagnostics.find((d) => d.message.includes("jitter"));
    expect(jitter?.file).toBe("p/resgen.config.yaml");
    expect(config.slice(jitter?.span.start, jitter?.span.end)).toContain("none");
    expect(diagnostics.filter((d) => d.code === "RG114")).toEqual([]);
  });
});
