/**
 * The rate limit against a real HTTP server on 127.0.0.1 that answers 429 with Retry-After
 * (docs/runtime.md, "Rate limit"): the pause it asks for stops further requests before they are
 * sent, and the client's own retry waits it out. Bounded in time.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createDependency,
  isRateLimitedError,
  sendHttp,
  type OperationSettings,
} from "../../templates/runtime/index.js";
import { failureOf, settlesWithin } from "./helpers.js";

let server: Server;
let baseUrl = "";
let received = 0;
// what the server answers next: 429s first, then 200s
const script: { status: number; headers: Record<string, string> }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    received++;
    const next = script.shift() ?? { status: 200, headers: {} };
    res.writeHead(next.status, { "content-type": "application/json", ...next.headers });
    res.end(next.status === 200 ? JSON.stringify({ ok: true }) : "{}");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}/`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const get = (retry: OperationSettings["retry"]): OperationSettings<null> => ({
  name: "lookup",
  repeatable: true,
  idempotencyKey: null,
  timeout: { attemptMs: 2_000, totalMs: 5_000 },
  retry,
  hedge: null,
  fallback: null,
});

const limited = () =>
  createDependency({
    name: "geocoder",
    deadline: null,
    breaker: null,
    bulkhead: null,
    budget: null,
    rateLimit: { rate: 100, periodMs: 1_000, burst: 10, maxWaitMs: 0, maxPauseMs: 30_000 },
  });

describe("rate limit against a server that answers 429 with Retry-After", () => {
  it("pauses after the 429: the next call is turned away before it is sent", async () => {
    const dep = limited();
    received = 0;
    script.push({ status: 429, headers: { "retry-after": "30" } });
    const call = () =>
      dep.call(get(null), (ctx) => sendHttp({ baseUrl, method: "GET", path: "/geocode" }, ctx));
    const throttled = await settlesWithin(failureOf(call()), 5_000);
    expect(throttled).toMatchObject({ kind: "http", status: 429, retryAfterMs: 30_000 });
    const turnedAway = await settlesWithin(failureOf(call()), 5_000);
    expect(isRateLimitedError(turnedAway)).toBe(true);
    expect(turnedAway.message).toContain("paused by the server");
    expect(received).toBe(1);
    expect(dep.health().rateLimit?.pausedForMs).toBeGreaterThan(29_000);
  });

  it("pauses on the IETF RateLimit field of a successful response", async () => {
    const dep = limited();
    received = 0;
    script.push({ status: 200, headers: { ratelimit: '"default";r=0;t=20' } });
    const call = () =>
      dep.call(get(null), (ctx) => sendHttp({ baseUrl, method: "GET", path: "/geocode" }, ctx));
    expect(await settlesWithin(call(), 5_000)).toEqual({ ok: true });
    expect(isRateLimitedError(await settlesWithin(failureOf(call()), 5_000))).toBe(true);
    expect(received).toBe(1);
  });

  it("a retry waits out Retry-After and then succeeds, sent twice in all", async () => {
    const dep = createDependency({
      name: "geocoder",
      deadline: null,
      breaker: null,
      bulkhead: null,
      budget: null,
      rateLimit: { rate: 100, periodMs: 1_000, burst: 10, maxWaitMs: 2_000, maxPauseMs: 30_000 },
    });
    received = 0;
    script.push({ status: 429, headers: { "retry-after": "1" } });
    const retry: OperationSettings["retry"] = {
      maxAttempts: 3,
      backoff: { baseMs: 10, capMs: 100, multiplier: 2, jitter: "none" },
      on: [429],
      retryAfter: { maxMs: 2_000 },
    };
    const started = performance.now();
    const result = await settlesWithin(
      dep.call(get(retry), (ctx) => sendHttp({ baseUrl, method: "GET", path: "/geocode" }, ctx)),
      5_000,
    );
    expect(result).toEqual({ ok: true });
    expect(received).toBe(2);
    // the retry went after the server's second, not before it
    expect(performance.now() - started).toBeGreaterThanOrEqual(990);
  });
});
