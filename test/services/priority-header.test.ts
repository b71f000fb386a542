/**
 * RG508: a priority rule that raises a request's priority on a header any caller can send, unless
 * the policy says a trusted proxy sets the header (`header.trusted: proxy`).
 */
import { describe, expect, it } from "vitest";
import { checkTexts } from "../../src/program/check.js";

const at = (text: string, d: { span: { start: number } }) => {
  const before = text.slice(0, d.span.start).split("\n");
  return `${before.length}:${before.at(-1)!.length + 1}`;
};

const service = (rules: string[], defaultPriority = "normal") =>
  [
    "version: 1",
    "kind: service",
    "service: shop",
    "admission: { maxConcurrent: 8 }",
    "priorities:",
    `  default: ${defaultPriority}`,
    "  rules:",
    ...rules,
    "",
  ].join("\n");

const findings = (text: string) =>
  checkTexts([{ file: "shop.yaml", text }]).diagnostics.map(
    (d) => `${d.code} ${d.severity} ${at(text, d)} ${d.message}`,
  );

describe("priority rules on caller-set headers (RG508)", () => {
  it("warns at the header of a rule that raises priority above the default", () => {
    const text = service([
      "    - { header: { name: x-priority, value: critical }, priority: critical }",
    ]);
    expect(findings(text)).toEqual([
      "RG508 warning 8:17 any caller can send x-priority: critical and have its requests handled as critical instead of normal: under overload it takes the place of every other caller",
    ]);
  });

  it("warns when the header lets a caller escape a lower rule after it", () => {
    const text = service([
      "    - { header: { name: x-priority }, priority: normal }",
      '    - { route: "/sync/*", priority: low }',
    ]);
    expect(findings(text).map((f) => f.split(" any")[0])).toEqual(["RG508 warning 8:17"]);
    expect(findings(text)[0]).toContain("as normal instead of low");
  });

  it("warns for a rule that combines a route with a header", () => {
    const text = service([
      '    - { route: "POST /checkout", header: { name: x-vip, value: "1" }, priority: high }',
    ]);
    expect(findings(text).map((f) => f.split(" any")[0])).toEqual(["RG508 warning 8:42"]);
  });

  it("says nothing for a header that lowers priority, or one a trusted proxy sets", () => {
    expect(
      findings(
        service(["    - { header: { name: x-priority, value: background }, priority: low }"]),
      ),
    ).toEqual([]);
    expect(
      findings(
        service([
          "    - { header: { name: x-priority, value: critical, trusted: proxy }, priority: critical }",
        ]),
      ),
    ).toEqual([]);
    // equal to the default and no lower rule after it: nothing to gain
    expect(findings(service(["    - { header: { name: x-a }, priority: high }"], "high"))).toEqual(
      [],
    );
  });

  it("refuses another value of trusted, at the value", () => {
    const text = service([
      "    - { header: { name: x-priority, trusted: caller }, priority: critical }",
    ]);
    expect(findings(text).map((f) => f.split(" ").slice(0, 3).join(" "))).toEqual([
      "RG107 error 8:46",
    ]);
  });
});
