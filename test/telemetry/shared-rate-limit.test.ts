/**
 * A rate limit kept in a store, against the real OpenTelemetry SDK:
 * `resilience.client.rate_limit.local_share` counts the permits a replica took from its own share
 * because the store could not answer, and nothing while the store answers.
 */
import { describe, expect, it } from "vitest";
import {
  createDependency,
  createMemoryStore,
  createVirtualClock,
  StoreUnavailableError,
  type SharedStore,
} from "../../templates/runtime/index.js";
import { ATTR, installOpenTelemetry, METRIC } from "../../templates/telemetry/opentelemetry.js";
import { dependencySettings, operation } from "../runtime/helpers.js";
import { createSdk } from "./sdk.js";

const list = operation({ name: "list", retry: null });

function client(store: SharedStore) {
  const sdk = createSdk();
  const clock = createVirtualClock(1_000);
  const dep = createDependency(
    dependencySettings({
      name: "quota",
      rateLimit: {
        ...{ rate: 100, periodMs: 1_000, burst: 8, maxWaitMs: 0, maxPauseMs: 0 },
        ...{ store: "redis", replicas: 4 },
      },
    }),
    { clock, store },
  );
  installOpenTelemetry(dep, { meter: sdk.meterProvider.getMeter("test") });
  const local = async () =>
    (await sdk.collect()).sum(METRIC.rateLimitLocalShare, {
      [ATTR.dependency]: "quota",
      [ATTR.operation]: "list",
    });
  return { dep, local };
}

describe("OpenTelemetry adapter: a rate limit kept in a store", () => {
  it("counts each permit taken from the local share while the store is down", async () => {
    const down: SharedStore = {
      kind: "redis",
      key: (...parts) => parts.join(":"),
      run: () => Promise.reject(new StoreUnavailableError("connection refused")),
    };
    const c = client(down);
    // the local share's burst is 8 ÷ 4 = 2: two permits, a third refused (and not counted)
    const results = await Promise.allSettled([0, 1, 2].map(() => c.dep.call(list, () => "ok")));
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected"]);
    expect(await c.local()).toBe(2);
  });

  it("counts nothing while the store answers", async () => {
    const c = client(createMemoryStore());
    await c.dep.call(list, () => "ok");
    expect(await c.local()).toBe(0);
  });
});
