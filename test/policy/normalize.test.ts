import { describe, expect, it } from "vitest";
import { checkPolicyText } from "../../src/program/check.js";
import type { ResolvedPolicy } from "../../src/model/resolved.js";
import type { ConfigSettings } from "../../src/model/normalize.js";
import { policy } from "../helpers/diagnose.js";

function resolve(text: string, project: ConfigSettings = {}): ResolvedPolicy {
  const { policy: resolved, diagnostics } = checkPolicyText("policy.yaml", text, project);
  expect(diagnostics).toEqual([]);
  return resolved!;
}

const op = (p: ResolvedPolicy, name: string) => p.operations.find((o) => o.name === name)!;

describe("normalize", () => {
  it("converts durations to milliseconds and rates to fractions", () => {
    const p = resolve(
      policy(
        "timeout: { attempt: 1.5s, total: 2m }\nbreaker: { failureRate: 25%, slowCall: { duration: 800ms, rate: 0.9 } }\n",
      ),
    );
    expect(op(p, "get").timeout).toEqual({ attemptMs: 1500, totalMs: 120_000 });
    expect(p.breaker).toMatchObject({
      failureRate: 0.25,
      slowCall: { durationMs: 800, rate: 0.9 },
    });
  });

  it("derives the attempt timeout from p999, then p99, and says how", () => {
    const fromP999 = op(resolve(policy("latency: { p99: 80ms, p999: 200ms }\n")), "get");
    expect(fromP999.timeout.attemptMs).toBe(300);
    expect(fromP999.provenance["timeout.attempt"]).toEqual({
      origin: "derived",
      source: { file: "policy.yaml", path: ["latency"] },
      inputs: [{ key: "latency.p999", source: { file: "policy.yaml", path: ["latency", "p999"] } }],
      formula: "1.5 × p999 (200ms) = 300ms",
    });
    const fromP99 = op(resolve(policy("latency: { p99: 80ms }\n")), "get");
    expect(fromP99.timeout.attemptMs).toBe(240);
    expect(fromP99.provenance["timeout.attempt"]?.formula).toBe("3 × p99 (80ms) = 240ms");
    expect(op(resolve(policy()), "get").timeout.attemptMs).toBe(2000);
  });

  it("caps a derived attempt timeout at an explicit total", () => {
    const o = op(resolve(policy("latency: { p999: 1s }\ntimeout: { total: 1s }\n")), "get");
    expect(o.timeout).toEqual({ attemptMs: 1000, totalMs: 1000 });
  });

  it("derives the total timeout from the worst case of the retry plan, plus the deadline margin", () => {
    const o = op(
      resolve(
        policy(
          "timeout: { attempt: 100ms }\nretry: { maxAttempts: 3, backoff: { base: 50ms, cap: 80ms } }\n",
        ),
      ),
      "get",
    );
    // 3 attempts × 100ms + backoff min(80, 50) + min(80, 100) = 300 + 50 + 80, and the 10ms margin
    expect(o.timeout.totalMs).toBe(440);
    expect(o.provenance["timeout.total"]?.formula).toBe(
      "3 attempts × 100ms + backoff 50ms + 80ms + margin 10ms = 440ms",
    );
  });

  it("derives a single attempt's total so that its own timeout fires before the deadline margin cuts it", () => {
    const o = op(resolve(policy("timeout: { attempt: 2s }\n")), "get");
    expect(o.timeout).toEqual({ attemptMs: 2000, totalMs: 2010 });
    expect(o.provenance["timeout.total"]?.formula).toBe("one attempt 2s + margin 10ms = 2010ms");
  });

  it("derives the bulkhead from Little's law and the hedge delay from p95", () => {
    const p = resolve(
      policy("latency: { p95: 45ms, p99: 80ms, rps: 200 }\nbulkhead: {}\nhedge: {}\n"),
    );
    expect(p.bulkhead).toEqual({
      maxConcurrent: 32,
      maxQueue: 0,
      queueTimeoutMs: 0,
      overflow: "reject",
    });
    expect(p.provenance["bulkhead.maxConcurrent"]?.formula).toBe(
      "Little's law with 2× headroom: ceil(rps 200 × p99 80ms × 2) = 32",
    );
    expect(op(p, "get").hedge).toEqual({ delayMs: 45, maxAttempts: 2, budget: 0.05 });
  });

  it("resolves idempotency per operation (docs/policy.md, Operations)", () => {
    const p = resolve(
      policy(
        "retry: { maxAttempts: 3 }\n",
        [
          "  read: { method: GET, path: /a }",
          "  write: { method: POST, path: /b }",
          "  keyed: { method: POST, path: /c, idempotency: { header: Idempotency-Key } }",
          "  asserted: { method: PATCH, path: /d, idempotent: true }",
          "  unsafeGet: { method: GET, path: /e, idempotent: false }",
          "",
        ].join("\n"),
      ),
    );
    const basis = Object.fromEntries(
      p.operations.map((o) => [o.name, [o.idempotency, o.repeatable]]),
    );
    expect(basis).toEqual({
      read: ["method", true],
      write: ["none", false],
      keyed: ["key", true],
      asserted: ["asserted", true],
      unsafeGet: ["none", false],
    });
    expect(op(p, "keyed").idempotencyKey).toEqual({ header: "Idempotency-Key" });
  });

  it("lets an operation override and turn off inherited layers", () => {
    const p = resolve(
      policy(
        "retry: { maxAttempts: 4 }\nfallback: { kind: stale }\n",
        "  a: { method: GET, path: /a, retry: false, hedge: { delay: 10ms }, fallback: { kind: value, value: [] } }\n  b: { method: GET, path: /b, retry: { maxAttempts: 2 }, fallback: { kind: none } }\n  c: { method: GET, path: /c }\n",
      ),
    );
    expect(op(p, "a").retry).toBeNull();
    expect(op(p, "a").hedge?.delayMs).toBe(10);
    expect(op(p, "a").fallback).toEqual({ kind: "value", value: [] });
    expect(op(p, "b").retry?.maxAttempts).toBe(2);
    expect(op(p, "b").provenance["retry.maxAttempts"]?.origin).toBe("operation");
    expect(op(p, "b").fallback).toBeNull();
    expect(op(p, "c").retry?.maxAttempts).toBe(4);
    expect(op(p, "c").provenance["retry.maxAttempts"]?.origin).toBe("policy");
    expect(op(p, "c").fallback).toEqual({
      kind: "stale",
      maxAgeMs: 300_000,
      maxEntries: 1000,
      vary: [],
      otherwise: null,
    });
  });

  it("merges project defaults under the policy, and the policy wins", () => {
    const project: ConfigSettings = {
      configFile: "resgen.config.yaml",
      config: {
        deadline: { header: "x-deadline", format: "ms" },
        defaults: {
          retry: { maxAttempts: 5, backoff: { jitter: "equal" }, budget: { maxTokens: 50 } },
          breaker: { minCalls: 40 },
          deadline: { margin: "20ms" },
        },
      },
    };
    const p = resolve(policy("retry: { maxAttempts: 2 }\nbreaker: { openFor: 5s }\n"), project);
    const o = op(p, "get");
    expect(o.retry).toMatchObject({
      maxAttempts: 2,
      backoff: { jitter: "equal", baseMs: 50, capMs: 1000, multiplier: 2 },
    });
    expect(o.provenance["retry.maxAttempts"]?.origin).toBe("policy");
    expect(o.provenance["retry.backoff.jitter"]).toEqual({
      origin: "project",
      source: { file: "resgen.config.yaml", path: ["defaults", "retry", "backoff", "jitter"] },
    });
    expect(p.budget).toEqual({ maxTokens: 50, tokenRatio: 0.1 });
    expect(p.breaker).toMatchObject({ minCalls: 40, openForMs: 5000, failureRate: 0.5 });
    expect(p.deadline).toEqual({
      propagate: true,
      marginMs: 20,
      header: "x-deadline",
      format: "ms",
    });
  });

  it("types path parameters from params and defaults the rest to string", () => {
    const p = resolve(
      policy(
        "",
        "  get:\n    method: GET\n    path: /users/{userId}/items/{n}\n    params: { n: { type: integer } }\n",
      ),
    );
    expect(op(p, "get").params).toEqual([
      { name: "userId", type: "string", declared: false },
      { name: "n", type: "integer", declared: true },
    ]);
  });

  it("has no retry, breaker, bulkhead or budget unless declared", () => {
    const p = resolve(policy());
    expect([
      p.breaker,
      p.bulkhead,
      p.budget,
      op(p, "get").retry,
      op(p, "get").hedge,
      op(p, "get").fallback,
    ]).toEqual([null, null, null, null, null, null]);
  });
});
