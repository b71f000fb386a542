/**
 * Degraded responses against the real OpenTelemetry SDK: a real node:http server whose handler
 * runs inside a server span; the adapter marks that span with `resilience.degraded` and counts
 * `resilience.server.degraded_responses` by dependency (docs/telemetry.md).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { IncomingMessage, ServerResponse } from "node:http";
import { context, ROOT_CONTEXT, type Context, type ContextManager } from "@opentelemetry/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createDependency,
  createInboundMiddleware,
  type ServiceSettings,
} from "../../templates/runtime/index.js";
import {
  ATTR,
  installInboundOpenTelemetry,
  METRIC,
} from "../../templates/telemetry/opentelemetry.js";
import { listen, type Running } from "../services/helpers.js";
import { createSdk } from "./sdk.js";
import { operation } from "../runtime/helpers.js";

// the smallest AsyncLocalStorage context manager (what @opentelemetry/context-async-hooks provides)
class AlsContextManager implements ContextManager {
  readonly #store = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.#store.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.#store.run(ctx, () => fn.apply(thisArg, args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    return this;
  }
}

const settings: ServiceSettings = {
  name: "shop",
  deadline: {
    edgeMs: 2_000,
    maxMs: 5_000,
    header: "x-request-timeout-ms",
    format: "ms",
    grpcTimeout: true,
    expiredStatus: 504,
  },
  admission: null,
  rejection: { status: 503, retryAfterS: 1 },
  defaultPriority: "normal",
  priorities: [],
};
const op = operation<{ kind: "value"; value: string }>({
  name: "list",
  timeout: { attemptMs: 500, totalMs: 1_000 },
  retry: null,
  fallback: { kind: "value", value: "none" },
});
const down = (): Promise<string> =>
  Promise.reject(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }));

describe("OpenTelemetry adapter: degraded responses", () => {
  const sdk = createSdk();
  const tracer = sdk.tracerProvider.getTracer("test");
  const recommendations = createDependency({
    name: "recommendations",
    deadline: null,
    breaker: null,
    bulkhead: null,
    budget: null,
  });
  // no header configured: the metric and the span attribute do not need one
  const mw = createInboundMiddleware(settings);
  let server: Running;
  let stop: () => void;

  beforeAll(async () => {
    context.setGlobalContextManager(new AlsContextManager());
    stop = installInboundOpenTelemetry(mw, { meter: sdk.meterProvider.getMeter("test") });
    const handler = mw.node<IncomingMessage, ServerResponse>(async (req, res) => {
      const data = req.url === "/down" ? (await recommendations.call(op, down)).data : "fresh";
      res.end(data);
    });
    server = await listen((req, res) =>
      tracer.startActiveSpan(`GET ${req.url ?? ""}`, (span) => {
        res.once("finish", () => span.end());
        handler(req, res);
      }),
    );
  });
  afterAll(async () => {
    stop();
    await server.close();
    context.disable();
  });

  it("marks the server span and counts the response by dependency", async () => {
    expect(await (await fetch(`${server.url}/down`)).text()).toBe("none");
    expect(await (await fetch(`${server.url}/down`)).text()).toBe("none");
    expect(await (await fetch(`${server.url}/up`)).text()).toBe("fresh");
    const spans = sdk.spans.getFinishedSpans();
    expect(spans.find((s) => s.name === "GET /down")?.attributes[ATTR.degraded]).toEqual([
      "recommendations",
    ]);
    expect(spans.find((s) => s.name === "GET /up")?.attributes[ATTR.degraded]).toBeUndefined();
    const m = await sdk.collect();
    expect(
      m.sum(METRIC.serverDegraded, {
        [ATTR.service]: "shop",
        [ATTR.dependency]: "recommendations",
      }),
    ).toBe(2);
  });
});
