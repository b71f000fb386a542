/**
 * OpenTelemetry for one dependency: the runtime's events as metrics, one span per logical call
 * with a child span per attempt, and log lines for breaker transitions and retry-budget
 * exhaustion. Only projects whose config says `telemetry: opentelemetry` get this file; it is
 * the only generated file that imports `@opentelemetry/api` (a dependency of your project).
 *
 * Names follow the conventions on-call already knows: durations in seconds as in OpenTelemetry's
 * `http.client.request.duration`; retries, hedges and retry delay per call as in gRPC's
 * `grpc.client.call.*` (gRFC A66); one meter-wide `resilience.client.*` namespace in the spirit
 * of Polly's `resilience.*` events. Attributes are bounded: dependency and operation names from
 * the policies, outcomes, error kinds and states; never URLs, ids or payloads.
 * The front door of a service (its inbound middleware) reports under `resilience.server.*`
 * through {@link installInboundOpenTelemetry}.
 * The full table is in resgen's docs/telemetry.md.
 */
import {
  context,
  metrics,
  SpanKind,
  SpanStatusCode,
  trace,
  ValueType,
  type Attributes,
  type BatchObservableResult,
  type Meter,
  type Observable,
  type Span,
  type Tracer,
} from "@opentelemetry/api";
import {
  consoleLogger,
  logEvents,
  type Dependency,
  type InboundEvent,
  type InboundMiddleware,
  type Logger,
  type ResilienceEvent,
} from "../runtime/index.js";

/** What {@link installOpenTelemetry} records with. Every field has a default. */
export interface OpenTelemetryOptions {
  /** Meter of the metrics. Defaults to `metrics.getMeter("resgen")` (the global meter provider). */
  readonly meter?: Meter | undefined;
  /** Tracer of the spans. Defaults to `trace.getTracer("resgen")` (the global tracer provider). */
  readonly tracer?: Tracer | undefined;
  /** Where breaker transitions and retry-budget exhaustion are logged. Defaults to {@link consoleLogger}. */
  readonly logger?: Logger | undefined;
}

/** Attribute names. `error.type` and `http.response.status_code` are OpenTelemetry's own. */
export const ATTR = {
  dependency: "resilience.dependency",
  operation: "resilience.operation",
  outcome: "resilience.outcome",
  errorType: "error.type",
  statusCode: "http.response.status_code",
  attempt: "resilience.attempt",
  hedge: "resilience.attempt.hedge",
  attemptDelay: "resilience.attempt.delay",
  attemptTimeout: "resilience.attempt.timeout",
  timeoutTier: "resilience.timeout.tier",
  verdict: "resilience.verdict",
  /**
   * The endpoint an attempt went to, or whose breaker changed, for a dependency given several
   * (docs/runtime.md, "Endpoints"): at most `endpoints.max` values per dependency, fixed when the
   * client is created. Absent with one endpoint.
   */
  endpoint: "resilience.endpoint",
  breakerState: "resilience.breaker.state",
  breakerPreviousState: "resilience.breaker.previous_state",
  breakerTrigger: "resilience.breaker.trigger",
  bulkheadReason: "resilience.bulkhead.reason",
  bulkheadDirection: "resilience.bulkhead.direction",
  rateLimitReason: "resilience.rate_limit.reason",
  rateLimitSource: "resilience.rate_limit.source",
  deadlineStage: "resilience.deadline.stage",
  deadlineRemaining: "resilience.deadline.remaining",
  fallbackKind: "resilience.fallback.kind",
  reconfigurationOutcome: "resilience.reconfiguration.outcome",
  reconfigurationSource: "resilience.reconfiguration.source",
  retries: "resilience.call.retries",
  hedges: "resilience.call.hedges",
  attempts: "resilience.call.attempts",
  service: "resilience.service",
  priority: "resilience.priority",
  shedReason: "resilience.shed.reason",
  queued: "resilience.admission.queued",
  deadlineHeader: "resilience.deadline.header",
  degraded: "resilience.degraded",
  route: "resilience.route",
  idempotencyOutcome: "resilience.idempotency.outcome",
  failOpen: "resilience.idempotency.fail_open",
  /** The faults the `chaos` option injected into an attempt, joined by `+` (`latency+status`). */
  chaosFault: "resilience.chaos.fault",
} as const;

/** Metric names. */
export const METRIC = {
  callDuration: "resilience.client.call.duration",
  attemptDuration: "resilience.client.attempt.duration",
  callRetries: "resilience.client.call.retries",
  callHedges: "resilience.client.call.hedges",
  callRetryDelay: "resilience.client.call.retry_delay",
  deadlineRemaining: "resilience.client.deadline.remaining",
  deadlineExceeded: "resilience.client.deadline.exceeded",
  budgetExhausted: "resilience.client.retry_budget.exhausted",
  budgetTokens: "resilience.client.retry_budget.tokens",
  breakerState: "resilience.client.breaker.state",
  breakerTransitions: "resilience.client.breaker.transitions",
  breakerRejections: "resilience.client.breaker.rejections",
  bulkheadInFlight: "resilience.client.bulkhead.in_flight",
  bulkheadQueued: "resilience.client.bulkhead.queued",
  bulkheadLimit: "resilience.client.bulkhead.limit",
  bulkheadRejections: "resilience.client.bulkhead.rejections",
  bulkheadLimitChanges: "resilience.client.bulkhead.limit_changes",
  rateLimitRejections: "resilience.client.rate_limit.rejections",
  rateLimitWait: "resilience.client.rate_limit.wait",
  rateLimitPauses: "resilience.client.rate_limit.pauses",
  rateLimitLocalShare: "resilience.client.rate_limit.local_share",
  rateLimitAvailable: "resilience.client.rate_limit.available",
  fallbacks: "resilience.client.fallbacks",
  coalesced: "resilience.client.calls.coalesced",
  chaosInjected: "resilience.client.chaos.injected",
  reconfigurations: "resilience.client.reconfigurations",
  serverAdmitted: "resilience.server.admission.admitted",
  serverQueued: "resilience.server.admission.queued",
  serverShed: "resilience.server.admission.shed",
  serverQueueWait: "resilience.server.admission.queue_wait",
  serverInFlight: "resilience.server.admission.in_flight",
  serverWaiting: "resilience.server.admission.waiting",
  serverLimit: "resilience.server.admission.limit",
  serverDeadlineMalformed: "resilience.server.deadline.malformed",
  serverDegraded: "resilience.server.degraded_responses",
  serverIdempotency: "resilience.server.idempotency",
} as const;

const BREAKER_STATES = ["closed", "open", "half-open", "isolated"] as const;

// OpenTelemetry's recommended boundaries for HTTP durations, in seconds.
const DURATION_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
];
const COUNT_BUCKETS = [1, 2, 3, 4, 5, 10];

interface CallState {
  readonly span: Span;
  /** Attempt spans still open, by attempt number. */
  readonly attempts: Map<number, Span>;
  started: number;
  retries: number;
  hedges: number;
  retryDelayMs: number;
  /** Delay before the next attempt, set by the retry that schedules it. */
  nextDelayMs: number;
}

/**
 * Records the events of `dependency` as OpenTelemetry metrics and spans, and logs breaker
 * transitions and retry-budget exhaustion. Generated clients call it when the project config
 * says `telemetry: opentelemetry`. Returns a function that stops recording.
 */
export function installOpenTelemetry(
  dependency: Dependency,
  options: OpenTelemetryOptions = {},
): () => void {
  const meter = options.meter ?? metrics.getMeter("resgen");
  const tracer = options.tracer ?? trace.getTracer("resgen");
  const log = logEvents(options.logger ?? consoleLogger);
  const name = dependency.name;
  const base: Attributes = { [ATTR.dependency]: name };

  const seconds = (metric: string, description: string) =>
    meter.createHistogram(metric, {
      description,
      unit: "s",
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
  const perCall = (metric: string, description: string, unit: string) =>
    meter.createHistogram(metric, {
      description,
      unit,
      valueType: ValueType.INT,
      advice: { explicitBucketBoundaries: COUNT_BUCKETS },
    });
  const counter = (metric: string, description: string, unit: string) =>
    meter.createCounter(metric, { description, unit, valueType: ValueType.INT });

  const callDuration = seconds(
    METRIC.callDuration,
    "Duration of logical calls, fallback included, by how they ended.",
  );
  const attemptDuration = seconds(
    METRIC.attemptDuration,
    "Duration of attempts (hedged copies included); its count is the attempts by outcome.",
  );
  const callRetries = perCall(
    METRIC.callRetries,
    "Retries per logical call, recorded for calls with at least one.",
    "{retry}",
  );
  const callHedges = perCall(
    METRIC.callHedges,
    "Hedged copies per logical call, recorded for calls with at least one.",
    "{hedge}",
  );
  const callRetryDelay = seconds(
    METRIC.callRetryDelay,
    "Total backoff per logical call, recorded for calls with at least one retry.",
  );
  const deadlineRemaining = seconds(
    METRIC.deadlineRemaining,
    "Time left before the deadline when a call starts (calls with a deadline).",
  );
  const deadlineExceeded = counter(
    METRIC.deadlineExceeded,
    "Calls or retries the deadline stopped, by stage.",
    "{call}",
  );
  const budgetExhausted = counter(
    METRIC.budgetExhausted,
    "Retries and hedges refused by the retry budget.",
    "{refusal}",
  );
  const breakerTransitions = counter(
    METRIC.breakerTransitions,
    "Circuit breaker state changes, by new and previous state.",
    "{transition}",
  );
  const breakerRejections = counter(
    METRIC.breakerRejections,
    "Attempts the circuit breaker refused without calling the dependency.",
    "{attempt}",
  );
  const bulkheadRejections = counter(
    METRIC.bulkheadRejections,
    "Calls the bulkhead turned away, by reason.",
    "{call}",
  );
  const bulkheadLimitChanges = counter(
    METRIC.bulkheadLimitChanges,
    "Times an adaptive bulkhead moved its limit, by direction (up or down).",
    "{change}",
  );
  const rateLimitRejections = counter(
    METRIC.rateLimitRejections,
    "Calls (or retries) the rate limit turned away, by reason (rate, or a server's pause).",
    "{call}",
  );
  const rateLimitWait = seconds(
    METRIC.rateLimitWait,
    "Time attempts waited for a rate-limit permit, beyond any backoff.",
  );
  const rateLimitPauses = counter(
    METRIC.rateLimitPauses,
    "Pauses a server's response imposed on the rate limit, by the header that asked for it.",
    "{pause}",
  );
  const rateLimitLocalShare = counter(
    METRIC.rateLimitLocalShare,
    "Permits a rate limit the replicas share took from this replica's share of the rate, because the store could not answer.",
    "{permit}",
  );
  const fallbacks = counter(
    METRIC.fallbacks,
    "Fallbacks served, by fallback kind and the failure they covered.",
    "{call}",
  );

  const coalesced = counter(
    METRIC.coalesced,
    "Calls that joined an identical call in flight instead of sending their own (coalesce).",
    "{call}",
  );
  const chaosInjected = counter(
    METRIC.chaosInjected,
    "Faults the chaos option injected into attempts, by fault (docs/runtime.md, Chaos).",
    "{fault}",
  );

  const reconfigurations = counter(
    METRIC.reconfigurations,
    "Reconfigurations of the client's settings, applied or refused, by where they came from.",
    "{change}",
  );

  const breakerState = meter.createObservableGauge(METRIC.breakerState, {
    description: "1 for the circuit breaker's current state, 0 for the others.",
    unit: "1",
    valueType: ValueType.INT,
  });
  const budgetTokens = meter.createObservableGauge(METRIC.budgetTokens, {
    description: "Tokens in the retry budget.",
    unit: "{token}",
  });
  const bulkheadInFlight = meter.createObservableUpDownCounter(METRIC.bulkheadInFlight, {
    description: "Logical calls holding a bulkhead permit.",
    unit: "{call}",
    valueType: ValueType.INT,
  });
  const bulkheadQueued = meter.createObservableUpDownCounter(METRIC.bulkheadQueued, {
    description: "Calls waiting in the bulkhead queue.",
    unit: "{call}",
    valueType: ValueType.INT,
  });
  const bulkheadLimit = meter.createObservableUpDownCounter(METRIC.bulkheadLimit, {
    description: "Bulkhead permits (maxConcurrent).",
    unit: "{call}",
    valueType: ValueType.INT,
  });
  const rateLimitAvailable = meter.createObservableGauge(METRIC.rateLimitAvailable, {
    description: "Permits of the dependency's rate limit free right now.",
    unit: "{permit}",
    valueType: ValueType.INT,
  });
  const observables: Observable[] = [
    breakerState,
    budgetTokens,
    bulkheadInFlight,
    bulkheadQueued,
    bulkheadLimit,
    rateLimitAvailable,
  ];
  const observe = (result: BatchObservableResult): void => {
    const health = dependency.health();
    if (health.breaker !== null) {
      const current = health.breaker.state;
      for (const state of BREAKER_STATES)
        result.observe(breakerState, state === current ? 1 : 0, {
          ...base,
          [ATTR.breakerState]: state,
        });
    }
    // several endpoints: a breaker each, labelled by its endpoint
    for (const endpoint of health.endpoints ?? []) {
      const current = endpoint.breaker?.state;
      if (current === undefined) continue;
      for (const state of BREAKER_STATES)
        result.observe(breakerState, state === current ? 1 : 0, {
          ...base,
          [ATTR.breakerState]: state,
          [ATTR.endpoint]: endpoint.endpoint,
        });
    }
    if (health.budget !== null) result.observe(budgetTokens, health.budget.tokens, base);
    if (health.bulkhead !== null) {
      result.observe(bulkheadInFlight, health.bulkhead.inFlight, base);
      result.observe(bulkheadQueued, health.bulkhead.queued, base);
      result.observe(bulkheadLimit, health.bulkhead.maxConcurrent, base);
    }
    if (health.rateLimit !== undefined)
      result.observe(rateLimitAvailable, health.rateLimit.available, base);
  };
  meter.addBatchObservableCallback(observe, observables);

  const calls = new Map<number, CallState>();
  const attrs = (event: ResilienceEvent): Attributes => ({
    [ATTR.dependency]: event.dependency,
    [ATTR.operation]: event.operation,
  });

  const observer = (event: ResilienceEvent): void => {
    switch (event.type) {
      case "call-start": {
        const attributes = attrs(event);
        if (Number.isFinite(event.deadlineMs)) {
          const remaining = Math.max(0, event.deadlineMs) / 1000;
          deadlineRemaining.record(remaining, attributes);
          attributes[ATTR.deadlineRemaining] = remaining;
        }
        const span = tracer.startSpan(
          `${event.dependency}.${event.operation}`,
          { kind: SpanKind.INTERNAL, attributes },
          context.active(),
        );
        calls.set(event.call, {
          span,
          attempts: new Map(),
          started: 0,
          retries: 0,
          hedges: 0,
          retryDelayMs: 0,
          nextDelayMs: 0,
        });
        return;
      }
      case "call-end": {
        const attributes = attrs(event);
        attributes[ATTR.outcome] = event.outcome;
        if (event.error !== undefined) attributes[ATTR.errorType] = event.error.kind;
        callDuration.record(event.durationMs / 1000, attributes);
        const state = calls.get(event.call);
        if (state === undefined) return;
        calls.delete(event.call);
        const shared = attrs(event);
        if (state.retries > 0) {
          callRetries.record(state.retries, shared);
          callRetryDelay.record(state.retryDelayMs / 1000, shared);
        }
        if (state.hedges > 0) callHedges.record(state.hedges, shared);
        for (const span of state.attempts.values()) span.end();
        state.span.setAttributes({
          ...attributes,
          [ATTR.attempts]: state.started,
          [ATTR.retries]: state.retries,
          [ATTR.hedges]: state.hedges,
        });
        if (event.outcome === "failure")
          state.span.setStatus({
            code: SpanStatusCode.ERROR,
            message: event.error?.kind ?? "error",
          });
        state.span.end();
        return;
      }
      case "attempt-start": {
        const state = calls.get(event.call);
        if (state === undefined) return;
        state.started++;
        const attributes: Attributes = {
          ...attrs(event),
          [ATTR.attempt]: event.attempt,
          [ATTR.hedge]: event.hedge,
        };
        if (event.endpoint !== undefined) attributes[ATTR.endpoint] = event.endpoint;
        if (!event.hedge) {
          attributes[ATTR.attemptDelay] = state.nextDelayMs / 1000;
          state.nextDelayMs = 0;
        }
        if (Number.isFinite(event.timeoutMs))
          attributes[ATTR.attemptTimeout] = Math.max(0, event.timeoutMs) / 1000;
        const parent = trace.setSpan(context.active(), state.span);
        state.attempts.set(
          event.attempt,
          tracer.startSpan(
            `${event.dependency}.${event.operation} attempt`,
            { kind: SpanKind.INTERNAL, attributes },
            parent,
          ),
        );
        return;
      }
      case "attempt-end": {
        const attributes: Attributes = {
          ...attrs(event),
          [ATTR.outcome]: event.outcome,
          [ATTR.hedge]: event.hedge,
        };
        // what the attempt counted as: success, transient, failure or ignore (docs/runtime.md)
        if (event.verdict !== undefined) attributes[ATTR.verdict] = event.verdict;
        if (event.endpoint !== undefined) attributes[ATTR.endpoint] = event.endpoint;
        // an injected fault's attempt is told apart, so a drill never passes for the dependency
        if (event.injected !== undefined) attributes[ATTR.chaosFault] = event.injected.join("+");
        const error = event.error;
        if (error !== undefined) {
          attributes[ATTR.errorType] = error.kind;
          if (error.status !== undefined) attributes[ATTR.statusCode] = error.status;
          if (error.tier !== undefined) attributes[ATTR.timeoutTier] = error.tier;
        }
        attemptDuration.record(event.durationMs / 1000, attributes);
        const state = calls.get(event.call);
        const span = state?.attempts.get(event.attempt);
        if (state === undefined || span === undefined) return;
        state.attempts.delete(event.attempt);
        span.setAttributes(attributes);
        if (event.outcome === "failure" || event.outcome === "timeout")
          span.setStatus({ code: SpanStatusCode.ERROR, message: error?.kind ?? event.outcome });
        span.end();
        return;
      }
      case "retry-scheduled": {
        const state = calls.get(event.call);
        if (state === undefined) return;
        state.retries++;
        state.retryDelayMs += event.delayMs;
        state.nextDelayMs = event.delayMs;
        state.span.addEvent("retry", {
          [ATTR.attempt]: event.attempt,
          [ATTR.attemptDelay]: event.delayMs / 1000,
          [ATTR.errorType]: event.reason,
          "resilience.retry.retry_after": event.retryAfter,
        });
        return;
      }
      case "hedge-launched": {
        const state = calls.get(event.call);
        if (state === undefined) return;
        state.hedges++;
        state.span.addEvent("hedge", { [ATTR.attempt]: event.attempt });
        return;
      }
      case "budget-exhausted":
        budgetExhausted.add(1, attrs(event));
        log(event);
        return;
      case "breaker-transition":
        breakerTransitions.add(1, {
          ...base,
          [ATTR.breakerState]: event.to,
          [ATTR.breakerPreviousState]: event.from,
          // isolate(), disposing the last isolation and reset() are `manual` (docs/telemetry.md)
          [ATTR.breakerTrigger]: event.manual === true ? "manual" : "automatic",
          ...(event.endpoint === undefined ? {} : { [ATTR.endpoint]: event.endpoint }),
        });
        log(event);
        return;
      case "breaker-rejected":
        breakerRejections.add(1, { ...attrs(event), [ATTR.breakerState]: event.state });
        return;
      case "bulkhead-rejected":
        bulkheadRejections.add(1, { ...attrs(event), [ATTR.bulkheadReason]: event.reason });
        return;
      case "bulkhead-queued":
        return;
      case "bulkhead-limit-changed":
        // the dependency's limit, whichever operation's call closed the window
        bulkheadLimitChanges.add(1, {
          ...base,
          [ATTR.bulkheadDirection]: event.limit > event.previous ? "up" : "down",
        });
        return;
      case "rate-limit-rejected":
        rateLimitRejections.add(1, { ...attrs(event), [ATTR.rateLimitReason]: event.reason });
        return;
      case "rate-limit-waited":
        rateLimitWait.record(event.waitMs / 1_000, attrs(event));
        return;
      case "rate-limit-paused":
        rateLimitPauses.add(1, { ...attrs(event), [ATTR.rateLimitSource]: event.source });
        return;
      case "rate-limit-local-share":
        rateLimitLocalShare.add(1, attrs(event));
        return;
      case "deadline-exceeded":
        deadlineExceeded.add(1, { ...attrs(event), [ATTR.deadlineStage]: event.stage });
        return;
      case "call-coalesced":
        coalesced.add(1, attrs(event));
        return;
      case "chaos-injected":
        chaosInjected.add(1, { ...attrs(event), [ATTR.chaosFault]: event.fault });
        return;
      case "reconfigured":
      case "reconfigure-refused":
        reconfigurations.add(1, {
          ...base,
          [ATTR.reconfigurationOutcome]: event.type === "reconfigured" ? "applied" : "refused",
          [ATTR.reconfigurationSource]: event.source,
        });
        log(event);
        return;
      case "fallback-served":
        fallbacks.add(1, {
          ...attrs(event),
          [ATTR.fallbackKind]: event.fallback,
          [ATTR.errorType]: event.reason,
        });
        return;
    }
  };
  const unsubscribe = dependency.subscribe((event) => {
    observer(event);
    // retries and hedges end an exhaustion episode in the log
    if (event.type === "retry-scheduled" || event.type === "hedge-launched") log(event);
  });

  return () => {
    unsubscribe();
    meter.removeBatchObservableCallback(observe, observables);
    for (const state of calls.values()) state.span.end();
    calls.clear();
  };
}

/**
 * Records what the front door of a service does as OpenTelemetry metrics: requests admitted,
 * queued and shed by priority (and, for shed ones, why), the time spent in the queue, unreadable
 * deadline headers, and the admission gate's occupancy. Returns a function that stops recording.
 * Only `meter` of the options is used; the middleware logs unreadable headers itself.
 */
export function installInboundOpenTelemetry(
  middleware: InboundMiddleware,
  options: Pick<OpenTelemetryOptions, "meter"> = {},
): () => void {
  const meter = options.meter ?? metrics.getMeter("resgen");
  const base: Attributes = { [ATTR.service]: middleware.settings.name };
  const counter = (metric: string, description: string) =>
    meter.createCounter(metric, { description, unit: "{request}", valueType: ValueType.INT });
  const gauge = (metric: string, description: string) =>
    meter.createObservableUpDownCounter(metric, {
      description,
      unit: "{request}",
      valueType: ValueType.INT,
    });

  const admitted = counter(
    METRIC.serverAdmitted,
    "Requests admitted, by priority and whether they waited in the queue.",
  );
  const queued = counter(
    METRIC.serverQueued,
    "Requests that found every slot they may take busy and waited in the queue, by priority.",
  );
  const shed = counter(
    METRIC.serverShed,
    "Requests refused without running the handler, by priority, reason and status.",
  );
  const malformed = counter(
    METRIC.serverDeadlineMalformed,
    "Requests whose deadline header could not be read (they got the edge deadline), by header.",
  );
  const degraded = counter(
    METRIC.serverDegraded,
    "Responses built with a fallback's answer, by dependency that answered degraded.",
  );
  const idempotency = counter(
    METRIC.serverIdempotency,
    "Requests of idempotent routes, by route and outcome (executed, replayed, mismatch, in-progress, store-unavailable, ...).",
  );
  const queueWait = meter.createHistogram(METRIC.serverQueueWait, {
    description:
      "Time requests spent in the queue, by priority and whether they were admitted or shed.",
    unit: "s",
    advice: { explicitBucketBoundaries: DURATION_BUCKETS },
  });
  const inFlight = gauge(METRIC.serverInFlight, "Requests holding a slot.");
  const waiting = gauge(METRIC.serverWaiting, "Requests waiting in the queue.");
  const limit = gauge(
    METRIC.serverLimit,
    "Slots: maxConcurrent, or the adaptive limit's current value.",
  );
  const observables: Observable[] = [inFlight, waiting, limit];
  const observe = (result: BatchObservableResult): void => {
    const admission = middleware.health().admission;
    if (admission === null) return;
    result.observe(inFlight, admission.inFlight, base);
    result.observe(waiting, admission.queued, base);
    result.observe(limit, admission.maxConcurrent, base);
  };
  meter.addBatchObservableCallback(observe, observables);

  const unsubscribe = middleware.subscribe((event: InboundEvent) => {
    switch (event.type) {
      case "request-admitted": {
        const attributes: Attributes = {
          [ATTR.service]: event.service,
          [ATTR.priority]: event.priority,
        };
        admitted.add(1, { ...attributes, [ATTR.queued]: event.queued });
        if (event.queued)
          queueWait.record(event.waitMs / 1000, { ...attributes, [ATTR.outcome]: "admitted" });
        return;
      }
      case "request-queued":
        queued.add(1, { [ATTR.service]: event.service, [ATTR.priority]: event.priority });
        return;
      case "request-shed": {
        const attributes: Attributes = {
          [ATTR.service]: event.service,
          [ATTR.priority]: event.priority,
        };
        shed.add(1, {
          ...attributes,
          [ATTR.shedReason]: event.cause,
          [ATTR.statusCode]: event.status,
        });
        if (event.queued)
          queueWait.record(event.waitMs / 1000, { ...attributes, [ATTR.outcome]: "shed" });
        return;
      }
      case "deadline-malformed":
        malformed.add(1, { [ATTR.service]: event.service, [ATTR.deadlineHeader]: event.header });
        return;
      case "request-degraded":
        // emitted as the response starts, in the request's context: the active span is the server span
        trace.getActiveSpan()?.setAttribute(ATTR.degraded, [...event.dependencies]);
        for (const dependency of event.dependencies)
          degraded.add(1, { [ATTR.service]: event.service, [ATTR.dependency]: dependency });
        return;
      case "request-idempotency":
        idempotency.add(1, {
          [ATTR.service]: event.service,
          [ATTR.route]: event.route,
          [ATTR.idempotencyOutcome]: event.outcome,
          ...(event.failOpen === undefined ? {} : { [ATTR.failOpen]: event.failOpen }),
        });
        return;
    }
  });

  return () => {
    unsubscribe();
    meter.removeBatchObservableCallback(observe, observables);
  };
}
