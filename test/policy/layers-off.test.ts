/**
 * Layers inherited from the project defaults can be turned off in a policy (`retry: false`,
 * `hedge: false`, `breaker: false`, `bulkhead: false`), findings about an inherited layer name the
 * line of resgen.config.yaml that turned it on, and latency alone now sizes a bulkhead and a
 * slow-call threshold (docs/policy.md, "Derived defaults"), with RG224 when nothing can.
 */
import { describe, expect, it } from "vitest";
import { main, type Io } from "../../src/cli/cli.js";
import { checkTexts } from "../../src/program/check.js";
import { explain, renderExplainText } from "../../src/explain/explain.js";
import { loadYaml } from "../../src/language/parse.js";
import type { ConfigSettings } from "../../src/model/normalize.js";
import { ProjectConfig } from "../../src/language/schema.js";
import { validate } from "../../src/language/validate.js";
import { PACKAGE_ROOT } from "../../src/version.js";

const run = async (...args: string[]) => {
  let stdout = "";
  const io: Io = {
    stdout: (t) => void (stdout += t),
    stderr: () => undefined,
    cwd: PACKAGE_ROOT,
    color: false,
  };
  const code = await main(["node", "resgen", ...args], io);
  return { code, stdout };
};

const op = 'operations:\n  get: { method: GET, path: "/x/{id}" }\n';
/** Checks one policy; these policies leave the attempt timeout at its default, and RG226's warning about that is not the subject here. */
const check = (body: string, project: ConfigSettings = {}) => {
  const result = checkTexts(
    [{ file: "p.yaml", text: `version: 1\ndependency: p\n${body}${op}` }],
    project,
  );
  return { ...result, diagnostics: result.diagnostics.filter((d) => d.code !== "RG226") };
};
const project = (defaults: object): ConfigSettings => ({
  configFile: "resgen.config.yaml",
  config: { defaults },
});
const codes = (r: ReturnType<typeof check>) => r.diagnostics.map((d) => d.code);

describe("turning inherited layers off", () => {
  it("accepts false for retry, hedge, breaker and bulkhead at the policy level", () => {
    const defaults = project({
      retry: { maxAttempts: 3, budget: {} },
      hedge: { delay: "50ms" },
      breaker: {},
      bulkhead: { maxConcurrent: 5 },
    });
    const on = check("", defaults).policies[0]!;
    expect(on.operations[0]!.retry?.maxAttempts).toBe(3);
    expect(on.operations[0]!.hedge).not.toBeNull();
    expect(on.breaker).not.toBeNull();
    expect(on.bulkhead?.maxConcurrent).toBe(5);
    const off = check("retry: false\nhedge: false\nbreaker: false\nbulkhead: false\n", defaults);
    expect(off.diagnostics).toEqual([]);
    const p = off.policies[0]!;
    expect([p.operations[0]!.retry, p.operations[0]!.hedge, p.breaker, p.bulkhead]).toEqual([
      null,
      null,
      null,
      null,
    ]);
    expect(p.operations[0]!.provenance["retry"]).toMatchObject({
      origin: "policy",
      source: { file: "p.yaml", path: ["retry"] },
    });
    expect(p.provenance["breaker"]).toMatchObject({ origin: "policy" });
  });

  it("lets an operation turn a retry back on under a policy's retry: false", () => {
    const p = check("retry: false\nbulkhead: false\n", project({ retry: { budget: {} } }))
      .policies[0]!;
    expect(p.operations[0]!.retry).toBeNull();
    const again = checkTexts(
      [
        {
          file: "p.yaml",
          text: 'version: 1\ndependency: p\nretry: false\nbulkhead: false\ntimeout: { attempt: 500ms }\noperations:\n  get: { method: GET, path: "/x/{id}", retry: { maxAttempts: 2 } }\n',
        },
      ],
      project({ retry: { budget: {} } }),
    );
    expect(again.diagnostics).toEqual([]);
    expect(again.policies[0]!.operations[0]!.retry?.maxAttempts).toBe(2);
  });

  it("refuses false in the project defaults with a hint, and true anywhere with the spelling of on", () => {
    for (const layer of ["retry", "hedge", "breaker", "bulkhead"]) {
      const loaded = loadYaml("resgen.config.yaml", `version: 1\ndefaults:\n  ${layer}: false\n`);
      const [d] = validate(ProjectConfig, loaded.source).diagnostics;
      expect(d).toMatchObject({
        code: "RG103",
        message: `defaults.${layer} must be a mapping, got boolean false`,
      });
      expect(d!.hint).toContain(`\`${layer}: false\` belongs in a policy`);
    }
    const r = check("retry: true\n");
    expect(r.diagnostics[0]).toMatchObject({
      code: "RG103",
      hint: "write `retry: {}` to turn it on with the defaults",
    });
  });
});

describe("findings about a layer inherited from the project defaults", () => {
  it("name the line of resgen.config.yaml that turned the layer on", async () => {
    const config = "test/fixtures/analyze/inherited/resgen.config.yaml";
    const r = await run("check", "test/fixtures/analyze/inherited");
    const heads = r.stdout.split("\n").filter((l) => / (error|warning) RG\d+ /.test(l));
    expect(heads).toEqual([
      expect.stringMatching(
        new RegExp(`^${config}:7:24 warning RG211 .*\\(breaker inherited from ${config}:7:3\\)$`),
      ),
      expect.stringMatching(
        new RegExp(
          `payments\\.yaml:3:21 error RG205 .*the other 2 attempts can never run \\(retry inherited from ${config}:4:3\\)$`,
        ),
      ),
    ]);
    expect(r.stdout).toContain("or `retry: false` in the policy turns the inherited retry off");
    expect(r.code).toBe(1);
  });

  it("say so for RG210 and RG207 too", () => {
    const r = check(
      "latency: { rps: 40 }\nbulkhead: false\ntimeout: { attempt: 400ms, total: 500ms }\n",
      project({ retry: { maxAttempts: 3 } }),
    );
    const messages = r.diagnostics.map((d) => `${d.code} ${d.message}`);
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^RG207 .*\(retry inherited from resgen\.config\.yaml\)$/),
        expect.stringMatching(/^RG210 .*\(retry inherited from resgen\.config\.yaml\)$/),
      ]),
    );
  });
});

describe("a bulkhead derived from latency", () => {
  it("is derived by Little's law from rps and p99 when none is declared, and shown by explain", () => {
    const r = check("latency: { p99: 80ms, rps: 200 }\n");
    expect(codes(r)).toEqual([]);
    const p = r.policies[0]!;
    expect(p.bulkhead).toEqual({
      maxConcurrent: 32,
      maxQueue: 0,
      queueTimeoutMs: 0,
      overflow: "reject",
    });
    expect(p.provenance["bulkhead.maxConcurrent"]).toEqual({
      origin: "derived",
      source: { file: "p.yaml", path: ["latency"] },
      inputs: [
        { key: "latency.rps", source: { file: "p.yaml", path: ["latency", "rps"] } },
        { key: "latency.p99", source: { file: "p.yaml", path: ["latency", "p99"] } },
      ],
      formula: "Little's law with 2× headroom: ceil(rps 200 × p99 80ms × 2) = 32",
    });
    const text = renderExplainText(explain(p));
    expect(text).toMatch(
      /bulkhead\.maxConcurrent\s+32\s+derived: Little's law with 2× headroom: ceil\(rps 200 × p99 80ms × 2\) = 32/,
    );
  });

  it("uses p999 without p99, never goes below 10, and stays off with bulkhead: false", () => {
    expect(check("latency: { p999: 500ms, rps: 100 }\n").policies[0]!.bulkhead?.maxConcurrent).toBe(
      100,
    );
    const low = check("latency: { p99: 10ms, rps: 5 }\n");
    expect(codes(low)).toEqual([]);
    expect(low.policies[0]!.bulkhead?.maxConcurrent).toBe(10);
    expect(low.policies[0]!.provenance["bulkhead.maxConcurrent"]?.formula).toBe(
      "Little's law with 2× headroom: ceil(rps 5 × p99 10ms × 2) = 1, raised to 10, the smallest derived bulkhead",
    );
    const off = check("latency: { p99: 80ms, rps: 200 }\nbulkhead: false\n");
    expect(off.policies[0]!.bulkhead).toBeNull();
    expect(codes(off)).toEqual([]);
  });

  it("warns RG224 at the dependency when nothing bounds the calls in flight", () => {
    const none = check("");
    expect(none.diagnostics).toMatchObject([
      {
        code: "RG224",
        span: { start: 23, end: 24 },
        message: expect.stringContaining("neither latency nor a bulkhead") as unknown,
      },
    ]);
    expect(check("latency: { p99: 80ms }\n").diagnostics).toMatchObject([
      { code: "RG224", message: expect.stringContaining("latency declares no rps") as unknown },
    ]);
    expect(check("latency: { rps: 80 }\n").diagnostics).toMatchObject([
      { code: "RG224", message: expect.stringContaining("no p99 (or p999)") as unknown },
    ]);
    expect(codes(check("bulkhead: false\n"))).toEqual([]);
    expect(codes(check("bulkhead: {}\n"))).toEqual([]);
  });
});

describe("a slow-call threshold derived from latency", () => {
  it("is p999 (else 2 × p99) at a 50% rate, for a breaker that declares none", () => {
    const p = check("latency: { p99: 80ms, p999: 200ms, rps: 200 }\nbreaker: {}\n").policies[0]!;
    expect(p.breaker?.slowCall).toEqual({ durationMs: 200, rate: 0.5 });
    expect(p.provenance["breaker.slowCall.duration"]).toEqual({
      origin: "derived",
      source: { file: "p.yaml", path: ["latency"] },
      inputs: [{ key: "latency.p999", source: { file: "p.yaml", path: ["latency", "p999"] } }],
      formula: "p999 = 200ms",
    });
    const q = check("latency: { p99: 80ms, rps: 200 }\nbreaker: {}\n").policies[0]!;
    expect(q.breaker?.slowCall).toEqual({ durationMs: 160, rate: 0.5 });
    expect(renderExplainText(explain(q))).toMatch(
      /breaker\.slowCall\.duration\s+160ms\s+derived: 2 × p99 \(80ms\) = 160ms/,
    );
  });

  it("leaves a declared slowCall alone and derives nothing without p99 or p999", () => {
    expect(
      check("latency: { p999: 200ms, rps: 200 }\nbreaker: { slowCall: { duration: 1s } }\n")
        .policies[0]!.breaker?.slowCall,
    ).toEqual({ durationMs: 1000, rate: 1 });
    expect(
      check("latency: { p95: 50ms }\nbulkhead: false\nbreaker: {}\n").policies[0]!.breaker
        ?.slowCall,
    ).toBeNull();
    expect(check("latency: { p99: 80ms, rps: 200 }\n").policies[0]!.breaker).toBeNull();
  });
});
