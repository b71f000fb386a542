/**
 * Rules match the path the framework routes, not the raw bytes: hostile spellings of a rule's
 * path (case, trailing slash, %-encoded letters, %2F, dot segments, double slashes, ';' params,
 * query strings, fragments, backslashes, an absolute target, mixes) sent raw to node:http (a
 * `new URL()` router), Express 5 and Fastify 5 on 127.0.0.1. For each spelling either the rule
 * applies as for the canonical path or the request is refused with 400: `POST /orders` never runs
 * without its required key, and `/sync/*` never runs above `low`.
 */
import { afterEach, describe, expect, it } from "vitest";
import { priorityOf, routeMatches, type ServiceSettings } from "../../templates/runtime/index.js";
import { MAX_READ_CHARS, pathReadings } from "../../templates/runtime/route-path.js";
import { ADAPTERS, send, shopSettings, startShop, type Shop } from "./adapters.js";

const shops: Shop[] = [];
afterEach(async () => {
  for (const shop of shops.splice(0)) await shop.close();
});

const ORDERS = [
  "/Orders",
  "/ORDERS",
  "/orders/",
  "/Orders/",
  "/%6Frders",
  "/%6frders",
  "/%4Frders",
  "/ord%65rs",
  "/orders%2F",
  "/orders%2f",
  "/%2Forders",
  "/x%2F..%2Forders",
  "/x/..%2Forders",
  "/./orders",
  "/x/../orders",
  "/x/y/../../orders",
  "/orders/.",
  "/orders/./",
  "/x/%2e%2e/orders",
  "/x/%2E%2E/orders",
  "/%2e/orders",
  "/.%2e/orders",
  "//orders",
  "///orders",
  "/orders//",
  "//x/orders",
  "/x//../orders",
  "/orders;",
  "/orders;x=1",
  "/;/orders",
  "/x;/../orders",
  "/orders;/",
  "/orders?x=1",
  "/orders?",
  "/orders/?a=/../x",
  "/orders#frag",
  "/x#/../orders",
  "/orders\\",
  "/x\\..\\orders",
  "/x/..\\orders",
  "http://127.0.0.1/orders",
  "http://127.0.0.1/Orders/",
  "/%2E/Orders/",
  "/ORD%45RS/.",
  "/x/..%2F%4Frders;a?b#c",
];

const SYNC = [
  "/sync/x",
  "/SYNC/x",
  "/Sync/x",
  "/%73ync/x",
  "/%53YNC/x",
  "/sync%2Fx",
  "/%2Fsync/x",
  "/./sync/x",
  "/a/../sync/x",
  "/sync/./x",
  "/a/%2e%2e/sync/x",
  "//sync/x",
  "/sync//x",
  "/sync;p/x",
  "/sync/x;p",
  "/sync/x?y=1",
  "/sync/x#f",
  "http://127.0.0.1/sync/x",
  "/a\\..\\sync/x",
  "/SYNC/x/",
  "/sync/../x",
  "/sync/%2e%2e/x",
  "/sync/..%2Fx",
  "/Sync/x;a?b",
];

describe.each(ADAPTERS)("rules match the routed path on %s", (adapter) => {
  it("never runs POST /orders without its required key, whatever the spelling", async () => {
    const shop = await startShop(adapter);
    shops.push(shop);
    const answers: string[] = [];
    for (const target of ORDERS) {
      const answer = await send(shop.port, "POST", target, {}, "{}");
      answers.push(`${target} ${answer.status}`);
      // 400 (the key is missing, or the path is ambiguous), or the framework found no route
      expect([400, 404], `${target}: ${answer.body}`).toContain(answer.status);
    }
    expect(shop.orders, answers.join("\n")).toBe(0);
    // one route: every reading that matches applies it, so the answer is the route's own 400
    for (const target of ["/Orders", "/orders/", "/%6Frders", "/x/../orders", "/orders?x=1"]) {
      const answer = await send(shop.port, "POST", target, {}, "{}");
      expect(answer.body, target).toContain("#problem-idempotency-key-missing");
    }
    // with a key, the plain path runs, and so does a spelling the framework routes to it
    const ok = await send(shop.port, "POST", "/orders", { "idempotency-key": "k1" }, "{}");
    expect(ok.status).toBe(201);
    expect(shop.orders).toBe(1);
  });

  it("never runs /sync/* above low priority, whatever the spelling", async () => {
    const shop = await startShop(adapter);
    shops.push(shop);
    const ran: string[] = [];
    for (const target of SYNC) {
      const before = shop.synced.length;
      const answer = await send(shop.port, "GET", target);
      expect([200, 400, 404], target).toContain(answer.status);
      if (shop.synced.length > before) ran.push(`${target} ${shop.synced.at(-1)!}`);
    }
    expect(ran.length).toBeGreaterThan(0);
    expect(ran.filter((r) => !r.endsWith(" low"))).toEqual([]);
    // elsewhere the default applies
    const other = await send(shop.port, "GET", "/elsewhere");
    expect(other.status).toBe(404);
  });
});

describe.each(ADAPTERS)("ambiguous paths on %s", (adapter) => {
  it("refuses with 400 a path whose readings match different routes, before the handler", async () => {
    const route = shopSettings.routes![0]!;
    const settings: ServiceSettings = {
      ...shopSettings,
      routes: [
        route,
        { ...route, path: "/x/*", idempotency: { ...route.idempotency!, required: false } },
      ],
    };
    const refused: string[] = [];
    const shop = await startShop(adapter, settings);
    shops.push(shop);
    shop.door.subscribe((event) => {
      if (event.type === "request-refused") refused.push(`${event.reason} ${event.status}`);
    });
    for (const target of ["/x/../orders", "/x/..%2Forders", "/x%2F..%2Forders", "/x;/../orders"]) {
      const answer = await send(shop.port, "POST", target, { "idempotency-key": "k" }, "{}");
      expect(answer.status, target).toBe(400);
      expect(answer.headers["content-type"]).toBe("application/problem+json");
      expect(answer.body).toContain("#problem-ambiguous-path");
    }
    // a path too costly to read every way (a long one full of what routers disagree on)
    const costly = `/x${"/a;b/..%2F/./\\".repeat(300)}/orders`;
    expect(pathReadings(costly)).toBeNull();
    const answer = await send(shop.port, "POST", costly, { "idempotency-key": "k" }, "{}");
    expect(answer.body).toContain("#problem-ambiguous-path");
    expect(refused).toEqual(Array(5).fill("ambiguous-path 400"));
    expect(shop.orders).toBe(0);
    // the plain spellings of either route are not ambiguous
    expect(
      (await send(shop.port, "POST", "/orders", { "idempotency-key": "k" }, "{}")).status,
    ).toBe(201);
  });
});

describe("readings", () => {
  const settings: ServiceSettings = {
    ...shopSettings,
    priorities: [
      { priority: "critical", method: "GET", path: "/healthz", header: null, value: null },
      { priority: "low", method: null, path: "/sync/*", header: null, value: null },
    ],
  };
  const at = (url: string) => priorityOf(settings, { method: "GET", url, headers: {} });

  it("apply a rule that lowers priority to every spelling a router may route to it", () => {
    for (const url of ["/sync/a", "/SYNC/a", "/%73ync/a", "/x/../sync/a", "/sync/../a", "//sync/a"])
      expect(at(url), url).toBe("low");
  });

  it("never give a raised priority to a spelling some router reads as another path", () => {
    expect(at("/healthz")).toBe("critical");
    expect(at("/healthz/")).toBe("critical");
    expect(at("/healthz?full=1")).toBe("critical");
    // Express routes /Healthz to /healthz, a case-sensitive router to a /:page route
    for (const url of [
      "/Healthz",
      "/healthz/..%2Fexpensive",
      "/healthz;x",
      "//healthz",
      "/x/../healthz",
    ])
      expect(at(url), url).toBe("normal");
  });

  it("read HEAD as GET too, which Express and Fastify route to a GET handler", () => {
    const lowGet: ServiceSettings = {
      ...settings,
      priorities: [
        { priority: "low", method: "GET", path: "/reports/*", header: null, value: null },
      ],
    };
    const head = (url: string) => priorityOf(lowGet, { method: "HEAD", url, headers: {} });
    expect(head("/reports/a")).toBe("low");
    expect(head("/Reports/a")).toBe("low");
    // a raised priority is not claimed by HEAD: the HEAD reading gets the default
    expect(priorityOf(settings, { method: "HEAD", url: "/healthz", headers: {} })).toBe("normal");
  });

  it("bound the work: a path too costly to read every way gets the lowest priority a rule gives", () => {
    const costly = `/healthz${"/a;b/..%2F/./\\".repeat(300)}`;
    expect(costly.length * 2).toBeGreaterThan(MAX_READ_CHARS);
    expect(pathReadings(costly)).toBeNull();
    expect(at(costly)).toBe("low");
    // a long path with one thing to disagree on is still read
    const long = `/sync/${"a".repeat(2_000)}%2Fb`;
    expect(pathReadings(long)?.length).toBeGreaterThan(2);
    expect(at(long)).toBe("low");
  });

  it("match a route on any reading of its path, and only on its methods", () => {
    const route = shopSettings.routes![0]!;
    expect(routeMatches(route, "POST", "/orders")).toBe(true);
    expect(routeMatches(route, "POST", "/Orders/")).toBe(true);
    expect(routeMatches(route, "POST", "/x/../orders")).toBe(true);
    expect(routeMatches(route, "POST", "/ordersx")).toBe(false);
    expect(routeMatches(route, "GET", "/orders")).toBe(false);
    const any = { ...route, method: null };
    expect(routeMatches(any, "PUT", "/orders")).toBe(true);
    expect(routeMatches(any, "GET", "/orders")).toBe(false);
  });
});
