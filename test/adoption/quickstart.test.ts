/**
 * The README's "Use it in your service" and docs/quickstart.md, run as a user would: the package
 * packed and installed into a scratch project, then each command of the README's block
 * (`resgen init`, `resgen build`), the first call compiled under strict and run against a local
 * server, and the eslint.config.js init wrote run by ESLint. The base URL of the README,
 * https://inventory.internal, is pointed at the test's server on 127.0.0.1; every other text is
 * taken from the docs as written, and what init prints and writes is compared with them.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../src/version.js";
import { pack } from "./pack.js";

const exec = promisify(execFile);
const README_URL = "https://inventory.internal";

/** The text of `markdown` from `heading` to the next heading of the same level. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n${heading}\n`);
  expect(start, heading).toBeGreaterThan(0);
  const level = /^#+/.exec(heading)![0];
  const end = markdown.indexOf(`\n${level} `, start + heading.length + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

/** The fenced blocks of `text` in `language`. */
const blocks = (text: string, language: string) =>
  [...text.matchAll(new RegExp("```" + language + "\\n([\\s\\S]*?)```", "g"))].map((m) => m[1]!);

/** A console block: the output printed after `$ command`, up to the next command. */
function outputOf(console: string, command: string): string {
  const start = console.indexOf(`$ ${command}\n`);
  expect(start, command).toBeGreaterThanOrEqual(0);
  const rest = console.slice(start + command.length + 3);
  const next = rest.search(/^\$ /m);
  return next < 0 ? rest : rest.slice(0, next);
}

/**
 * The environment of the test runner without what npm sets for its own script (the project's
 * prefix and package fields), so the commands see only the user's npm configuration.
 */
function userEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { npm_config_update_notifier: "false" };
  for (const [name, value] of Object.entries(process.env))
    if (!/^npm_(package_|lifecycle_|config_local_prefix$)/i.test(name) && name !== "INIT_CWD")
      env[name] = value;
  return env;
}

const readme = section(
  readFileSync(join(PACKAGE_ROOT, "README.md"), "utf8"),
  "## Use it in your service",
);
const quickstart = readFileSync(join(PACKAGE_ROOT, "docs/quickstart.md"), "utf8");
const transcript = blocks(quickstart, "console").join("");

describe("the quickstart, from the packed package", () => {
  const scratch = mkdtempSync(join(tmpdir(), "resgen-quickstart-"));
  const project = join(scratch, "service");
  const requests: { method: string; url: string; headers: IncomingHttpHeaders }[] = [];
  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
    res.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
  });
  let url = "";
  const timings: string[] = [];
  /** Runs `command` (as the docs write it) in the project; resolves to its exit code and output. */
  async function sh(command: string, ...args: string[]) {
    const started = performance.now();
    const [file, ...rest] = [...command.split(" "), ...args];
    try {
      const { stdout, stderr } = await exec(file!, rest, {
        cwd: project,
        env: userEnvironment(),
        timeout: 120_000,
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string };
      return { code: e.code ?? -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
    } finally {
      timings.push(`${command}: ${Math.round(performance.now() - started)} ms`);
    }
  }

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    // bounded: whatever happens to the test, the server stops within two minutes
    setTimeout(() => server.close(), 120_000).unref();
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    mkdirSync(project, { recursive: true });
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({ name: "service", version: "1.0.0", private: true, type: "module" }),
    );
  }, 10_000);

  afterAll(() => {
    server.close();
    rmSync(scratch, { recursive: true, force: true });
    console.log(`quickstart steps: ${timings.join("; ")}`);
  });

  const commands = blocks(readme, "sh")[0]!.trimEnd().split("\n");

  it("the README's block is install, init, build", () => {
    expect(commands).toEqual([
      "npm i -D resgen eslint @typescript-eslint/parser",
      `npx resgen init --name inventory --base-url ${README_URL}`,
      "npx resgen build",
    ]);
  });

  it("npm i -D resgen …: the packed tarball installs", async () => {
    const started = performance.now();
    mkdirSync(join(scratch, "pack"));
    const { tarball } = await pack(join(scratch, "pack"));
    timings.push(`pack: ${Math.round(performance.now() - started)} ms`);
    const install = await sh(
      "npm install --no-audit --no-fund --prefer-offline --save-dev",
      tarball,
    );
    expect(install.stderr).not.toMatch(/ERR!/);
    expect(install.code).toBe(0);
    // the others the README names, and the service's own TypeScript, are this checkout's (offline)
    const others = commands[0]!
      .split(" ")
      .slice(3)
      .filter((p) => p !== "resgen");
    const linked = [...others, "typescript", "@types/node"];
    const manifest = JSON.parse(readFileSync(join(project, "package.json"), "utf8")) as {
      devDependencies: Record<string, string>;
    };
    mkdirSync(join(project, "node_modules/.bin"), { recursive: true });
    for (const name of linked) {
      mkdirSync(join(project, "node_modules", name, ".."), { recursive: true });
      symlinkSync(join(PACKAGE_ROOT, "node_modules", name), join(project, "node_modules", name));
      const { version } = JSON.parse(
        readFileSync(join(PACKAGE_ROOT, "node_modules", name, "package.json"), "utf8"),
      ) as { version: string };
      manifest.devDependencies[name] = version;
    }
    symlinkSync("../typescript/bin/tsc", join(project, "node_modules/.bin/tsc"));
    symlinkSync("../eslint/bin/eslint.js", join(project, "node_modules/.bin/eslint"));
    writeFileSync(join(project, "package.json"), JSON.stringify(manifest, null, 2));
  }, 240_000);

  it("npx resgen init: prints and writes what docs/quickstart.md shows", async () => {
    const command = commands[1]!;
    const r = await sh(command.replace(README_URL, url));
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout.replaceAll(url, README_URL)).toBe(outputOf(transcript, command));
    const policy = blocks(section(quickstart, "## 2. The first policy"), "yaml")[0]!;
    expect(
      readFileSync(join(project, "resilience/inventory.yaml"), "utf8").replaceAll(url, README_URL),
    ).toBe(policy);
    // the eslint.config.js the README shows is the one init wrote
    expect(readFileSync(join(project, "eslint.config.js"), "utf8")).toBe(blocks(readme, "js")[0]);
  }, 60_000);

  it("npx resgen build: writes the client", async () => {
    const r = await sh(commands[2]!);
    expect(r.code).toBe(0);
    const digits = (text: string) => text.replace(/\d+/g, "N");
    expect(digits(r.stdout)).toBe(digits(outputOf(transcript, commands[2]!)));
  }, 60_000);

  it("the first call compiles under strict and reaches the server through the stack", async () => {
    const main = blocks(readme, "ts")[0]!;
    expect(main.startsWith("// src/main.ts\n")).toBe(true);
    expect(main).toContain(README_URL);
    writeFileSync(join(project, "src/main.ts"), main.replace(README_URL, url));
    const tsconfig = blocks(section(quickstart, "## 4. The first call"), "json")[0]!;
    expect(JSON.parse(tsconfig)).toMatchObject({ compilerOptions: { strict: true } });
    writeFileSync(join(project, "tsconfig.json"), tsconfig);

    const tsc = await sh("npx tsc");
    expect(tsc.stdout + tsc.stderr).toBe("");
    expect(tsc.code).toBe(0);
    const run = await sh("node dist/main.js");
    expect(run.stderr).toBe("");
    expect(run.stdout).toBe(outputOf(transcript, "node dist/main.js"));
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ method: "GET", url: "/" });
    // the deadline travels with the request (docs/build.md, "The generated client")
    expect(Number(requests[0]!.headers["x-request-timeout-ms"])).toBeGreaterThan(0);
  }, 60_000);

  it("npx eslint .: the hand-written fetch is reported, the generated client and main.ts are not", async () => {
    const stock = blocks(section(quickstart, "## 5. Hand-written calls"), "ts")[0]!;
    expect(stock.startsWith("// src/stock.ts")).toBe(true);
    writeFileSync(join(project, "src/stock.ts"), stock);
    const r = await sh("npx eslint .");
    expect(r.code).toBe(1);
    const files = r.stdout.split("\n").filter((l) => l.startsWith("/"));
    expect(files).toEqual([join(project, "src/stock.ts")]);
    const shown = outputOf(transcript, "npx eslint .").split("\n");
    const finding = shown.find((l) => l.includes("resgen/require-timeout"))!;
    const [position] = finding.trim().split(/\s+/);
    expect(r.stdout).toMatch(new RegExp(`^ +${position!}  error  .*resgen/require-timeout$`, "m"));
  }, 60_000);
});
