/** The real OpenTelemetry SDK wired for tests: a metric reader collected by hand, spans kept in memory. */
import type { Attributes } from "@opentelemetry/api";
import {
  DataPointType,
  MeterProvider,
  MetricReader,
  type DataPoint,
  type Histogram,
  type ResourceMetrics,
} from "@opentelemetry/sdk-metrics";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import type { LogFields, Logger } from "../../templates/runtime/index.js";

class ManualReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

export interface Sdk {
  readonly meterProvider: MeterProvider;
  readonly tracerProvider: BasicTracerProvider;
  readonly spans: InMemorySpanExporter;
  /** Collects every metric now: data points by metric name. */
  collect(): Promise<Metrics>;
  /** Collects every metric now, as the SDK hands them to an exporter. */
  resourceMetrics(): Promise<ResourceMetrics>;
}

export interface Metrics {
  /** Data points of `name` whose attributes include `match`. */
  points(name: string, match?: Attributes): DataPoint<unknown>[];
  /** Sum of the counter (or observed values) of `name` over points matching `match`. */
  sum(name: string, match?: Attributes): number;
  /** Count and sum of the histogram `name` over points matching `match`. */
  histogram(name: string, match?: Attributes): { count: number; sum: number };
  /** Names of every metric collected. */
  readonly names: string[];
}

export function createSdk(): Sdk {
  const reader = new ManualReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(spans)],
  });
  return {
    meterProvider,
    tracerProvider,
    spans,
    async resourceMetrics() {
      const { resourceMetrics, errors } = await reader.collect();
      if (errors.length > 0) throw new Error(`metric collection failed: ${String(errors[0])}`);
      return resourceMetrics;
    },
    async collect() {
      const { resourceMetrics, errors } = await reader.collect();
      if (errors.length > 0) throw new Error(`metric collection failed: ${String(errors[0])}`);
      const byName = new Map<string, { type: DataPointType; points: DataPoint<unknown>[] }>();
      for (const scope of resourceMetrics.scopeMetrics) {
        for (const metric of scope.metrics) {
          const entry = byName.get(metric.descriptor.name) ?? {
            type: metric.dataPointType,
            points: [],
          };
          entry.points.push(...(metric.dataPoints as DataPoint<unknown>[]));
          byName.set(metric.descriptor.name, entry);
        }
      }
      const points = (name: string, match: Attributes = {}) =>
        (byName.get(name)?.points ?? []).filter((p) =>
          Object.entries(match).every(([k, v]) => p.attributes[k] === v),
        );
      return {
        names: [...byName.keys()].sort(),
        points,
        sum: (name, match) =>
          points(name, match).reduce((total, p) => total + (p.value as number), 0),
        histogram: (name, match) =>
          points(name, match).reduce(
            (total, p) => ({
              count: total.count + (p.value as Histogram).count,
              sum: total.sum + ((p.value as Histogram).sum ?? 0),
            }),
            { count: 0, sum: 0 },
          ),
      };
    },
  };
}

/** A logger that keeps its lines. */
export function recordingLogger(): Logger & {
  readonly lines: { level: string; message: string; fields: LogFields }[];
} {
  const lines: { level: string; message: string; fields: LogFields }[] = [];
  return {
    lines,
    warn: (message, fields) => lines.push({ level: "warn", message, fields }),
    info: (message, fields) => lines.push({ level: "info", message, fields }),
  };
}
