/**
 * `resgen tune` over the exports of several replicas: concatenated in one file or given as
 * repeated --from, their histograms are added bucket by bucket and their counts summed, and
 * latency.rps is written per replica unless --rps fleet says otherwise (docs/tune.md, "Several
 * replicas"). The two replicas here have known distributions: A uniform over 0–1s, B uniform
 * over 0–0.5s, 10000 successful attempts each, in 10ms buckets, so the quantiles of the sum are
 * exact: p50 333ms, p95 900ms.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/cli.js";
import { checkTexts } from "../../src/program/check.js";

const POLICY = `version: 1
dependency: stock
latency: { p50: 15ms, p95: 30ms, p99: 60ms, p999: 120ms, rps: 100 }
timeout: { total: 2s }
operations:
  getStock: { method: GET, path: "/items/{sku}" }
`;

const M = "resilience_client_attempt_duration_seconds";
const OK =
  'resilience_dependency="stock",resilience_operation="getStock",resilience_outcome="success"';

/** `n` observations spread evenly over 0..`top` seconds, in 10ms buckets up to 1s. */
function series(labels: string, n: number, top: number): string[] {
  const lines = [`${M}_count{${labels}} ${String(n)}`];
  for (let i = 1; i <= 100; i++) {
    const le = i * 0.01;
    const count = Math.round(n * Math.min(1, le / top));
    lines.push(`${M}_bucket{${labels},le="${le.toFixed(2)}"} ${String(count)}`);
  }
  lines.push(`${M}_bucket{${labels},le="+Inf"} ${String(n)}`);
  return lines;
}

const replica = (top: number, labels = OK, typed = true): string =>
  [
    ...(typed ? [`# HELP ${M} Duration of attempts.`, `# TYPE ${M} histogram`] : []),
    ...series(labels, 10_000, top),
    "",
  ].join("\n");

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "resgen-tune-replicas-"));
  writeFileSync(join(dir, "resgen.config.yaml"), "version: 1\npolicies: '*.yaml'\n");
  writeFileSync(join(dir, "stock.yaml"), POLICY);
  writeFileSync(join(dir, "a.prom"), replica(1));
  writeFileSync(join(dir, "b.prom"), replica(0.5));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function tune(...args: string[]) {
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

const latencyLine = () =>
  /latency: \{[^\n]*\}/.exec(readFileSync(join(dir, "stock.yaml"), "utf8"))![0];
const SUMMED = "latency: { p50: 333ms, p95: 900ms, p99: 980ms, p999: 998ms, rps: 100 }";

describe("tune over several replicas", () => {
  it("adds up two replicas' exports concatenated in one file (cat a.prom b.prom)", async () => {
    writeFileSync(
      join(dir, "both.prom"),
      readFileSync(join(dir, "a.prom"), "utf8") + readFileSync(join(dir, "b.prom"), "utf8"),
    );
    const { code, stdout } = await tune("--from", "both.prom", "--window", "100s", "--write");
    expect(stdout).toContain("stock (stock.yaml): 20000 successful observations from 2 replicas\n");
    // 20000 attempts over 100s: 200/s for the fleet, 100/s for each replica
    expect(stdout).toContain("rps 100 per replica (200 for the fleet of 2)");
    expect(code).toBe(0);
    expect(latencyLine()).toBe(SUMMED);
  });

  it("tells the expositions of a concatenated file apart without # TYPE lines too", async () => {
    writeFileSync(join(dir, "both.prom"), replica(1, OK, false) + replica(0.5, OK, false));
    const { code } = await tune("--from", "both.prom", "--window", "100s", "--write");
    expect(code).toBe(0);
    expect(latencyLine()).toBe(SUMMED);
  });

  it("reads every --from and adds them up, the same as one concatenated file", async () => {
    const { code, stdout } = await tune(
      "--from",
      "a.prom",
      "--from",
      "b.prom",
      "--window",
      "100s",
      "--write",
    );
    expect(code).toBe(0);
    expect(stdout).toContain("20000 successful observations from 2 replicas");
    expect(latencyLine()).toBe(SUMMED);
  });

  it("writes the fleet's rps with --rps fleet, and divides by --replicas when given", async () => {
    const fleet = await tune(
      "--from",
      "a.prom",
      "--from",
      "b.prom",
      "--window",
      "100s",
      "--rps",
      "fleet",
      "--write",
    );
    expect(fleet.code).toBe(0);
    expect(fleet.stdout).toContain("rps 200 for the fleet of 2");
    expect(latencyLine()).toBe(SUMMED.replace("rps: 100", "rps: 200"));
    // one export from a server that scraped 4 replicas and kept no label to tell them apart
    const given = await tune("--from", "a.prom", "--window", "100s", "--replicas", "4", "--write");
    expect(given.code).toBe(0);
    expect(given.stdout).toContain("10000 successful observations from 4 replicas (--replicas)");
    expect(latencyLine()).toMatch(/rps: 25 \}$/);
    const refused = await tune("--from", "a.prom", "--rps", "each");
    expect(refused.code).toBe(2);
  });

  it("counts the replicas an instance label tells apart in one export", async () => {
    writeFileSync(
      join(dir, "scraped.prom"),
      [
        `# TYPE ${M} histogram`,
        ...series(`${OK},instance="10.0.0.1:9464"`, 10_000, 1),
        ...series(`${OK},instance="10.0.0.2:9464"`, 10_000, 0.5),
        "",
      ].join("\n"),
    );
    const { code, stdout } = await tune("--from", "scraped.prom", "--window", "100s", "--write");
    expect(code).toBe(0);
    expect(stdout).toContain("from 2 replicas");
    expect(latencyLine()).toBe(SUMMED);
  });

  it("adds up OTLP exports of two replicas, and counts a cumulative series reported again once", async () => {
    const point = (top: number, endSeconds: number) => {
      const counts = [];
      let before = 0;
      for (let i = 1; i <= 100; i++) {
        const at = Math.round(10_000 * Math.min(1, (i * 0.01) / top));
        counts.push(String(at - before));
        before = at;
      }
      counts.push("0");
      return {
        attributes: [
          { key: "resilience.dependency", value: { stringValue: "stock" } },
          { key: "resilience.operation", value: { stringValue: "getStock" } },
          { key: "resilience.outcome", value: { stringValue: "success" } },
        ],
        startTimeUnixNano: "1000000000000000000",
        timeUnixNano: String(1_000_000_000_000_000_000n + BigInt(endSeconds) * 1_000_000_000n),
        count: "10000",
        explicitBounds: Array.from({ length: 100 }, (_, i) => Number(((i + 1) * 0.01).toFixed(2))),
        bucketCounts: counts,
      };
    };
    const otlp = (instance: string, top: number, endSeconds: number) =>
      JSON.stringify({
        resourceMetrics: [
          {
            resource: {
              attributes: [
                { key: "service.name", value: { stringValue: "shop" } },
                { key: "service.instance.id", value: { stringValue: instance } },
              ],
            },
            scopeMetrics: [
              {
                metrics: [
                  {
                    name: "resilience.client.attempt.duration",
                    unit: "s",
                    histogram: { dataPoints: [point(top, endSeconds)], aggregationTemporality: 2 },
                  },
                ],
              },
            ],
          },
        ],
      });
    // replica A's file holds an earlier report of the same cumulative series: only the latest counts
    const earlier = otlp("a", 1, 50).replace('"count":"10000"', '"count":"10000"');
    writeFileSync(join(dir, "a.json"), `${earlier}\n${otlp("a", 1, 100)}\n`);
    writeFileSync(join(dir, "b.json"), `${otlp("b", 0.5, 100)}\n`);
    const { code, stdout } = await tune("--from", "a.json", "--from", "b.json", "--write");
    expect(stdout).toContain("stock (stock.yaml): 20000 successful observations from 2 replicas\n");
    expect(code).toBe(0);
    expect(latencyLine()).toBe(SUMMED);
    // B started later: its 10000 attempts took 50s, 200/s, and A's 100s, 100/s; the fleet
    // sends 300/s, 150/s a replica (not 20000 over the 100s the two windows span together)
    const started = (text: string) =>
      text.replace(
        '"startTimeUnixNano":"1000000000000000000"',
        '"startTimeUnixNano":"1000000050000000000"',
      );
    writeFileSync(join(dir, "b.json"), `${started(otlp("b", 0.5, 100))}\n`);
    const staggered = await tune("--from", "a.json", "--from", "b.json", "--write");
    expect(staggered.code).toBe(0);
    expect(staggered.stdout).toContain("rps 150 per replica (300 for the fleet of 2)");
    // with a Prometheus export among them, whose counts cover no known period, rps needs --window
    writeFileSync(join(dir, "stock.yaml"), POLICY.replace("rps: 100", "rps: 7"));
    const mixed = await tune("--from", "a.json", "--from", "b.prom", "--write");
    expect(mixed.code).toBe(0);
    expect(mixed.stdout).toContain("rps is not derived");
    expect(latencyLine()).toMatch(/rps: 7 \}$/);
  });

  it("says how many errors stopped it, and shows each one", async () => {
    writeFileSync(join(dir, "bad.prom"), replica(1).replace('le="+Inf"} 10000', 'le="+Inf"} 9'));
    const { code, stdout } = await tune(
      "--from",
      "a.prom",
      "--from",
      "bad.prom",
      "--window",
      "100s",
    );
    expect(code).toBe(1);
    const shown = stdout.split("\n").filter((l) => l.includes(": error: ")).length;
    expect(shown).toBeGreaterThan(0);
    expect(stdout).toContain(
      `nothing written: fix the ${shown === 1 ? "error" : `${String(shown)} errors`} above first (${String(shown)} in the export)\n`,
    );
  });
});

describe("RG230 and rps per replica", () => {
  const policy = (store: string) => `version: 1
dependency: search
latency: { p99: 100ms, rps: 40 }
rateLimit: { rate: 100/s, ${store} }
retry: { maxAttempts: 2, budget: {} }
operations:
  find: { method: GET, path: /find }
`;
  const rg230 = (text: string) =>
    checkTexts([{ file: "search.yaml", text }]).diagnostics.filter((d) => d.code === "RG230");

  // 40/s per replica × 2 attempts = 80/s: within a limit each replica has to itself
  it("holds one replica's demand to a limit kept in memory", () => {
    expect(rg230(policy("store: memory"))).toEqual([]);
  });

  // the same 40/s on each of 3 replicas, against one limit in Redis: 40 × 3 × 2 = 240/s
  it("holds every replica's demand together to a limit kept in Redis", () => {
    const found = rg230(policy("store: redis, replicas: 3"));
    expect(found).toHaveLength(1);
    expect(found[0]!.message).toContain(
      "latency.rps 40/s × 3 replicas (rateLimit.replicas: the limit kept in Redis is the fleet's) × 2 attempts (find, retry.maxAttempts) = 240/s, over rateLimit.rate 100/s",
    );
  });
});
