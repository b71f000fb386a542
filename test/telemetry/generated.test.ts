/**
 * Generated clients and the `telemetry` project setting: without it nothing mentions
 * OpenTelemetry; with it the adapter is emitted, every client installs it, everything compiles
 * under tsc --strict with @opentelemetry/api resolvable, and a call through a generated client
 * shows up as metrics and spans.
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, type BuildResult } from "../../src/build/build.js";
import { header } from "../../src/model/header.js";
import { PACKAGE_ROOT } from "../../src/version.js";
import { silentLogger } from "../../templates/runtime/index.js";
import { ATTR, METRIC } from "../../templates/telemetry/opentelemetry.js";
import { compile, MODULE_MODES } from "../helpers/tsc.js";
import { createSdk } from "./sdk.js";

const OUT = join(PACKAGE_ROOT, "test/telemetry/__out__");

/** The part of the generated module this test uses (it is type-checked for real by the compile test). */
interface GeneratedModule {
  createInventoryClient(config: {
    baseUrl: string;
    fetch: typeof fetch;
    telemetry: object | false;
  }): {
    getStock(input: { sku: string }): Promise<unknown>;
    health(): unknown;
  };
}

function written(result: BuildResult): Map<string, string> {
  const files = new Map<string, string>();
  for (const change of result.plans[0]!.changes)
    if (change.kind !== "remove") files.set(change.path, change.content);
  return files;
}

describe("a project without telemetry", () => {
  const out = join(OUT, "plain");
  let files: Map<string, string>;
  beforeAll(async () => {
    rmSync(out, { recursive: true, force: true });
    files = written(
      await build(["examples/checkout"], {
        cwd: PACKAGE_ROOT,
        out,
        check: true,
        allowOutsideProject: true,
      }),
    );
  });

  it("generates nothing that imports or names OpenTelemetry", () => {
    expect(files.size).toBeGreaterThan(5);
    for (const [path, text] of files) {
      expect(path.startsWith("telemetry/"), path).toBe(false);
      expect(text, path).not.toMatch(/opentelemetry/i);
    }
    const client = files.get("payments.ts")!;
    expect([...client.matchAll(/^import [^;]* from "([^"]*)";$/gm)].map((m) => m[1])).toEqual([
      "./runtime/index.js",
    ]);
  });
});

describe("a project with telemetry: opentelemetry", () => {
  const out = join(OUT, "otel");
  let result: BuildResult;
  let files: Map<string, string>;
  beforeAll(async () => {
    rmSync(out, { recursive: true, force: true });
    result = await build(["test/telemetry/fixtures/otel"], {
      cwd: PACKAGE_ROOT,
      out,
      allowOutsideProject: true,
    });
    files = written(result);
  });
  afterAll(() => rmSync(OUT, { recursive: true, force: true }));

  it("builds, and copies the adapter byte for byte behind the header", () => {
    expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(result.written).toBe(true);
    const template = readFileSync(
      join(PACKAGE_ROOT, "templates/telemetry/opentelemetry.ts"),
      "utf8",
    );
    expect(files.get("telemetry/opentelemetry.ts")).toBe(
      `${header("its telemetry adapter (templates/telemetry/opentelemetry.ts)")}\n${template}`,
    );
  });

  it("has every client import and install the adapter, and only the adapter import OpenTelemetry", () => {
    for (const module of ["inventory.ts", "geocoder.ts"]) {
      const text = files.get(module)!;
      expect(text).toContain(
        'import { installOpenTelemetry, type OpenTelemetryOptions } from "./telemetry/opentelemetry.js";',
      );
      expect(text).toContain(
        "if (config.telemetry !== false) installOpenTelemetry(dependency, config.telemetry);",
      );
      expect(text).toContain("readonly telemetry?: OpenTelemetryOptions | false | undefined;");
    }
    for (const [path, text] of files)
      if (path !== "telemetry/opentelemetry.ts")
        expect(text, path).not.toContain("@opentelemetry/");
    expect(files.get("index.ts")).toContain(
      'export { installOpenTelemetry, type OpenTelemetryOptions } from "./telemetry/opentelemetry.js";',
    );
  });

  it.each(Object.keys(MODULE_MODES) as (keyof typeof MODULE_MODES)[])(
    "compiles under tsc --strict with %s resolution",
    async (mode) => {
      expect(
        await compile(
          [...files.keys()].map((path) => join(out, path)),
          mode,
        ),
      ).toBe("");
    },
  );

  it("records a call made through the generated client, and records nothing with telemetry: false", async () => {
    const gen = (await import(pathToFileURL(join(out, "index.ts")).href)) as GeneratedModule;
    const sdk = createSdk();
    const fetch = (() =>
      Promise.resolve(
        new Response(JSON.stringify({ sku: "a1", available: 3 }), {
          status: 200,
          headers: { "content-type": "application/json" },
        }),
      )) as typeof globalThis.fetch;
    const telemetry = {
      meter: sdk.meterProvider.getMeter("t"),
      tracer: sdk.tracerProvider.getTracer("t"),
      logger: silentLogger,
    };
    const inventory = gen.createInventoryClient({
      baseUrl: "http://inventory.test",
      fetch,
      telemetry,
    });
    expect(await inventory.getStock({ sku: "a1" })).toEqual({ sku: "a1", available: 3 });
    const quiet = gen.createInventoryClient({
      baseUrl: "http://inventory.test",
      fetch,
      telemetry: false,
    });
    await quiet.getStock({ sku: "a1" });

    const m = await sdk.collect();
    const call = {
      [ATTR.dependency]: "inventory",
      [ATTR.operation]: "getStock",
      [ATTR.outcome]: "success",
    };
    expect(m.histogram(METRIC.callDuration, call).count).toBe(1);
    expect(m.histogram(METRIC.attemptDuration, call).count).toBe(1);
    expect(
      m
        .points(METRIC.breakerState, {
          [ATTR.dependency]: "inventory",
          [ATTR.breakerState]: "closed",
        })
        .map((p) => p.value),
    ).toEqual([1]);
    expect(
      sdk.spans
        .getFinishedSpans()
        .map((s) => s.name)
        .sort(),
    ).toEqual(["inventory.getStock", "inventory.getStock attempt"]);
    // the client's health() is the snapshot the gauges read
    expect(inventory.health()).toMatchObject({
      name: "inventory",
      breaker: { state: "closed", calls: 1 },
      bulkhead: { inFlight: 0, maxConcurrent: 10 },
    });
  });
});
