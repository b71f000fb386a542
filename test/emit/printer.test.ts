/**
 * The printer generated modules are written with (src/emit/printer.ts): templates that read like
 * their output, groups that stay on one line only when they fit, JSDoc wrapped to the width,
 * imports collected from what is printed, and the same bytes for the same input.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { checkPolicyText } from "../../src/program/check.js";
import { emitClient } from "../../src/emit/client.js";
import {
  code,
  importDeclarations,
  jsdoc,
  lines,
  list,
  objectLiteral,
  print,
  printModule,
  WIDTH,
  wrap,
} from "../../src/emit/printer.js";
import { CLIENT_RUNTIME, type ImportSymbol } from "../../src/model/names.js";

const sym = (name: string, from: string, typeOnly = false): ImportSymbol => ({
  kind: "import",
  name,
  from,
  typeOnly,
});
const longest = (text: string) => Math.max(...text.split("\n").map((l) => l.length));

describe("templates", () => {
  it("are dedented, and indent what is interpolated on an indented line", () => {
    const body = lines([code`a();`, code`b();`]);
    const doc = code`
      function f() {
        ${body}
      }
    `;
    expect(print(doc).text).toBe("function f() {\n  a();\n  b();\n}");
  });

  it("leave out a line holding only nothing, and keep blank lines", () => {
    const doc = code`
      x;
      ${null}
      ${[]}

      y;
    `;
    expect(print(doc).text).toBe("x;\n\ny;");
  });
});

describe("groups", () => {
  const args = (n: number) =>
    list(
      "(",
      Array.from({ length: n }, (_, i) => `argument${i}`),
      ")",
    );

  it("stay on one line when they fit, and put one item a line with a trailing comma when not", () => {
    expect(print(code`call${args(3)};`).text).toBe("call(argument0, argument1, argument2);");
    const broken = print(code`call${args(12)};`).text;
    expect(broken.split("\n")).toEqual([
      "call(",
      ...Array.from({ length: 12 }, (_, i) => `  argument${i},`),
      ");",
    ]);
  });

  it("count what follows them on the line", () => {
    // 95 columns on its own; with the text after it the line would be 112
    const call = code`f${list("(", ["a".repeat(40), "b".repeat(40), "c".repeat(8)], ")")}`;
    expect(print(call).text).not.toContain("\n");
    expect(print(code`${call} + "tail of ten";`).text.split("\n")[0]).toBe("f(");
  });

  it("break the outermost first, and nested ones only where they still do not fit", () => {
    const inner = objectLiteral(["one: 1", "two: 2"]);
    const text = print(code`outer${list("(", ["x".repeat(60), inner, "y".repeat(30)], ")")};`).text;
    expect(text).toBe(
      `outer(\n  ${"x".repeat(60)},\n  { one: 1, two: 2 },\n  ${"y".repeat(30)},\n);`,
    );
  });

  it("keep every line within the width whatever the items, unless one item alone is longer", () => {
    fc.assert(
      fc.property(
        fc.array(fc.stringMatching(/^[a-z]{1,30}$/), { maxLength: 30 }),
        fc.integer({ min: 0, max: 40 }),
        (items, depth) => {
          const doc = code`${" ".repeat(depth)}const x = ${objectLiteral(items.map((i) => [`${i}: `, list("[", [i, i], "]")]))};`;
          expect(longest(print(doc).text)).toBeLessThanOrEqual(WIDTH);
        },
      ),
    );
  });
});

describe("JSDoc", () => {
  it("is one line where it fits, and a wrapped block at its indentation where not", () => {
    expect(print(jsdoc("Short.")).text).toBe("/** Short. */");
    const text = print(code`
      {
        ${jsdoc("word ".repeat(40).trim())}
      }
    `).text;
    expect(longest(text)).toBeLessThanOrEqual(WIDTH);
    const inner = text.split("\n").slice(1, -1);
    expect(inner[0]).toBe("  /**");
    expect(inner.slice(1, -1).every((l) => l.startsWith("   * word"))).toBe(true);
    expect(inner.at(-1)).toBe("   */");
  });

  it("keeps paragraphs, code spans and {@link}s whole, and indents a list item's continuation", () => {
    expect(wrap("see `a b c d` and {@link x y}", 8)).toEqual([
      "see",
      "`a b c d`",
      "and",
      "{@link x y}",
    ]);
    expect(wrap("- one two three four", 10)).toEqual(["- one two", "  three", "  four"]);
    const text = print(jsdoc("First.\n\nSecond.")).text;
    expect(text).toBe("/**\n * First.\n *\n * Second.\n */");
  });

  it("breaks at every space when a code span is left open, and keeps the spaces of a line it does not break", () => {
    expect(wrap("an ` open span here", 8)).toEqual(["an `", "open", "span", "here"]);
    expect(wrap("a  b", 10)).toEqual(["a  b"]);
  });
});

describe("imports", () => {
  it("are what the code names: each once, a value where any use is a value, modules and names in order", () => {
    const doc = code`${sym("Zed", "./b.js", true)} ${sym("make", "./a.js")} ${sym("Type", "./a.js", true)} ${sym("Both", "./a.js", true)} ${sym("Both", "./a.js")} ${sym("Zed", "./b.js", true)}`;
    const { text, imports } = print(doc);
    expect(text).toBe("Zed make Type Both Both Zed");
    expect(print(importDeclarations(imports)).text).toBe(
      'import { Both, make, type Type } from "./a.js";\nimport { type Zed } from "./b.js";',
    );
  });

  it("of a generated client are exactly the runtime names its code uses", () => {
    const { policy } = checkPolicyText(
      "p.yaml",
      "version: 1\ndependency: p\noperations:\n  get: { method: GET, path: /x }\n",
    );
    const text = emitClient(policy!);
    const imported = /^import \{([^}]*)\} from "\.\/runtime\/index\.js";/m
      .exec(text)![1]!
      .split(",")
      .map((s) => s.trim().replace(/^type /, ""))
      .filter(Boolean);
    const body = text.slice(text.indexOf('from "./runtime/index.js";'));
    const runtime = new Set(Object.keys(CLIENT_RUNTIME));
    const used = [...runtime].filter((name) => new RegExp(`\\b${name}\\b`).test(body));
    expect(imported.sort()).toEqual(used.sort());
  });

  it("go above the code, with a blank line between", () => {
    expect(printModule(code`const x: ${sym("T", "./t.js", true)} = 1;`)).toBe(
      'import { type T } from "./t.js";\n\nconst x: T = 1;\n',
    );
    expect(printModule("const y = 2;")).toBe("const y = 2;\n");
  });
});

describe("a generated module", () => {
  it("is the same bytes every time, and no line is longer than the width", () => {
    const text = [
      "version: 1",
      "dependency: a-dependency-with-a-rather-long-name",
      "description: " + JSON.stringify("A description long enough to need wrapping. ".repeat(5)),
      "fallback: { kind: stale, maxAge: 1m, maxEntries: 10, vary: [X-Tenant, Accept-Language], otherwise: { kind: provided } }",
      "operations:",
      "  searchTheCatalogueByManyCriteriaAtOnce:",
      "    method: GET",
      "    path: /tenants/{tenantIdentifier}/catalogues/{catalogueIdentifier}/items",
      "    query:",
      "      colour: { type: string, enum: [red, green, blue, cyan, magenta, yellow, black, white, orange], required: true }",
      "      limit: { type: integer }",
      "    response: { type: object, properties: { kind: { type: string, enum: [one, two, three, four, five, six, seven, eight, nine, ten] } } }",
      "",
    ].join("\n");
    const { policy, diagnostics } = checkPolicyText("p.yaml", text);
    expect(diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    const first = emitClient(policy!, { telemetry: "opentelemetry" });
    expect(emitClient(policy!, { telemetry: "opentelemetry" })).toBe(first);
    expect(longest(first)).toBeLessThanOrEqual(WIDTH);
    expect(first).not.toMatch(/[ \t]$/m);
  });
});
