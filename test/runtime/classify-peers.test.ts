/**
 * Givens and thens after what peer libraries test about result and error predicates, each
 * citing the behaviour it mirrors (docs/runtime.md, "Classifying outcomes", and its comparison
 * table). In virtual time.
 */
import { describe, expect, it } from "vitest";
import {
  createDependency,
  createVirtualClock,
  type Classifier,
  type OperationSettings,
} from "../../templates/runtime/index.js";
import { after, breakerSettings, dependencySettings, operation, track } from "./helpers.js";

const once = operation({ retry: null });
const thrice = operation({
  retry: {
    maxAttempts: 3,
    backoff: { baseMs: 10, capMs: 10, multiplier: 1, jitter: "none" },
    on: ["timeout", "network"],
    retryAfter: null,
  },
});

function stack(classify: Classifier, windowSize = 5) {
  const clock = createVirtualClock(0);
  const dep = createDependency(
    dependencySettings({
      breaker: {
        ...breakerSettings,
        window: { kind: "count", calls: windowSize },
        minCalls: windowSize,
      },
    }),
    { clock, random: () => 0.5, classify },
  );
  return { clock, dep };
}

async function call(
  s: ReturnType<typeof stack>,
  op: OperationSettings,
  outcomes: readonly (() => unknown)[],
) {
  let n = 0;
  const t = track(
    s.dep.call(op, () => after(s.clock, 1, () => outcomes[Math.min(n++, outcomes.length - 1)]!())),
    s.clock,
  );
  await s.clock.advance(200);
  return { ...t, attempts: n };
}

class HelloError extends Error {}
class IgnoredError extends Error {}

describe("results recorded as failures", () => {
  // Resilience4j, CircuitBreakerResultHandlingTest: with recordResult(r -> r == "failure"), one
  // "success" and one "failure" leave two buffered calls, one of them failed
  it("a result the hook calls a failure fills the window as a failure, any other as a success", async () => {
    const s = stack((r) => (r.type === "value" && r.value === "failure" ? "failure" : undefined));
    await call(s, once, [() => "success"]);
    const failed = await call(s, once, [() => "failure"]);
    expect(failed.error).toMatchObject({ kind: "result", cause: "failure" });
    expect(s.dep.health().breaker).toMatchObject({ calls: 2, failures: 1 });
  });

  // Resilience4j: results recorded as failures open the breaker like exceptions do
  it("enough failed results open the breaker", async () => {
    const s = stack(
      (r) => (r.type === "value" && r.value === "failure" ? "failure" : undefined),
      4,
    );
    for (let i = 0; i < 4; i++) await call(s, once, [() => "failure"]);
    expect(s.dep.health().breaker?.state).toBe("open");
  });
});

describe("ignored errors", () => {
  // Resilience4j, CircuitBreakerTest with ignoreExceptions: an ignored exception is rethrown to
  // the caller and buffered as neither a success nor a failure
  it("an ignored error reaches the caller and is not buffered", async () => {
    const s = stack((r) =>
      r.type === "error" && r.error instanceof IgnoredError ? "ignore" : undefined,
    );
    const ignored = await call(s, once, [
      () => {
        throw new IgnoredError("ignored");
      },
    ]);
    expect(ignored.error).toBeInstanceOf(IgnoredError);
    expect(s.dep.health().breaker).toMatchObject({ calls: 0, failures: 0 });
  });

  // Resilience4j, recordExceptions: an exception outside the recorded ones counts as a success;
  // opossum's errorFilter: an error it accepts does not count as a failure
  it("an error the hook calls success is rethrown but buffered as a success", async () => {
    const s = stack((r) =>
      r.type === "error" && r.error instanceof HelloError ? "success" : undefined,
    );
    const r = await call(s, thrice, [
      () => {
        throw new HelloError("business error");
      },
    ]);
    expect(r.error).toBeInstanceOf(HelloError);
    expect(r.attempts).toBe(1);
    expect(s.dep.health().breaker).toMatchObject({ calls: 1, failures: 0 });
  });
});

describe("retrying on results", () => {
  // cockatiel, retry(handleWhenResult(r => !r)): a result the predicate handles is retried
  // until one is not handled, which is returned
  it("a handled result is retried until an unhandled one comes back", async () => {
    const s = stack((r) => (r.type === "value" && r.value === undefined ? "transient" : undefined));
    const r = await call(s, thrice, [() => undefined, () => undefined, () => ({ bid: 1 })]);
    expect(r.value).toEqual({ bid: 1 });
    expect(r.attempts).toBe(3);
  });

  // cockatiel, handleResultType(Class): results of a class are handled, other results are not.
  // Unlike cockatiel, which returns the last handled result when attempts run out, the call
  // fails with a `result` error whose cause is that value
  it("results of one class are handled; out of attempts, the call fails with the last", async () => {
    class Pending {
      readonly state = "pending";
    }
    const last = new Pending();
    const s = stack((r) =>
      r.type === "value" && r.value instanceof Pending ? "transient" : undefined,
    );
    const r = await call(s, thrice, [() => new Pending(), () => new Pending(), () => last]);
    expect(r.attempts).toBe(3);
    expect(r.error).toMatchObject({ kind: "result", transient: true });
    expect((r.error as { cause: unknown }).cause).toBe(last);
    const other = await call(s, thrice, [() => "plain"]);
    expect(other).toMatchObject({ attempts: 1, value: "plain" });
  });

  // Polly v8, PredicateBuilder tests: HandleResult("val") handles the outcome "val", not "val2",
  // and not an exception outcome
  it("a result predicate handles its value, not another value, and not an error", async () => {
    const s = stack((r) => (r.type === "value" && r.value === "val" ? "transient" : undefined));
    expect((await call(s, thrice, [() => "val", () => "ok"])).attempts).toBe(2);
    expect((await call(s, thrice, [() => "val2"])).attempts).toBe(1);
    const thrown = await call(s, thrice, [
      () => {
        throw new Error("val");
      },
    ]);
    // an error the predicate does not handle keeps the built-in verdict: not retried
    expect(thrown.attempts).toBe(1);
  });
});
