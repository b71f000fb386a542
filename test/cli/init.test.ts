/**
 * `resgen init` (docs/quickstart.md): each mode scaffolds a project that `resgen check` passes
 * without a finding and `resgen build` builds into a client that compiles under strict; it never
 * overwrites a file; bad input is refused with exit 2 before anything is written.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../build/helpers.js";
import { applyInit, planInit } from "../../src/init/init.js";
import { compile } from "../helpers/tsc.js";

const scratch = mkdtempSync(join(tmpdir(), "resgen-init-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let count = 0;
/** A new folder under the scratch folder, with the given files. */
function project(files: Record<string, string> = {}): string {
  const dir = join(scratch, `p${++count}`);
  mkdirSync(dir);
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(join(dir, file, ".."), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  return dir;
}

const resgen = runCli;

/** Every file below `dir` with its bytes, to compare a folder before and after. */
function snapshot(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (entry.isFile())
      files[relative(dir, join(entry.parentPath, entry.name))] = readFileSync(
        join(entry.parentPath, entry.name),
        "utf8",
      );
  return files;
}

/** The lines init prints before its first blank line: one per file. */
const fileLines = (stdout: string) => stdout.slice(0, stdout.indexOf("\n\n")).split("\n");

/** `resgen check` in `dir` passes, with no finding at all. */
async function expectClean(dir: string) {
  const checked = await resgen(dir, "check");
  expect(checked.stdout.trimEnd().split("\n").at(-1)).toBe(
    "1 policy checked: 0 errors, 0 warnings",
  );
  expect(checked.code).toBe(0);
}

const ORDERS = {
  openapi: "3.0.3",
  info: { title: "Orders", version: "1.0.0" },
  paths: {
    "/orders": {
      post: {
        operationId: "createOrder",
        parameters: [
          { name: "Idempotency-Key", in: "header", required: true, schema: { type: "string" } },
        ],
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                type: "object",
                properties: { sku: { type: "string" } },
                required: ["sku"],
              },
            },
          },
        },
        responses: { "201": { description: "Created." } },
      },
    },
    "/orders/{id}": {
      get: {
        operationId: "getOrder",
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
        responses: {
          "200": {
            description: "The order.",
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  properties: { id: { type: "string" } },
                  required: ["id"],
                },
              },
            },
          },
        },
      },
    },
  },
};

describe("resgen init", () => {
  it("--base-url: a hand-written policy with one GET, the project file and the tools' settings", async () => {
    const dir = project({
      "package.json": JSON.stringify({ type: "module", devDependencies: { prettier: "3.0.0" } }),
    });
    const r = await resgen(dir, "init", "--base-url", "https://inventory.internal");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(fileLines(r.stdout)).toEqual([
      "wrote resgen.config.yaml",
      "wrote resilience/inventory.yaml",
      "wrote eslint.config.js",
      "wrote .gitattributes",
      "wrote .prettierignore",
    ]);
    expect(r.stdout).toContain("inventory (resilience/inventory.yaml): 1 operation: getRoot\n");
    expect(r.stdout).toContain("npm i -D eslint @typescript-eslint/parser");
    const policy = readFileSync(join(dir, "resilience/inventory.yaml"), "utf8");
    expect(policy).toContain("dependency: inventory\n");
    expect(policy).toContain("getRoot: { method: GET, path: / }");
    expect(policy).toContain("# Base URL: https://inventory.internal,");
    expect(readFileSync(join(dir, "resgen.config.yaml"), "utf8")).toContain("out: src/generated");
    expect(readFileSync(join(dir, ".gitattributes"), "utf8")).toBe(
      "src/generated/** linguist-generated=true\n",
    );
    expect(readFileSync(join(dir, ".prettierignore"), "utf8")).toBe("src/generated/\n");
    const eslint = readFileSync(join(dir, "eslint.config.js"), "utf8");
    expect(eslint).toContain('{ ignores: ["src/generated/"] }');
    expect(eslint).toContain('{ files: ["**/*.ts"], languageOptions: { parser: tsParser } }');
    await expectClean(dir);

    expect((await resgen(dir, "build")).code).toBe(0);
    expect(existsSync(join(dir, "src/generated/inventory.ts"))).toBe(true);
    expect(r.stdout).not.toContain("ES modules");
  });

  it("--openapi: the policy names the description and lists its operations", async () => {
    const dir = project({
      "package.json": JSON.stringify({ type: "commonjs" }),
      "api/orders.openapi.json": JSON.stringify(ORDERS),
    });
    const r = await resgen(dir, "init", "--openapi", "api/orders.openapi.json");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    // .js files are not ES modules in this package; no prettier: no .prettierignore
    expect(fileLines(r.stdout)).toEqual([
      "wrote resgen.config.yaml",
      "wrote resilience/orders.yaml",
      "wrote eslint.config.mjs",
      "wrote .gitattributes",
    ]);
    expect(r.stdout).toContain("orders (resilience/orders.yaml): 2 operations: ");
    const policy = readFileSync(join(dir, "resilience/orders.yaml"), "utf8");
    expect(policy).toContain("openapi: ../api/orders.openapi.json\n");
    expect(policy).toContain("#   createOrder: {}\n");
    expect(policy).toContain("#   getOrder: {}\n");
    expect(policy).not.toMatch(/^operations:/m);
    await expectClean(dir);
    const built = await resgen(dir, "build");
    expect(built.code).toBe(0);
    expect(readFileSync(join(dir, "src/generated/orders.ts"), "utf8")).toContain("getOrder");
    expect(r.stdout).toContain('the generated clients are ES modules: set "type": "module"');
  });

  it("no flags: a commented template that builds as it is", async () => {
    const dir = project({ "package.json": JSON.stringify({ type: "module" }) });
    const r = await resgen(dir, "init");
    expect(r.code).toBe(0);
    expect(fileLines(r.stdout)).toEqual([
      "wrote resgen.config.yaml",
      "wrote resilience/example.yaml",
      "wrote eslint.config.js",
      "wrote .gitattributes",
    ]);
    const policy = readFileSync(join(dir, "resilience/example.yaml"), "utf8");
    expect(policy).toContain("# A template:");
    expect(policy).toMatch(/^ {2}# createItem:$/m);
    await expectClean(dir);
    expect((await resgen(dir, "build")).code).toBe(0);
  });

  it("--dir and --name: the project elsewhere, the command to build it printed with its folder", async () => {
    const root = project({ "svc/package.json": "{}" });
    const r = await resgen(
      root,
      "init",
      "--dir",
      "svc",
      "--name",
      "stock",
      "--base-url",
      "http://127.0.0.1:8080/v1/",
    );
    expect(r.code).toBe(0);
    expect(fileLines(r.stdout)[1]).toBe("wrote svc/resilience/stock.yaml");
    expect(r.stdout).toContain("npx resgen build svc ");
    expect(r.stdout).toContain('createStockClient({ baseUrl: "http://127.0.0.1:8080/v1" })');
    expect((await resgen(root, "build", "svc")).code).toBe(0);
    expect(existsSync(join(root, "svc/src/generated/stock.ts"))).toBe(true);
  });

  it("the clients it makes, and the first call it prints, compile under strict", async () => {
    const module = JSON.stringify({ type: "module" });
    const first = project({ "package.json": module });
    const r = await resgen(first, "init", "--base-url", "https://inventory.internal");
    const template = project({ "package.json": module });
    expect((await resgen(template, "init")).code).toBe(0);
    for (const dir of [first, template]) expect((await resgen(dir, "build")).code).toBe(0);
    const printed = r.stdout.split("\n").filter((l) => /^ {4}(import|const) /.test(l));
    expect(printed).toEqual([
      '    import { createInventoryClient } from "./generated/index.js";',
      '    const inventory = createInventoryClient({ baseUrl: "https://inventory.internal" });',
    ]);
    const main = join(first, "src/main.ts");
    writeFileSync(
      main,
      [...printed.map((l) => l.trim()), "await inventory.getRoot();", ""].join("\n"),
    );
    expect(await compile([main, join(template, "src/generated/index.ts")], "NodeNext")).toBe("");
  });
});

describe("resgen init never overwrites", () => {
  it("leaves existing files alone, uses the project file there, appends only missing lines", async () => {
    const config = "version: 1\npolicies: deps/*.policy.yaml\nout: gen\n";
    const eslint = "export default [];\n";
    const dir = project({
      "package.json": JSON.stringify({ devDependencies: { prettier: "3.0.0", eslint: "9.0.0" } }),
      "resgen.config.yaml": config,
      "eslint.config.js": eslint,
      ".gitattributes": "*.png binary\n/gen/ linguist-generated\n",
      ".prettierignore": "dist/", // no newline at the end
    });
    const r = await resgen(dir, "init", "--base-url", "https://stock.example.com");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(fileLines(r.stdout)).toEqual([
      "skipped resgen.config.yaml: it exists; its policies and out are used",
      "wrote deps/stock.policy.yaml",
      "skipped eslint.config.js: it exists; add the lines below to it",
      "skipped .gitattributes: it has the line for gen/** already",
      "appended gen/ to .prettierignore",
    ]);
    expect(r.stdout).toContain('  globalIgnores(["gen/"]),');
    expect(r.stdout).toContain("  resgen.configs.recommended,");
    expect(r.stdout).not.toContain("npm i -D");
    expect(readFileSync(join(dir, "resgen.config.yaml"), "utf8")).toBe(config);
    expect(readFileSync(join(dir, "eslint.config.js"), "utf8")).toBe(eslint);
    expect(readFileSync(join(dir, ".gitattributes"), "utf8")).toBe(
      "*.png binary\n/gen/ linguist-generated\n",
    );
    expect(readFileSync(join(dir, ".prettierignore"), "utf8")).toBe("dist/\ngen/\n");
    expect((await resgen(dir, "build")).code).toBe(0);
    expect(existsSync(join(dir, "gen/stock.ts"))).toBe(true);

    // a second run: everything is there, so nothing changes
    const before = snapshot(dir);
    const again = await resgen(dir, "init", "--base-url", "https://stock.example.com");
    expect(again.code).toBe(0);
    expect(fileLines(again.stdout)).toEqual([
      "skipped resgen.config.yaml: it exists; its policies and out are used",
      "skipped deps/stock.policy.yaml: it exists",
      "skipped eslint.config.js: it exists; add the lines below to it",
      "skipped .gitattributes: it has the line for gen/** already",
      "skipped .prettierignore: it has the line for gen/ already",
    ]);
    expect(snapshot(dir)).toEqual(before);
  });

  it("a legacy ESLint config is left alone, and the lines for a flat config are printed", async () => {
    const dir = project({ ".eslintrc.json": "{}\n" });
    const r = await resgen(dir, "init", "--name", "stock");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("skipped .eslintrc.json: ESLint is configured there the legacy way");
    expect(existsSync(join(dir, "eslint.config.mjs"))).toBe(false);
    expect(readFileSync(join(dir, ".eslintrc.json"), "utf8")).toBe("{}\n");
  });

  it("a write that fails takes back the files written before it", async () => {
    const dir = project({ blocker: "a file where a folder must be\n" });
    const plan = await planInit({ cwd: dir, baseUrl: "https://stock.internal" });
    expect(plan.ok).toBe(true);
    if (!plan.ok) return;
    const failed = await applyInit({
      ...plan,
      steps: [...plan.steps, { kind: "write", file: join(dir, "blocker/inside.txt"), text: "x\n" }],
    });
    expect(failed?.file).toBe(join(dir, "blocker/inside.txt"));
    expect(snapshot(dir)).toEqual({ blocker: "a file where a folder must be\n" });
    expect(readdirSync(dir)).toEqual(["blocker"]);
  });
});

describe("resgen init --runtime package and --platform web", () => {
  const initStock = (dir: string, ...flags: string[]) =>
    resgen(dir, "init", "--base-url", "https://stock.example.com", ...flags);

  it("write the setting into the new project file, and build then imports the runtime from the package", async () => {
    const dir = project();
    const r = await initStock(dir, "--runtime", "package");
    expect(r.code).toBe(0);
    expect(readFileSync(join(dir, "resgen.config.yaml"), "utf8")).toMatch(/^runtime: package\b/m);
    expect(r.stdout).toMatch(
      /^ {2}npm i resgen +# runtime: package: the clients import resgen\/runtime/m,
    );
    await expectClean(dir);
    expect((await resgen(dir, "build")).code).toBe(0);
    expect(readdirSync(join(dir, "src", "generated")).sort()).toEqual([
      ".resgen-manifest.json",
      "index.ts",
      "stock.ts",
    ]);
  });

  it("--platform web writes platform: web, and the output's ambient store is the web one", async () => {
    const dir = project();
    const r = await initStock(dir, "--platform", "web");
    expect(r.code).toBe(0);
    expect(readFileSync(join(dir, "resgen.config.yaml"), "utf8")).toMatch(/^platform: web\b/m);
    expect(r.stdout).not.toContain("npm i resgen ");
    await expectClean(dir);
    expect((await resgen(dir, "build")).code).toBe(0);
    const ambient = readFileSync(join(dir, "src", "generated", "runtime", "ambient.ts"), "utf8");
    expect(ambient).toContain("templates/runtime/ambient.web.ts");
  });

  it("accept a setting the existing project file already has", async () => {
    const dir = project({ "resgen.config.yaml": "version: 1\nruntime: package\n" });
    const r = await resgen(dir, "init", "--name", "stock", "--runtime", "package");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ {2}npm i resgen /m);
  });
});

describe("resgen init refuses bad input and writes nothing", () => {
  const cases: [string, string[], Record<string, string>, RegExp][] = [
    [
      "a missing OpenAPI file",
      ["--openapi", "nope.yaml"],
      {},
      /--openapi nope\.yaml: no such file/,
    ],
    ["a URL that is not one", ["--base-url", "inventory"], {}, /--base-url inventory: not a URL/],
    [
      "a scheme other than http(s)",
      ["--base-url", "ftp://inventory.internal"],
      {},
      /scheme is ftp/,
    ],
    [
      "credentials in the URL",
      ["--base-url", "https://user:secret@inventory.internal"],
      {},
      /credentials do not belong/,
    ],
    ["a query in the URL", ["--base-url", "https://inventory.internal/?a=1"], {}, /no query/],
    ["a folder that does not exist", ["--dir", "nowhere"], {}, /nowhere: no such folder/],
    [
      "--dir naming a file",
      ["--dir", "file.txt"],
      { "file.txt": "x\n" },
      /file\.txt: not a folder/,
    ],
    ["a name that is not one", ["--name", "9lives"], {}, /--name 9lives: a dependency's name/],
    [
      "an address without --name",
      ["--base-url", "http://10.0.0.7:8080"],
      {},
      /give it with --name <dependency>/,
    ],
    [
      "--runtime package with --platform web",
      ["--name", "stock", "--runtime", "package", "--platform", "web"],
      {},
      /--runtime package cannot be used with --platform web/,
    ],
    [
      "a setting the project file says otherwise",
      ["--name", "stock", "--runtime", "package"],
      { "resgen.config.yaml": "version: 1\n" },
      /resgen\.config\.yaml exists and says runtime: vendored: set runtime: package in it yourself/,
    ],
  ];
  for (const [what, args, files, message] of cases) {
    it(what, async () => {
      const dir = project(files);
      const r = await resgen(dir, "init", ...args);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe("");
      expect(snapshot(dir)).toEqual(files);
    });
  }

  it("an OpenAPI file outside the project folder", async () => {
    const root = project({ "shared/orders.openapi.json": JSON.stringify(ORDERS), "svc/.keep": "" });
    const r = await resgen(join(root, "svc"), "init", "--openapi", "../shared/orders.openapi.json");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("outside the project folder");
    expect(readdirSync(join(root, "svc"))).toEqual([".keep"]);
  });

  it("a description resgen cannot import: the check's errors, exit 1", async () => {
    const files = {
      "api/broken.openapi.yaml": "openapi: 2.0.0\ninfo: { title: x, version: 1 }\npaths: {}\n",
    };
    const dir = project(files);
    const r = await resgen(dir, "init", "--openapi", "api/broken.openapi.yaml");
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/error RG6\d\d/);
    expect(r.stderr).toContain("nothing written: the new files would not pass resgen check");
    expect(snapshot(dir)).toEqual(files);
  });

  it("a project file with errors", async () => {
    const files = { "resgen.config.yaml": "version: 1\nout: [1]\n" };
    const dir = project(files);
    const r = await resgen(dir, "init");
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("resgen.config.yaml:2:");
    expect(r.stderr).toContain("resgen.config.yaml has errors");
    expect(snapshot(dir)).toEqual(files);
  });

  it("a name resgen keeps for itself", async () => {
    const dir = project();
    const r = await resgen(dir, "init", "--name", "index", "--base-url", "https://x.internal");
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("RG301");
    expect(snapshot(dir)).toEqual({});
  });
});
