/**
 * `coalesce` through the model and the analyzer (docs/runtime.md, "Coalescing"): what a
 * retry-safe read is (the stale fallback's notion: src/model/reads.ts), where the policy's
 * default applies, and the positioned errors RG228 and RG229.
 */
import { describe, expect, it } from "vitest";
import { checkTexts } from "../../src/program/check.js";

const check = (text: string) => checkTexts([{ file: "p.yaml", text }]);
const head = "version: 1\ndependency: p\nbulkhead: { maxConcurrent: 10 }\n";

describe("coalesce in the model", () => {
  it("the policy's coalesce applies to retry-safe reads only, an operation's own wins", () => {
    const r = check(
      head +
        "coalesce: true\noperations:\n" +
        "  get: { method: GET, path: /a }\n" +
        "  head: { method: HEAD, path: /a }\n" +
        "  put: { method: PUT, path: /a }\n" +
        "  post: { method: POST, path: /a }\n" +
        "  off: { method: GET, path: /b, coalesce: false }\n",
    );
    expect(r.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    const ops = Object.fromEntries(r.policies[0]!.operations.map((o) => [o.name, o.coalesce]));
    expect(ops).toEqual({ get: true, head: true, put: false, post: false, off: false });
    const put = r.policies[0]!.operations.find((o) => o.name === "put")!;
    expect(put.provenance["coalesce"]?.formula).toContain("retry-safe reads");
  });

  it("is off unless declared", () => {
    const r = check(head + "operations:\n  get: { method: GET, path: /a }\n");
    expect(r.policies[0]!.operations[0]!.coalesce).toBe(false);
    expect(r.policies[0]!.operations[0]!.provenance["coalesce"]?.origin).toBe("absent");
  });

  it("the policy's coalesce skips an operation whose caller provides the fallback", () => {
    const r = check(
      head +
        "coalesce: true\nfallback: { kind: provided }\noperations:\n  get: { method: GET, path: /a }\n",
    );
    expect(r.policies[0]!.operations[0]!.coalesce).toBe(false);
    expect(r.diagnostics.map((d) => d.code)).not.toContain("RG229");
  });
});

describe("coalesce in the analyzer", () => {
  const errorsOf = (text: string, code: string) => {
    const found = check(text).diagnostics.filter((d) => d.code === code);
    return found.map((d) => ({ ...d, at: d.span.start }));
  };

  it.each([
    ["POST", "  w: { method: POST, path: /a, coalesce: true }\n"],
    ["PATCH", "  w: { method: PATCH, path: /a, coalesce: true }\n"],
    ["a PUT (idempotent, but a write)", "  w: { method: PUT, path: /a, coalesce: true }\n"],
    [
      "a GET marked idempotent: false",
      "  w: { method: GET, path: /a, idempotent: false, coalesce: true }\n",
    ],
    [
      "a keyed POST",
      "  w: { method: POST, path: /a, idempotency: { header: Idempotency-Key }, coalesce: true }\n",
    ],
  ])("RG228 on %s, at the coalesce key, with a hint", (_what, op) => {
    const text = head + "operations:\n" + op;
    const found = errorsOf(text, "RG228");
    expect(found).toHaveLength(1);
    expect(found[0]!.severity).toBe("error");
    expect(found[0]!.hint).toContain("GET and HEAD");
    const pos = check(text).diagnostics.find((d) => d.code === "RG228")!;
    expect(pos.span.start).toBe(text.indexOf("coalesce"));
  });

  it("no finding for a GET or HEAD", () => {
    const text =
      head +
      "operations:\n  g: { method: GET, path: /a, coalesce: true }\n  h: { method: HEAD, path: /a, coalesce: true }\n";
    const codes = check(text).diagnostics.map((d) => d.code);
    expect(codes).not.toContain("RG228");
    expect(codes).not.toContain("RG229");
  });

  it("RG229 with a provided fallback, or a stale one whose miss is provided", () => {
    for (const fallback of [
      "{ kind: provided }",
      "{ kind: stale, maxAge: 1m, otherwise: { kind: provided } }",
    ]) {
      const text =
        head +
        `operations:\n  g: { method: GET, path: /a, coalesce: true, fallback: ${fallback} }\n`;
      const found = errorsOf(text, "RG229");
      expect(found, fallback).toHaveLength(1);
      expect(found[0]!.message).toContain("fallback the caller provides");
    }
  });

  it("a stale or value fallback coalesces: one identity, one stale key", () => {
    const text =
      head +
      "operations:\n  g: { method: GET, path: /a, coalesce: true, fallback: { kind: stale, maxAge: 1m } }\n";
    expect(check(text).diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  });
});
