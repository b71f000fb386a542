/**
 * `resgen tune` end to end, through the CLI, on synthetic Prometheus exports whose quantiles are
 * known: bucket counts of a uniform distribution, where interpolation inside a bucket is exact.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/cli.js";

const POLICY = `# yaml-language-server: $schema=../schema/policy.schema.json
version: 1
dependency: stock
description: Stock levels.    # owned by the warehouse team
essential: true
transport: http
latency: { p50: 15ms, p95: 30ms, p99: 60ms, p999: 120ms, rps: 100 }   # a guess
timeout: { total: 2s }
retry: { maxAttempts: 2 }
breaker: {}
operations:
  getStock:
    method: GET
    path: /items/{sku}
`;

const M = "resilience_client_attempt_duration_seconds";

/**
 * A histogram of `n` observations spread evenly over 0..`top` seconds, in buckets every `step`
 * seconds: the q quantile interpolates to exactly q × top.
 */
function uniform(labels: string, n: number, step: number, top: number, unit = M): string[] {
  const lines: string[] = [];
  const buckets = Math.round(top / step);
  for (let i = 1; i <= buckets; i++)
    lines.push(`${unit}_bucket{${labels},le="${(i * step).toFixed(4)}"} ${(n * i) / buckets}`);
  lines.push(`${unit}_bucket{${labels},le="+Inf"} ${n}`, `${unit}_count{${labels}} ${n}`);
  return lines;
}

function exportOf(...series: string[][]): string {
  return [`# TYPE ${M} histogram`, ...series.flat(), ""].join("\n");
}

const OK =
  'resilience_dependency="stock",resilience_operation="getStock",resilience_outcome="success"';
const TIMEOUT =
  'resilience_dependency="stock",resilience_operation="getStock",resilience_outcome="timeout"';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "resgen-tune-"));
  writeFileSync(join(dir, "resgen.config.yaml"), "version: 1\npolicies: '*.yaml'\n");
  writeFileSync(join(dir, "stock.yaml"), POLICY);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function run(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(["node", "resgen", "tune", ...args], {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    cwd: dir,
    color: false,
  });
  return { code, stdout, stderr };
}

const policyText = () => readFileSync(join(dir, "stock.yaml"), "utf8");

describe("resgen tune", () => {
  it("derives latency from a uniform histogram exactly, shows the diff, the derived values and the analyzer", async () => {
    // 10000 successes uniform over 0–1s in 10ms buckets: p50 500ms, p95 950ms, p99 990ms, p999 999ms;
    // 600 timeouts count towards rps only: 10600 over 100s is 106/s
    writeFileSync(
      join(dir, "m.prom"),
      exportOf(uniform(OK, 10_000, 0.01, 1), uniform(TIMEOUT, 600, 1, 1)),
    );
    const { code, stdout } = await run("stock.yaml", "--from", "m.prom", "--window", "100s");
    expect(code).toBe(0);
    expect(stdout).toContain(
      "  observed: p50 500ms (490ms–500ms), p95 950ms (940ms–950ms), p99 990ms (980ms–990ms), p999 999ms (990ms–1s), rps 106\n",
    );
    expect(stdout).toContain(
      [
        "  --- stock.yaml",
        "  +++ stock.yaml (tuned)",
        "  @@ -6,3 +6,3 @@",
        "   transport: http",
        "  -latency: { p50: 15ms, p95: 30ms, p99: 60ms, p999: 120ms, rps: 100 }   # a guess",
        "  +latency: { p50: 500ms, p95: 950ms, p99: 990ms, p999: 999ms, rps: 106 }   # a guess",
        "   timeout: { total: 2s }",
      ].join("\n"),
    );
    // the project's own derivations: 1.5 × p999, p999, Little's law (ceil(106 × 0.99 × 2))
    expect(stdout).toMatch(/bulkhead\.maxConcurrent\s+12 → 210\s+derived: /);
    expect(stdout).toMatch(/breaker\.slowCall\.duration\s+120ms → 999ms\s+derived: p999 = 999ms/);
    expect(stdout).toMatch(/getStock timeout\.attempt\s+180ms → 1499ms\s+derived: 1\.5 × p999/);
    // the analyzer's verdict on the tuned policy: two 1.5s attempts do not fit in 2s
    expect(stdout).toContain("the analyzer on the tuned policies:\n");
    expect(stdout).toContain("warning RG207");
    expect(stdout).toContain("nothing written: pass --write to apply the change to 1 policy\n");
    expect(policyText()).toBe(POLICY);
  });

  it("leaves out attempts the chaos option injected faults into: a drill is not the dependency", async () => {
    const injected = `${OK},resilience_chaos_fault="latency"`;
    writeFileSync(
      join(dir, "m.prom"),
      exportOf(uniform(OK, 10_000, 0.01, 1), uniform(injected, 5_000, 1, 10)),
    );
    const { code, stdout } = await run("stock.yaml", "--from", "m.prom", "--window", "100s");
    expect(code).toBe(0);
    // the quantiles are the healthy ones; the injected attempts still count towards rps
    expect(stdout).toContain("  observed: p50 500ms (490ms–500ms), p95 950ms (940ms–950ms),");
    expect(stdout).toContain(", rps 150\n");
  });

  it("--write changes the latency line only, comments and layout kept", async () => {
    writeFileSync(join(dir, "m.prom"), exportOf(uniform(OK, 10_000, 0.01, 1)));
    const { code, stdout } = await run("--from", "m.prom", "--window", "100s", "--write");
    expect(code).toBe(0);
    expect(stdout).toContain("wrote stock.yaml\n");
    expect(policyText()).toBe(
      POLICY.replace(
        "latency: { p50: 15ms, p95: 30ms, p99: 60ms, p999: 120ms, rps: 100 }",
        "latency: { p50: 500ms, p95: 950ms, p99: 990ms, p999: 999ms, rps: 100 }",
      ),
    );
    expect(readdirSync(dir).sort()).toEqual(["m.prom", "resgen.config.yaml", "stock.yaml"]);
    // a second run finds nothing to change
    const again = await run("--from", "m.prom", "--window", "100s", "--write");
    expect(again.stdout).toContain("every latency is as observed: nothing to write\n");
  });

  it("omits rps from a Prometheus export without --window, with a warning", async () => {
    writeFileSync(join(dir, "m.prom"), exportOf(uniform(OK, 1_000, 0.01, 1)));
    const { code, stdout } = await run("--from", "m.prom");
    expect(code).toBe(0);
    expect(stdout).toContain("m.prom: warning: rps is not derived");
    expect(stdout).toContain(
      "+latency: { p50: 500ms, p95: 950ms, p99: 990ms, p999: 999ms, rps: 100 }",
    );
  });

  it("leaves a dependency with too few samples unchanged, with a warning", async () => {
    writeFileSync(join(dir, "m.prom"), exportOf(uniform(OK, 50, 0.1, 1)));
    const { code, stdout } = await run("--from", "m.prom", "--write");
    expect(code).toBe(0);
    expect(stdout).toContain(
      "stock.yaml: warning: stock: 50 successful observations in the export, fewer than 100 (--min-samples): its latency is left as it is",
    );
    expect(policyText()).toBe(POLICY);
    const lower = await run("--from", "m.prom", "--min-samples", "10");
    expect(lower.stdout).toContain("+latency: { p50: 500ms");
  });

  it("warns about a quantile above the highest bucket and writes the floor", async () => {
    // 90 % under 100ms, the rest above every bound
    const lines = [`${M}_bucket{${OK},le="0.1"} 900`, `${M}_bucket{${OK},le="+Inf"} 1000`];
    writeFileSync(join(dir, "m.prom"), exportOf(lines));
    const { stdout } = await run("--from", "m.prom");
    expect(stdout).toContain("p99 ≥ 100ms (above the highest bucket)");
    expect(stdout).toContain(
      "stock.yaml: warning: stock: p99 lies above the highest bucket bound (100ms): it is written as 100ms, a floor; the true value is higher (add larger buckets)",
    );
  });

  it("writes nothing and exits 1 on a bad export", async () => {
    const cases: [string, string][] = [
      ["", "m.prom: error: the export is empty"],
      [
        exportOf([`${M}_bucket{${OK},le="0.1"} 900`]),
        'm.prom:2: error: resilience_client_attempt_duration_seconds{resilience_dependency="stock",resilience_operation="getStock",resilience_outcome="success"} has no le="+Inf" bucket',
      ],
      [
        exportOf([
          `${M}_bucket{${OK},le="0.1"} 900`,
          `${M}_bucket{${OK},le="0.2"} 800`,
          `${M}_bucket{${OK},le="+Inf"} 1000`,
        ]),
        "has bucket counts that decrease",
      ],
      [
        [`# TYPE ${M} histogram`, `# UNIT ${M} ms`, ...uniform(OK, 1_000, 0.01, 1)].join("\n"),
        "m.prom:3: error: resilience_client_attempt_duration_seconds has conflicting units: its name says seconds but its # UNIT line (line 2) says ms",
      ],
      [
        ["# TYPE latency histogram", ...uniform(OK, 1_000, 0.01, 1, "latency")].join("\n"),
        'm.prom: error: the export has no histogram "resilience.client.attempt.duration"; its histograms: latency (choose one with --metric)',
      ],
    ];
    for (const [text, message] of cases) {
      writeFileSync(join(dir, "m.prom"), text);
      const { code, stdout } = await run("--from", "m.prom", "--window", "1m", "--write");
      expect(stdout, message).toContain(message);
      expect(stdout).toContain("nothing written: fix the error above first (1 in the export)\n");
      expect(code).toBe(1);
      expect(policyText()).toBe(POLICY);
    }
  });

  it("reads a generic metric in milliseconds by the label given", async () => {
    const labels = 'server_address="stock",le_ignored="x"';
    const text = [
      "# TYPE http_client_request_duration_milliseconds histogram",
      ...uniform(labels, 1_000, 10, 1000, "http_client_request_duration_milliseconds"),
    ].join("\n");
    writeFileSync(join(dir, "m.prom"), text);
    const { code, stdout } = await run(
      "--from",
      "m.prom",
      "--metric",
      "http_client_request_duration_milliseconds",
      "--dependency-label",
      "server.address",
    );
    expect(code).toBe(0);
    expect(stdout).toContain("observed: p50 500ms (490ms–500ms), p95 950ms");
    const unlabelled = await run(
      "--from",
      "m.prom",
      "--metric",
      "http_client_request_duration_milliseconds",
    );
    expect(unlabelled.code).toBe(1);
    expect(unlabelled.stdout).toContain(
      'no series of http_client_request_duration_milliseconds has the label "resilience.dependency": name the label that holds the dependency with --dependency-label',
    );
  });

  it("exits 2 for a missing export, writing nothing", async () => {
    const { code, stdout } = await run("--from", "missing.prom", "--write");
    expect(code).toBe(2);
    expect(stdout).toContain("missing.prom: error: no such file\n");
    expect(policyText()).toBe(POLICY);
  });

  it("refuses an export that is a device rather than reading it without end", async () => {
    const { code, stdout } = await run("--from", "/dev/zero", "--write");
    expect(code).toBe(2);
    expect(stdout).toContain("/dev/zero: error: it is a device, not a regular file\n");
    expect(policyText()).toBe(POLICY);
  });

  it("writes nothing when the tuned policy has an analyzer error", async () => {
    // the attempt timeout derived from the observed p999 (1.5 × 999ms) reaches the total of 1s
    writeFileSync(
      join(dir, "stock.yaml"),
      POLICY.replace("timeout: { total: 2s }", "timeout: { total: 1s }"),
    );
    const before = policyText();
    writeFileSync(join(dir, "m.prom"), exportOf(uniform(OK, 10_000, 0.01, 1)));
    const { code, stdout } = await run("--from", "m.prom", "--write");
    expect(stdout).toContain("the analyzer on the tuned policies:\n");
    expect(stdout).toMatch(/error RG\d+/);
    expect(stdout).toMatch(
      /nothing written: fix the (error|\d+ errors) above first \(\d+ in the tuned policies\)\n/,
    );
    expect(code).toBe(1);
    expect(policyText()).toBe(before);
  });
});
