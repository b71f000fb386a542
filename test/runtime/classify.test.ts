/**
 * What a thrown error means (docs/runtime.md, "What counts as transient"): transient only when
 * recognised; programming errors surface as they are. In virtual time.
 */
import { describe, expect, it } from "vitest";
import {
  createDependency,
  createVirtualClock,
  isResilienceError,
  type Classifier,
  type ErrorCondition,
  type OperationSettings,
} from "../../templates/runtime/index.js";
import {
  after,
  breakerSettings,
  dependencySettings,
  harness,
  operation,
  track,
} from "./helpers.js";

const retried = (errors?: readonly ErrorCondition[]) =>
  operation({
    retry: {
      maxAttempts: 3,
      backoff: { baseMs: 10, capMs: 10, multiplier: 1, jitter: "none" },
      on: ["timeout", "network", 503],
      retryAfter: null,
      ...(errors ? { errors } : {}),
    },
  });
const withFallback = operation({
  retry: {
    maxAttempts: 3,
    backoff: { baseMs: 10, capMs: 10, multiplier: 1, jitter: "none" },
    on: ["timeout", "network", 503],
    retryAfter: null,
  },
  fallback: { kind: "value", value: "cached" } as const,
});
const budget = { maxTokens: 100, tokenRatio: 0.1 } as const;

/** Runs one call whose every attempt throws `thrown()` after 5 ms; returns how it ended and the attempts made. */
async function run(h: ReturnType<typeof harness>, op: OperationSettings, thrown: () => unknown) {
  let attempts = 0;
  const call = track(
    h.dep.call(op, () =>
      after(h.clock, 5, () => {
        attempts++;
        throw thrown();
      }),
    ),
    h.clock,
  );
  await h.clock.advance(200);
  expect(call.settled).toBe(true);
  return { attempts, error: call.error, value: call.value };
}

const coded = (code: string | number, message = "failed") =>
  Object.assign(new Error(message), { code });

describe("programming errors surface: no verdict, no retry, no fallback", () => {
  it.each([
    ["TypeError", () => new TypeError("Cannot read properties of undefined (reading 'id')")],
    ["RangeError", () => new RangeError("Invalid array length")],
    ["ReferenceError", () => new ReferenceError("client is not defined")],
    ["SyntaxError", () => new SyntaxError("Unexpected token < in JSON")],
  ])(
    "a %s is thrown as it is, attempted once, unseen by the breaker and the budget",
    async (_name, make) => {
      const h = harness({ breaker: breakerSettings, budget });
      const bug = make();
      const r = await run(h, withFallback, () => bug);
      expect(r.attempts).toBe(1);
      expect(r.error).toBe(bug);
      expect(r.value).toBeUndefined();
      expect(h.dep.breaker?.health()).toMatchObject({ calls: 0, failures: 0 });
      expect(h.dep.health().budget?.tokens).toBe(100);
      expect(
        h.events.some((e) => e.type === "fallback-served" || e.type === "retry-scheduled"),
      ).toBe(false);
    },
  );

  it("a TypeError thrown synchronously by a function transport is thrown as it is", async () => {
    const h = harness({ breaker: breakerSettings });
    const bug = new TypeError("x is not a function");
    let attempts = 0;
    const call = track(
      h.dep.call(retried(), () => {
        attempts++;
        throw bug;
      }),
      h.clock,
    );
    await h.clock.advance(200);
    expect(call.error).toBe(bug);
    expect(attempts).toBe(1);
    expect(h.dep.breaker?.health().calls).toBe(0);
  });

  it("a hedged call ends at once with the programming error, its other copies aborted", async () => {
    const h = harness({ breaker: breakerSettings });
    const bug = new TypeError("bad");
    let copy = 0;
    let aborted = false;
    const call = track(
      h.dep.call(
        operation({ retry: null, hedge: { delayMs: 10, maxAttempts: 2, budget: 1 } }),
        (ctx) => {
          if (copy++ === 0) {
            ctx.signal.addEventListener("abort", () => (aborted = true));
            return after(h.clock, 100, () => "late");
          }
          return after(h.clock, 5, () => {
            throw bug;
          });
        },
      ),
      h.clock,
    );
    await h.clock.advance(200);
    expect(call.error).toBe(bug);
    expect(aborted).toBe(true);
    expect(h.dep.breaker?.health().trialsInFlight).toBe(0);
  });
});

describe("network failures are recognised by their codes", () => {
  it("fetch's 'fetch failed' TypeError (a real one, from a refused connection) stays a transient network error", async () => {
    const real: unknown = await fetch("http://127.0.0.1:1/").catch((e: unknown) => e);
    expect(real).toBeInstanceOf(TypeError);
    const h = harness({ breaker: breakerSettings });
    const r = await run(h, retried(), () => real);
    expect(r.attempts).toBe(3);
    expect(r.error).toMatchObject({ kind: "network", transient: true, attempts: 3 });
    expect((r.error as Error).cause).toBe(real);
    expect(h.dep.breaker?.health().failures).toBe(3);
  });

  it.each([
    "ECONNRESET",
    "ECONNREFUSED",
    "ETIMEDOUT",
    "EPIPE",
    "EAI_AGAIN",
    "UND_ERR_SOCKET",
    "UND_ERR_CONNECT_TIMEOUT",
  ])("%s, on the error or its cause, is a transient network error", async (code) => {
    for (const thrown of [() => coded(code), () => new Error("wrapped", { cause: coded(code) })]) {
      const r = await run(harness(), retried(), thrown);
      expect(r.attempts).toBe(3);
      expect(r.error).toMatchObject({ kind: "network", transient: true });
    }
  });

  it("is not retried when retry.on leaves out network", async () => {
    const r = await run(
      harness(),
      operation({
        retry: {
          maxAttempts: 3,
          backoff: { baseMs: 10, capMs: 10, multiplier: 1, jitter: "none" },
          on: ["timeout"],
          retryAfter: null,
        },
      }),
      () => coded("ECONNRESET"),
    );
    expect(r.attempts).toBe(1);
    expect(r.error).toMatchObject({ kind: "network", transient: false });
  });
});

describe("other unknown errors: a breaker failure, not retried", () => {
  it("an Error nobody recognises fails the call after one attempt, counts against the breaker, and the fallback covers it", async () => {
    const h = harness({ breaker: breakerSettings, budget });
    const odd = new Error("unexpected state");
    const r = await run(h, withFallback, () => odd);
    expect(r.attempts).toBe(1);
    expect(r.value).toMatchObject({ degraded: true, reason: "network", data: "cached" });
    expect((r.value as { error: Error }).error.cause).toBe(odd);
    expect(h.dep.breaker?.health()).toMatchObject({ calls: 1, failures: 1 });
    expect(h.dep.health().budget?.tokens).toBe(100);
    const plain = await run(harness(), retried(), () => "a string");
    expect(plain.attempts).toBe(1);
    expect(plain.error).toMatchObject({ kind: "network", transient: false });
  });
});

describe("errors named in the retry settings, by code or name", () => {
  it("retries an error with a named code or name, on the error or its cause; codes compare as text", async () => {
    const op = retried([{ code: "E_THROTTLED" }, { name: "ThrottlingException" }, { code: 14 }]);
    class ThrottlingException extends Error {
      override name = "ThrottlingException";
    }
    for (const thrown of [
      () => coded("E_THROTTLED"),
      () => new ThrottlingException("slow down"),
      () => new Error("sdk", { cause: new ThrottlingException("slow down") }),
      () => coded(14, "14 UNAVAILABLE"),
      () => coded("14"),
    ]) {
      const r = await run(harness(), op, thrown);
      expect(r.attempts).toBe(3);
      expect(r.error).toMatchObject({ kind: "network", transient: true });
    }
    const other = await run(harness(), op, () => coded("E_OTHER"));
    expect(other.attempts).toBe(1);
  });

  it("a network error whose cause is named is transient even when retry.on leaves out network", async () => {
    const op = operation({
      retry: {
        maxAttempts: 2,
        backoff: { baseMs: 10, capMs: 10, multiplier: 1, jitter: "none" },
        on: [503],
        retryAfter: null,
        errors: [{ code: "ECONNRESET" }],
      },
    });
    const r = await run(harness(), op, () => coded("ECONNRESET"));
    expect(r.attempts).toBe(2);
    const refused = await run(harness(), op, () => coded("ECONNREFUSED"));
    expect(refused.attempts).toBe(1);
  });
});

describe("the classify hook", () => {
  function withHook(classify: Classifier) {
    const clock = createVirtualClock(1_000);
    const dep = createDependency(dependencySettings({ breaker: breakerSettings }), {
      clock,
      random: () => 0.5,
      classify,
    });
    return { clock, dep, events: [] };
  }

  it("calls an error transient, a failure, or ignores it; undefined leaves it to the runtime", async () => {
    class DbError extends Error {
      constructor(readonly severity: string) {
        super(`db ${severity}`);
      }
    }
    const seen: unknown[] = [];
    const h = withHook((result, context) => {
      seen.push(context);
      const error = result.type === "error" ? result.error : undefined;
      if (error instanceof DbError)
        return error.severity === "retry"
          ? "transient"
          : error.severity === "bug"
            ? "ignore"
            : "failure";
      return undefined;
    });
    expect((await run(h, retried(), () => new DbError("retry"))).attempts).toBe(3);
    expect(seen[0]).toEqual({
      dependency: "payments",
      operation: "getCharge",
      attempt: 1,
      builtIn: "failure",
    });
    const failure = await run(h, retried(), () => new DbError("fatal"));
    expect(failure).toMatchObject({ attempts: 1, error: { kind: "network", transient: false } });
    const bug = new DbError("bug");
    const asBug = await run(h, retried(), () => bug);
    expect(asBug.attempts).toBe(1);
    expect(asBug.error).toBe(bug);
    // no verdict: the runtime's own rules apply
    expect((await run(h, retried(), () => coded("ECONNRESET"))).attempts).toBe(3);
    expect((await run(h, retried(), () => new TypeError("bug"))).error).toBeInstanceOf(TypeError);
    expect(isResilienceError(asBug.error)).toBe(false);
  });

  it("can make a TypeError transient, and an ECONNRESET not", async () => {
    const h = withHook((result) =>
      result.type === "error" && result.error instanceof TypeError ? "transient" : "failure",
    );
    expect((await run(h, retried(), () => new TypeError("flaky sdk"))).attempts).toBe(3);
    expect((await run(h, retried(), () => coded("ECONNRESET"))).attempts).toBe(1);
  });
});
