import { describe, expect, it } from "vitest";
import { readPrometheus } from "../../src/tune/prometheus.js";
import { readOtlp } from "../../src/tune/otlp.js";
import { mergeBuckets, quantile } from "../../src/tune/quantile.js";

const errors = (r: { problems: readonly { severity: string; message: string }[] }) =>
  r.problems.filter((p) => p.severity === "error").map((p) => p.message);

describe("quantiles from buckets", () => {
  // 1000 observations spread evenly over 0–1s in ten 100ms buckets: every interpolated quantile is exact
  const uniform = [...Array(10).keys()]
    .map((i) => ({ le: (i + 1) / 10, count: (i + 1) * 100 }))
    .concat([{ le: Infinity, count: 1000 }]);

  it("interpolates linearly inside the bucket, exact for a uniform distribution", () => {
    for (const q of [0.5, 0.95, 0.99, 0.999]) {
      const e = quantile(q, uniform)!;
      expect(e.value).toBeCloseTo(q, 10);
      expect(e.lower).toBeLessThanOrEqual(e.value);
      expect(e.upper).toBeGreaterThanOrEqual(e.value);
      expect(e.unbounded).toBe(false);
    }
    expect(quantile(0.95, uniform)).toMatchObject({ lower: 0.9, upper: 1 });
  });

  it("interpolates from 0 in the first bucket", () => {
    expect(
      quantile(0.5, [
        { le: 0.2, count: 10 },
        { le: Infinity, count: 10 },
      ])!.value,
    ).toBeCloseTo(0.1);
  });

  it("gives the highest finite bound, marked unbounded, for a quantile in the +Inf bucket", () => {
    const e = quantile(0.99, [
      { le: 0.1, count: 90 },
      { le: Infinity, count: 100 },
    ])!;
    expect(e).toEqual({ q: 0.99, value: 0.1, lower: 0.1, upper: Infinity, unbounded: true });
  });

  it("has no quantile for an empty histogram", () => {
    expect(quantile(0.5, [{ le: Infinity, count: 0 }])).toBeUndefined();
  });

  it("merges histograms with the same bounds and refuses different ones", () => {
    const a = [
      { le: 1, count: 1 },
      { le: Infinity, count: 2 },
    ];
    expect(mergeBuckets([a, a])).toEqual([
      { le: 1, count: 2 },
      { le: Infinity, count: 4 },
    ]);
    expect(
      mergeBuckets([
        a,
        [
          { le: 2, count: 1 },
          { le: Infinity, count: 2 },
        ],
      ]),
    ).toBeUndefined();
  });
});

describe("Prometheus text format", () => {
  it("reads a histogram: buckets, count, labels with escapes, the unit from the name", () => {
    const text = [
      "# HELP d_seconds Durations.",
      "# TYPE d_seconds histogram",
      'd_seconds_bucket{dep="a\\"b\\\\c\\nd",le="0.1"} 3',
      'd_seconds_bucket{dep="a\\"b\\\\c\\nd",le="+Inf"} 4 1700000000000',
      'd_seconds_sum{dep="a\\"b\\\\c\\nd"} 0.25',
      'd_seconds_count{dep="a\\"b\\\\c\\nd"} 4',
      "# TYPE up gauge",
      "up 1",
    ].join("\n");
    const r = readPrometheus(text, "x.prom");
    expect(r.problems).toEqual([]);
    expect(r.series).toEqual([
      {
        metric: "d_seconds",
        labels: { dep: 'a"b\\c\nd' },
        buckets: [
          { le: 0.1, count: 3 },
          { le: Infinity, count: 4 },
        ],
        count: 4,
        unit: "seconds",
        where: "x.prom:3",
      },
    ]);
  });

  it("reads an untyped histogram from its le-labelled buckets, and a # UNIT line", () => {
    const r = readPrometheus(
      ["# UNIT d milliseconds", 'd_bucket{le="5"} 1', 'd_bucket{le="+Inf"} 2'].join("\n"),
      "x.prom",
    );
    expect(r.series[0]).toMatchObject({ metric: "d", unit: "milliseconds", count: 2 });
  });

  it("reports a unit the name and the # UNIT line disagree on", () => {
    const r = readPrometheus(
      ["# TYPE d_seconds histogram", "# UNIT d_seconds ms", 'd_seconds_bucket{le="+Inf"} 2'].join(
        "\n",
      ),
      "x.prom",
    );
    expect(r.series[0]!.unitConflict).toBe(
      "its name says seconds but its # UNIT line (line 2) says ms",
    );
  });

  it("refuses a histogram without +Inf, with decreasing counts, or a _count that disagrees", () => {
    const missing = readPrometheus(
      ["# TYPE d_seconds histogram", 'd_seconds_bucket{le="0.1"} 2'].join("\n"),
      "x.prom",
    );
    expect(errors(missing)).toEqual([
      'd_seconds has no le="+Inf" bucket, which every histogram ends with: the export is incomplete',
    ]);
    expect(missing.problems[0]!.where).toBe("x.prom:2");
    const decreasing = readPrometheus(
      [
        "# TYPE d_seconds histogram",
        'd_seconds_bucket{le="0.1"} 5',
        'd_seconds_bucket{le="0.2"} 3',
        'd_seconds_bucket{le="+Inf"} 6',
      ].join("\n"),
      "x.prom",
    );
    expect(errors(decreasing)).toEqual([
      'd_seconds has bucket counts that decrease (le="0.1" counts 5, le="0.2" counts 3): cumulative buckets never do',
    ]);
    const count = readPrometheus(
      ["# TYPE d_seconds histogram", 'd_seconds_bucket{le="+Inf"} 6', "d_seconds_count 7"].join(
        "\n",
      ),
      "x.prom",
    );
    expect(errors(count)).toEqual([
      'd_seconds: _count is 7 but the le="+Inf" bucket counts 6; they are the same number in a sound export',
    ]);
  });

  it("points at a malformed line", () => {
    const r = readPrometheus('d_bucket{le="0.1} 3', "x.prom");
    expect(r.problems).toEqual([
      {
        severity: "error",
        where: "x.prom:1",
        message: "cannot read this line: the value of the label le is not closed",
      },
    ]);
  });
});

describe("OTLP JSON", () => {
  const point = {
    attributes: [
      { key: "resilience.dependency", value: { stringValue: "payments" } },
      { key: "resilience.attempt.hedge", value: { boolValue: false } },
    ],
    startTimeUnixNano: "1700000000000000000",
    timeUnixNano: "1700000060000000000",
    count: "6",
    sum: 0.3,
    bucketCounts: ["1", 2, "3"],
    explicitBounds: [0.01, 0.1],
  };
  const exported = (p: unknown, unit = "s") => ({
    resourceMetrics: [
      {
        resource: { attributes: [] },
        scopeMetrics: [
          {
            scope: { name: "resgen" },
            metrics: [
              { name: "m", unit, histogram: { dataPoints: [p], aggregationTemporality: 2 } },
            ],
          },
        ],
      },
    ],
  });

  it("reads data points: per-bucket counts made cumulative, attributes, the window", () => {
    const r = readOtlp(JSON.stringify(exported(point)), "x.json");
    expect(r.problems).toEqual([]);
    expect(r.series).toEqual([
      {
        metric: "m",
        unit: "s",
        labels: { "resilience.dependency": "payments", "resilience.attempt.hedge": "false" },
        buckets: [
          { le: 0.01, count: 1 },
          { le: 0.1, count: 3 },
          { le: Infinity, count: 6 },
        ],
        count: 6,
        window: { start: 1700000000000000000n, end: 1700000060000000000n },
        where: 'x.json: metric "m", data point 1',
      },
    ]);
  });

  it("reads one export per line", () => {
    const line = JSON.stringify(exported(point));
    // the next minute, reported on its own (delta temporality): another observation
    const next = JSON.stringify(
      exported({
        ...point,
        startTimeUnixNano: "1700000060000000000",
        timeUnixNano: "1700000120000000000",
      }),
    );
    expect(readOtlp(`${line}\n${next}\n`, "x.jsonl").series).toHaveLength(2);
    // the same cumulative series reported again, since the same start: only the latest counts
    const later = JSON.stringify(
      exported({
        ...point,
        timeUnixNano: "1700000120000000000",
        count: "7",
        bucketCounts: ["1", 2, "4"],
      }),
    );
    const read = readOtlp(`${line}\n${later}\n${line}\n`, "x.jsonl").series;
    expect(read).toHaveLength(1);
    expect(read[0]!.count).toBe(7);
  });

  it("refuses counts that do not fit the bounds or the total", () => {
    expect(
      errors(readOtlp(JSON.stringify(exported({ ...point, bucketCounts: [1, 2] })), "x.json")),
    ).toEqual([
      "has 2 bucketCounts for 2 explicitBounds; there is one more count than bounds (the last bucket is +Inf)",
    ]);
    expect(errors(readOtlp(JSON.stringify(exported({ ...point, count: 9 })), "x.json"))).toEqual([
      "has count 9 but its bucketCounts add up to 6",
    ]);
  });

  it("refuses what is not an OTLP export", () => {
    expect(errors(readOtlp('{"data": []}', "x.json"))).toEqual([
      'is not an OTLP metrics export: it has no "resourceMetrics" list',
    ]);
    expect(errors(readOtlp("{ nope", "x.json"))[0]).toMatch(/^is not OTLP JSON: /);
  });
});
