/**
 * Idempotent routes against the real OpenTelemetry SDK: `resilience.server.idempotency` counts
 * each request by route and outcome, and says whether a store that could not answer failed open.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import {
  createInboundMiddleware,
  StoreUnavailableError,
  type RouteSettings,
  type ServiceSettings,
  type SharedStore,
} from "../../templates/runtime/index.js";
import {
  ATTR,
  installInboundOpenTelemetry,
  METRIC,
} from "../../templates/telemetry/opentelemetry.js";
import { listen, type Running } from "../services/helpers.js";
import { createSdk } from "./sdk.js";

const route = (essential: boolean): RouteSettings => ({
  method: "POST",
  path: "/orders",
  essential,
  idempotency: {
    header: "idempotency-key",
    ttlMs: 60_000,
    store: "memory",
    required: false,
    maxBytes: 1_024,
    scope: ["authorization"],
  },
});

const settings = (routes: RouteSettings[]): ServiceSettings => ({
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
  routes,
});

const running: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const stop of running.splice(0)) await stop();
});

async function serve(routes: RouteSettings[], store?: SharedStore) {
  const sdk = createSdk();
  const door = createInboundMiddleware(settings(routes), store === undefined ? {} : { store });
  running.push(installInboundOpenTelemetry(door, { meter: sdk.meterProvider.getMeter("test") }));
  const server: Running = await listen(
    door.node((_req: IncomingMessage, res: ServerResponse) => {
      res.writeHead(201).end("ok");
    }),
  );
  running.push(() => server.close());
  const post = async () => {
    const answer = await fetch(`${server.url}/orders`, {
      method: "POST",
      headers: { "idempotency-key": "k-1" },
      body: "{}",
    });
    await answer.text();
    return answer.status;
  };
  return { sdk, post };
}

const count = async (sdk: ReturnType<typeof createSdk>, match: Record<string, unknown>) =>
  (await sdk.collect()).sum(METRIC.serverIdempotency, {
    [ATTR.service]: "shop",
    [ATTR.route]: "POST /orders",
    ...match,
  });

describe("OpenTelemetry adapter: idempotent routes", () => {
  it("counts the first request as executed and the repeat as replayed", async () => {
    const s = await serve([route(false)]);
    expect(await s.post()).toBe(201);
    // the response is stored once the first request's response is over
    for (let i = 0; i < 100 && (await count(s.sdk, {})) === 0; i++)
      await new Promise((r) => setTimeout(r, 5));
    expect(await s.post()).toBe(201);
    expect(await count(s.sdk, { [ATTR.idempotencyOutcome]: "executed" })).toBe(1);
    expect(await count(s.sdk, { [ATTR.idempotencyOutcome]: "replayed" })).toBe(1);
  });

  it("counts a store that cannot answer, failing open or closed", async () => {
    const down: SharedStore = {
      kind: "memory",
      key: (...parts) => parts.join(":"),
      run: () => Promise.reject(new StoreUnavailableError("down")),
    };
    const open = await serve([route(false)], down);
    expect(await open.post()).toBe(201);
    expect(
      await count(open.sdk, {
        [ATTR.idempotencyOutcome]: "store-unavailable",
        [ATTR.failOpen]: true,
      }),
    ).toBe(1);
    const closed = await serve([route(true)], down);
    expect(await closed.post()).toBe(503);
    expect(
      await count(closed.sdk, {
        [ATTR.idempotencyOutcome]: "store-unavailable",
        [ATTR.failOpen]: false,
      }),
    ).toBe(1);
  });
});
