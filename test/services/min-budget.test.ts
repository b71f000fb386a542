/**
 * deadline.minBudget of a service policy: a request arriving with less than that left is refused
 * with expiredStatus (504), like a spent budget, before its handler runs (docs/services.md).
 */
import { afterEach, describe, expect, it } from "vitest";
import { checkTexts } from "../../src/program/check.js";
import { serviceSettings } from "../../src/emit/service.js";
import {
  createInboundMiddleware,
  type InboundEvent,
  type ServiceSettings,
} from "../../templates/runtime/index.js";
import { listen, within, type Running } from "./helpers.js";

let server: Running | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("deadline.minBudget", () => {
  it("is resolved from the service policy, and refused out of range with RG106", () => {
    const text =
      "version: 1\nkind: service\nservice: shop\ndeadline: { edge: 2s, minBudget: 50ms }\n";
    const r = checkTexts([{ file: "shop.yaml", text }]);
    expect(r.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(r.services[0]?.deadline).toMatchObject({ edgeMs: 2_000, minBudgetMs: 50 });
    expect(serviceSettings(r.services[0]!)).toMatchObject({ deadline: { minBudgetMs: 50 } });
    const without = checkTexts([
      { file: "shop.yaml", text: "version: 1\nkind: service\nservice: shop\n" },
    ]);
    expect(without.services[0]?.deadline).not.toHaveProperty("minBudgetMs");
    const bad = checkTexts([
      {
        file: "shop.yaml",
        text: "version: 1\nkind: service\nservice: shop\ndeadline: { minBudget: 2h }\n",
      },
    ]);
    expect(bad.diagnostics.map((d) => d.code)).toContain("RG106");
  });

  it("answers 504 without running the handler when less than minBudget is left", async () => {
    const settings: ServiceSettings = {
      name: "edge",
      deadline: {
        edgeMs: 2_000,
        maxMs: 5_000,
        header: "x-request-timeout-ms",
        format: "ms",
        grpcTimeout: true,
        expiredStatus: 504,
        minBudgetMs: 50,
      },
      admission: null,
      rejection: { status: 503, retryAfterS: 1 },
      defaultPriority: "normal",
      priorities: [],
    };
    const events: InboundEvent[] = [];
    let handled = 0;
    const mw = createInboundMiddleware(settings, { observer: (e) => events.push(e) });
    server = await listen(
      mw.node((_req, res) => {
        handled += 1;
        res.writeHead(200, { "content-length": "2" }).end("ok");
      }),
    );
    const short = await within(
      fetch(server.url, { headers: { "x-request-timeout-ms": "30" } }),
      2_000,
    );
    expect(short.status).toBe(504);
    expect(handled).toBe(0);
    const enough = await within(
      fetch(server.url, { headers: { "x-request-timeout-ms": "60" } }),
      2_000,
    );
    expect(enough.status).toBe(200);
    expect(handled).toBe(1);
    expect(mw.health()).toMatchObject({ admitted: 1, expired: 1 });
    expect(events.some((e) => e.type === "request-shed" && e.cause === "expired")).toBe(true);
  });
});
