/**
 * Code frames of long lines: clipped to a window around the caret, the caret under the character
 * the diagnostic names, tabs kept in the padding. And the inputs that made reporting slow (a
 * minified one-line document, hundreds of kilobytes of `[`) end in a short report. No timings:
 * the output length stands for the work done.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { main, type Io } from "../../src/cli/cli.js";
import { diagnostic } from "../../src/diagnostics/diagnostic.js";
import { ELLIPSIS, formatPretty, FRAME_WIDTH, SourceTexts } from "../../src/diagnostics/format.js";
import { loadYaml, MAX_NESTING_DEPTH } from "../../src/language/parse.js";

/** The pretty report of one diagnostic over `text`, spanning `length` characters from `start`. */
function frame(text: string, start: number, length = 1): string {
  const sources = new SourceTexts();
  sources.set("doc.json", text);
  return formatPretty(
    [diagnostic("RG605", "doc.json", { start, end: start + length }, "a finding")],
    sources,
  );
}

/** The source lines of a frame (gutter removed) and the caret line's padding and carets. */
function parts(out: string): { lines: string[]; pad: string; carets: string } {
  const rows = out.split("\n").filter((row) => /^ *\d* \| /.test(row));
  const strip = (row: string) => row.slice(row.indexOf("| ") + 2);
  const caretRow = strip(rows.at(-1)!);
  const pad = /^[ \t]*/.exec(caretRow)![0];
  return { lines: rows.slice(0, -1).map(strip), pad, carets: caretRow.slice(pad.length) };
}

/** What stands above the caret: the character of the last source line at the caret's column. */
function underCaret(out: string): string {
  const { lines, pad } = parts(out);
  return lines.at(-1)!.charAt(pad.length);
}

/** A line of `size` characters with no repeats near any offset, so a misplaced caret shows. */
function longLine(size: number): string {
  let s = "";
  for (let i = 0; s.length < size; i++) s += `"k${i}":${i},`;
  return s.slice(0, size);
}

describe("code frames of long lines", () => {
  const line = longLine(500_000);

  it("clips a 500 KB line to a window around the caret, the caret under the right character", () => {
    const start = 250_123;
    const out = frame(line, start, 5);
    const { lines, pad, carets } = parts(out);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.startsWith(ELLIPSIS)).toBe(true);
    expect(lines[0]!.endsWith(ELLIPSIS)).toBe(true);
    expect(lines[0]!.length).toBeLessThanOrEqual(FRAME_WIDTH + 2 * ELLIPSIS.length);
    expect(lines[0]).toContain(line.slice(start - 30, start + 30));
    expect(carets).toBe("^^^^^");
    expect(lines[0]!.slice(pad.length, pad.length + 5)).toBe(line.slice(start, start + 5));
    expect(out.length).toBeLessThan(400);
  });

  it("prints the same amount whatever the length of the line", () => {
    // the work is bounded by the window, not the line: 10 KB and 500 KB give frames of one size
    const small = frame(longLine(10_000), 5_000);
    const large = frame(line, 5_000);
    expect(large.length).toBe(small.length);
  });

  it("keeps the caret right at the start and at the end of a long line", () => {
    const atStart = frame(line, 0, 3);
    expect(parts(atStart).lines[0]!.startsWith(line.slice(0, FRAME_WIDTH))).toBe(true);
    expect(parts(atStart).pad).toBe("");
    expect(underCaret(atStart)).toBe(line[0]);

    const last = line.length - 1;
    const atEnd = frame(line, last);
    const { lines } = parts(atEnd);
    expect(lines[0]!.endsWith(line.slice(-FRAME_WIDTH))).toBe(true);
    expect(lines[0]!.length).toBe(FRAME_WIDTH + ELLIPSIS.length);
    expect(underCaret(atEnd)).toBe(line[last]);
  });

  it("puts the caret under the right character at every offset of a long line", () => {
    for (const start of [1, 79, 80, 81, 119, 120, 121, 1_000, 123_457, 499_880, 499_998]) {
      const out = frame(line, start);
      expect(underCaret(out), `offset ${start}`).toBe(line[start]);
      expect(parts(out).lines[0]!.length).toBeLessThanOrEqual(FRAME_WIDTH + 2 * ELLIPSIS.length);
    }
  });

  it("does not cut the caret line's neighbour out of alignment, and prints a short one whole", () => {
    const text = `${line}\n${line}`;
    const start = line.length + 1 + 300_000;
    const { lines, pad } = parts(frame(text, start));
    expect(lines).toHaveLength(2);
    // both long lines show the same columns, so the line above lines up with the caret line
    expect(lines[0]).toBe(lines[1]);
    expect(lines[1]!.charAt(pad.length)).toBe(text[start]);

    const short = `dependency: x\nfoo: ${line}`;
    const at = short.indexOf("\n") + 1 + 200_000;
    const framed = parts(frame(short, at));
    expect(framed.lines[0]).toBe("dependency: x");
    expect(framed.lines[1]!.charAt(framed.pad.length)).toBe(short[at]);
  });

  it("clips a long line above a short caret line from its start", () => {
    const text = `${line}\nkey: value\n`;
    const start = text.indexOf("value");
    const { lines, pad, carets } = parts(frame(text, start, 5));
    expect(lines[0]).toBe(line.slice(0, FRAME_WIDTH) + ELLIPSIS);
    expect(lines[1]).toBe("key: value");
    expect(pad).toBe("     ");
    expect(carets).toBe("^^^^^");
  });

  it("keeps tabs in the padding, in a short line and inside the window of a long one", () => {
    const short = "\t\tkey:\tvalue";
    expect(parts(frame(short, short.indexOf("value"))).pad).toBe("\t\t    \t");

    const tabbed = `${"x".repeat(100_000)}\t\tkey:\tvalue${"y".repeat(100_000)}`;
    const start = tabbed.indexOf("value");
    const { lines, pad } = parts(frame(tabbed, start, 5));
    expect(pad.endsWith("\t\t    \t")).toBe(true);
    expect(pad.replace(/\t/g, "").length + (pad.match(/\t/g) ?? []).length).toBe(
      lines[0]!.indexOf("value"),
    );
    expect(lines[0]!.slice(pad.length, pad.length + 5)).toBe("value");
  });

  it("drops the carriage return of a CRLF line", () => {
    const text = `a: 1\r\nb: ${"z".repeat(300)}\r\n`;
    const start = text.indexOf("b:");
    const { lines } = parts(frame(text, start));
    expect(lines[0]).toBe("a: 1");
    expect(lines[1]!.endsWith(ELLIPSIS)).toBe(true);
    expect(lines[1]).not.toContain("\r");
  });

  it("leaves frames of lines within the window as they were", () => {
    const text = "version: 1\nretry:\n  maxAtempts: 3\n";
    const out = frame(text, text.indexOf("maxAtempts"), "maxAtempts".length);
    expect(out).toContain(" 2 | retry:\n 3 |   maxAtempts: 3\n   |   ^^^^^^^^^^\n");
    expect(out).not.toContain(ELLIPSIS);
  });
});

describe("reports of hostile documents", () => {
  const root = mkdtempSync(join(tmpdir(), "resgen-frames-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const run = async (...args: string[]) => {
    let stdout = "";
    let stderr = "";
    const io: Io = {
      stdout: (t) => void (stdout += t),
      stderr: (t) => void (stderr += t),
      cwd: root,
      color: false,
    };
    const code = await main(["node", "resgen", ...args], io);
    return { code, stdout, stderr };
  };

  it("prints a short frame and the right summary for a minified 500 KB OpenAPI document", async () => {
    // one line of JSON; the one finding (an operation without operationId) is near its end
    const doc = {
      openapi: "3.1.0",
      info: { title: "Big", version: "1.0.0", description: "x".repeat(500_000) },
      paths: {
        "/items/{id}": {
          get: { operationId: "getItem", responses: { "200": { description: "OK." } } },
        },
        "/last/{id}": { get: { responses: { "200": { description: "OK." } } } },
      },
    };
    const text = JSON.stringify(doc);
    writeFileSync(join(root, "doc.json"), text);
    writeFileSync(
      join(root, "big.yaml"),
      "version: 1\ndependency: big\nopenapi: ./doc.json\ntimeout: { attempt: 500ms, total: 2s }\nbulkhead: false\n",
    );
    const pretty = await run("check", "big.yaml");
    const json = await run("check", "big.yaml", "--format", "json");
    const found = JSON.parse(json.stdout) as {
      diagnostics: Array<{ code: string; column: number }>;
    };
    expect(found.diagnostics.map((d) => d.code)).toEqual(["RG605"]);
    expect(pretty.code).toBe(0);
    expect(pretty.stdout.trimEnd().split("\n").at(-1)).toBe(
      "1 policy checked: 0 errors, 1 warning",
    );
    expect(pretty.stdout).toContain(
      `doc.json:1:${found.diagnostics[0]!.column} warning RG605 GET /last/{id} has no operationId`,
    );
    // the report is a few hundred characters, not the 500 KB line (or twice it, with the padding)
    expect(pretty.stdout.length).toBeLessThan(1_000);
    const { lines, pad } = parts(pretty.stdout.slice(pretty.stdout.indexOf("doc.json:1:")));
    expect(lines[0]!.slice(pad.length, pad.length + 5)).toBe('"get"');
  });

  it("refuses a policy of a few hundred KB of nested [ with RG003, without overflowing the stack", () => {
    for (const text of [
      "[".repeat(300_000),
      `version: 1\ndependency: x\nfoo: ${"[".repeat(300_000)}\n`,
      "{a: ".repeat(100_000),
      "- ".repeat(150_000) + "x\n",
    ]) {
      const loaded = loadYaml("deep.yaml", text);
      expect(loaded.ok).toBe(false);
      expect(loaded.diagnostics.map((d) => `${d.code} ${d.message}`)).toEqual([
        `RG003 document nests mappings and lists more than ${MAX_NESTING_DEPTH} deep`,
      ]);
    }
  });

  it("reads a document nested exactly to the limit", () => {
    const depth = MAX_NESTING_DEPTH - 1; // under the top-level mapping
    const loaded = loadYaml(
      "deep.yaml",
      `version: 1\nfoo: ${"[".repeat(depth)}${"]".repeat(depth)}\n`,
    );
    expect(loaded.diagnostics).toEqual([]);
    expect(loaded.ok).toBe(true);
    // brackets in scalars nest nothing
    const quoted = loadYaml(
      "text.yaml",
      `a: "${"[".repeat(1_000)}"\nb: x${"{".repeat(1_000)}\nc: |\n  ${"[".repeat(1_000)}\n`,
    );
    expect(quoted.diagnostics).toEqual([]);
  });

  it("reports a nested-[ OpenAPI document and policy with one short diagnostic each", async () => {
    writeFileSync(join(root, "deep.json"), "[".repeat(300_000));
    writeFileSync(
      join(root, "deep-api.yaml"),
      "version: 1\ndependency: deep\nopenapi: ./deep.json\ntimeout: { attempt: 500ms, total: 2s }\n",
    );
    writeFileSync(
      join(root, "deep-policy.yaml"),
      `version: 1\ndependency: deep\nfoo: ${"[".repeat(300_000)}\n`,
    );
    for (const [file, shown] of [
      ["deep-api.yaml", "deep.json"],
      ["deep-policy.yaml", "deep-policy.yaml"],
    ] as const) {
      const r = await run("check", file);
      expect(r.code).toBe(1);
      const heads = r.stdout.split("\n").filter((l) => / (error|warning) RG/.test(l));
      expect(heads).toHaveLength(1);
      expect(heads[0]).toMatch(
        new RegExp(
          `^${shown}:\\d+:\\d+ error RG003 document nests mappings and lists more than ${MAX_NESTING_DEPTH} deep$`,
        ),
      );
      expect(r.stdout.trimEnd().split("\n").at(-1)).toBe("1 policy checked: 1 error, 0 warnings");
      expect(r.stdout.length).toBeLessThan(1_000);
    }
  });
});
