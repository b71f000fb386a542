/**
 * What a dependency's answer and a caller's arguments may do to a request: a body over
 * `maxResponseBytes` is cut while it streams (over a real socket on 127.0.0.1) and never
 * retried; a path parameter never leaves its own segment of the path.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import {
  buildUrl,
  createDependency,
  DEFAULT_MAX_RESPONSE_BYTES,
  isResilienceError,
  pathSegment,
  sendHttp,
  type ResilienceError,
} from "../../templates/runtime/index.js";
import { startBodyServer, type BodyServer } from "../helpers/body-server.js";
import { dependencySettings, operation } from "./helpers.js";

const KiB = 1024;
const MiB = 1024 * KiB;
const LIMIT = 64 * KiB;

/** `fetch`, with a count of the response body bytes the caller actually took from it. */
function countingFetch(): { fetch: typeof fetch; read: () => number } {
  let read = 0;
  const counted = (async (url: string, init: RequestInit) => {
    const response = await fetch(url, init);
    if (response.body === null) return response;
    const counter = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        read += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    return new Response(response.body.pipeThrough(counter), {
      status: response.status,
      headers: response.headers,
    });
  }) as typeof fetch;
  return { fetch: counted, read: () => read };
}

// real time: the body streams over a socket; every retried failure would be retried at once
const retried = operation({
  timeout: { attemptMs: 10_000, totalMs: 20_000 },
  retry: {
    maxAttempts: 3,
    backoff: { baseMs: 1, capMs: 5, multiplier: 2, jitter: "none" },
    on: ["timeout", "network", 500, 502, 503, 504],
    retryAfter: null,
  },
});

let server: BodyServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function failure(call: Promise<unknown>): Promise<ResilienceError> {
  const outcome = await call.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!("error" in outcome))
    throw new Error(
      `expected a failure, got a value of ${String(outcome.value).length} characters`,
    );
  if (!isResilienceError(outcome.error)) throw outcome.error;
  return outcome.error;
}

describe("maxResponseBytes", () => {
  it("cuts a 2xx body over the limit while it streams, with a parse error that is not retried", async () => {
    server = await startBodyServer({ size: 64 * MiB });
    const { fetch, read } = countingFetch();
    const dep = createDependency(dependencySettings());
    const started = performance.now();
    const error = await failure(
      dep.call(retried, (ctx) =>
        sendHttp(
          { fetch, baseUrl: server!.url, method: "GET", path: "/report", maxResponseBytes: LIMIT },
          ctx,
        ),
      ),
    );
    expect(error).toMatchObject({ kind: "parse", transient: false, attempts: 1, status: 200 });
    expect(error.message).toContain("over maxResponseBytes (65536 bytes)");
    // read: the limit, the chunk that crossed it and what the counting stream had pulled ahead
    expect(read()).toBeLessThanOrEqual(LIMIT + 256 * KiB);
    // the stream was cancelled: the server saw the client go, having written a sliver of the body
    await server.idle();
    expect(server.requests).toBe(1);
    expect(server.written).toBeLessThan(16 * MiB);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it("refuses a declared content-length over the limit without reading the body", async () => {
    server = await startBodyServer({ size: 4 * MiB, declareLength: true });
    const { fetch, read } = countingFetch();
    const dep = createDependency(dependencySettings());
    const error = await failure(
      dep.call(retried, (ctx) =>
        sendHttp(
          { fetch, baseUrl: server!.url, method: "GET", path: "/", maxResponseBytes: LIMIT },
          ctx,
        ),
      ),
    );
    expect(error).toMatchObject({ kind: "parse", transient: false, attempts: 1 });
    expect(read()).toBeLessThanOrEqual(64 * KiB);
    await server.idle();
    expect(server.requests).toBe(1);
  });

  it("streams a compressed body through the limit: its declared length says nothing of what it inflates to", async () => {
    // what fetch hands over for a small gzip body that inflates past the limit
    const inflated = (() =>
      Promise.resolve(
        new Response("x".repeat(4 * LIMIT), {
          status: 200,
          headers: { "content-length": "512", "content-encoding": "gzip" },
        }),
      )) as unknown as typeof fetch;
    const dep = createDependency(dependencySettings());
    const error = await failure(
      dep.call(retried, (ctx) =>
        sendHttp(
          {
            fetch: inflated,
            baseUrl: "http://127.0.0.1:1",
            method: "GET",
            path: "/",
            responseType: "text",
            maxResponseBytes: LIMIT,
          },
          ctx,
        ),
      ),
    );
    expect(error).toMatchObject({ kind: "parse", transient: false, attempts: 1 });
    // the same body sent as is, with its true length declared, is read whole
    const plain = (() =>
      Promise.resolve(
        new Response("y".repeat(LIMIT), {
          status: 200,
          headers: { "content-length": String(LIMIT) },
        }),
      )) as unknown as typeof fetch;
    const text = await dep.call(retried, (ctx) =>
      sendHttp<string>(
        {
          fetch: plain,
          baseUrl: "http://127.0.0.1:1",
          method: "GET",
          path: "/",
          responseType: "text",
          maxResponseBytes: LIMIT,
        },
        ctx,
      ),
    );
    expect(text).toHaveLength(LIMIT);
  });

  it("reads a body of exactly the limit, and cuts an error body to it, keeping the http error", async () => {
    server = await startBodyServer({ size: LIMIT });
    const dep = createDependency(dependencySettings());
    const text = await dep.call(retried, (ctx) =>
      sendHttp<string>(
        { baseUrl: server!.url, method: "GET", path: "/", maxResponseBytes: LIMIT },
        ctx,
      ),
    );
    expect(text).toHaveLength(LIMIT - 2);
    await server.close();

    server = await startBodyServer({ size: 4 * MiB, status: 503, declareLength: true });
    const error = await failure(
      dep.call(operation({ retry: null, timeout: { attemptMs: 10_000, totalMs: 20_000 } }), (ctx) =>
        sendHttp({ baseUrl: server!.url, method: "GET", path: "/", maxResponseBytes: LIMIT }, ctx),
      ),
    );
    expect(error).toMatchObject({ kind: "http", status: 503, transient: true });
    expect(error.body).toHaveLength(LIMIT);
    await server.idle();
    expect(server.written).toBeLessThan(4 * MiB);
  });

  it("defaults to 8 MiB", async () => {
    expect(DEFAULT_MAX_RESPONSE_BYTES).toBe(8 * MiB);
    server = await startBodyServer({ size: 8 * MiB + 2 });
    const dep = createDependency(dependencySettings());
    const error = await failure(
      dep.call(retried, (ctx) => sendHttp({ baseUrl: server!.url, method: "GET", path: "/" }, ctx)),
    );
    expect(error).toMatchObject({ kind: "parse", transient: false, attempts: 1 });
    expect(error.message).toContain(`(${8 * MiB} bytes)`);
  });
});

describe("path parameters", () => {
  it("refuses . and .., escaped by the URL parser or not, naming the parameter", () => {
    for (const value of [".", ".."]) {
      expect(() => pathSegment("mode", value)).toThrow(RangeError);
      expect(() => pathSegment("mode", value)).toThrow(/\{mode\}/);
    }
    expect(() => pathSegment("id", "\ud800")).toThrow(/\{id\}.*lone surrogate/);
    expect(pathSegment("id", "...")).toBe("...");
    expect(pathSegment("id", "%2e%2E")).toBe("%252e%252E");
    expect(pathSegment("id", "a/b?c#d")).toBe("a%2Fb%3Fc%23d");
    expect(pathSegment("n", 4.5)).toBe("4.5");
  });

  it("keeps the base path and the template's segments, whatever the values (property)", async () => {
    const sent: string[] = [];
    const capture = ((url: string) => {
      sent.push(url);
      return Promise.resolve(new Response("{}"));
    }) as typeof fetch;
    const dep = createDependency(dependencySettings());
    const op = operation({ retry: null });
    const base = "https://api.example/v1/tenants/acme";
    const template = new URL(`${base}/items/x/y`).pathname.split("/").length;
    const tricky = fc.constantFrom(
      ".",
      "..",
      "%2e",
      "%2E%2E",
      ".%2e",
      "%2e.",
      "/",
      "\\",
      "..\\..",
      "../..",
      "?",
      "#",
      "",
      "%",
      "%zz",
      "\ud800",
    );
    const value = fc.oneof(tricky, fc.string({ unit: "binary" }), fc.string({ unit: "grapheme" }));
    await fc.assert(
      fc.asyncProperty(value, value, async (mode, id) => {
        let path: string;
        try {
          path = "/items/" + pathSegment("mode", mode) + "/" + pathSegment("id", id);
        } catch (error) {
          expect(error).toBeInstanceOf(RangeError);
          const refused = (v: string) => v === "." || v === ".." || !isWellFormed(v);
          expect(refused(mode) || refused(id)).toBe(true);
          return;
        }
        sent.length = 0;
        await dep.call(op, (ctx) =>
          sendHttp({ fetch: capture, baseUrl: base, method: "GET", path }, ctx),
        );
        const url = new URL(sent[0]!);
        expect(url.origin + url.pathname.slice(0, "/v1/tenants/acme/items/".length)).toBe(
          `${base}/items/`,
        );
        expect(url.pathname.split("/")).toHaveLength(template);
        expect(buildUrl(base, path)).toBe(sent[0]);
      }),
      { numRuns: 500 },
    );
  });
});

function isWellFormed(text: string): boolean {
  try {
    encodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

describe("a bug in the request", () => {
  it("surfaces as it is instead of becoming a transient network error", async () => {
    const { sendHttp } = await import("../../templates/runtime/http.js");
    const ctx = {
      dependency: "d",
      operation: "o",
      signal: new AbortController().signal,
      headers: () => ({}),
      awaitHeaders: <R>(response: Promise<R>) => response,
      retryOn: ["network"],
    } as unknown as Parameters<typeof sendHttp>[1];
    const failure = await sendHttp(
      { method: "GET", baseUrl: "not a url", path: "/x", responseType: "none" },
      ctx,
    ).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(TypeError);
    expect(isResilienceError(failure)).toBe(false);
  });
});
