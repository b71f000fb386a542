// Server-side idempotency of a service's routes: a request repeated with the same Idempotency-Key
// is answered from the store instead of running the handler again (docs/services.md,
// "Idempotent routes"; the store's steps in docs/store.md).
import type { Clock } from "./clock.js";
import { problemAnswer, type ProblemAnswer } from "./problem.js";
import {
  compilePath,
  pathMatches,
  pathReadings,
  type PathPattern,
  type PathReading,
} from "./route-path.js";
import { sha256Hex } from "./sha256.js";
import { StoreFullError, type SharedStore, type StoreScript, type TtlMap } from "./store.js";

/** Idempotency settings of one route (`routes[].idempotency` in a service policy). */
export interface RouteIdempotencySettings {
  /** Request header carrying the key, lowercase (e.g. `idempotency-key`). */
  readonly header: string;
  /** Milliseconds a completed response is kept and replayed. */
  readonly ttlMs: number;
  /** Which store the route needs: `memory` (this process) or `redis` (every replica). */
  readonly store: "memory" | "redis";
  /** Answer 400 to a request of the route that carries no key. */
  readonly required: boolean;
  /** Largest request body fingerprinted and largest response body stored, in bytes. */
  readonly maxBytes: number;
  /** Request headers (lowercase) that scope the keys: no caller can replay another's response. */
  readonly scope: readonly string[];
}

/** A route of a service policy: the requests it matches and what the middleware does for them. */
export interface RouteSettings {
  /** HTTP method, uppercase; `null` for every method but the safe GET, HEAD, OPTIONS, TRACE. */
  readonly method: string | null;
  /** Path without the query: exact, or a prefix when it ends in `*`. */
  readonly path: string;
  /** With the store down, answer 503 (fail closed) instead of running without deduplication. */
  readonly essential: boolean;
  readonly idempotency: RouteIdempotencySettings | null;
}

/**
 * What happened to a request of an idempotent route:
 * - `executed`: the handler ran and its response was stored;
 * - `replayed`: the stored response was sent, the handler did not run;
 * - `mismatch`: the key was used with another request (422);
 * - `in-progress`: the key's first request is still running (409);
 * - `invalid-key` or `missing-key`: 400;
 * - `not-stored`: the handler ran but its response was not kept (a 5xx, a response cut short, a
 *   body past `maxBytes`, or a request body not read to its end), so a retry runs it again;
 * - `lost`: the response came after the key's lock had expired, so it was not stored;
 * - `store-unavailable`: the store could not answer; `failOpen` tells whether the handler ran.
 */
export type IdempotencyOutcome =
  | "executed"
  | "replayed"
  | "mismatch"
  | "in-progress"
  | "invalid-key"
  | "missing-key"
  | "not-stored"
  | "lost"
  | "store-unavailable";

/** The event the middleware emits for each request of an idempotent route. */
export interface IdempotencyEvent {
  readonly type: "request-idempotency";
  readonly service: string;
  /** The route, as the policy writes it (`POST /orders`). */
  readonly route: string;
  readonly outcome: IdempotencyOutcome;
  /** For `store-unavailable`: true when the request was handled without deduplication. */
  readonly failOpen?: boolean;
  /** For `store-unavailable`: the step that failed (`begin`, `complete` or `release`). */
  readonly step?: "begin" | "complete" | "release";
}

/** Reply of the begin step: this request runs, or the key is taken. */
type Begun =
  | { readonly state: "acquired" }
  | { readonly state: "running"; readonly ttlMs: number }
  | { readonly state: "done"; readonly fingerprint: string; readonly response: string };

interface Entry {
  state: "running" | "done";
  token?: string;
  fingerprint?: string;
  response?: string;
}

const asEntry = (value: unknown): Entry | undefined => value as Entry | undefined;

// a lock or a stored response is never evicted from a full memory store: forgetting either lets
// a retry run the handler again (docs/store.md, "The memory store's bound")
const KEEP = { keep: true } as const;

/**
 * Takes the key for a first request, or reports who has it. KEYS[1] the key; ARGV token, lock
 * milliseconds. The lock expires on its own, so a replica that dies mid-request frees the key.
 */
export const BEGIN: StoreScript<Begun> = {
  name: "idempotency-begin",
  lua: `local v = redis.call('HMGET', KEYS[1], 'state', 'fingerprint', 'response')
if not v[1] then
  redis.call('HSET', KEYS[1], 'state', 'running', 'token', ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {'acquired'}
end
if v[1] == 'done' then return {'done', v[2], v[3]} end
return {'running', tostring(redis.call('PTTL', KEYS[1]))}`,
  parse: (reply) => {
    const [state, a, b] = reply as string[];
    if (state === "done") return { state, fingerprint: a ?? "", response: b ?? "" };
    if (state === "running") return { state, ttlMs: Number(a) };
    return { state: "acquired" };
  },
  memory: (map, [key = ""], [token = "", lockMs = "0"], now) => {
    const entry = asEntry(map.get(key, now));
    if (entry === undefined) {
      map.set(key, { state: "running", token } satisfies Entry, Number(lockMs), now, KEEP);
      return { state: "acquired" };
    }
    if (entry.state === "done")
      return {
        state: "done",
        fingerprint: entry.fingerprint ?? "",
        response: entry.response ?? "",
      };
    return { state: "running", ttlMs: map.ttl(key, now) };
  },
};

/**
 * Stores the response of the request holding the key. KEYS[1] the key; ARGV token, fingerprint,
 * response, milliseconds to keep it. 0 when the lock is no longer this request's (it expired).
 */
export const COMPLETE: StoreScript<boolean> = {
  name: "idempotency-complete",
  lua: `if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', 'done', 'fingerprint', ARGV[2], 'response', ARGV[3])
redis.call('HDEL', KEYS[1], 'token')
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`,
  parse: (reply) => reply === 1,
  memory: (map, [key = ""], [token, fingerprint, response, ttlMs = "0"], now) => {
    if (asEntry(map.get(key, now))?.token !== token) return false;
    const entry: Entry = {
      state: "done",
      fingerprint: fingerprint ?? "",
      response: response ?? "",
    };
    map.set(key, entry, Number(ttlMs), now, KEEP);
    return true;
  },
};

/** Frees the key without a response, so a retry runs the handler. KEYS[1]; ARGV token. */
export const RELEASE: StoreScript<boolean> = {
  name: "idempotency-release",
  lua: `if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1`,
  parse: (reply) => reply === 1,
  memory: (map: TtlMap, [key = ""], [token], now) => {
    if (asEntry(map.get(key, now))?.token !== token) return false;
    map.delete(key);
    return true;
  },
};

/** A stored response, as JSON in the store. */
interface StoredResponse {
  readonly status: number;
  readonly headers: readonly (readonly [string, string | readonly string[]])[];
  /** Base64. */
  readonly body: string;
}

/** The header that marks a replayed response. */
export const REPLAYED_HEADER = "idempotent-replayed";

// connection-level headers: they describe the first response's connection, not the response
const NOT_REPLAYED = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-length",
  "date",
  "upgrade",
  "trailer",
  "proxy-connection",
]);

// headers that hand the caller a secret (a session, RFC 9110's Authentication-Info): never kept in
// the store, where anyone who can read the server would read them (docs/security.md), so a replay
// carries none
const NOT_STORED = new Set(["set-cookie", "authentication-info", "proxy-authentication-info"]);

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS", "TRACE"]);

// 1 to 255 visible ASCII characters (a structured-field string's content, quotes removed)
const KEY_PATTERN = /^[\x21-\x7e][\x20-\x7e]{0,254}$/;

/** How the adapter answers without the handler: status, headers and an optional body. */
export type Respond = (
  status: number,
  headers: Record<string, string | readonly string[]>,
  body?: Uint8Array,
) => void;

/** The stream side of a request, as Node's `IncomingMessage` has it; absent on plain objects. */
interface RequestStream {
  emit?: (event: string | symbol, ...args: unknown[]) => boolean;
  resume?: () => unknown;
  readonly readableEnded?: boolean;
}

/** The stream side of a response, as Node's `ServerResponse` has it. */
interface ResponseStream {
  statusCode?: number;
  getHeaders?: () => Record<string, string | number | readonly string[] | undefined>;
  writeHead: (...args: unknown[]) => unknown;
  write?: (...args: unknown[]) => unknown;
  end: (...args: unknown[]) => unknown;
  once(event: "close", listener: () => void): unknown;
}

/**
 * The bytes of a request body as its consumer reads them, up to a limit. A body read before the
 * tee was installed (a body parser mounted before the middleware) cannot be seen: `ended` is false.
 */
class BodyTee {
  readonly #chunks: Uint8Array[] = [];
  readonly #limit: number;
  #bytes = 0;
  /** More than the limit arrived: the body is not kept, and cannot match a stored fingerprint. */
  over = false;
  /** True once the whole body was seen; false when it never will be. */
  readonly ended: Promise<boolean>;

  constructor(req: RequestStream, limit: number) {
    this.#limit = limit;
    const emit = req.emit;
    if (typeof emit !== "function") {
      // a request object without a stream (a test double): no body
      this.ended = Promise.resolve(true);
      return;
    }
    if (req.readableEnded === true) {
      this.ended = Promise.resolve(false);
      return;
    }
    let settle!: (ended: boolean) => void;
    this.ended = new Promise<boolean>((resolve) => (settle = resolve));
    // every way of reading a Readable (data events, read(), async iteration, pipe) emits 'data':
    // watching emit sees the body as its consumer reads it, without consuming it
    req.emit = (event: string | symbol, ...args: unknown[]): boolean => {
      if (event === "data") this.#add(args[0]);
      else if (event === "end") settle(true);
      else if (event === "error" || event === "aborted" || event === "close") settle(false);
      return emit.call(req, event, ...args);
    };
    void this.ended.then(() => {
      req.emit = emit;
    });
  }

  #add(chunk: unknown): void {
    if (this.over) return;
    const bytes =
      typeof chunk === "string" ? new TextEncoder().encode(chunk) : (chunk as Uint8Array);
    this.#bytes += bytes.byteLength;
    if (this.#bytes > this.#limit) {
      this.over = true;
      this.#chunks.length = 0;
      return;
    }
    this.#chunks.push(bytes);
  }

  bytes(): Uint8Array<ArrayBuffer> {
    return concat(this.#chunks, this.#bytes);
  }
}

function concat(chunks: readonly Uint8Array[], size: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

/**
 * SHA-256 of method, URL and body, hex: what makes two requests "the same" for one key
 * (sha256.ts: synchronous on Node, Web Crypto elsewhere).
 */
async function fingerprint(method: string, url: string, body: Uint8Array): Promise<string> {
  const head = new TextEncoder().encode(`${method} ${url}\n`);
  return sha256Hex(concat([head, body], head.byteLength + body.byteLength));
}

function headerValue(value: string | readonly string[] | undefined): string | undefined {
  return typeof value === "string" ? value : value?.join(", ");
}

/** The key from the header: quotes of a structured-field string removed; `null` when unusable. */
export function readIdempotencyKey(value: string | readonly string[] | undefined): string | null {
  if (value === undefined || (typeof value !== "string" && value.length !== 1)) return null;
  let key = (typeof value === "string" ? value : (value[0] ?? "")).trim();
  if (key.length >= 2 && key.startsWith('"') && key.endsWith('"')) key = key.slice(1, -1);
  return KEY_PATTERN.test(key) ? key : null;
}

const patterns = new WeakMap<RouteSettings, PathPattern>();

function patternOf(route: RouteSettings): PathPattern {
  let pattern = patterns.get(route);
  if (pattern === undefined) patterns.set(route, (pattern = compilePath(route.path)));
  return pattern;
}

// a GET route also takes HEAD, which Express and Fastify route to GET handlers
function methodMatches(route: RouteSettings, method: string): boolean {
  if (route.method === null) return !SAFE_METHODS.has(method);
  return route.method === method || (method === "HEAD" && route.method === "GET");
}

/**
 * Whether a route matches a request's method and path (the request target, query included or
 * not): when any way a router may read the path matches it (docs/services.md, "How routes
 * match").
 */
export function routeMatches(route: RouteSettings, method: string, path: string): boolean {
  if (!methodMatches(route, method)) return false;
  const pattern = patternOf(route);
  // a path too costly to read every way is taken to match: the route's rule applies
  return pathReadings(path)?.some((reading) => pathMatches(pattern, reading)) ?? true;
}

/** The request of an idempotent route, with what its adapter gives. */
export interface IdempotentRequest {
  readonly req: {
    readonly method?: string | undefined;
    readonly url?: string | undefined;
    readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  };
  readonly res: unknown;
  /** Milliseconds the request has left: how long its key stays locked (plus a grace). */
  readonly budgetMs: number;
  /** Runs the handler. */
  readonly run: () => void;
  readonly respond: Respond;
}

// runs the handler after a store step: a handler that throws at once is answered 500 (which
// frees its key), as the adapters answer a handler that rejects
function run(request: IdempotentRequest): void {
  try {
    request.run();
  } catch {
    request.respond(500, { "content-length": "0" });
  }
}

/** Milliseconds a lock outlives its request's deadline, for a response that is being written. */
const LOCK_GRACE_MS = 1_000;

/** The idempotency step of one service's routes, on one store. */
export class IdempotentRoutes {
  readonly routes: readonly RouteSettings[];
  readonly #service: string;
  readonly #store: SharedStore;
  readonly #clock: Clock;
  readonly #emit: (event: IdempotencyEvent) => void;
  // the refusals that do not change per request, built once
  readonly #missing = problemAnswer("idempotency-key-missing", 400);
  readonly #invalid = problemAnswer("idempotency-key-invalid", 400);
  readonly #reused = problemAnswer("idempotency-key-reused", 422);
  readonly #unavailable: ProblemAnswer;

  constructor(
    service: string,
    routes: readonly RouteSettings[],
    store: SharedStore,
    clock: Clock,
    retryAfterS: number,
    emit: (event: IdempotencyEvent) => void,
  ) {
    this.#service = service;
    this.routes = routes;
    this.#store = store;
    this.#clock = clock;
    this.#emit = emit;
    this.#unavailable = problemAnswer("idempotency-unavailable", 503, retryAfterS);
  }

  /**
   * The idempotent route of a request: the first one that some reading of its path matches
   * (`readings`, from {@link pathReadings} of the request target); `null` when readings match
   * different routes, or the path was too costly to read (`readings` null) and some route takes
   * the method: the request cannot be told apart (answer it 400).
   */
  route(method: string, readings: readonly PathReading[] | null): RouteSettings | undefined | null {
    if (readings === null)
      return this.routes.some((r) => r.idempotency !== null && methodMatches(r, method))
        ? null
        : undefined;
    let found: RouteSettings | undefined;
    for (const reading of readings) {
      for (const route of this.routes) {
        if (route.idempotency === null || !methodMatches(route, method)) continue;
        if (!pathMatches(patternOf(route), reading)) continue;
        if (found !== undefined && found !== route) return null;
        found = route;
        break;
      }
    }
    return found;
  }

  /** Runs, replays or refuses one request of `route`. Never throws. */
  handle(route: RouteSettings, request: IdempotentRequest): void {
    const settings = route.idempotency;
    if (settings === null) {
      request.run();
      return;
    }
    const label = `${route.method ?? "*"} ${route.path}`;
    const report = (outcome: IdempotencyOutcome, extra: Partial<IdempotencyEvent> = {}): void => {
      this.#emit({
        type: "request-idempotency",
        service: this.#service,
        route: label,
        outcome,
        ...extra,
      });
    };
    const { req, respond } = request;
    const raw = req.headers[settings.header];
    if (raw === undefined) {
      if (settings.required) {
        report("missing-key");
        respond(400, this.#missing.headers, this.#missing.body);
      } else request.run();
      return;
    }
    const key = readIdempotencyKey(raw);
    if (key === null) {
      report("invalid-key");
      respond(400, this.#invalid.headers, this.#invalid.body);
      return;
    }
    const tee = new BodyTee(req as RequestStream, settings.maxBytes);
    const storeKey = this.#store.key(
      this.#service,
      "idempotency",
      label,
      this.#scope(req.headers, settings.scope),
      key,
    );
    const token = globalThis.crypto.randomUUID();
    const lockMs = Math.ceil(request.budgetMs) + LOCK_GRACE_MS;
    const method = req.method ?? "GET";
    const url = req.url ?? "/";
    this.#store.run(BEGIN, [storeKey], [token, lockMs]).then(
      (begun) => {
        if (begun.state === "acquired") {
          this.#capture(request, settings, tee, storeKey, token, method, url, report);
          run(request);
          return;
        }
        if (begun.state === "running") {
          report("in-progress");
          const busy = problemAnswer(
            "idempotency-key-in-use",
            409,
            Math.max(1, Math.ceil(begun.ttlMs / 1_000)),
          );
          respond(409, busy.headers, busy.body);
          return;
        }
        // done: the handler will not run, so this request's body is ours to read
        (req as RequestStream).resume?.();
        void tee.ended
          .then(async (ended) => {
            const same =
              ended &&
              !tee.over &&
              (await fingerprint(method, url, tee.bytes())) === begun.fingerprint;
            if (!same) {
              report("mismatch");
              respond(422, this.#reused.headers, this.#reused.body);
              return;
            }
            const stored = JSON.parse(begun.response) as StoredResponse;
            const body = fromBase64(stored.body);
            report("replayed");
            respond(
              stored.status,
              Object.fromEntries([
                ...stored.headers,
                ["content-length", String(body.byteLength)],
                [REPLAYED_HEADER, "true"],
              ]),
              body,
            );
          })
          .catch(() => {
            // a stored entry that cannot be read: as if the store could not answer
            report("store-unavailable", { failOpen: false, step: "begin" });
            respond(503, this.#unavailable.headers, this.#unavailable.body);
          });
      },
      (error: unknown) => {
        // a full memory store is not down: running without a lock would let a retry run again,
        // so the request is refused whatever `essential` says
        const failOpen = !route.essential && !(error instanceof StoreFullError);
        report("store-unavailable", { failOpen, step: "begin" });
        if (!failOpen) respond(503, this.#unavailable.headers, this.#unavailable.body);
        else run(request);
      },
    );
  }

  // the key's scope: a hash of the caller's credentials, so that one caller's key never reaches
  // another caller's stored response
  #scope(headers: IdempotentRequest["req"]["headers"], names: readonly string[]): string {
    let text = "";
    for (const name of names) text += `${name}=${headerValue(headers[name]) ?? ""}\n`;
    // FNV-1a, 2 × 32 bits: the scope partitions keys, the key itself is the secret the caller holds
    let h1 = 0x811c9dc5;
    let h2 = 0x01000193;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 0x01000193) >>> 0;
      h2 = Math.imul(h2 ^ c, 0x811c9dc5) >>> 0;
    }
    return h1.toString(16).padStart(8, "0") + h2.toString(16).padStart(8, "0");
  }

  // Records status, headers and body as the handler writes them. When the handler ends the
  // response, a complete one under 500 is stored first and sent after, so that a client holding
  // the response finds it replayed on any replica; any other frees the key.
  #capture(
    request: IdempotentRequest,
    settings: RouteIdempotencySettings,
    tee: BodyTee,
    storeKey: string,
    token: string,
    method: string,
    url: string,
    report: (outcome: IdempotencyOutcome, extra?: Partial<IdempotencyEvent>) => void,
  ): void {
    const res = request.res as ResponseStream;
    const chunks: Uint8Array[] = [];
    let size = 0;
    let over = false;
    let head: { status: number; headers: Record<string, string | readonly string[]> } | undefined;
    let ended = false;
    const add = (chunk: unknown, encoding: unknown): void => {
      if (over || chunk === undefined || chunk === null || typeof chunk === "function") return;
      const bytes =
        typeof chunk === "string"
          ? encoding === "base64" || encoding === "hex" || encoding === "latin1"
            ? null
            : new TextEncoder().encode(chunk)
          : (chunk as Uint8Array);
      if (bytes === null) {
        over = true;
        return;
      }
      size += bytes.byteLength;
      if (size > settings.maxBytes) {
        over = true;
        chunks.length = 0;
      } else chunks.push(bytes.slice());
    };
    const writeHead = res.writeHead;
    const write = res.write;
    const end = res.end;
    res.writeHead = (code: unknown, ...rest: unknown[]) => {
      head = {
        status: typeof code === "number" ? code : 200,
        headers: mergeHeaders(res.getHeaders?.() ?? {}, rest),
      };
      return writeHead.call(res, code, ...rest);
    };
    if (write !== undefined)
      res.write = (chunk: unknown, ...rest: unknown[]) => {
        add(chunk, rest[0]);
        return write.call(res, chunk, ...rest);
      };
    res.end = (chunk?: unknown, ...rest: unknown[]) => {
      if (ended) return end.call(res, chunk, ...rest);
      ended = true;
      add(chunk, rest[0]);
      const send = (): void => {
        end.call(res, chunk, ...rest);
      };
      // the head the response has, or will have when end writes it
      const { status, headers } = head ?? {
        status: res.statusCode ?? 200,
        headers: mergeHeaders(res.getHeaders?.() ?? {}, []),
      };
      if (status >= 500 || over) {
        this.#release(storeKey, token, report);
        send();
        return res;
      }
      void this.#complete(request, settings, tee, storeKey, token, method, url, report, {
        status,
        headers: Object.entries(headers).filter(
          ([name]) => !NOT_REPLAYED.has(name) && !NOT_STORED.has(name),
        ),
        body: toBase64(concat(chunks, size)),
      }).then(send);
      return res;
    };
    res.once("close", () => {
      // the caller went away before the handler ended the response: nothing to keep
      if (!ended) this.#release(storeKey, token, report);
    });
  }

  // Stores the response once the request body has been seen to its end; resolves when done,
  // whatever happened, so that the response is sent either way.
  async #complete(
    request: IdempotentRequest,
    settings: RouteIdempotencySettings,
    tee: BodyTee,
    storeKey: string,
    token: string,
    method: string,
    url: string,
    report: (outcome: IdempotencyOutcome, extra?: Partial<IdempotencyEvent>) => void,
    stored: StoredResponse,
  ): Promise<void> {
    try {
      // a handler may answer before reading the whole body: the rest is drained, then hashed
      (request.req as RequestStream).resume?.();
      const seen = await this.#bounded(tee.ended, request.budgetMs + LOCK_GRACE_MS);
      if (!seen || tee.over) {
        this.#release(storeKey, token, report);
        return;
      }
      const print = await fingerprint(method, url, tee.bytes());
      const kept = await this.#store.run(
        COMPLETE,
        [storeKey],
        [token, print, JSON.stringify(stored), settings.ttlMs],
      );
      report(kept ? "executed" : "lost");
    } catch {
      report("store-unavailable", { failOpen: true, step: "complete" });
    }
  }

  #release(
    storeKey: string,
    token: string,
    report: (outcome: IdempotencyOutcome, extra?: Partial<IdempotencyEvent>) => void,
  ): void {
    this.#store.run(RELEASE, [storeKey], [token]).then(
      () => {
        report("not-stored");
      },
      () => {
        report("store-unavailable", { failOpen: true, step: "release" });
      },
    );
  }

  #bounded(ended: Promise<boolean>, ms: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const timer = this.#clock.setTimer(() => {
        resolve(false);
      }, ms);
      void ended.then((value) => {
        this.#clock.clearTimer(timer);
        resolve(value);
      });
    });
  }
}

// the headers of a response as writeHead sends them: those set before, then those it is given
function mergeHeaders(
  set: Record<string, string | number | readonly string[] | undefined>,
  rest: readonly unknown[],
): Record<string, string | readonly string[]> {
  const out: Record<string, string | readonly string[]> = {};
  const put = (name: string, value: unknown): void => {
    if (value === undefined) return;
    if (Array.isArray(value)) out[name.toLowerCase()] = value.map(String);
    else if (typeof value === "string" || typeof value === "number")
      out[name.toLowerCase()] = String(value);
  };
  for (const [name, value] of Object.entries(set)) put(name, value);
  const given = rest.find((a) => typeof a === "object" && a !== null);
  if (Array.isArray(given)) {
    // writeHead(status, [name, value, name, value]) or [[name, value]]
    if (given.every((a) => Array.isArray(a))) for (const [n, v] of given) put(String(n), v);
    else for (let i = 0; i + 1 < given.length; i += 2) put(String(given[i]), given[i + 1]);
  } else if (given !== undefined)
    for (const [name, value] of Object.entries(given as Record<string, unknown>)) put(name, value);
  return out;
}

function toBase64(bytes: Uint8Array): string {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000)
    text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

function fromBase64(text: string): Uint8Array {
  const raw = atob(text);
  const out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}
