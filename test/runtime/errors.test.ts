import { describe, expect, it } from "vitest";
import {
  describesRequest,
  isBulkheadFullError,
  isCircuitOpenError,
  isDependencyFailure,
  isHttpError,
  isResilienceError,
  isTimeoutError,
  ResilienceError,
} from "../../templates/runtime/index.js";
import { breakerSettings, harness, httpFailure, operation } from "./helpers.js";

describe("errors", () => {
  it("are recognised across two copies of the runtime, where instanceof fails", async () => {
    // A query string makes the module loader evaluate the file a second time, as a second copy.
    const specifier = "../../templates/runtime/errors.js?second-copy";
    const copy = (await import(
      /* @vite-ignore */ specifier
    )) as typeof import("../../templates/runtime/errors.js");
    const foreign = new copy.ResilienceError({ kind: "timeout", message: "t" });
    expect(foreign instanceof ResilienceError).toBe(false);
    expect(isResilienceError(foreign)).toBe(true);
    expect(isTimeoutError(foreign)).toBe(true);
    expect(
      copy.isResilienceError(new ResilienceError({ kind: "http", message: "h" }), "http"),
    ).toBe(true);
    expect(isResilienceError(new Error("plain"))).toBe(false);
    expect(isResilienceError({ kind: "timeout" })).toBe(false);
  });

  it("narrow by kind", () => {
    const error: unknown = httpFailure(503, true, { a: "b" }, "body");
    expect(isHttpError(error)).toBe(true);
    if (isHttpError(error))
      expect([error.status, error.headers, error.body]).toEqual([503, { a: "b" }, "body"]);
    expect(isCircuitOpenError(error)).toBe(false);
    expect(isResilienceError(error, "network")).toBe(false);
  });

  it("make fast rejections without a stack trace but with an informative message", async () => {
    const h = harness({
      breaker: breakerSettings,
      bulkhead: { maxConcurrent: 0, maxQueue: 0, queueTimeoutMs: 0, overflow: "reject" },
    });
    const full = await h.dep.call(operation(), () => "ok").catch((e: unknown) => e);
    expect(isBulkheadFullError(full)).toBe(true);
    expect((full as Error).stack?.split("\n")).toHaveLength(1);
    expect((full as Error).message).toBe("payments.getCharge: bulkhead full (all 0 slots busy)");
    const h2 = harness({ breaker: breakerSettings });
    const breaker = h2.dep.breaker!;
    for (let i = 0; i < 10; i++) breaker.onFailure(breaker.tryAcquire(), 1);
    const open = await h2.dep.call(operation(), () => "ok").catch((e: unknown) => e);
    expect(isCircuitOpenError(open)).toBe(true);
    expect((open as Error).stack?.split("\n")).toHaveLength(1);
    expect((open as Error).message).toBe("payments.getCharge: circuit open (trials in 30000 ms)");
    expect(Error.stackTraceLimit).toBeGreaterThan(0);
    expect(
      new ResilienceError({ kind: "network", message: "n" }).stack?.split("\n").length,
    ).toBeGreaterThan(1);
  });

  it("make stackless errors that are still Errors, with their fields, cause and a one-line stack", () => {
    const cause = new Error("last failure");
    const error = new ResilienceError({
      kind: "circuit-open",
      message: "p.get: circuit open",
      dependency: "p",
      cause,
      withoutStack: true,
    });
    expect(error).toBeInstanceOf(Error);
    expect(error).toBeInstanceOf(ResilienceError);
    expect(isCircuitOpenError(error)).toBe(true);
    expect([
      error.name,
      error.message,
      error.dependency,
      error.operation,
      error.attempts,
      error.transient,
    ]).toEqual(["ResilienceError", "p.get: circuit open", "p", "", 0, false]);
    expect(error.cause).toBe(cause);
    expect(error.stack).toBe("ResilienceError: p.get: circuit open");
    expect(JSON.parse(JSON.stringify(error))).toMatchObject({
      message: "p.get: circuit open",
      kind: "circuit-open",
      dependency: "p",
    });
    expect(String(error)).toBe("ResilienceError: p.get: circuit open");
    error.stack = "replaced";
    expect(error.stack).toBe("replaced");
  });

  it("tell caller bugs from dependency failures", () => {
    for (const status of [400, 401, 403, 404, 405, 409, 410, 422]) {
      expect(describesRequest(httpFailure(status, false))).toBe(true);
      expect(isDependencyFailure(httpFailure(status, false))).toBe(false);
      // the status decides, not whether retry.on lists it
      expect(describesRequest(httpFailure(status, true))).toBe(true);
    }
    for (const status of [408, 425, 429, 500, 501, 503]) {
      expect(describesRequest(httpFailure(status, false))).toBe(false);
      expect(isDependencyFailure(httpFailure(status, false))).toBe(true);
    }
    // another 4xx describes the request unless it is listed as retryable
    expect(describesRequest(httpFailure(423, false))).toBe(true);
    expect(describesRequest(httpFailure(423, true))).toBe(false);
    expect(isDependencyFailure(new ResilienceError({ kind: "aborted", message: "a" }))).toBe(false);
    expect(isDependencyFailure(new Error("bug"))).toBe(false);
  });

  it("wrap a network failure a function transport throws as a transient network error with the cause", async () => {
    const h = harness();
    const reset = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    const error = await h.dep
      .call(operation({ retry: null }), () => Promise.reject(reset))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      kind: "network",
      transient: true,
      dependency: "payments",
      operation: "getCharge",
      attempts: 1,
    });
    expect((error as Error).cause).toBe(reset);
  });
});
