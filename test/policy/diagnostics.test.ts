/**
 * One test per diagnostic code of the loader: the code, the 1-based position of the node that is
 * wrong, and the message a user reads. Codes that need the file system live in cli.test.ts.
 */
import { describe, expect, it } from "vitest";
import { CODES } from "../../src/diagnostics/codes.js";
import { MAX_ALIAS_COUNT } from "../../src/language/parse.js";
import { at, diagnose, policy } from "../helpers/diagnose.js";

function only(text: string) {
  const found = diagnose(text);
  expect(found, JSON.stringify(found, null, 2)).toHaveLength(1);
  return found[0]!;
}

describe("loader diagnostics", () => {
  it("RG001 YAML syntax error, at the offending token", () => {
    const text = "version: 1\ndependency: [things\noperations: {}\n";
    const d = diagnose(text)[0]!;
    expect(d.code).toBe("RG001");
    expect(d.message).toMatch(/^YAML syntax error: /);
    expect(d.line).toBeGreaterThanOrEqual(2);
  });

  it("RG001 for an unquoted path template in a flow mapping: one error per path, with the fix, and no cascade", () => {
    const text =
      "version: 1\ndependency: stock\ntimeout: { attempt: 200ms, total: 1s }\noperations:\n  getItem: { method: GET, path: /items/{id} }\n  getPart: { method: GET, path: /items/{id}/parts/{part}}\n  list: { method: GET, path: /items }\n";
    const found = diagnose(text).map(
      (d) => `${d.code} ${d.line}:${d.column} ${d.message} | ${d.hint ?? ""}`,
    );
    expect(found).toEqual([
      'RG001 5:33 YAML syntax error: the path /items/{id} is not quoted, so YAML reads its "{" as the start of a mapping | quote the path: "/items/{id}"',
      'RG001 6:33 YAML syntax error: the path /items/{id}/parts/{part} is not quoted, so YAML reads its "{" as the start of a mapping | quote the path: "/items/{id}/parts/{part}"',
    ]);
    // quoted, or in block style where YAML reads the braces as text, it is no error
    const fixed = text
      .replace("/items/{id} }", '"/items/{id}" }')
      .replace("/items/{id}/parts/{part}}", '"/items/{id}/parts/{part}" }');
    expect(diagnose(fixed).filter((d) => d.code === "RG001")).toEqual([]);
    const block =
      "version: 1\ndependency: stock\ntimeout: { attempt: 200ms, total: 1s }\noperations:\n  getItem:\n    method: GET\n    path: /items/{id}\n";
    expect(diagnose(block).filter((d) => d.code === "RG001")).toEqual([]);
  });

  it("RG002 duplicate key, at the second occurrence", () => {
    const text = policy("retry: { maxAttempts: 2 }\nretry: { maxAttempts: 3 }\n");
    const d = only(text);
    expect(d).toMatchObject({ code: "RG002", ...at(text, "retry", 2) });
    expect(d.message).toContain("duplicate key");
  });

  it("RG003 refuses an alias bomb without expanding it", () => {
    let text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const name = String.fromCharCode(97 + i);
      text += `${name}: &${name} [${Array(10).fill(`*${prev}`).join(", ")}]\n`;
    }
    const d = only(text);
    expect(d).toMatchObject({ code: "RG003", line: 1, column: 1 });
    expect(d.message).toBe(`document expands aliases beyond the limit of ${MAX_ALIAS_COUNT}`);
  });

  it("RG003 refuses a document over 1 MiB", () => {
    const text = policy(`description: "${"x".repeat(1_100_000)}"\n`);
    const d = only(text);
    expect(d).toMatchObject({ code: "RG003", line: 1, column: 1 });
    expect(d.message).toMatch(/over the 1048576 byte limit/);
  });

  it("RG005 an empty document or a list is not a policy", () => {
    expect(only("")).toMatchObject({ code: "RG005", message: "the document is empty" });
    expect(only("- a\n- b\n")).toMatchObject({
      code: "RG005",
      line: 1,
      column: 1,
      message: "the document is a list, not a mapping",
    });
  });

  it("RG101 unknown key, at the key, with a did-you-mean", () => {
    const text = policy("retry:\n  maxAttemps: 3\n");
    const d = only(text);
    expect(d).toMatchObject({
      code: "RG101",
      ...at(text, "maxAttemps"),
      message: 'unknown key "maxAttemps" in retry',
      hint: 'did you mean "maxAttempts"?',
    });
  });

  it("RG101 a key in the wrong place says where it belongs", () => {
    const text = policy(
      "",
      "  get:\n    method: GET\n    path: /x\n    retry: { budget: { maxTokens: 10 } }\n",
    );
    const d = only(text);
    expect(d).toMatchObject({ code: "RG101", ...at(text, "budget") });
    expect(d.hint).toMatch(/shared by all operations/);
  });

  it("RG102 missing key points at the mapping that lacks it", () => {
    const text = "version: 1\noperations:\n  get:\n    method: GET\n    path: /x\n";
    const d = only(text);
    expect(d).toMatchObject({
      code: "RG102",
      line: 1,
      column: 1,
      message: 'missing required key "dependency"',
    });
  });

  it("RG102 an HTTP operation without a method points at the operation", () => {
    const text = policy("", "  createCharge:\n    path: /charges\n");
    const d = only(text);
    expect(d).toMatchObject({ code: "RG102", ...at(text, "createCharge") });
    expect(d.message).toBe(
      'missing required key "method" in operation "createCharge" (transport: http needs a method and a path)',
    );
  });

  it("RG102 a function transport needs no method or path", () => {
    expect(diagnose(policy("transport: function\n", "  lookup:\n    idempotent: true\n"))).toEqual(
      [],
    );
  });

  it("RG103 wrong type names what was expected", () => {
    const text = policy("essential: [yes]\n");
    expect(only(text)).toMatchObject({
      code: "RG103",
      ...at(text, "[yes]"),
      message: "essential must be true or false, got a list",
    });
  });

  it("RG103 a union reports the branch that matches the input's shape", () => {
    const text = policy(
      "",
      "  get:\n    method: GET\n    path: /x\n    retry: { maxAttempts: many }\n",
    );
    expect(only(text)).toMatchObject({
      code: "RG103",
      ...at(text, "many"),
      message: 'operation "get" (retry.maxAttempts) must be a number, got the string "many"',
    });
  });

  it.each([
    ["250", "duration 250 has no unit", '"250ms"'],
    ["-1s", 'duration "-1s" is negative', "zero or more"],
    ["1 parsec", 'duration "1 parsec" has an unknown unit "parsec"', "use ms, s, m or h"],
  ])("RG104 invalid duration %s", (value, message, hint) => {
    const text = policy(`timeout: { attempt: ${value} }\n`);
    const d = only(text);
    expect(d).toMatchObject({
      code: "RG104",
      ...at(text, value),
      message: `timeout.attempt: ${message}`,
    });
    expect(d.hint).toContain(hint);
  });

  it("RG105 invalid rate", () => {
    const text = policy("breaker: { failureRate: 150% }\n");
    expect(only(text)).toMatchObject({
      code: "RG105",
      ...at(text, "150%"),
      message: 'breaker.failureRate: rate "150%" is over 100%',
    });
    const fifty = policy("breaker: { failureRate: 50 }\n");
    expect(only(fifty)).toMatchObject({ code: "RG105", hint: 'write "50%" for a percentage' });
  });

  it("RG106 value out of range gives the bound", () => {
    const text = policy("retry: { maxAttempts: 0 }\n");
    expect(only(text)).toMatchObject({
      code: "RG106",
      ...at(text, "0 }"),
      message: "retry.maxAttempts must be at least 1, got 0",
    });
  });

  it("RG107 value not allowed lists the choices and suggests the nearest", () => {
    const text = policy("retry: { backoff: { jitter: ful } }\n");
    expect(only(text)).toMatchObject({
      code: "RG107",
      ...at(text, "ful }"),
      message:
        '"ful" is not allowed for retry.backoff.jitter; expected one of none, full, equal, decorrelated',
      hint: 'did you mean "full"?',
    });
  });

  it("RG107 an unknown fallback kind", () => {
    const text = policy("fallback: { kind: cached }\n");
    expect(only(text)).toMatchObject({
      code: "RG107",
      ...at(text, "cached"),
      message:
        '"cached" is not a valid fallback.kind; expected one of value, stale, provided, none',
    });
  });

  it("RG108 invalid dependency name", () => {
    const text = "version: 1\ndependency: 9lives\noperations:\n  get: { method: GET, path: /x }\n";
    expect(only(text)).toMatchObject({
      code: "RG108",
      ...at(text, "9lives"),
      message: '"9lives" is not a valid dependency',
    });
  });

  it.each([
    ["/charges/:id", 'path parameter ":id" is not in {} form', '"{id}"'],
    ["charges", 'path "charges" must start with "/"', '"/charges"'],
    ["/charges/{id", 'path "/charges/{id" has an unclosed "{"', "{name}"],
    ["/a/{x}/b/{x}", 'path parameter "{x}" appears twice', undefined],
  ])("RG109 invalid path template %s", (path, message, hint) => {
    const text = policy("", `  get:\n    method: GET\n    path: "${path}"\n`);
    const d = only(text);
    expect(d).toMatchObject({ code: "RG109", ...at(text, `"${path}"`), message });
    if (hint) expect(d.hint).toContain(hint);
  });

  it("RG110 unsupported version", () => {
    const text = "version: 2\ndependency: things\noperations:\n  get: { method: GET, path: /x }\n";
    expect(only(text)).toMatchObject({
      code: "RG110",
      ...at(text, "2"),
      message: "unsupported version 2",
    });
  });

  it("RG111 invalid schema reference", () => {
    const text = policy(
      "",
      '  get:\n    method: GET\n    path: /x\n    response: { $ref: "Item" }\n',
    );
    expect(only(text)).toMatchObject({
      code: "RG111",
      ...at(text, '"Item"'),
      message: '"Item" is not a schema reference',
    });
  });

  it("RG112 a breaker window cannot be both count and time based", () => {
    const text = policy("breaker: { window: { duration: 10s, calls: 100 } }\n");
    expect(only(text)).toMatchObject({ code: "RG112", ...at(text, "calls") });
  });

  it("reports every problem of a file in one run, sorted by position", () => {
    const text = policy(
      "retry:\n  maxAttemps: 3\ntimeout: { attempt: 250 }\n",
      "  createCharge:\n    path: /charges\n",
    );
    const found = diagnose(text);
    expect(found.map((d) => d.code)).toEqual(["RG101", "RG104", "RG102"]);
    expect(found.map((d) => d.line)).toEqual([
      at(text, "maxAttemps").line,
      at(text, "250").line,
      at(text, "createCharge").line,
    ]);
  });

  it("every code in the table has a title and help text", () => {
    for (const [code, info] of Object.entries(CODES)) {
      expect(code).toMatch(/^RG\d{3}$/);
      expect(info.title.length).toBeGreaterThan(3);
      expect(info.help.length).toBeGreaterThan(20);
    }
  });
});

describe("reserved keys", () => {
  it("RG006 refuses __proto__ anywhere, quoted or not, at the key", () => {
    for (const key of ["__proto__", '"__proto__"']) {
      const text = policy(
        "",
        `  get:\n    method: GET\n    path: /x\n    response: { type: object, properties: { ${key}: { type: string } } }\n`,
      );
      expect(only(text)).toMatchObject({
        code: "RG006",
        ...at(text, key),
        message: "the key __proto__ is not supported",
      });
    }
  });
});
