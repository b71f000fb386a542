/**
 * Reconfigurations in the OpenTelemetry adapter (docs/telemetry.md), through the real SDK: each
 * applied and each refused change is counted by `resilience.client.reconfigurations`, labelled
 * with its outcome and source, and logged (info when applied, a warning when refused).
 */
import { describe, expect, it } from "vitest";
import { ATTR, installOpenTelemetry, METRIC } from "../../templates/telemetry/opentelemetry.js";
import { createDependency, createVirtualClock } from "../../templates/runtime/index.js";
import { breakerSettings, dependencySettings, operation } from "../runtime/helpers.js";
import { createSdk, recordingLogger } from "./sdk.js";

describe("OpenTelemetry adapter: reconfiguration", () => {
  it("counts and logs applied and refused changes, from overrides and from reconfigure", async () => {
    const sdk = createSdk();
    const logger = recordingLogger();
    const dep = createDependency(dependencySettings({ breaker: breakerSettings }), {
      clock: createVirtualClock(0),
    });
    installOpenTelemetry(dep, {
      meter: sdk.meterProvider.getMeter("test"),
      tracer: sdk.tracerProvider.getTracer("test"),
      logger,
    });
    dep.operations({ getCharge: operation() }, { breaker: { minCalls: 5 } });
    dep.reconfigure({ operations: { getCharge: { timeout: { attemptMs: 200 } } } });
    dep.reconfigure({ breaker: { failureRate: 2 } });
    dep.reconfigure({ bulkhead: { maxQueue: 1 } });
    const m = await sdk.collect();
    const of = (outcome: string, source: string) => ({
      [ATTR.dependency]: "payments",
      [ATTR.reconfigurationOutcome]: outcome,
      [ATTR.reconfigurationSource]: source,
    });
    expect(m.sum(METRIC.reconfigurations, of("applied", "overrides"))).toBe(1);
    expect(m.sum(METRIC.reconfigurations, of("applied", "reconfigure"))).toBe(1);
    expect(m.sum(METRIC.reconfigurations, of("refused", "reconfigure"))).toBe(2);
    expect(logger.lines.map((l) => [l.level, l.message])).toEqual([
      ["info", "payments: reconfigured breaker.minCalls"],
      ["info", "payments: reconfigured operations.getCharge.timeout.attemptMs"],
      [
        "warn",
        "payments: reconfiguration refused, nothing applied: breaker.failureRate (breaker.failureRate): must be more than 0 and at most 1, got 2",
      ],
      [
        "warn",
        "payments: reconfiguration refused, nothing applied: bulkhead: the dependency has no bulkhead to change",
      ],
    ]);
  });
});
