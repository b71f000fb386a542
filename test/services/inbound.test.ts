/**
 * The inbound side of the runtime in virtual time: reading the caller's budget, the priority
 * gate, the ambient abort signal the stack inherits, and the node:http adapter on fake
 * request/response objects.
 */
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import {
  AdmissionGate,
  createDependency,
  createInboundMiddleware,
  createVirtualClock,
  currentDeadline,
  inboundBudget,
  inheritSignal,
  isResilienceError,
  priorityOf,
  withDeadlineAndSignal,
  Deadline,
  type InboundDeadlineSettings,
  type InboundResponse,
  type OperationSettings,
  type ServiceSettings,
  type ShedReason,
} from "../../templates/runtime/index.js";

const deadline: InboundDeadlineSettings = {
  edgeMs: 1_000,
  maxMs: 5_000,
  header: "x-request-timeout-ms",
  format: "ms",
  grpcTimeout: true,
  expiredStatus: 504,
};

const service = (overrides: Partial<ServiceSettings> = {}): ServiceSettings => ({
  name: "edge",
  deadline,
  admission: { maxConcurrent: 2, maxQueue: 2, queueTimeoutMs: 100 },
  rejection: { status: 503, retryAfterS: 2 },
  defaultPriority: "normal",
  priorities: [
    { priority: "critical", method: "GET", path: "/healthz", header: null, value: null },
    { priority: "high", method: null, path: "/checkout*", header: null, value: null },
    { priority: "low", method: null, path: null, header: "x-priority", value: "background" },
  ],
  ...overrides,
});

describe("inboundBudget", () => {
  it("reads the configured header, falls back to grpc-timeout, clamps to the maximum and stamps the edge deadline", () => {
    expect(inboundBudget(deadline, { "x-request-timeout-ms": "250" })).toBe(250);
    expect(inboundBudget(deadline, { "grpc-timeout": "2S" })).toBe(2_000);
    expect(inboundBudget(deadline, { "x-request-timeout-ms": "300", "grpc-timeout": "2S" })).toBe(
      300,
    );
    expect(inboundBudget(deadline, { "x-request-timeout-ms": "60000" })).toBe(5_000);
    expect(inboundBudget(deadline, {})).toBe(1_000);
    expect(inboundBudget(deadline, { "x-request-timeout-ms": "soon" })).toBe(1_000);
    expect(inboundBudget(deadline, { "x-request-timeout-ms": "0" })).toBe(0);
    expect(inboundBudget({ ...deadline, grpcTimeout: false }, { "grpc-timeout": "2S" })).toBe(
      1_000,
    );
  });
});

describe("priorityOf", () => {
  it("takes the first matching rule, by method, path prefix or header", () => {
    const s = service();
    expect(priorityOf(s, { method: "GET", url: "/healthz", headers: {} })).toBe("critical");
    expect(priorityOf(s, { method: "POST", url: "/healthz", headers: {} })).toBe("normal");
    expect(priorityOf(s, { method: "POST", url: "/checkout/42?x=1", headers: {} })).toBe("high");
    expect(
      priorityOf(s, { method: "GET", url: "/sync", headers: { "x-priority": "background" } }),
    ).toBe("low");
    expect(
      priorityOf(s, { method: "GET", url: "/sync", headers: { "x-priority": "urgent" } }),
    ).toBe("normal");
  });
});

describe("AdmissionGate", () => {
  const log = () => {
    const events: string[] = [];
    return {
      events,
      admitted: (id: string) => () => events.push(`${id} admitted`),
      shed: (id: string) => (r: ShedReason) => events.push(`${id} shed ${r}`),
    };
  };

  it("hands freed slots to the highest priority first, oldest first within one priority", () => {
    const clock = createVirtualClock();
    const gate = new AdmissionGate({ maxConcurrent: 1, maxQueue: 3, queueTimeoutMs: 1_000 }, clock);
    const l = log();
    expect(gate.enter("normal", 10_000, l.admitted("a"), l.shed("a"))).toBe(true);
    gate.enter("low", 10_000, l.admitted("low"), l.shed("low"));
    gate.enter("high", 10_000, l.admitted("high1"), l.shed("high1"));
    gate.enter("high", 10_000, l.admitted("high2"), l.shed("high2"));
    gate.release();
    gate.release();
    gate.release();
    expect(l.events).toEqual(["high1 admitted", "high2 admitted", "low admitted"]);
    gate.release();
    expect(gate.health()).toEqual({ inFlight: 0, queued: 0, maxConcurrent: 1 });
  });

  it("with the queue full, a newcomer takes the place of the newest lower-priority waiter, else it is shed at once", () => {
    const clock = createVirtualClock();
    const gate = new AdmissionGate({ maxConcurrent: 1, maxQueue: 2, queueTimeoutMs: 1_000 }, clock);
    const l = log();
    gate.enter("normal", 10_000, l.admitted("run"), l.shed("run"));
    gate.enter("low", 10_000, l.admitted("low1"), l.shed("low1"));
    gate.enter("low", 10_000, l.admitted("low2"), l.shed("low2"));
    expect(gate.enter("low", 10_000, l.admitted("low3"), l.shed("low3"))).toBe(false);
    expect(typeof gate.enter("critical", 10_000, l.admitted("health"), l.shed("health"))).toBe(
      "function",
    );
    expect(l.events).toEqual(["low2 shed overload"]);
    expect(gate.health().queued).toBe(2);
  });

  it("sheds a waiter at the queue timeout, and as expired when its deadline comes first", async () => {
    const clock = createVirtualClock();
    const gate = new AdmissionGate({ maxConcurrent: 1, maxQueue: 5, queueTimeoutMs: 100 }, clock);
    const l = log();
    gate.enter("normal", 10_000, l.admitted("run"), l.shed("run"));
    gate.enter("normal", 10_000, l.admitted("patient"), l.shed("patient"));
    gate.enter("normal", 40, l.admitted("hurried"), l.shed("hurried"));
    await clock.advance(40);
    expect(l.events).toEqual(["hurried shed expired"]);
    await clock.advance(60);
    expect(l.events).toEqual(["hurried shed expired", "patient shed overload"]);
    expect(clock.pendingTimers).toBe(0);
  });

  it("gives a waiter whose deadline passed nothing: it is shed as expired and the slot goes on", () => {
    let now = 0;
    const clock = { now: () => now, setTimer: () => undefined, clearTimer: () => undefined };
    const gate = new AdmissionGate({ maxConcurrent: 1, maxQueue: 5, queueTimeoutMs: 1_000 }, clock);
    const l = log();
    gate.enter("normal", 10_000, l.admitted("run"), l.shed("run"));
    gate.enter("high", 50, l.admitted("late"), l.shed("late"));
    gate.enter("normal", 10_000, l.admitted("next"), l.shed("next"));
    now = 60;
    gate.release();
    expect(l.events).toEqual(["late shed expired", "next admitted"]);
  });
});

const op: OperationSettings<null> = {
  name: "wait",
  repeatable: true,
  idempotencyKey: null,
  timeout: { attemptMs: null, totalMs: null },
  retry: null,
  hedge: null,
  fallback: null,
};

describe("the ambient abort signal", () => {
  it("aborts calls made inside the scope, together with the caller's own signal", async () => {
    const clock = createVirtualClock();
    const dep = createDependency(
      { name: "b", deadline: null, breaker: null, bulkhead: null, budget: null },
      { clock },
    );
    const inbound = new AbortController();
    const seen: AbortSignal[] = [];
    const call = withDeadlineAndSignal(Deadline.after(10_000, clock), inbound.signal, () =>
      dep.call(op, (ctx) => {
        seen.push(ctx.signal);
        return new Promise<string>((_, reject) =>
          ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason as Error)),
        );
      }),
    );
    const failure = call.catch((error: unknown) => error);
    await clock.advance(5);
    inbound.abort();
    const error = await failure;
    expect(isResilienceError(error, "aborted")).toBe(true);
    expect(seen[0]?.aborted).toBe(true);
  });

  it("costs nothing outside a scope: the caller's signal is passed through as is", () => {
    const own = new AbortController().signal;
    expect(inheritSignal(own)).toBe(own);
    expect(inheritSignal(undefined)).toBeUndefined();
    const scope = new AbortController().signal;
    withDeadlineAndSignal(Deadline.after(100), scope, () => {
      expect(inheritSignal(undefined)).toBe(scope);
      expect(inheritSignal(scope)).toBe(scope);
      const both = inheritSignal(own);
      expect(both).not.toBe(own);
      expect(both?.aborted).toBe(false);
    });
  });
});

class FakeResponse extends EventEmitter implements InboundResponse {
  status: number | undefined;
  statusCode = 200;
  headers: Record<string, string> = {};
  headersSent = false;
  writableFinished = false;
  writeHead(status: number, headers: Record<string, string>) {
    this.status = status;
    this.headers = headers;
    this.headersSent = true;
    return this;
  }
  end() {
    this.writableFinished = true;
    this.emit("close");
    return this;
  }
  destroy() {
    this.emit("close");
    return this;
  }
  override once(event: "close", listener: () => void): this {
    return super.once(event, listener);
  }
}

describe("the node:http adapter (fake request and response)", () => {
  it("refuses a request that arrives with no time left, without running the handler", () => {
    const mw = createInboundMiddleware(service(), { clock: createVirtualClock() });
    let ran = 0;
    const handle = mw.node(() => ran++);
    const res = new FakeResponse();
    handle({ method: "GET", url: "/", headers: { "x-request-timeout-ms": "0" } }, res);
    expect(ran).toBe(0);
    expect(res.status).toBe(504);
    expect(mw.health()).toMatchObject({ admitted: 0, expired: 1, shed: 0 });
  });

  it("runs the handler inside the request's deadline and sheds with the configured status and Retry-After", () => {
    const clock = createVirtualClock();
    const shed: string[] = [];
    const mw = createInboundMiddleware(
      service({ admission: { maxConcurrent: 1, maxQueue: 0, queueTimeoutMs: 0 } }),
      {
        clock,
        onShed: (e) => shed.push(`${e.priority} ${e.reason} ${e.status}`),
      },
    );
    const budgets: number[] = [];
    const open: FakeResponse[] = [];
    const handle = mw.node((_req, res: FakeResponse) => {
      budgets.push(currentDeadline()?.remaining() ?? -1);
      open.push(res);
    });
    handle(
      { method: "GET", url: "/", headers: { "x-request-timeout-ms": "300" } },
      new FakeResponse(),
    );
    const rejected = new FakeResponse();
    handle({ method: "GET", url: "/", headers: {} }, rejected);
    expect(budgets).toEqual([300]);
    expect(rejected.status).toBe(503);
    expect(rejected.headers).toMatchObject({
      "retry-after": "2",
      "content-type": "application/problem+json",
    });
    expect(Number(rejected.headers["content-length"])).toBeGreaterThan(0);
    expect(shed).toEqual(["normal overload 503"]);
    open[0]!.end();
    handle({ method: "GET", url: "/", headers: {} }, new FakeResponse());
    expect(budgets).toEqual([300, 1_000]);
  });

  it("starts a queued request in its own scope, even when another request's code frees the slot", () => {
    const clock = createVirtualClock();
    const mw = createInboundMiddleware(
      service({ admission: { maxConcurrent: 1, maxQueue: 2, queueTimeoutMs: 500 } }),
      { clock },
    );
    const budgets: number[] = [];
    const signals: (AbortSignal | undefined)[] = [];
    const first = new FakeResponse();
    const handle = mw.node((_req, res: FakeResponse) => {
      budgets.push(currentDeadline()?.remaining() ?? -1);
      signals.push(inheritSignal(undefined));
      // the first request answers from inside its own scope, which admits the second one
      if (res === first) res.end();
    });
    const second = new FakeResponse();
    const blocker = new FakeResponse();
    mw.node(() => undefined)({ method: "GET", url: "/", headers: {} }, blocker);
    handle({ method: "GET", url: "/", headers: { "x-request-timeout-ms": "50" } }, first);
    handle({ method: "GET", url: "/", headers: { "x-request-timeout-ms": "400" } }, second);
    blocker.end();
    expect(budgets).toEqual([50, 400]);
    expect(signals[1]).not.toBe(signals[0]);
  });

  it("aborts the request's signal when the client goes away, and frees its slot", () => {
    const clock = createVirtualClock();
    const mw = createInboundMiddleware(
      service({ admission: { maxConcurrent: 1, maxQueue: 0, queueTimeoutMs: 0 } }),
      { clock },
    );
    const signals: (AbortSignal | undefined)[] = [];
    const handle = mw.node(() => signals.push(inheritSignal(undefined)));
    const res = new FakeResponse();
    handle({ method: "GET", url: "/", headers: {} }, res);
    expect(signals[0]?.aborted).toBe(false);
    res.destroy();
    expect(signals[0]?.aborted).toBe(true);
    expect(mw.health().admission).toEqual({ inFlight: 0, queued: 0, maxConcurrent: 1 });
  });
});

describe("adaptive limit (AIMD), in virtual time", () => {
  it("cuts the limit on slow requests down to its minimum and grows it back by about one per limit's worth of fast ones", () => {
    const clock = createVirtualClock();
    const gate = new AdmissionGate(
      {
        maxConcurrent: 10,
        maxQueue: 0,
        queueTimeoutMs: 0,
        reserve: {},
        adaptive: { minLimit: 2, latencyMs: 100, backoff: 0.5 },
      },
      clock,
    );
    const none = () => undefined;
    for (let i = 0; i < 10; i++) expect(gate.enter("normal", 1_000, none, none)).toBe(true);
    for (let i = 0; i < 5; i++) gate.release(250);
    expect(gate.health()).toEqual({ inFlight: 5, queued: 0, maxConcurrent: 2 });
    expect(gate.enter("critical", 1_000, none, none)).toBe(false);
    for (let i = 0; i < 5; i++) gate.release(20);
    expect(gate.health()).toEqual({ inFlight: 0, queued: 0, maxConcurrent: 3 });
    for (let i = 0; i < 3; i++) expect(gate.enter("normal", 1_000, none, none)).toBe(true);
    expect(gate.enter("normal", 1_000, none, none)).toBe(false);
    for (let i = 0; i < 200; i++) {
      gate.release(20);
      gate.enter("normal", 1_000, none, none);
    }
    expect(gate.health().maxConcurrent).toBe(10);
  });

  it("times requests on the middleware's clock and treats a failed response as slow", async () => {
    const clock = createVirtualClock();
    const adaptive = { minLimit: 1, latencyMs: 100, backoff: 0.5 };
    const mw = createInboundMiddleware(
      service({ admission: { maxConcurrent: 4, maxQueue: 0, queueTimeoutMs: 0, adaptive } }),
      { clock },
    );
    const open: FakeResponse[] = [];
    const handle = mw.node((_req, res: FakeResponse) => void open.push(res));
    for (let i = 0; i < 2; i++)
      handle({ method: "GET", url: "/", headers: {} }, new FakeResponse());
    await clock.advance(300);
    open[0]!.end();
    expect(mw.health().admission?.maxConcurrent).toBe(2);
    open[1]!.statusCode = 503;
    open[1]!.end();
    expect(mw.health().admission?.maxConcurrent).toBe(1);
  });
});
