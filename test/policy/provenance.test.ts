/**
 * Typed provenance: every resolved value says which step supplied it, where, and for a derived
 * value which other values it was computed from, so later stages read positions and inputs
 * instead of parsing the formula written for people.
 */
import { describe, expect, it } from "vitest";
import { checkTexts } from "../../src/program/check.js";
import { explain } from "../../src/explain/explain.js";
import type { ConfigSettings } from "../../src/model/normalize.js";
import type { ResolvedPolicy } from "../../src/model/resolved.js";

const resolve = (body: string, project: ConfigSettings = {}): ResolvedPolicy => {
  const r = checkTexts([{ file: "p.yaml", text: `version: 1\ndependency: p\n${body}` }], project);
  expect(r.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  return r.policies[0]!;
};
const at = (...path: (string | number)[]) => ({ file: "p.yaml", path });

describe("idempotency", () => {
  const policy = resolve(
    [
      "operations:",
      "  read: { method: GET, path: /a }",
      "  write: { method: POST, path: /a }",
      "  keyed: { method: POST, path: /a, idempotency: { header: Idempotency-Key } }",
      "  asserted: { method: PATCH, path: /a, idempotent: true }",
      "  denied: { method: PUT, path: /a, idempotent: false }",
      "",
    ].join("\n"),
  );
  const of = (name: string) => policy.operations.find((o) => o.name === name)!;

  it("is recorded where it was decided: the method, `idempotent:` as written, or the key", () => {
    expect(of("read").provenance["idempotency"]).toEqual({
      origin: "derived",
      source: at("operations", "read", "method"),
      inputs: [{ key: "method", source: at("operations", "read", "method") }],
      formula: "RFC 9110: GET, HEAD, OPTIONS, PUT and DELETE are idempotent",
    });
    expect(of("write").provenance["idempotency"]).toMatchObject({
      origin: "derived",
      inputs: [{ key: "method" }],
      formula: "RFC 9110: POST is not idempotent",
    });
    expect(of("keyed").provenance["idempotency"]).toEqual({
      origin: "operation",
      source: at("operations", "keyed", "idempotency"),
    });
    expect(of("asserted").provenance["idempotency"]).toEqual({
      origin: "operation",
      source: at("operations", "asserted", "idempotent"),
    });
    expect(of("denied").provenance["idempotency"]).toEqual({
      origin: "operation",
      source: at("operations", "denied", "idempotent"),
    });
    expect(
      policy.operations.map((o) => [o.name, o.idempotency, o.repeatable, o.plan.repeatable]),
    ).toEqual([
      ["read", "method", true, true],
      ["write", "none", false, false],
      ["keyed", "key", true, true],
      ["asserted", "asserted", true, true],
      ["denied", "none", false, false],
    ]);
  });

  it("is what explain shows, with the line that decided it", () => {
    const settings = explain(policy, {
      where: (ref) => `${ref.file}:${ref.path.join(".")}`,
    }).operations.map((o) => o.stack.at(-1)!.settings.find((s) => s.key === "idempotency"));
    expect(settings.map((s) => [s?.origin, s?.source ?? s?.formula])).toEqual([
      ["derived", "RFC 9110: GET, HEAD, OPTIONS, PUT and DELETE are idempotent"],
      ["derived", "RFC 9110: POST is not idempotent"],
      ["operation", "p.yaml:operations.keyed.idempotency"],
      ["operation", "p.yaml:operations.asserted.idempotent"],
      ["operation", "p.yaml:operations.denied.idempotent"],
    ]);
  });
});

describe("derived values", () => {
  it("name the values they were computed from and the section they sit in", () => {
    const p = resolve(
      "latency: { p50: 40ms, p95: 90ms, p99: 100ms, rps: 50 }\nbreaker: {}\noperations:\n  get: { method: GET, path: /a, hedge: {} }\n",
    );
    const op = p.operations[0]!;
    const keys = (key: string) =>
      (op.provenance[key] ?? p.provenance[key])?.inputs?.map((i) => i.key);
    expect(keys("timeout.attempt")).toEqual(["latency.p99"]);
    expect(keys("deadline.minAttempt")).toEqual(["latency.p50"]);
    expect(keys("hedge.delay")).toEqual(["latency.p95"]);
    expect(keys("bulkhead.maxConcurrent")).toEqual(["latency.rps", "latency.p99"]);
    expect(keys("breaker.slowCall.duration")).toEqual(["latency.p99"]);
    expect(keys("breaker.halfOpen.successes")).toEqual(["breaker.halfOpen.maxCalls"]);
    // the total is the hedge's worst case plus the margin: its inputs are those values, and the layer's position
    expect(op.provenance["timeout.total"]).toMatchObject({
      origin: "derived",
      source: at("operations", "get", "hedge"),
      inputs: [
        { key: "timeout.attempt" },
        { key: "hedge", source: at("operations", "get", "hedge") },
        { key: "deadline.margin" },
      ],
    });
    expect(op.provenance["timeout.attempt"]?.source).toEqual(at("latency"));
  });

  it("capped at an explicit total, the attempt timeout has the total among its inputs", () => {
    const op = resolve(
      "latency: { p999: 1s }\ntimeout: { total: 1s }\noperations:\n  get: { method: GET, path: /a }\n",
    ).operations[0]!;
    expect(op.provenance["timeout.attempt"]?.inputs).toEqual([
      { key: "latency.p999", source: at("latency", "p999") },
      { key: "timeout.total", source: at("timeout", "total") },
    ]);
  });
});

describe("origins", () => {
  it("tell a layer nothing declares (absent) from a value left at its built-in default", () => {
    const p = resolve("operations:\n  get: { method: GET, path: /a, retry: {} }\n");
    const op = p.operations[0]!;
    for (const key of ["hedge", "fallback"]) expect(op.provenance[key]?.origin, key).toBe("absent");
    for (const key of ["bulkhead", "breaker", "retry.budget"])
      expect(p.provenance[key]?.origin, key).toBe("absent");
    expect(op.provenance["retry.maxAttempts"]).toEqual({
      origin: "default",
      formula: "built-in default 3",
    });
    expect(
      explain(p).operations[0]!.stack.find((l) => l.layer === "fallback")!.settings[0],
    ).toMatchObject({ origin: "absent", formula: "no fallback unless declared" });
  });

  it("place the project file's deadline settings in it, apart from its defaults", () => {
    const config: ConfigSettings = {
      configFile: "resgen.config.yaml",
      config: { version: 1, deadline: { header: "x-deadline" } },
    };
    const p = resolve("operations:\n  get: { method: GET, path: /a }\n", config);
    expect(p.provenance["deadline.header"]).toEqual({
      origin: "project",
      source: { file: "resgen.config.yaml", path: ["deadline", "header"] },
    });
    expect(
      resolve("operations:\n  get: { method: GET, path: /a }\n").provenance["deadline.header"],
    ).toEqual({ origin: "default", formula: "built-in default for format ms" });
  });
});
