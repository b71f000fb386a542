/**
 * A policy full of quotes, backticks, ${}, comment terminators, newlines and unicode, for a
 * dependency called `constructor`: the generated code compiles (golden.test.ts) and contains no
 * executable trace of any of it.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build } from "../../src/build/build.js";
import { PACKAGE_ROOT } from "../../src/version.js";

const OUT = join(PACKAGE_ROOT, "test/golden/__out__/hostile-run");
let source = "";

beforeAll(async () => {
  rmSync(OUT, { recursive: true, force: true });
  const result = await build(["test/golden/hostile"], {
    cwd: PACKAGE_ROOT,
    out: OUT,
    allowOutsideProject: true,
  });
  const change = result.plans[0]!.changes.find((c) => c.path === "constructor.ts");
  if (!change || change.kind === "remove") throw new Error("constructor.ts was not generated");
  source = change.content;
});
afterAll(() => {
  rmSync(OUT, { recursive: true, force: true });
  delete (globalThis as { pwned?: unknown }).pwned;
});

/** Identifiers of the code, skipping comments, strings and template text. */
function codeIdentifiers(text: string): Set<string> {
  const scanner = ts.createScanner(
    ts.ScriptTarget.Latest,
    false,
    ts.LanguageVariant.Standard,
    text,
  );
  const out = new Set<string>();
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    if (kind === ts.SyntaxKind.Identifier) out.add(scanner.getTokenText());
    if (kind === ts.SyntaxKind.Unknown)
      throw new Error(`unscannable text at ${scanner.getTokenStart()}`);
  }
  return out;
}

describe("hostile names and strings", () => {
  it("appear only inside strings and comments", () => {
    expect(source).toContain("pwned");
    const identifiers = codeIdentifiers(source);
    expect(identifiers.has("pwned")).toBe(false);
    expect(identifiers.has("globalThis")).toBe(false);
    // the comment terminators from the policy are neutralised
    const comments = [...source.matchAll(/\/\*\*[\s\S]*?\*\//g)].map((m) => m[0]);
    for (const c of comments) expect(c.slice(3, -2)).not.toContain("*/");
  });

  it("run without side effects, and send inherited names only when set", async () => {
    const mod = (await import(join(OUT, "constructor.ts"))) as {
      createConstructorClient: (config: { baseUrl: string; fetch: typeof fetch }) => {
        delete(input: {
          x: string;
          id: string;
          query?: Record<string, unknown>;
        }): Promise<{ data: unknown; degraded: boolean }>;
      };
    };
    expect((globalThis as { pwned?: unknown }).pwned).toBeUndefined();
    const urls: string[] = [];
    const fetchStub: typeof fetch = (input) => {
      urls.push(input instanceof Request ? input.url : String(input));
      return Promise.resolve(
        new Response(JSON.stringify({ constructor: "'" }), {
          status: 200,
          headers: { "content-type": "application/json" },
        }),
      );
    };
    const client = mod.createConstructorClient({ baseUrl: "http://127.0.0.1:9", fetch: fetchStub });
    const result = await client.delete({ x: "${x}", id: 'c"d' });
    expect(result).toEqual({ data: { constructor: "'" }, degraded: false });
    await client.delete({ x: "a/b", id: "`e`", query: { toString: 3 } });
    expect(urls).toEqual([
      "http://127.0.0.1:9/it's/$%24%7Bx%7D/`tick`/c%22d",
      "http://127.0.0.1:9/it's/$a%2Fb/`tick`/%60e%60?toString=3",
    ]);
    expect((globalThis as { pwned?: unknown }).pwned).toBeUndefined();
  });
});
