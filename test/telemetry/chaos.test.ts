/**
 * Injected faults in the OpenTelemetry adapter (docs/telemetry.md): each is counted by
 * `resilience.client.chaos.injected` under its kind, and the attempts they were injected into
 * carry `resilience.chaos.fault`, so a drill's attempts are told apart from the dependency's.
 */
import { describe, expect, it } from "vitest";
import { ATTR, installOpenTelemetry, METRIC } from "../../templates/telemetry/opentelemetry.js";
import { createDependency, createVirtualClock } from "../../templates/runtime/index.js";
import { operation } from "../runtime/helpers.js";
import { createSdk, recordingLogger } from "./sdk.js";

describe("OpenTelemetry adapter: chaos", () => {
  it("counts injected faults by kind and labels the attempts they hit", async () => {
    const sdk = createSdk();
    const clock = createVirtualClock(0);
    const dep = createDependency(
      { name: "inventory", deadline: null, breaker: null, bulkhead: null, budget: null },
      {
        clock,
        chaos: {
          seed: 3,
          faults: [
            { kind: "latency", ms: 20, rate: 1, operations: ["getStock"] },
            { kind: "status", status: 503, rate: 1, operations: ["getStock"] },
          ],
        },
      },
    );
    installOpenTelemetry(dep, {
      meter: sdk.meterProvider.getMeter("test"),
      tracer: sdk.tracerProvider.getTracer("test"),
      logger: recordingLogger(),
    });
    const getStock = operation({ name: "getStock", retry: null });
    const reserve = operation({ name: "reserve", retry: null });
    const failed = dep.call(getStock, () => "ok").catch((e: unknown) => e);
    await clock.runAll();
    expect(await failed).toMatchObject({ kind: "http", status: 503 });
    expect(await dep.call(reserve, () => "ok")).toBe("ok");
    const m = await sdk.collect();
    const of = (op: string, more: Record<string, string> = {}) => ({
      [ATTR.dependency]: "inventory",
      [ATTR.operation]: op,
      ...more,
    });
    expect(m.sum(METRIC.chaosInjected, of("getStock", { [ATTR.chaosFault]: "latency" }))).toBe(1);
    expect(m.sum(METRIC.chaosInjected, of("getStock", { [ATTR.chaosFault]: "status" }))).toBe(1);
    expect(
      m.histogram(METRIC.attemptDuration, of("getStock", { [ATTR.chaosFault]: "latency+status" }))
        .count,
    ).toBe(1);
    // the attempt nothing was injected into has no such attribute
    const points = m.points(METRIC.attemptDuration, of("reserve"));
    expect(points).toHaveLength(1);
    expect(points[0]!.attributes).not.toHaveProperty(ATTR.chaosFault);
  });
});
