/**
 * Degradation visible downstream (docs/services.md, "Degraded responses"): a real node:http
 * server whose handler calls dependencies with fallbacks; the middleware lists those that answered
 * degraded in the configured response header, set before the headers go out.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createDependency,
  createInboundMiddleware,
  type Dependency,
  type InboundEvent,
  type ServiceSettings,
} from "../../templates/runtime/index.js";
import { normalizeService } from "../../src/model/service.js";
import { serviceSettings } from "../../src/emit/service.js";
import { Service } from "../../src/language/service-schema.js";
import { listen, type Running } from "./helpers.js";
import { operation } from "../runtime/helpers.js";

// the settings without degradedHeader, and with it
const plain: ServiceSettings = {
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
const settings: ServiceSettings = { ...plain, degradedHeader: "x-degraded" };

const op = operation<{ kind: "value"; value: string }>({
  name: "list",
  timeout: { attemptMs: 500, totalMs: 1_000 },
  retry: null,
  fallback: { kind: "value", value: "none" },
});

function dependency(name: string): Dependency {
  return createDependency({ name, deadline: null, breaker: null, bulkhead: null, budget: null });
}

const down = (): Promise<string> =>
  Promise.reject(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }));
const up = (): Promise<string> => Promise.resolve("fresh");

describe("degraded responses: the header", () => {
  const recommendations = dependency("recommendations");
  const reviews = dependency("reviews");
  const events: InboundEvent[] = [];
  const mw = createInboundMiddleware(settings, { observer: (e) => events.push(e) });
  let server: Running;

  beforeAll(async () => {
    server = await listen(
      mw.node(async (req, res) => {
        const url = req.url ?? "/";
        const a = await recommendations.call(op, url.includes("recs-down") ? down : up);
        const b = await reviews.call(op, url.includes("reviews-down") ? down : up);
        if (url.includes("stream")) {
          res.write(`${a.data},`); // headers go out here
          await reviews.call(op, down); // too late to be listed
          res.end(b.data);
          return;
        }
        if (url.includes("explicit")) res.writeHead(200, { "content-type": "text/plain" });
        res.end(`${a.data},${b.data}`);
      }),
    );
  });
  afterAll(() => server.close());

  it("lists the dependencies that answered degraded, once each, in order", async () => {
    const response = await fetch(`${server.url}/recs-down/reviews-down`);
    expect(await response.text()).toBe("none,none");
    expect(response.headers.get("x-degraded")).toBe("recommendations, reviews");
    const one = await fetch(`${server.url}/recs-down/explicit`);
    expect(one.headers.get("x-degraded")).toBe("recommendations");
    expect(one.headers.get("content-type")).toBe("text/plain");
    expect(events.filter((e) => e.type === "request-degraded")).toEqual([
      { type: "request-degraded", service: "shop", dependencies: ["recommendations", "reviews"] },
      { type: "request-degraded", service: "shop", dependencies: ["recommendations"] },
    ]);
  });

  it("sends no header for a fresh response, nor for a fallback served after the headers went out", async () => {
    const fresh = await fetch(`${server.url}/`);
    expect(fresh.headers.has("x-degraded")).toBe(false);
    const streamed = await fetch(`${server.url}/stream`);
    expect(await streamed.text()).toBe("fresh,fresh");
    expect(streamed.headers.has("x-degraded")).toBe(false);
  });

  it("requests do not see each other's degraded dependencies", async () => {
    const [a, b] = await Promise.all([
      fetch(`${server.url}/recs-down`),
      fetch(`${server.url}/reviews-down`),
    ]);
    expect(a.headers.get("x-degraded")).toBe("recommendations");
    expect(b.headers.get("x-degraded")).toBe("reviews");
  });
});

describe("degraded responses: off by default, opt-in from the service policy", () => {
  it("without degradedHeader the response carries no header", async () => {
    const recommendations = dependency("recommendations");
    const server = await listen(
      createInboundMiddleware(plain).node(async (_req, res) => {
        res.end((await recommendations.call(op, down)).data);
      }),
    );
    try {
      const response = await fetch(server.url);
      expect(await response.text()).toBe("none");
      expect(response.headers.has("x-degraded")).toBe(false);
    } finally {
      await server.close();
    }
  });

  it("responses.degradedHeader is validated, lowercased and emitted into the settings", () => {
    const input = Service.parse({
      version: 1,
      kind: "service",
      service: "shop",
      responses: { degradedHeader: "X-Degraded" },
    });
    expect(serviceSettings(normalizeService(input, "shop.yaml"))).toMatchObject({
      degradedHeader: "x-degraded",
    });
    expect(
      serviceSettings(
        normalizeService(
          Service.parse({ version: 1, kind: "service", service: "shop" }),
          "shop.yaml",
        ),
      ),
    ).not.toHaveProperty("degradedHeader");
    expect(
      Service.safeParse({
        version: 1,
        kind: "service",
        service: "shop",
        responses: { degradedHeader: "not a header" },
      }).success,
    ).toBe(false);
  });
});
