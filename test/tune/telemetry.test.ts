/**
 * tune on what the generated OpenTelemetry telemetry records: calls through the runtime in
 * virtual time, with attempt durations known in advance, recorded by installOpenTelemetry into
 * the real SDK, exported in the OTLP JSON encoding, then tuned from.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { HrTime } from "@opentelemetry/api";
import { DataPointType, type Histogram, type ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installOpenTelemetry, METRIC } from "../../templates/telemetry/opentelemetry.js";
import { createDependency, createVirtualClock } from "../../templates/runtime/index.js";
import { after, operation } from "../runtime/helpers.js";
import { createSdk, recordingLogger } from "../telemetry/sdk.js";
import { tune, writeTuned, type TuneResult } from "../../src/tune/tune.js";
import { quantile } from "../../src/tune/quantile.js";

const nanos = ([s, ns]: HrTime): string => (BigInt(s) * 1_000_000_000n + BigInt(ns)).toString();

/** The SDK's metrics in the OTLP JSON encoding (histograms only: what tune reads). */
function otlpJson(rm: ResourceMetrics): unknown {
  return {
    resourceMetrics: [
      {
        resource: { attributes: [] },
        scopeMetrics: rm.scopeMetrics.map((scope) => ({
          scope: { name: scope.scope.name },
          metrics: scope.metrics
            .filter((m) => m.dataPointType === DataPointType.HISTOGRAM)
            .map((m) => ({
              name: m.descriptor.name,
              unit: m.descriptor.unit,
              histogram: {
                aggregationTemporality: 2,
                dataPoints: m.dataPoints.map((p) => {
                  const h = p.value;
                  return {
                    attributes: Object.entries(p.attributes).map(([key, value]) => ({
                      key,
                      value:
                        typeof value === "boolean"
                          ? { boolValue: value }
                          : typeof value === "number"
                            ? { intValue: String(value) }
                            : { stringValue: String(value) },
                    })),
                    startTimeUnixNano: nanos(p.startTime),
                    timeUnixNano: nanos(p.endTime),
                    count: String(h.count),
                    sum: h.sum,
                    bucketCounts: h.buckets.counts.map(String),
                    explicitBounds: h.buckets.boundaries,
                  };
                }),
              },
            })),
        })),
      },
    ],
  };
}

const POLICY = `version: 1
dependency: stock
transport: function
latency: { p50: 10ms, p99: 50ms }   # a guess
operations:
  getStock:
    idempotent: true
`;

describe("tune from an export of the generated telemetry", () => {
  let dir: string;
  let result: TuneResult;
  let exported: { buckets: { le: number; count: number }[] };

  beforeAll(async () => {
    const sdk = createSdk();
    const clock = createVirtualClock(0);
    const dep = createDependency(
      { name: "stock", deadline: null, breaker: null, bulkhead: null, budget: null },
      { clock, random: () => 0.5 },
    );
    installOpenTelemetry(dep, {
      meter: sdk.meterProvider.getMeter("test"),
      logger: recordingLogger(),
    });
    const getStock = operation({
      name: "getStock",
      timeout: { attemptMs: 5_000, totalMs: 10_000 },
      retry: null,
    });
    // 2000 successful attempts of 1ms to 1000ms, twice each; 20 that time out
    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < 2_000; i++)
      calls.push(dep.call(getStock, () => after(clock, (i % 1_000) + 1, () => "ok")));
    for (let i = 0; i < 20; i++)
      calls.push(
        dep.call(getStock, () => new Promise<string>(() => undefined)).catch(() => undefined),
      );
    await clock.runAll();
    await Promise.all(calls);

    const rm = await sdk.resourceMetrics();
    dir = mkdtempSync(join(tmpdir(), "resgen-tune-otel-"));
    writeFileSync(join(dir, "stock.yaml"), POLICY);
    writeFileSync(join(dir, "metrics.json"), JSON.stringify(otlpJson(rm)));
    const point = rm.scopeMetrics
      .flatMap((s) => s.metrics)
      .find((m) => m.descriptor.name === METRIC.attemptDuration)!
      .dataPoints.find((p) => p.attributes["resilience.outcome"] === "success")!;
    const h = point.value as Histogram;
    let cumulative = 0;
    exported = {
      buckets: h.buckets.counts.map((c, i) => ({
        le: h.buckets.boundaries[i] ?? Infinity,
        count: (cumulative += c),
      })),
    };
    result = await tune(["stock.yaml"], { cwd: dir, from: "metrics.json" });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("reads the successful attempts of the dependency, with no error", () => {
    expect(result.problems.filter((p) => p.severity === "error")).toEqual([]);
    expect(result.exit).toBe(0);
    expect(result.policies[0]!.observed!.samples).toBe(2_000);
  });

  it("puts each quantile in the bucket the true value lies in", () => {
    const observed = result.policies[0]!.observed!;
    // the true quantiles of 1..1000ms, each twice
    const truth = { p50: 0.5, p95: 0.95, p99: 0.99, p999: 0.999 };
    for (const [key, value] of Object.entries(truth) as [keyof typeof truth, number][]) {
      const e = observed.quantiles[key]!;
      expect(e.lower, key).toBeLessThan(value + 1e-9);
      expect(e.upper, key).toBeGreaterThanOrEqual(value);
      expect(e.value, key).toBeGreaterThanOrEqual(e.lower);
      expect(e.value, key).toBeLessThanOrEqual(e.upper);
      // the same as interpolating the SDK's own buckets
      expect(e.value, key).toBeCloseTo(quantile(e.q, exported.buckets)!.value, 12);
    }
    // OpenTelemetry's duration buckets: 0.5s is a bound, 0.95–0.999s lie in 0.75–1s
    expect(observed.quantiles.p99).toMatchObject({ lower: 0.75, upper: 1 });
    // the timeouts count towards the rate, over the data point's window
    expect(observed.rps).toBeGreaterThan(0);
  });

  it("writes the tuned latency, keeping the comment", async () => {
    const p = result.policies[0]!;
    expect(Object.keys(p.values)).toEqual(["p50", "p95", "p99", "p999", "rps"]);
    expect(await writeTuned(result)).toEqual({ written: ["stock.yaml"] });
    const written = readFileSync(join(dir, "stock.yaml"), "utf8");
    expect(written).toBe(
      POLICY.replace(
        "latency: { p50: 10ms, p99: 50ms }",
        `latency: { p50: ${p.values.p50!}, p95: ${p.values.p95!}, p99: ${p.values.p99!}, p999: ${p.values.p999!}, rps: ${p.values.rps!} }`,
      ),
    );
    expect(written).toContain("   # a guess\n");
  });
});
