/**
 * The text output of `resgen build --target` (docs/targets.md, "Reading the notes"): the notes to
 * act on first, each with its frame; the informational notes after them, one group per code and
 * target when they repeat. JSON and SARIF keep one entry per diagnostic.
 */
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildMesh, checkoutProject } from "./notes.js";

let dir: string;
let pretty: string;
beforeAll(async () => {
  dir = checkoutProject();
  pretty = (await buildMesh(dir)).stdout;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The lines that start a diagnostic or a group: `file:line:col warning CODE target:` or `warning CODE target (n places):`. */
const heads = (text: string) =>
  text
    .split("\n")
    .filter((l) => / warning RG\d+ /.test(l) || l.startsWith("warning RG"))
    .map((l) => l.replace(/^\S+ (?=warning)/, ""));

describe("grouped target notes", () => {
  it("prints a repeated informational note once, with one line per place", () => {
    const start = pretty.indexOf(
      "warning RG404 linkerd (4 places): Linkerd has no client-side concurrency limit: the bulkhead stays in the application\n",
    );
    expect(start).toBeGreaterThan(0);
    const block = pretty.slice(start).split("\n\n")[0]!.split("\n");
    expect(block.slice(1)).toEqual([
      "  resilience/geocoder.yaml:3:1",
      "  resilience/inventory.yaml:10:1",
      "  resilience/payments.yaml:13:1",
      "  resilience/recommendations.yaml:10:1",
    ]);
    // no code frame of RG404 linkerd is left
    expect(pretty).not.toMatch(/:\d+:\d+ warning RG404 linkerd/);
  });

  it("names the operation, and each place's message when the messages differ", () => {
    expect(pretty).toContain(
      "warning RG412 linkerd (5 places): Attempt timeout not expressible\n" +
        "  resilience/geocoder.yaml:8:12  operation geocode: the route timeout (1.5s) covers all retries; the attempt timeout of 450ms stays in the application\n",
    );
    expect(pretty).toContain(
      "  resilience/payments.yaml:8:12  operations createCharge, getCharge: the route timeout (2s)",
    );
  });

  it("keeps the frame of an informational note that occurs once", () => {
    expect(pretty).toContain(
      "resilience/geocoder.yaml:3:1 warning RG404 grpc: a gRPC channel has no client-side concurrency limit: the bulkhead stays in the application\n 2 | version: 1\n",
    );
  });

  it("prints every note to act on first, each with its frame, and never groups them", () => {
    const [before, after] = pretty.split(
      "informational: what the targets leave to the application's client\n",
    );
    const acting = heads(before!);
    // behaviour the mesh changes: backoff, retry conditions, attempt counts, Retry-After, budgets, the Istio bulkhead
    for (const code of [
      "RG402 istio",
      "RG404 istio",
      "RG407 linkerd",
      "RG408",
      "RG409",
      "RG410",
      "RG411",
      "RG413",
    ])
      expect(acting.some((l) => l.includes(code))).toBe(true);
    expect(acting.some((l) => l.includes("places)"))).toBe(false);
    expect(acting.filter((l) => l.includes("RG409 linkerd"))).toHaveLength(10);
    // after the line: only the notes that say a setting stays in the application
    const informational = heads(after!).map((l) => l.split(":")[0]!.replace(/ \(\d+ places\)/, ""));
    expect([...new Set(informational)]).toEqual([
      "warning RG401 grpc",
      "warning RG402 grpc",
      "warning RG402 linkerd",
      "warning RG404 grpc",
      "warning RG404 linkerd",
      "warning RG405 grpc",
      "warning RG405 istio",
      "warning RG405 linkerd",
      "warning RG406 istio",
      "warning RG406 linkerd",
      "warning RG412 grpc",
      "warning RG412 linkerd",
      "warning RG414 grpc",
      "warning RG414 istio",
      "warning RG414 linkerd",
    ]);
  });

  it("counts every warning in the summary", () => {
    expect(pretty).toContain("\n0 errors, 71 warnings\n");
  });

  it("prints the same text on every run", async () => {
    expect((await buildMesh(dir)).stdout).toBe(pretty);
  });

  it("keeps one entry per diagnostic in JSON and SARIF", async () => {
    const json = JSON.parse((await buildMesh(dir, ["--format", "json"])).stdout) as {
      diagnostics: { code: string; message: string }[];
      summary: { warnings: number };
    };
    expect(json.diagnostics).toHaveLength(71);
    expect(json.summary.warnings).toBe(71);
    expect(
      json.diagnostics.filter((d) => d.code === "RG404" && d.message.startsWith("linkerd: ")),
    ).toHaveLength(4);
    const sarif = JSON.parse((await buildMesh(dir, ["--format", "sarif"])).stdout) as {
      runs: { results: unknown[] }[];
    };
    expect(sarif.runs[0]!.results).toHaveLength(71);
  });
});
