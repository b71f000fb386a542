// Inbound middleware for Node, Express and Fastify: deadlines from headers, admission, shedding and
// degraded responses.
import {
  AdmissionGate,
  type AdmissionHealth,
  type AdmissionSettings,
  type Priority,
  type ShedCause,
  type ShedReason,
} from "./admission.js";
import { systemClock, type Clock } from "./clock.js";
import { Deadline, withRequestScope, type DeadlineFormat } from "./deadline.js";
import { abortedError } from "./errors.js";
import {
  IdempotentRoutes,
  type IdempotencyEvent,
  type Respond,
  type RouteSettings,
} from "./idempotent-route.js";
import { consoleLogger, type Logger } from "./logger.js";
import { problemAnswer, type ProblemAnswer } from "./problem.js";
import {
  compilePath,
  pathMatches,
  pathReadings,
  type PathPattern,
  type PathReading,
} from "./route-path.js";
import { createMemoryStore, type SharedStore } from "./store.js";

/** How a service reads, bounds and stamps the deadlines of the requests it receives. */
export interface InboundDeadlineSettings {
  /** Milliseconds given to a request that arrives without a deadline (the edge deadline). */
  readonly edgeMs: number;
  /** Most milliseconds a caller may ask for; longer budgets are clamped to it. */
  readonly maxMs: number;
  /** Header carrying the caller's remaining time, lowercase (e.g. `x-request-timeout-ms`). */
  readonly header: string;
  /** Encoding of {@link InboundDeadlineSettings.header}. */
  readonly format: DeadlineFormat;
  /** Also read gRPC's `grpc-timeout` header when the configured one is absent. */
  readonly grpcTimeout: boolean;
  /** Status of the answer to a request whose deadline has already passed (e.g. 504). */
  readonly expiredStatus: number;
  /**
   * Least milliseconds a request needs to be handled (`deadline.minBudget`): a request with less
   * left is refused like a spent one, with `expiredStatus` (docs/services.md). Omitted: 0.
   */
  readonly minBudgetMs?: number | undefined;
}

/**
 * Assigns a priority to the requests it matches. Every field set must match; the first rule that
 * matches wins. `null` leaves a field out.
 */
export interface PriorityRule {
  readonly priority: Priority;
  /** HTTP method, uppercase; `null` for any. */
  readonly method: string | null;
  /**
   * Path without the query: exact, or a prefix when it ends in `*`; `null` for any. Matched on
   * every way a router may read the request path (docs/services.md, "How routes match").
   */
  readonly path: string | null;
  /** Header name, lowercase; `null` for none. */
  readonly header: string | null;
  /** Value the header must have; `null` for any value (the header must be present). */
  readonly value: string | null;
}

/** The answer to a request shed for overload. */
export interface RejectionSettings {
  /** 503 (the service is overloaded) or 429 (the caller should slow down). */
  readonly status: number;
  /** Seconds sent in `Retry-After`. */
  readonly retryAfterS: number;
}

/**
 * Everything the inbound middleware of one service needs. Plain data, so generated code can emit
 * literals.
 */
export interface ServiceSettings {
  /** Service name, for errors and health reports. */
  readonly name: string;
  readonly deadline: InboundDeadlineSettings;
  /** Concurrency limit and queue; `null` admits everything. */
  readonly admission: AdmissionSettings | null;
  readonly rejection: RejectionSettings;
  /** Priority of requests no rule matches. */
  readonly defaultPriority: Priority;
  readonly priorities: readonly PriorityRule[];
  /**
   * Header (lowercase) added to a response when dependencies answered with a fallback while the
   * request was handled, listing them (`responses.degradedHeader`, docs/services.md). Absent or
   * `null`: no header.
   */
  readonly degradedHeader?: string | null | undefined;
  /**
   * Routes with settings of their own (`routes:`, docs/services.md): first match wins. Absent:
   * none.
   */
  readonly routes?: readonly RouteSettings[] | undefined;
}

/** The parts of an inbound request the middleware reads (Node's `IncomingMessage` has them). */
export interface InboundRequest {
  readonly method?: string | undefined;
  readonly url?: string | undefined;
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
}

/** The parts of a response the middleware uses (Node's `ServerResponse` has them). */
export interface InboundResponse {
  readonly headersSent: boolean;
  readonly writableFinished: boolean;
  writeHead(status: number, headers: Record<string, string>): unknown;
  end(chunk?: Uint8Array): unknown;
  once(event: "close", listener: () => void): unknown;
  destroy(error?: Error): unknown;
}

/** A request the middleware refused, as reported to {@link InboundOptions.onShed}. */
export interface ShedEvent {
  readonly service: string;
  readonly reason: ShedReason;
  readonly priority: Priority;
  readonly status: number;
}

/**
 * What the front door did with a request, for metrics (the telemetry adapter counts them; see
 * docs/services.md). `waitMs` is the time spent in the queue (0 when
 * admitted or refused at once).
 */
export type InboundEvent =
  | {
      readonly type: "request-admitted";
      readonly service: string;
      readonly priority: Priority;
      readonly queued: boolean;
      readonly waitMs: number;
    }
  | { readonly type: "request-queued"; readonly service: string; readonly priority: Priority }
  | {
      readonly type: "request-shed";
      readonly service: string;
      readonly priority: Priority;
      readonly reason: ShedReason;
      /**
       * `queue-full`, `evicted`, `queue-timeout` (reason `overload`) or `expired` (on arrival or in
       * the queue).
       */
      readonly cause: ShedCause;
      readonly status: number;
      readonly queued: boolean;
      readonly waitMs: number;
    }
  | {
      /**
       * The response of an admitted request started (its headers were written) after dependencies
       * had answered with a fallback: those dependencies, in the order they degraded.
       */
      readonly type: "request-degraded";
      readonly service: string;
      readonly dependencies: readonly string[];
    }
  | {
      /**
       * A request refused with 400 without running the handler: its path can be read as more
       * than one path, and the readings match different routes (docs/services.md).
       */
      readonly type: "request-refused";
      readonly service: string;
      readonly reason: "ambiguous-path";
      readonly status: number;
    }
  | {
      /** A deadline header no value of which could be read: the request got the edge deadline. */
      readonly type: "deadline-malformed";
      readonly service: string;
      /** The header, lowercase (the configured one, or `grpc-timeout`). */
      readonly header: string;
    }
  | IdempotencyEvent;

/**
 * Receives every {@link InboundEvent}. Errors it throws are swallowed: they never break a request.
 */
export type InboundObserver = (event: InboundEvent) => void;

/** Injected services and hooks. Every field is optional. */
export interface InboundOptions {
  /** Time and timers. Defaults to {@link systemClock}. */
  readonly clock?: Clock | undefined;
  /** Called for every refused request (after the answer is written). */
  readonly onShed?: ((event: ShedEvent) => void) | undefined;
  /**
   * Receives every {@link InboundEvent}; more can subscribe with
   * {@link InboundMiddleware.subscribe}.
   */
  readonly observer?: InboundObserver | undefined;
  /**
   * Where unreadable deadline headers are logged (a warning, at most one line a minute with the
   * count since the last). Defaults to {@link consoleLogger}.
   */
  readonly logger?: Logger | undefined;
  /**
   * Where idempotent routes keep their keys and responses (docs/store.md). Required when a route
   * declares `store: redis`, and then a Redis store; otherwise defaults to a memory store.
   */
  readonly store?: SharedStore | undefined;
}

/** Counters and occupancy of the middleware. */
export interface InboundHealth {
  readonly name: string;
  /** Requests run. */
  readonly admitted: number;
  /** Requests shed for overload. */
  readonly shed: number;
  /** Requests refused because their deadline had passed (on arrival or in the queue). */
  readonly expired: number;
  readonly admission: AdmissionHealth | null;
}

/** Express's middleware signature, structurally: no dependency on Express. */
export type ExpressMiddleware<Req extends InboundRequest, Res extends InboundResponse> = (
  req: Req,
  res: Res,
  next: (error?: unknown) => void,
) => void;

/** What the Fastify adapter needs of a Fastify request and reply. */
export interface FastifyRequestLike {
  readonly raw: InboundRequest;
}
export interface FastifyReplyLike {
  readonly raw: InboundResponse;
  hijack(): unknown;
}
type FastifyHook = (
  request: FastifyRequestLike,
  reply: FastifyReplyLike,
  done: (error?: Error) => void,
) => void;
/** What the Fastify adapter needs of a Fastify instance. */
export interface FastifyLike {
  addHook(name: "onRequest" | "preHandler", hook: FastifyHook): unknown;
}

/** Inbound middleware of one service, with adapters for node:http, Express and Fastify. */
export interface InboundMiddleware {
  readonly settings: ServiceSettings;
  /**
   * Wraps a `node:http` request handler: the handler runs only if the request is admitted, inside
   * the request's deadline and abort signal, so every generated client call it makes inherits both.
   */
  node<Req extends InboundRequest, Res extends InboundResponse>(
    handler: (req: Req, res: Res) => unknown,
  ): (req: Req, res: Res) => void;
  /**
   * Express middleware. Mount it before the routes and before body parsers, so shedding costs no
   * parsing. Body parsers read the body on stream events, which lose the request's async context:
   * mount the same middleware again after them, where it only re-enters the request's scope.
   */
  express<Req extends InboundRequest, Res extends InboundResponse>(): ExpressMiddleware<Req, Res>;
  /**
   * Installs the Fastify hooks: admission and deadline in `onRequest` (before body parsing), the
   * request's scope around the handler in `preHandler`.
   */
  fastify(app: FastifyLike): void;
  /** Counters and occupancy. */
  health(): InboundHealth;
  /** Adds an observer of {@link InboundEvent}s; returns a function that removes it again. */
  subscribe(observer: InboundObserver): () => void;
}

/**
 * The caller's remaining time from the request headers, in milliseconds: the configured header,
 * else `grpc-timeout` (when enabled), clamped to `maxMs`; `edgeMs` when neither is present or
 * readable. With several values (a repeated header, or one joined with commas) the smallest
 * readable one wins. 0 means the caller's time is already spent: a value that is negative or
 * under 1 ms.
 */
export function inboundBudget(
  settings: InboundDeadlineSettings,
  headers: InboundRequest["headers"],
): number {
  return clampBudget(settings, readBudget(settings, headers));
}

// undefined: no deadline header; NaN: present, but no value readable
function readBudget(
  settings: InboundDeadlineSettings,
  headers: InboundRequest["headers"],
): number | undefined {
  const ms = read(headers[settings.header], settings.format);
  if (
    (ms === undefined || Number.isNaN(ms)) &&
    settings.grpcTimeout &&
    settings.header !== "grpc-timeout"
  ) {
    const grpc = read(headers["grpc-timeout"], "grpc-timeout");
    if (grpc !== undefined && (ms === undefined || !Number.isNaN(grpc))) return grpc;
  }
  return ms;
}

function clampBudget(settings: InboundDeadlineSettings, ms: number | undefined): number {
  if (ms === undefined || Number.isNaN(ms)) return Math.min(settings.edgeMs, settings.maxMs);
  return ms < settings.maxMs ? ms : settings.maxMs;
}

function read(
  value: string | readonly string[] | undefined,
  format: DeadlineFormat,
): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "string") return readList(value, format);
  let best = NaN;
  for (const text of value) best = smallest(best, readList(text, format));
  return best;
}

function smallest(a: number, b: number): number {
  return Number.isNaN(a) ? b : Number.isNaN(b) || a <= b ? a : b;
}

// Node joins a repeated header with ", ": every value counts, and the smallest readable one wins
function readList(text: string, format: DeadlineFormat): number {
  if (!text.includes(",")) return readOne(text, format);
  let best = NaN;
  for (const part of text.split(",")) best = smallest(best, readOne(part, format));
  return best;
}

const MS_VALUE = /^-?\d{1,15}(\.\d+)?$/;
const GRPC_VALUE = /^(-?)(\d{1,8})([HMSmun])$/;
const GRPC_UNIT_MS: Readonly<Record<string, number>> = {
  H: 3_600_000,
  M: 60_000,
  S: 1_000,
  m: 1,
  u: 1e-3,
  n: 1e-6,
};

// milliseconds, 0 for a spent budget (negative, or under 1 ms), NaN when unreadable
function readOne(raw: string, format: DeadlineFormat): number {
  const text = raw.trim();
  let ms: number;
  if (format === "ms") {
    if (!MS_VALUE.test(text)) return NaN;
    ms = Number(text);
  } else {
    const match = GRPC_VALUE.exec(text);
    if (match === null) return NaN;
    // the pattern admits only the units the table has
    const unit = GRPC_UNIT_MS[match[3] ?? ""];
    if (unit === undefined) return NaN;
    ms = match[1] === "-" ? 0 : Number(match[2]) * unit;
  }
  return ms < 1 ? 0 : ms;
}

const RANK: Readonly<Record<Priority, number>> = { critical: 3, high: 2, normal: 1, low: 0 };
const rulePatterns = new WeakMap<readonly PriorityRule[], readonly (PathPattern | null)[]>();

// the rules' paths, compiled once per rule list; null for a rule without a path
function patternsOf(rules: readonly PriorityRule[]): readonly (PathPattern | null)[] {
  let patterns = rulePatterns.get(rules);
  if (patterns === undefined) {
    patterns = rules.map((rule) => (rule.path === null ? null : compilePath(rule.path)));
    rulePatterns.set(rules, patterns);
  }
  return patterns;
}

/**
 * The priority of a request: the first matching rule's, else the default. A path a router may
 * read in several ways gets the lowest priority of its readings, so that no spelling of a path
 * escapes a rule that lowers it, nor claims one that raises it (docs/services.md, "How routes
 * match").
 */
export function priorityOf(settings: ServiceSettings, req: InboundRequest): Priority {
  const rules = settings.priorities;
  if (rules.length === 0) return settings.defaultPriority;
  const patterns = patternsOf(rules);
  return lowestPriority(
    settings,
    req,
    patterns,
    patterns.some((p) => p !== null) ? pathReadings(req.url ?? "/") : NO_READINGS,
  );
}

const NO_READINGS: readonly PathReading[] = [{ path: "/", folded: true }];

// readings null: the path was too costly to read every way, so it may be any path
function lowestPriority(
  settings: ServiceSettings,
  req: InboundRequest,
  patterns: readonly (PathPattern | null)[],
  readings: readonly PathReading[] | null,
): Priority {
  if (readings === null) {
    let lowest = settings.defaultPriority;
    settings.priorities.forEach((rule, i) => {
      if (patterns[i] !== null && RANK[rule.priority] < RANK[lowest]) lowest = rule.priority;
    });
    return lowest;
  }
  let lowest: Priority | undefined;
  // Express and Fastify run a GET route's handler for HEAD: a HEAD request is read as both
  const methods = req.method === "HEAD" ? HEAD_METHODS : [req.method];
  for (const method of methods)
    for (const reading of readings) {
      const priority = readingPriority(settings, req, method, patterns, reading);
      if (lowest === undefined || RANK[priority] < RANK[lowest]) lowest = priority;
    }
  return lowest ?? settings.defaultPriority;
}

const HEAD_METHODS = ["HEAD", "GET"];

function readingPriority(
  settings: ServiceSettings,
  req: InboundRequest,
  method: string | undefined,
  patterns: readonly (PathPattern | null)[],
  reading: PathReading,
): Priority {
  const rules = settings.priorities;
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i] as PriorityRule;
    if (rule.method !== null && rule.method !== method) continue;
    const pattern = patterns[i] ?? null;
    if (pattern !== null && !pathMatches(pattern, reading)) continue;
    if (rule.header !== null) {
      const value = req.headers[rule.header];
      if (value === undefined) continue;
      if (rule.value !== null && (typeof value === "string" ? value : value[0]) !== rule.value)
        continue;
    }
    return rule.priority;
  }
  return settings.defaultPriority;
}

const NO_BODY = "0";
const SCOPE = Symbol.for("resgen.inbound.scope");

interface Scope {
  readonly deadline: Deadline;
  readonly signal: AbortSignal;
  /** Dependencies that answered degraded; only when a header or an observer reports them. */
  readonly degraded: Set<string> | undefined;
}
type Scoped = { [SCOPE]?: Scope };

class Inbound implements InboundMiddleware {
  readonly settings: ServiceSettings;
  readonly #clock: Clock;
  readonly #gate: AdmissionGate | null;
  readonly #onShed: ((event: ShedEvent) => void) | undefined;
  // built once: a rejection writes these and nothing else
  readonly #overload: ProblemAnswer;
  readonly #expired: ProblemAnswer;
  #admitted = 0;
  #shed = 0;
  #expiredCount = 0;
  #observers: readonly InboundObserver[] = [];
  readonly #logger: Logger;
  // unreadable deadline headers since the last log line, and when that line was written
  #malformed = 0;
  #loggedAt = -Infinity;
  readonly #routes: IdempotentRoutes | null;
  // the priority rules' compiled paths; whether any rule needs the request's path read
  readonly #patterns: readonly (PathPattern | null)[];
  readonly #readsPath: boolean;
  readonly #ambiguous = problemAnswer("ambiguous-path", 400);

  constructor(settings: ServiceSettings, options: InboundOptions) {
    this.settings = settings;
    this.#clock = options.clock ?? systemClock;
    this.#gate =
      settings.admission === null ? null : new AdmissionGate(settings.admission, this.#clock);
    this.#onShed = options.onShed;
    this.#logger = options.logger ?? consoleLogger;
    if (options.observer !== undefined) this.subscribe(options.observer);
    this.#routes = idempotentRoutes(settings, options, this.#clock, (event) => {
      this.#emit(event);
    });
    this.#patterns = patternsOf(settings.priorities);
    this.#readsPath = this.#routes !== null || this.#patterns.some((p) => p !== null);
    this.#overload = problemAnswer(
      "overloaded",
      settings.rejection.status,
      Math.max(0, Math.ceil(settings.rejection.retryAfterS)),
    );
    this.#expired = problemAnswer("deadline-exceeded", settings.deadline.expiredStatus);
  }

  subscribe(observer: InboundObserver): () => void {
    this.#observers = [...this.#observers, observer];
    return () => {
      this.#observers = this.#observers.filter((o) => o !== observer);
    };
  }

  #emit(event: InboundEvent): void {
    for (const observer of this.#observers) {
      try {
        observer(event);
      } catch {
        // an observer's bug must not break the request
      }
    }
  }

  // an unreadable deadline header: counted, and logged at most once a minute
  #reportMalformed(req: InboundRequest, now: number): void {
    const deadline = this.settings.deadline;
    const header = req.headers[deadline.header] !== undefined ? deadline.header : "grpc-timeout";
    if (this.#observers.length > 0)
      this.#emit({ type: "deadline-malformed", service: this.settings.name, header });
    this.#malformed++;
    if (now - this.#loggedAt < 60_000) return;
    const raw = req.headers[header];
    const value = (typeof raw === "string" ? raw : (raw ?? []).join(", "))
      .slice(0, 64)
      .replace(/[^\x20-\x7e]/g, "?");
    try {
      this.#logger.warn(
        `${this.settings.name}: unreadable ${header} header, the request gets the edge deadline`,
        {
          event: "resilience.inbound.deadline_malformed",
          service: this.settings.name,
          header,
          value,
          count: this.#malformed,
        },
      );
    } catch {
      // a logger's failure must not break the request
    }
    this.#malformed = 0;
    this.#loggedAt = now;
  }

  /**
   * The core every adapter shares: reads the deadline, admits or sheds, and calls `start` with
   * the request's scope once admitted. `refuse` writes a rejection (adapters differ in how).
   */
  #begin(
    req: InboundRequest,
    res: InboundResponse,
    start: (scope: Scope) => void,
    refuse: Respond,
  ): void {
    const now = this.#clock.now();
    const raw = readBudget(this.settings.deadline, req.headers);
    if (raw !== undefined && Number.isNaN(raw)) this.#reportMalformed(req, now);
    const budget = clampBudget(this.settings.deadline, raw);
    const gate = this.#gate;
    // every way a router may read the path, read once for the routes and the priority rules
    const readings = this.#readsPath ? pathReadings(req.url ?? "/") : NO_READINGS;
    const route = this.#routes?.route(req.method ?? "GET", readings);
    if (route === null) {
      this.#refuseAmbiguous(refuse);
      return;
    }
    const priority =
      gate === null || this.settings.priorities.length === 0
        ? this.settings.defaultPriority
        : lowestPriority(this.settings, req, this.#patterns, readings);
    if (budget <= 0 || budget < (this.settings.deadline.minBudgetMs ?? 0)) {
      this.#refuse(refuse, "expired", "expired", priority, -1);
      return;
    }
    const deadline = new Deadline(now + budget, this.#clock);
    if (gate === null) {
      this.#start(req, res, deadline, false, start, refuse, priority, -1, route);
      return;
    }
    let settled = false;
    const entered = gate.enter(
      priority,
      deadline.at,
      () => {
        settled = true;
        if (res.writableFinished || isClosed(res)) {
          gate.release();
          return;
        }
        this.#start(req, res, deadline, true, start, refuse, priority, now, route);
      },
      (reason, cause) => {
        settled = true;
        this.#refuse(refuse, reason, cause, priority, now);
      },
    );
    if (entered === true) {
      this.#start(req, res, deadline, true, start, refuse, priority, -1, route);
      return;
    }
    if (entered === false) {
      this.#refuse(refuse, "overload", "queue-full", priority, -1);
      return;
    }
    if (this.#observers.length > 0)
      this.#emit({ type: "request-queued", service: this.settings.name, priority });
    const cancel = entered;
    // a caller that goes away while queued gives its place back
    res.once("close", () => {
      if (!settled) cancel();
    });
  }

  // queuedAt: when the request joined the queue, -1 if it never waited
  #start(
    req: InboundRequest,
    res: InboundResponse,
    deadline: Deadline,
    holdsSlot: boolean,
    start: (scope: Scope) => void,
    respond: Respond,
    priority: Priority,
    queuedAt: number,
    route: RouteSettings | undefined,
  ): void {
    this.#admitted++;
    if (this.#observers.length > 0) {
      const queued = queuedAt >= 0;
      this.#emit({
        type: "request-admitted",
        service: this.settings.name,
        priority,
        queued,
        waitMs: queued ? Math.max(0, this.#clock.now() - queuedAt) : 0,
      });
    }
    const controller = new AbortController();
    const gate = this.#gate;
    const timed = gate !== null && gate.settings.adaptive != null;
    const began = timed ? this.#clock.now() : 0;
    res.once("close", () => {
      const finished = res.writableFinished;
      if (!finished)
        controller.abort(
          abortedError(new Error("the inbound request was closed before its response was sent")),
        );
      if (holdsSlot)
        gate?.release(
          timed ? this.#clock.now() - began : 0,
          !finished || ((res as { statusCode?: number }).statusCode ?? 200) >= 500,
        );
    });
    // degraded dependencies are collected only when something reports them (header or observer)
    const header = this.settings.degradedHeader ?? null;
    const degraded = header !== null || this.#observers.length > 0 ? new Set<string>() : undefined;
    if (degraded !== undefined) this.#reportDegraded(res, header, degraded);
    const scope: Scope = { deadline, signal: controller.signal, degraded };
    const routes = this.#routes;
    if (routes === null || route === undefined) {
      start(scope);
      return;
    }
    routes.handle(route, {
      req,
      res,
      budgetMs: deadline.at - this.#clock.now(),
      run: () => {
        start(scope);
      },
      respond,
    });
  }

  // Lists the degraded dependencies when the response starts: the first writeHead (explicit, or
  // the implicit one of a first write or end) sets the header and emits the event. A fallback
  // served after the headers went out (a streamed response) cannot be listed (docs/services.md).
  #reportDegraded(res: InboundResponse, header: string | null, degraded: Set<string>): void {
    const r = res as InboundResponse & { setHeader?: (name: string, value: string) => unknown };
    const writeHead = r.writeHead.bind(r);
    r.writeHead = (...args: Parameters<InboundResponse["writeHead"]>): unknown => {
      r.writeHead = writeHead;
      if (degraded.size > 0 && !r.headersSent) {
        const dependencies = [...degraded];
        if (header !== null) r.setHeader?.(header, dependencies.join(", "));
        if (this.#observers.length > 0)
          this.#emit({ type: "request-degraded", service: this.settings.name, dependencies });
      }
      return writeHead(...args);
    };
  }

  // a path whose readings match different routes: 400, before admission, the handler never runs
  #refuseAmbiguous(refuse: Respond): void {
    refuse(400, this.#ambiguous.headers, this.#ambiguous.body);
    if (this.#observers.length > 0)
      this.#emit({
        type: "request-refused",
        service: this.settings.name,
        reason: "ambiguous-path",
        status: 400,
      });
  }

  #refuse(
    refuse: Respond,
    reason: ShedReason,
    cause: ShedCause,
    priority: Priority,
    queuedAt: number,
  ): void {
    const expired = reason === "expired";
    const status = expired ? this.settings.deadline.expiredStatus : this.settings.rejection.status;
    if (expired) this.#expiredCount++;
    else this.#shed++;
    const answer = expired ? this.#expired : this.#overload;
    refuse(status, answer.headers, answer.body);
    this.#onShed?.({ service: this.settings.name, reason, priority, status });
    if (this.#observers.length > 0) {
      const queued = queuedAt >= 0;
      this.#emit({
        type: "request-shed",
        service: this.settings.name,
        priority,
        reason,
        cause,
        status,
        queued,
        waitMs: queued ? Math.max(0, this.#clock.now() - queuedAt) : 0,
      });
    }
  }

  node<Req extends InboundRequest, Res extends InboundResponse>(
    handler: (req: Req, res: Res) => unknown,
  ): (req: Req, res: Res) => void {
    return (req, res) => {
      this.#begin(
        req,
        res,
        (scope) => {
          const result = withRequestScope(
            scope.deadline,
            scope.signal,
            () => handler(req, res),
            scope.degraded,
          );
          if (isThenable(result)) {
            result.then(undefined, (error: unknown) => {
              failed(res, error);
            });
          }
        },
        (status, headers, body) => {
          writeRejection(req, res, status, headers, body);
        },
      );
    };
  }

  express<Req extends InboundRequest, Res extends InboundResponse>(): ExpressMiddleware<Req, Res> {
    return (req, res, next) => {
      const seen = (req as Scoped)[SCOPE];
      if (seen !== undefined) {
        withRequestScope(
          seen.deadline,
          seen.signal,
          () => {
            next();
          },
          seen.degraded,
        );
        return;
      }
      this.#begin(
        req,
        res,
        (scope) => {
          (req as Scoped)[SCOPE] = scope;
          withRequestScope(
            scope.deadline,
            scope.signal,
            () => {
              next();
            },
            scope.degraded,
          );
        },
        (status, headers, body) => {
          writeRejection(req, res, status, headers, body);
        },
      );
    };
  }

  fastify(app: FastifyLike): void {
    app.addHook("onRequest", (request, reply, done) => {
      this.#begin(
        request.raw,
        reply.raw,
        (scope) => {
          (request as Scoped)[SCOPE] = scope;
          done();
        },
        (status, headers, body) => {
          reply.hijack();
          writeRejection(request.raw, reply.raw, status, headers, body);
        },
      );
    });
    app.addHook("preHandler", (request, _reply, done) => {
      const scope = (request as Scoped)[SCOPE];
      if (scope === undefined) {
        done();
        return;
      }
      withRequestScope(
        scope.deadline,
        scope.signal,
        () => {
          done();
        },
        scope.degraded,
      );
    });
  }

  health(): InboundHealth {
    return {
      name: this.settings.name,
      admitted: this.#admitted,
      shed: this.#shed,
      expired: this.#expiredCount,
      admission: this.#gate?.health() ?? null,
    };
  }
}

function isClosed(res: InboundResponse): boolean {
  return (res as { destroyed?: boolean }).destroyed === true;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

// an answer written without the handler; a HEAD request gets its headers and no body
function writeRejection(
  req: InboundRequest,
  res: InboundResponse,
  status: number,
  headers: Readonly<Record<string, string | readonly string[]>>,
  body?: Uint8Array,
): void {
  if (res.headersSent) return;
  // Node takes a list for a repeated header (set-cookie of a replayed response)
  res.writeHead(status, headers as Record<string, string>);
  if (body === undefined || body.byteLength === 0 || req.method === "HEAD") res.end();
  else res.end(body);
}

// the idempotency step of the service's routes, on the store they need; null when none has one
function idempotentRoutes(
  settings: ServiceSettings,
  options: InboundOptions,
  clock: Clock,
  emit: (event: IdempotencyEvent) => void,
): IdempotentRoutes | null {
  const routes = settings.routes ?? [];
  const idempotent = routes.filter((r) => r.idempotency !== null);
  if (idempotent.length === 0) return null;
  // a route that keeps its keys in Redis needs a store from the application (the generated
  // factory's type requires one; a memory store is allowed, for tests)
  const needsRedis = idempotent.filter((r) => r.idempotency?.store === "redis");
  const store = options.store;
  if (needsRedis.length > 0 && store === undefined) {
    const names = needsRedis.map((r) => `${r.method ?? "*"} ${r.path}`).join(", ");
    const verb = needsRedis.length === 1 ? "keeps" : "keep";
    throw new Error(
      `${settings.name}: ${names} ${verb} idempotency keys in Redis (store: redis), ` +
        "but no store was given: pass { store: createRedisStore(client) } (docs/store.md)",
    );
  }
  return new IdempotentRoutes(
    settings.name,
    routes,
    store ?? createMemoryStore({ clock }),
    clock,
    Math.max(0, Math.ceil(settings.rejection.retryAfterS)),
    emit,
  );
}

// a handler that throws after admission: answer 500 if nothing was sent, else cut the response
function failed(res: InboundResponse, error: unknown): void {
  if (!res.headersSent) {
    res.writeHead(500, { "content-length": NO_BODY });
    res.end();
  } else {
    res.destroy(error instanceof Error ? error : new Error(String(error)));
  }
}

/**
 * Creates the inbound middleware of a service from its settings (generated from its
 * `kind: service` policy). Create it once per process: the limit only works if every request
 * shares it.
 */
export function createInboundMiddleware(
  settings: ServiceSettings,
  options: InboundOptions = {},
): InboundMiddleware {
  return new Inbound(settings, options);
}
