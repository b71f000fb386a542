/**
 * Classifying outcomes (docs/runtime.md, "Classifying outcomes"): each verdict's effect on
 * retries, the breaker's window and the retry budget; `ignore` counts for nothing; a hook that
 * throws; the call's hook before the client's; `retry.on` body conditions. In virtual time.
 */
import { describe, expect, it } from "vitest";
import {
  createDependency,
  createVirtualClock,
  isResilienceError,
  sendHttp,
  type AttemptResult,
  type Classifier,
  type ClassifyContext,
  type HttpRequest,
  type OperationSettings,
  type ResilienceEvent,
  type ResultCondition,
  type Verdict,
} from "../../templates/runtime/index.js";
import { after, breakerSettings, dependencySettings, operation, track } from "./helpers.js";

const backoff = { baseMs: 10, capMs: 10, multiplier: 1, jitter: "none" } as const;

function retried(results?: readonly ResultCondition[]): OperationSettings {
  return operation({
    retry: {
      maxAttempts: 3,
      backoff,
      on: ["timeout", "network", 503],
      retryAfter: null,
      ...(results ? { results } : {}),
    },
  });
}

function setup(classify?: Classifier) {
  const clock = createVirtualClock(1_000);
  const events: ResilienceEvent[] = [];
  const dep = createDependency(
    dependencySettings({
      breaker: { ...breakerSettings, minCalls: 100 },
      budget: { maxTokens: 10, tokenRatio: 0.1 },
    }),
    { clock, random: () => 0.5, observer: (e) => events.push(e), classify },
  );
  return { clock, dep, events };
}

type Setup = ReturnType<typeof setup>;

/** One call whose attempts answer `outcomes[i]()` after 5 ms (the last one repeats). */
async function run(
  h: Setup,
  outcomes: readonly (() => unknown)[],
  op: OperationSettings = retried(),
  classify?: Classifier,
) {
  let attempts = 0;
  const call = track(
    h.dep.call(
      op,
      () => after(h.clock, 5, () => outcomes[Math.min(attempts++, outcomes.length - 1)]!()),
      classify ? { classify } : {},
    ),
    h.clock,
  );
  await h.clock.advance(500);
  expect(call.settled).toBe(true);
  const window = h.dep.health().breaker!;
  return {
    attempts,
    value: call.value,
    error: call.error,
    calls: window.calls,
    failures: window.failures,
    tokens: h.dep.health().budget!.tokens,
  };
}

const verdicts = (h: Setup) =>
  h.events.flatMap((e) => (e.type === "attempt-end" ? [[e.verdict, e.verdictBy]] : []));

describe("each verdict of a function operation's value", () => {
  it("success: an answer, counted once as a success, not retried", async () => {
    const h = setup(() => "success");
    const r = await run(h, [() => "done"]);
    expect(r).toMatchObject({ attempts: 1, value: "done", calls: 1, failures: 0, tokens: 10 });
    expect(verdicts(h)).toEqual([["success", "hook"]]);
  });

  it("transient: retried while attempts last, each attempt a failure and a budget token", async () => {
    const h = setup((r) => (r.type === "value" && r.value === "busy" ? "transient" : undefined));
    const r = await run(h, [() => "busy", () => "busy", () => "done"]);
    expect(r).toMatchObject({ attempts: 3, value: "done", calls: 3, failures: 2 });
    // two retried failures cost a token each; the success earns 0.1 back
    expect(r.tokens).toBe(8.1);
    expect(verdicts(h)).toEqual([
      ["transient", "hook"],
      ["transient", "hook"],
      ["success", "built-in"],
    ]);
  });

  it("transient to the end: the call fails with a `result` error carrying the value", async () => {
    const h = setup((r) => (r.type === "value" ? "transient" : undefined));
    const r = await run(h, [() => "busy"]);
    expect(r).toMatchObject({ attempts: 3, calls: 3, failures: 3 });
    expect(r.error).toMatchObject({ kind: "result", transient: true, attempts: 3, cause: "busy" });
  });

  it("failure: counted by the breaker, not retried, no budget token", async () => {
    const h = setup(() => "failure");
    const r = await run(h, [() => "declined"]);
    expect(r).toMatchObject({ attempts: 1, calls: 1, failures: 1, tokens: 10 });
    expect(r.error).toMatchObject({ kind: "result", transient: false });
  });

  it("ignore: the value reaches the caller, counted by neither breaker nor budget", async () => {
    const h = setup(() => "ignore");
    const r = await run(h, [() => "done"]);
    expect(r).toMatchObject({ attempts: 1, value: "done", calls: 0, failures: 0, tokens: 10 });
    expect(verdicts(h)).toEqual([["ignore", "hook"]]);
  });
});

describe("each verdict of a thrown error", () => {
  const boom = () => {
    throw new Error("boom");
  };

  it("success: counted as a success, not retried; the error reaches the caller as thrown", async () => {
    const h = setup(() => "success");
    const r = await run(h, [boom]);
    expect(r).toMatchObject({ attempts: 1, calls: 1, failures: 0 });
    expect(isResilienceError(r.error)).toBe(false);
    expect((r.error as Error).message).toBe("boom");
  });

  it("ignore: no retry, no fallback, nothing counted", async () => {
    const h = setup(() => "ignore");
    const r = await run(h, [boom], operation({ ...retried(), fallback: null }));
    expect(r).toMatchObject({ attempts: 1, calls: 0, failures: 0, tokens: 10 });
    expect((r.error as Error).message).toBe("boom");
  });

  it("transient: a programming error the hook calls transient is retried as a network failure", async () => {
    const h = setup((r) =>
      r.type === "error" && r.error instanceof TypeError ? "transient" : undefined,
    );
    const r = await run(h, [
      () => {
        throw new TypeError("flaky sdk");
      },
      () => "ok",
    ]);
    expect(r).toMatchObject({ attempts: 2, value: "ok", calls: 2, failures: 1 });
  });

  it("failure of a 503: counted, not retried", async () => {
    const h = setup((r) => (r.type === "error" ? "failure" : undefined));
    const r = await run(h, [
      () => {
        throw Object.assign(new Error("reset"), { code: "ECONNRESET" });
      },
    ]);
    expect(r).toMatchObject({ attempts: 1, calls: 1, failures: 1, tokens: 10 });
    expect(r.error).toMatchObject({ kind: "network", transient: false });
  });
});

describe("the hook's context, its order and its failures", () => {
  it("is told the built-in verdict and the attempt; undefined keeps the built-in one", async () => {
    const seen: [AttemptResult, ClassifyContext][] = [];
    const h = setup((result, context) => {
      seen.push([result, context]);
      return undefined;
    });
    const reset = () => {
      throw Object.assign(new Error("reset"), { code: "ECONNRESET" });
    };
    const r = await run(h, [reset, () => "ok"]);
    expect(r).toMatchObject({ attempts: 2, value: "ok" });
    expect(seen.map(([result, c]) => [result.type, c.attempt, c.builtIn])).toEqual([
      ["error", 1, "transient"],
      ["value", 2, "success"],
    ]);
    expect(seen[1]![1]).toMatchObject({ dependency: "payments", operation: "getCharge" });
    expect(verdicts(h)).toEqual([
      ["transient", "built-in"],
      ["success", "built-in"],
    ]);
  });

  it("asks the call's hook first, then the client's when the call's has no verdict", async () => {
    const asked: string[] = [];
    const h = setup(() => {
      asked.push("client");
      return "failure";
    });
    const callHook: Classifier = (r) => {
      asked.push("call");
      return r.type === "value" && r.value === "mine" ? "success" : undefined;
    };
    expect((await run(h, [() => "mine"], retried(), callHook)).value).toBe("mine");
    expect(asked).toEqual(["call"]);
    asked.length = 0;
    const other = await run(h, [() => "other"], retried(), callHook);
    expect(other.error).toMatchObject({ kind: "result" });
    expect(asked).toEqual(["call", "client"]);
  });

  it("a hook that throws keeps the built-in verdict, reports classify-failed, and the call goes on", async () => {
    const h = setup(() => {
      throw new Error("hook bug");
    });
    const reset = () => {
      throw Object.assign(new Error("reset"), { code: "ECONNRESET" });
    };
    const r = await run(h, [reset, () => "ok"]);
    expect(r).toMatchObject({ attempts: 2, value: "ok", calls: 2, failures: 1 });
    const failed = h.events.filter((e) => e.type === "classify-failed");
    expect(failed).toHaveLength(2);
    expect(failed[0]).toMatchObject({ attempt: 1, verdict: "transient", call: 1 });
    expect((failed[0] as { error: Error }).error.message).toBe("hook bug");
  });

  it("a hook that returns something that is not a verdict is ignored", async () => {
    const h = setup(() => "retry" as unknown as Verdict);
    const r = await run(h, [() => "ok"]);
    expect(r).toMatchObject({ attempts: 1, value: "ok", calls: 1 });
  });

  it("is not asked about the caller's abort", async () => {
    const asked: AttemptResult[] = [];
    const h = setup((r) => {
      asked.push(r);
      return "transient";
    });
    const controller = new AbortController();
    const call = track(
      h.dep.call(retried(), () => after(h.clock, 50, () => "late"), { signal: controller.signal }),
      h.clock,
    );
    await h.clock.advance(10);
    controller.abort();
    await h.clock.advance(100);
    expect(call.error).toMatchObject({ kind: "aborted" });
    expect(asked).toEqual([]);
    expect(h.dep.health().breaker!.calls).toBe(0);
  });
});

// an HTTP dependency answered by a fake fetch, one response per attempt
function http(responses: (() => Response)[]) {
  let sent = 0;
  const fetch = (() => {
    const next = responses[Math.min(sent, responses.length - 1)]!;
    sent++;
    return Promise.resolve(next());
  }) as typeof globalThis.fetch;
  const request: HttpRequest = { fetch, baseUrl: "http://x", method: "GET", path: "/jobs/1" };
  return { request, sent: () => sent };
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

describe("HTTP responses", () => {
  const pending: ResultCondition = { status: 200, path: ["status"], equals: "pending" };

  it("a body condition retries a 200 that says pending, then returns the real answer", async () => {
    const h = setup();
    const { request, sent } = http([
      () => json({ status: "pending" }),
      () => json({ status: "pending" }),
      () => json({ status: "done", total: 3 }),
    ]);
    const call = track(
      h.dep.call(retried([pending]), (ctx) => sendHttp(request, ctx)),
      h.clock,
    );
    await h.clock.advance(100);
    expect(call.value).toEqual({ status: "done", total: 3 });
    expect(sent()).toBe(3);
    const delays = h.events.flatMap((e) => (e.type === "retry-scheduled" ? [e.delayMs] : []));
    expect(delays).toEqual([10, 10]);
    expect(verdicts(h)).toEqual([
      ["transient", "built-in"],
      ["transient", "built-in"],
      ["success", "built-in"],
    ]);
    expect(h.dep.health().breaker).toMatchObject({ calls: 3, failures: 2 });
  });

  it("a body condition that never clears fails with an http error of status 200 and its body", async () => {
    const h = setup();
    const { request } = http([() => json({ status: "pending" })]);
    const call = track(
      h.dep.call(retried([pending]), (ctx) => sendHttp(request, ctx)),
      h.clock,
    );
    await h.clock.advance(100);
    expect(call.error).toMatchObject({
      kind: "http",
      status: 200,
      transient: true,
      attempts: 3,
      body: '{"status":"pending"}',
    });
  });

  it("a body condition matches only its status, its path and its value", async () => {
    const h = setup();
    for (const answer of [
      () => json({ status: "pending" }, 201),
      () => json({ state: "pending" }),
      () => json({ status: "PENDING" }),
      () => json(["pending"]),
      () => new Response("pending", { status: 200 }),
    ]) {
      const { request, sent } = http([answer]);
      const call = track(
        h.dep.call(retried([pending]), (ctx) =>
          sendHttp({ ...request, responseType: "json" }, ctx),
        ),
        h.clock,
      );
      await h.clock.advance(100);
      expect(sent()).toBe(1);
      expect(call.settled).toBe(true);
    }
  });

  it("the hook sees status, headers and the decoded body, and may retry a 200 or accept a 404", async () => {
    const seen: AttemptResult[] = [];
    const h = setup((r) => {
      seen.push(r);
      if (r.type !== "response") return undefined;
      if (r.status === 404) return "ignore";
      return r.ok && (r.body as { ready?: boolean }).ready === false ? "transient" : undefined;
    });
    const { request } = http([
      () => new Response('{"ready":false}', { status: 200, headers: { "x-try": "1" } }),
      () => json({ ready: true }),
    ]);
    const call = track(
      h.dep.call(retried(), (ctx) => sendHttp(request, ctx)),
      h.clock,
    );
    await h.clock.advance(100);
    expect(call.value).toEqual({ ready: true });
    expect(seen[0]).toMatchObject({
      type: "response",
      ok: true,
      status: 200,
      headers: { "x-try": "1" },
      body: { ready: false },
    });
    const missing = http([() => json({ error: "no such job" }, 404)]);
    const gone = track(
      h.dep.call(retried(), (ctx) => sendHttp(missing.request, ctx)),
      h.clock,
    );
    await h.clock.advance(100);
    expect(gone.error).toMatchObject({ kind: "http", status: 404 });
    expect(seen.at(-1)).toMatchObject({ ok: false, status: 404, body: { error: "no such job" } });
  });

  it("the hook sees what the body condition decided, and wins over it", async () => {
    const h = setup((r, c) =>
      r.type === "response" && c.builtIn === "transient" ? "failure" : undefined,
    );
    const { request, sent } = http([() => json({ status: "pending" })]);
    const call = track(
      h.dep.call(retried([pending]), (ctx) => sendHttp(request, ctx)),
      h.clock,
    );
    await h.clock.advance(100);
    expect(sent()).toBe(1);
    expect(call.error).toMatchObject({ kind: "http", status: 200, transient: false });
    expect(verdicts(h)).toEqual([["failure", "hook"]]);
  });

  it("a 503 the hook calls success is not retried, and counts as a success", async () => {
    const h = setup((r) => (r.type === "response" && r.status === 503 ? "success" : undefined));
    const { request, sent } = http([() => new Response("maintenance", { status: 503 })]);
    const call = track(
      h.dep.call(retried(), (ctx) => sendHttp(request, ctx)),
      h.clock,
    );
    await h.clock.advance(100);
    expect(sent()).toBe(1);
    expect(call.error).toMatchObject({ kind: "http", status: 503 });
    expect(h.dep.health().breaker).toMatchObject({ calls: 1, failures: 0 });
  });
});

describe("without a hook or a body condition", () => {
  it("takes the plain path: the transport is not asked to report its response", async () => {
    const clock = createVirtualClock(1_000);
    const dep = createDependency(dependencySettings(), { clock });
    let judges: boolean | undefined;
    await dep.call(retried(), (ctx) => {
      judges = ctx.judges;
      return "ok";
    });
    expect(judges).toBe(false);
  });
});
