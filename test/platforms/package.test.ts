/**
 * `runtime: package` (docs/runtime-package.md): the generated clients import the runtime from the
 * resgen package, compiled, instead of a copy in the output folder. The project's node_modules
 * holds resgen as an installed package would: a link to this checkout, whose exports point at
 * the build in dist/ (`npm test` builds it first).
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { PACKAGE_ROOT } from "../../src/version.js";
import { compile } from "../helpers/tsc.js";
import {
  buildCatalog,
  buildProbeProject,
  expectProbeReport,
  findBinary,
  probeEntry,
  runScript,
  startProbeServer,
  type ProbeProject,
} from "./harness.js";

const PROJECT = "version: 1\nruntime: package\n";

let project: ProbeProject;

beforeAll(async () => {
  const built = join(PACKAGE_ROOT, "dist", "templates", "runtime", "index.js");
  if (!existsSync(built)) throw new Error(`${built} is missing: run npm run build first`);
  project = await buildProbeProject(PROJECT);
  writeFileSync(join(project.dir, "package.json"), '{ "type": "module" }\n');
  mkdirSync(join(project.dir, "node_modules"));
  symlinkSync(PACKAGE_ROOT, join(project.dir, "node_modules", "resgen"), "dir");
}, 60_000);

afterAll(() => {
  rmSync(project.dir, { recursive: true, force: true });
});

const outFiles = (): string[] =>
  readdirSync(join(project.dir, "out"), { recursive: true, encoding: "utf8" }).sort();

describe("runtime: package", () => {
  it("writes no runtime into the output folder; the modules import it from the package", () => {
    expect(outFiles()).toEqual([".resgen-manifest.json", "catalog.ts", "index.ts"]);
    const client = readFileSync(join(project.dir, "out", "catalog.ts"), "utf8");
    expect(client).toMatch(/\} from "resgen\/runtime\/generated";\n/);
    expect(client).not.toContain("./runtime/");
    const barrel = readFileSync(join(project.dir, "out", "index.ts"), "utf8");
    expect(barrel).toContain('export * from "resgen/runtime";');
  });

  it.each(["NodeNext", "bundler"] as const)(
    "compiles under tsc --strict with %s resolution against the package's types",
    async (mode) => {
      const files = ["catalog.ts", "index.ts"].map((f) => join(project.dir, "out", f));
      expect(await compile(files, mode)).toBe("");
    },
    60_000,
  );

  it("writes the telemetry adapter importing the packaged runtime, and it compiles strict", async () => {
    const dir = mkdtempSync(join(tmpdir(), "resgen-package-otel-"));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, "catalog.yaml"), readFileSync(join(project.dir, "catalog.yaml")));
    writeFileSync(join(dir, "resgen.config.yaml"), `${PROJECT}telemetry: opentelemetry\n`);
    writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
    mkdirSync(join(dir, "node_modules"));
    symlinkSync(PACKAGE_ROOT, join(dir, "node_modules", "resgen"), "dir");
    const otel = join(PACKAGE_ROOT, "node_modules", "@opentelemetry");
    symlinkSync(otel, join(dir, "node_modules", "@opentelemetry"), "dir");
    await buildCatalog(dir);
    const adapter = readFileSync(join(dir, "out", "telemetry", "opentelemetry.ts"), "utf8");
    expect(adapter).toContain('} from "resgen/runtime/generated";');
    expect(adapter).not.toContain("../runtime/");
    const files = ["catalog.ts", "index.ts", "telemetry/opentelemetry.ts"];
    expect(
      await compile(
        files.map((f) => join(dir, "out", f)),
        "NodeNext",
      ),
    ).toBe("");
  }, 60_000);

  it("runs on Node: a success, an attempt timeout, stale, static and network fallbacks, ambient deadlines", async () => {
    writeFileSync(
      join(project.dir, "node.ts"),
      probeEntry('"node " + process.version', "process.argv[2]"),
    );
    const server = await startProbeServer();
    try {
      const tsx = join(PACKAGE_ROOT, "node_modules", "tsx", "dist", "cli.mjs");
      const report = await runScript(process.execPath, [tsx, "node.ts", server.url], {
        cwd: project.dir,
        timeoutMs: 30_000,
      });
      expect(report.platform).toBe(`node ${process.version}`);
      expectProbeReport(report, server);
    } finally {
      await server.close();
    }
  });

  it("runs on Bun, which resolves the package through its exports", async () => {
    writeFileSync(
      join(project.dir, "bun.ts"),
      probeEntry('"bun " + Bun.version', "process.argv[2]"),
    );
    const server = await startProbeServer();
    try {
      const report = await runScript(
        findBinary("bun"),
        ["run", "--no-install", "bun.ts", server.url],
        { cwd: project.dir, timeoutMs: 20_000 },
      );
      expectProbeReport(report, server);
    } finally {
      await server.close();
    }
  });

  it("removes the runtime it wrote before when a vendored output switches to the package", async () => {
    // a folder of its own: the probe project's resgen.config.yaml would govern one inside it
    const dir = mkdtempSync(join(tmpdir(), "resgen-switch-"));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, "catalog.yaml"), readFileSync(join(project.dir, "catalog.yaml")));
    await buildCatalog(dir);
    expect(existsSync(join(dir, "out", "runtime", "call.ts"))).toBe(true);
    writeFileSync(join(dir, "resgen.config.yaml"), PROJECT);
    const output = await buildCatalog(dir);
    expect(readdirSync(join(dir, "out")).sort()).toEqual([
      ".resgen-manifest.json",
      "catalog.ts",
      "index.ts",
    ]);
    expect(output).toMatch(/\d+ removed/);
  });
});
