/**
 * Coalesced calls in the OpenTelemetry adapter (docs/telemetry.md): a call that joined a chain
 * in flight is counted by `resilience.client.calls.coalesced`, labelled with its operation; the
 * chain itself is one logical call, one `call.duration` point and one attempt.
 */
import { describe, expect, it } from "vitest";
import { ATTR, installOpenTelemetry, METRIC } from "../../templates/telemetry/opentelemetry.js";
import { createDependency, createVirtualClock } from "../../templates/runtime/index.js";
import { after, operation } from "../runtime/helpers.js";
import { createSdk, recordingLogger } from "./sdk.js";

describe("OpenTelemetry adapter: coalescing", () => {
  it("counts joined calls per operation, and the chain once", async () => {
    const sdk = createSdk();
    const clock = createVirtualClock(0);
    const dep = createDependency(
      { name: "catalog", deadline: null, breaker: null, bulkhead: null, budget: null },
      { clock },
    );
    installOpenTelemetry(dep, {
      meter: sdk.meterProvider.getMeter("test"),
      tracer: sdk.tracerProvider.getTracer("test"),
      logger: recordingLogger(),
    });
    const getProduct = operation({ name: "getProduct", coalesce: true, retry: null });
    const getPrice = operation({ name: "getPrice", coalesce: true, retry: null });
    const transport = () => after(clock, 10, () => "ok");
    const calls = [
      ...Array.from({ length: 5 }, () => dep.call(getProduct, transport, {}, "p1")),
      ...Array.from({ length: 2 }, () => dep.call(getPrice, transport, {}, "p1")),
      dep.call(getProduct, transport, {}, "p2"),
    ];
    await clock.advance(10);
    await Promise.all(calls);
    const m = await sdk.collect();
    const of = (op: string) => ({ [ATTR.dependency]: "catalog", [ATTR.operation]: op });
    expect(m.sum(METRIC.coalesced, of("getProduct"))).toBe(4);
    expect(m.sum(METRIC.coalesced, of("getPrice"))).toBe(1);
    expect(m.histogram(METRIC.callDuration, of("getProduct")).count).toBe(2);
    expect(m.histogram(METRIC.attemptDuration, of("getProduct")).count).toBe(2);
  });
});
