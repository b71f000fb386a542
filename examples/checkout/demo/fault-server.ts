/**
 * A real HTTP server on 127.0.0.1 that injects faults per route and records what it received.
 *
 *   const server = await startFaultServer();
 *   server.route("GET /items/:sku/stock", { body: (req) => ({ sku: req.params.sku, available: 3 }) });
 *   server.route("POST /charges", { status: 201, body: charge }, [{ hang: true }, { hang: true }]);
 *   server.setLatency("GET /users/:userId/recommendations", 5_000);   // slow a dependency down
 *   ...
 *   server.count("POST /charges");     // requests received on the route
 *   server.effects("POST /charges");   // writes after de-duplication by Idempotency-Key
 *   await server.close();              // ends hanging requests, destroys sockets, clears timers
 *
 * A route answers with its queued one-shot steps first (one per request, in order), then with
 * its default behaviour, which may be computed per request:
 *
 *   server.route("POST /charges", (req) => (req.seq % 3 === 0 ? { status: 503 } : ok));
 *
 * Every request is recorded on arrival, before any fault is applied.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** What a route does with one request. */
export interface Behaviour {
  /** Milliseconds to wait before answering (or before resetting). */
  readonly latencyMs?: number;
  /** Status code. Defaults to 200. */
  readonly status?: number;
  /** Response body: a string is sent as is, anything else as JSON. May be computed from the request. */
  readonly body?: BodyOf;
  /** Extra response headers. */
  readonly headers?: Readonly<Record<string, string>>;
  /** `Retry-After` value: seconds as a number, or any string (an HTTP-date). */
  readonly retryAfter?: number | string;
  /** Never answer: the request stays open until the client gives up or the server closes. */
  readonly hang?: true;
  /** Destroy the socket instead of answering: the client sees a connection reset. */
  readonly reset?: true;
}

/** A request as the server received it. */
export interface RecordedRequest {
  /** Upper-case method. */
  readonly method: string;
  /** Path without the query string. */
  readonly path: string;
  /** Query parameters. */
  readonly query: Readonly<Record<string, string>>;
  /** Route pattern that matched (`"GET /items/:sku/stock"`), or `undefined` (answered 404). */
  readonly route: string | undefined;
  /** Values of the pattern's `:name` segments. */
  readonly params: Readonly<Record<string, string>>;
  /** Request headers with lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  /** Value of the idempotency header, if sent. */
  readonly idempotencyKey: string | undefined;
  /** Propagated remaining time (`x-request-timeout-ms`) in milliseconds, if sent and numeric. */
  readonly timeoutMs: number | undefined;
  /** Body text, and its JSON value when it parses. */
  readonly bodyText: string;
  readonly body: unknown;
  /** `performance.now()` at arrival. */
  readonly arrivedAt: number;
  /** 1-based position of this request among those of its route. */
  readonly seq: number;
}

/** A route's default behaviour: fixed, or chosen for each request when it arrives. */
export type BehaviourOf = Behaviour | ((request: RecordedRequest) => Behaviour);

/** Body of a behaviour (a string, or a value sent as JSON), or a function computing it from the request. */
export type BodyOf =
  ((request: RecordedRequest) => unknown) | string | number | boolean | object | null;

export interface FaultServerOptions {
  /** Header carrying the idempotency key. Defaults to `idempotency-key`. */
  readonly idempotencyHeader?: string;
  /** Header carrying the propagated remaining time. Defaults to `x-request-timeout-ms`. */
  readonly deadlineHeader?: string;
}

export interface FaultServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /**
   * Defines (or redefines) a route: `"METHOD /path/:param"`. `behaviour` is the default answer
   * (or a function choosing it per request); `steps` are one-shot answers used first, one per
   * request, in order.
   */
  route(pattern: string, behaviour?: BehaviourOf, steps?: readonly Behaviour[]): void;
  /** Appends one-shot steps to a route's queue. */
  enqueue(pattern: string, ...steps: Behaviour[]): void;
  /** One-shot steps of a route not used yet. */
  queued(pattern: string): number;
  /** Changes the latency of a route's default behaviour, effective for requests arriving from now on. */
  setLatency(pattern: string, latencyMs: number): void;
  /** Requests received, all or those of one route, in arrival order. */
  requests(pattern?: string): readonly RecordedRequest[];
  /** Number of requests received on a route (all routes when omitted). */
  count(pattern?: string): number;
  /**
   * Writes the route performed: requests de-duplicated by idempotency key. A request with a key
   * seen before on the route is the same effect; a request without a key is an effect of its own.
   */
  effects(pattern: string): number;
  /** Resolves once `n` requests have arrived on the route (at once if they already have). */
  waitForRequests(pattern: string, n: number): Promise<void>;
  /** Requests received and not answered yet (delayed or hanging), all or those of one route. */
  pending(pattern?: string): number;
  /** Forgets recorded requests and counters (routes stay). */
  resetRecords(): void;
  /** Stops listening, ends hanging and delayed requests, destroys every socket, clears every timer. */
  close(): Promise<void>;
}

interface Route {
  readonly pattern: string;
  readonly method: string;
  readonly segments: readonly string[];
  behaviour: BehaviourOf;
  readonly steps: Behaviour[];
  readonly keys: Set<string>;
  keyless: number;
  count: number;
}

interface Waiter {
  readonly pattern: string;
  readonly n: number;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

function parsePattern(pattern: string): { method: string; segments: string[] } {
  const match = /^([A-Z]+)\s+(\/\S*)$/.exec(pattern.trim());
  if (match === null)
    throw new Error(`route pattern must look like "GET /path/:param", got "${pattern}"`);
  return { method: match[1]!, segments: match[2]!.split("/").filter((s) => s !== "") };
}

function matchPath(
  route: Route,
  method: string,
  segments: readonly string[],
): Record<string, string> | undefined {
  if (route.method !== method || route.segments.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const want = route.segments[i]!;
    const got = segments[i]!;
    if (want.startsWith(":")) params[want.slice(1)] = decodeURIComponent(got);
    else if (want !== got) return undefined;
  }
  return params;
}

const WRITES = new Set(["POST", "PUT", "PATCH", "DELETE"]);

export async function startFaultServer(options: FaultServerOptions = {}): Promise<FaultServer> {
  const keyHeader = (options.idempotencyHeader ?? "idempotency-key").toLowerCase();
  const deadlineHeader = (options.deadlineHeader ?? "x-request-timeout-ms").toLowerCase();
  const routes = new Map<string, Route>();
  let records: RecordedRequest[] = [];
  let waiters: Waiter[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const pending = new Map<ServerResponse, string>();
  let closed = false;

  const routeOf = (pattern: string): Route => {
    const { method, segments } = parsePattern(pattern);
    const key = `${method} /${segments.join("/")}`;
    const route = routes.get(key);
    if (route === undefined) throw new Error(`no route "${pattern}"`);
    return route;
  };
  const keyOf = (pattern: string): string => {
    const { method, segments } = parsePattern(pattern);
    return `${method} /${segments.join("/")}`;
  };

  const answer = (res: ServerResponse, request: RecordedRequest, behaviour: Behaviour): void => {
    if (behaviour.reset === true) {
      res.socket?.destroy();
      return;
    }
    const raw: unknown =
      typeof behaviour.body === "function"
        ? (behaviour.body as (r: RecordedRequest) => unknown)(request)
        : behaviour.body;
    const headers: Record<string, string> = { ...behaviour.headers };
    let text = "";
    if (typeof raw === "string") text = raw;
    else if (raw !== undefined) {
      text = JSON.stringify(raw);
      headers["content-type"] ??= "application/json";
    }
    if (behaviour.retryAfter !== undefined) headers["retry-after"] = String(behaviour.retryAfter);
    res.writeHead(behaviour.status ?? 200, headers);
    res.end(text);
  };

  const handle = (req: IncomingMessage, res: ServerResponse, bodyText: string): void => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const method = (req.method ?? "GET").toUpperCase();
    const segments = url.pathname.split("/").filter((s) => s !== "");
    let route: Route | undefined;
    let params: Record<string, string> = {};
    for (const candidate of routes.values()) {
      const found = matchPath(candidate, method, segments);
      if (found !== undefined) {
        route = candidate;
        params = found;
        break;
      }
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
    }
    const deadline = headers[deadlineHeader];
    let body: unknown;
    try {
      body = bodyText === "" ? undefined : JSON.parse(bodyText);
    } catch {
      body = undefined;
    }
    const request: RecordedRequest = {
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      route: route?.pattern,
      params,
      headers,
      idempotencyKey: headers[keyHeader],
      timeoutMs: deadline !== undefined && /^\d+$/.test(deadline) ? Number(deadline) : undefined,
      bodyText,
      body,
      arrivedAt: performance.now(),
      seq: route === undefined ? 0 : ++route.count,
    };
    records.push(request);
    if (route !== undefined && WRITES.has(method)) {
      if (request.idempotencyKey === undefined) route.keyless++;
      else route.keys.add(request.idempotencyKey);
    }
    if (waiters.length > 0) {
      const ready = waiters.filter(
        (w) => w.pattern === request.route && w.n <= (route?.count ?? 0),
      );
      waiters = waiters.filter((w) => !ready.includes(w));
      for (const w of ready) w.resolve();
    }

    if (route === undefined) {
      answer(res, request, {
        status: 404,
        body: { error: `no route for ${method} ${url.pathname}` },
      });
      return;
    }
    const fallback = route.behaviour;
    const behaviour =
      route.steps.shift() ?? (typeof fallback === "function" ? fallback(request) : fallback);
    if (behaviour.hang === true) {
      pending.set(res, route.pattern);
      res.on("close", () => pending.delete(res));
      return;
    }
    const delay = behaviour.latencyMs ?? 0;
    if (delay <= 0) {
      answer(res, request, behaviour);
      return;
    }
    pending.set(res, route.pattern);
    const timer = setTimeout(() => {
      timers.delete(timer);
      pending.delete(res);
      if (!res.destroyed) answer(res, request, behaviour);
    }, delay);
    timers.add(timer);
    // a client that gives up (attempt timeout, abort) frees the timer at once
    res.on("close", () => {
      if (timers.delete(timer)) clearTimeout(timer);
      pending.delete(res);
    });
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => handle(req, res, Buffer.concat(chunks).toString("utf8")));
    req.on("error", () => res.destroy());
  });
  server.on("connection", (socket) => {
    if (closed) {
      socket.destroy();
      return;
    }
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  // a reset socket may still raise on the server side; it is the fault being injected
  server.on("clientError", (_error, socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    route(pattern, behaviour = {}, steps = []) {
      const { method, segments } = parsePattern(pattern);
      const key = keyOf(pattern);
      const existing = routes.get(key);
      if (existing !== undefined) {
        existing.behaviour = behaviour;
        existing.steps.splice(0, existing.steps.length, ...steps);
        return;
      }
      routes.set(key, {
        pattern,
        method,
        segments,
        behaviour,
        steps: [...steps],
        keys: new Set(),
        keyless: 0,
        count: 0,
      });
    },
    enqueue(pattern, ...steps) {
      routeOf(pattern).steps.push(...steps);
    },
    queued(pattern) {
      return routeOf(pattern).steps.length;
    },
    setLatency(pattern, latencyMs) {
      const route = routeOf(pattern);
      const current = route.behaviour;
      route.behaviour =
        typeof current === "function"
          ? (request) => ({ ...current(request), latencyMs })
          : { ...current, latencyMs };
    },
    requests(pattern) {
      if (pattern === undefined) return [...records];
      const key = routeOf(pattern).pattern;
      return records.filter((r) => r.route === key);
    },
    count(pattern) {
      return pattern === undefined ? records.length : routeOf(pattern).count;
    },
    effects(pattern) {
      const route = routeOf(pattern);
      return route.keys.size + route.keyless;
    },
    waitForRequests(pattern, n) {
      const route = routeOf(pattern);
      if (route.count >= n) return Promise.resolve();
      if (closed) return Promise.reject(new Error("fault server closed"));
      return new Promise<void>((resolve, reject) =>
        waiters.push({ pattern: route.pattern, n, resolve, reject }),
      );
    },
    pending(pattern) {
      if (pattern === undefined) return pending.size;
      const key = routeOf(pattern).pattern;
      let n = 0;
      for (const route of pending.values()) if (route === key) n++;
      return n;
    },
    resetRecords() {
      records = [];
      for (const route of routes.values()) {
        route.count = 0;
        route.keyless = 0;
        route.keys.clear();
      }
    },
    close() {
      if (closed) return Promise.resolve();
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const res of pending.keys()) res.destroy();
      pending.clear();
      for (const w of waiters)
        w.reject(new Error(`fault server closed before ${w.n} requests reached ${w.pattern}`));
      waiters = [];
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      return done;
    },
  };
}
