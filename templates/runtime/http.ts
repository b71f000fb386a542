// The HTTP transport generated clients use: sendHttp, URLs, path segments, request headers and
// bounded body reads.
import { applyAuth, isThenable, type AuthParts, type HttpAuth } from "./auth.js";
import { isProgrammingError } from "./classify.js";
import { isResilienceError, ResilienceError } from "./errors.js";
import { requestIdentity } from "./fallback.js";
import { matchesRetryOn, parseRetryAfter } from "./retry.js";
import type { AttemptContext } from "./transport.js";
import { checkedResponse, type Validator } from "./validate.js";

/**
 * A client's headers: a record, or a function that returns one (or a promise of one), called
 * once per attempt, so a rotating token is read fresh for every attempt.
 */
export type HeaderSource =
  | Readonly<Record<string, string>>
  | (() => Readonly<Record<string, string>> | Promise<Readonly<Record<string, string>>>);

/** A query-string value; arrays repeat the parameter, `undefined` and `null` omit it. */
export type QueryValue =
  string | number | boolean | null | undefined | readonly (string | number | boolean)[];

/** One HTTP request, as generated clients describe it. */
export interface HttpRequest {
  /** The fetch implementation. Defaults to `globalThis.fetch`. */
  readonly fetch?: typeof fetch | undefined;
  /**
   * Passed to fetch as `init.dispatcher`, as is: on Node, an undici `Agent` (from your own undici)
   * whose `connect.timeout` enforces `timeout.connect` (docs/runtime.md, "Tiered timeouts"). The
   * runtime never imports undici, so the type is loose.
   */
  readonly dispatcher?: unknown;
  /** Base URL such as `https://payments.internal/v1` (a trailing slash is optional). */
  readonly baseUrl: string;
  /** HTTP method, upper case. */
  readonly method: string;
  /** Path with parameters already expanded and encoded, starting with `/`. */
  readonly path: string;
  /** Query parameters. */
  readonly query?: Readonly<Record<string, QueryValue>> | undefined;
  /**
   * The client's headers: a record, or a function called once per attempt (see
   * {@link HeaderSource}).
   */
  readonly headers?: HeaderSource | undefined;
  /**
   * The call's own headers, sent over the client's (names compared case-insensitively). The
   * runtime's deadline and idempotency headers go over both: a header of the same name from the
   * client or the call is replaced, never sent beside them (docs/runtime.md, "HTTP").
   */
  readonly callHeaders?: Readonly<Record<string, string>> | undefined;
  /**
   * Credentials: what the client was given and what the operation requires (docs/runtime.md,
   * "Credentials"). Their headers go over the client's headers and under the call's; an API key
   * in the query goes over a query parameter of the same name.
   */
  readonly auth?: HttpAuth | undefined;
  /**
   * Set for an operation with a stale fallback: the headers `fallback.vary` lists. Each attempt
   * then reports the stale-cache identity of the request it sends (`ctx.identify`): method, URL
   * and the values, as sent, of Authorization, Cookie, these and every header of the call.
   */
  readonly vary?: readonly string[] | undefined;
  /** Body: strings, `Uint8Array`s and `URLSearchParams` are sent as is; anything else as JSON. */
  readonly body?: unknown;
  /**
   * How to read a 2xx response: `json` (default; empty bodies give `undefined`), `text`, or `none`.
   */
  readonly responseType?: "json" | "text" | "none" | undefined;
  /**
   * Checks a decoded JSON body against the response schema (`validate: response`); without it
   * the body is cast to the response type unchecked. An invalid body fails with a `parse` error
   * (not transient) naming the JSON path (docs/runtime.md, "Response validation").
   */
  readonly validate?: Validator | undefined;
  /**
   * Largest response body read, in bytes; defaults to {@link DEFAULT_MAX_RESPONSE_BYTES}. A 2xx
   * body over it fails with a `parse` error that is never retried; an error body over it is cut
   * to this size. Either way the rest is not read: the body stream is cancelled.
   */
  readonly maxResponseBytes?: number | undefined;
  /**
   * What a redirect (301, 302, 303, 307, 308) does: `none` (the default) follows none, and the
   * attempt fails with an `http` error naming the location; `same-origin` follows, at most
   * {@link MAX_REDIRECTS} times, those to the origin the request was sent to, and fails on any
   * other. No header of the request, credentials and deadline included, ever reaches another
   * origin (docs/runtime.md, "Redirects").
   */
  readonly redirects?: "none" | "same-origin" | undefined;
  /**
   * Whether sending the request twice is harmless (an idempotent operation, or one with an
   * idempotency key). Read only to follow a redirect that would send the same method again (a
   * 307 or 308, or a 301 or 302 of a method other than POST): one that is not repeatable is not
   * followed.
   */
  readonly repeatable?: boolean | undefined;
}

/**
 * Most redirects `sendHttp` follows for one attempt of a request whose `redirects` is
 * `same-origin`; the next one fails the attempt.
 */
export const MAX_REDIRECTS = 5;

/**
 * Largest response body `sendHttp` reads when the request sets no limit: 8 MiB. Enough for any
 * JSON answer an API call should give, small enough that a few dozen calls in flight cannot
 * exhaust the heap (the text and the parsed objects take several times the bytes); see
 * docs/runtime.md ("HTTP").
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

/**
 * One path parameter, encoded for its own segment of the path (generated clients build every
 * path with it). `encodeURIComponent` escapes `/`, `?`, `#` and `%`, but not dots, and URL
 * parsers (fetch's WHATWG parser among them) resolve a segment `.` or `..` against the path
 * before it, escaped (`%2E%2E`) or not: such a value would send the request to another path. It
 * is refused, as is a string that is not well-formed Unicode (a lone surrogate), with a
 * `RangeError` naming the parameter; the request is not sent.
 *
 * @param name The parameter's name in the path template, for the error.
 * @param value The parameter's value; anything but a string is converted with `String`.
 */
export function pathSegment(name: string, value: unknown): string {
  const text = String(value);
  if (text === "." || text === "..") {
    throw new RangeError(
      `path parameter {${name}} is "${text}", which would move the request out of its path segment`,
    );
  }
  try {
    return encodeURIComponent(text);
  } catch {
    throw new RangeError(
      `path parameter {${name}} is not well-formed Unicode (it holds a lone surrogate)`,
    );
  }
}

/** Joins base URL, path and query into an absolute URL string. */
export function buildUrl(
  baseUrl: string,
  path: string,
  query?: Readonly<Record<string, QueryValue>>,
): string {
  const base = baseUrl.endsWith("/") ? baseUrl.slice(0, -1) : baseUrl;
  let url = base + (path.startsWith("/") ? path : `/${path}`);
  if (query !== undefined) {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) {
      if (value === undefined || value === null) continue;
      if (Array.isArray(value))
        for (const item of value as readonly unknown[]) params.append(name, String(item));
      else params.append(name, String(value));
    }
    const text = params.toString();
    if (text !== "") url += (url.includes("?") ? "&" : "?") + text;
  }
  return url;
}

/**
 * Merges header records, later ones over earlier ones, comparing names case-insensitively as
 * HTTP does: `authorization` in a later record replaces `Authorization` in an earlier one, where a
 * plain spread would keep both and fetch would send them joined into one value. The name keeps
 * the spelling of the record that set the value.
 */
export function mergeHeaders(
  ...records: readonly (Readonly<Record<string, string>> | undefined)[]
): Record<string, string> {
  // by lower-case name: the name as the latest record spells it, and its value
  const merged = new Map<string, readonly [string, string]>();
  for (const record of records) {
    if (record === undefined) continue;
    for (const [name, value] of Object.entries(record))
      merged.set(name.toLowerCase(), [name, value]);
  }
  const out: Record<string, string> = {};
  for (const [name, value] of merged.values()) out[name] = value;
  return out;
}

/** What the caller's side of a request resolves to for one attempt: its URL and its headers. */
interface Prepared {
  /** The URL, with an API key of the query. */
  readonly url: string;
  /**
   * The URL the attempt sends to, when its endpoint is not the request's `baseUrl` (several
   * endpoints, docs/runtime.md "Endpoints"); `url`, on the request's own base, stays the identity.
   */
  readonly sent: string | undefined;
  /**
   * The client's headers, the credentials' and the call's over them; the runtime's own are added
   * after.
   */
  readonly headers: Readonly<Record<string, string>>;
  /** Names of the headers the credentials set, which identify the caller like Authorization. */
  readonly credentialHeaders: readonly string[];
  /** The API keys the credentials put in the query, set again on a followed redirect. */
  readonly credentialQuery: Readonly<Record<string, string>> | undefined;
}

type Own = Readonly<Record<string, string>> | undefined;

function prepared(
  request: HttpRequest,
  own: Own,
  auth: AuthParts | undefined,
  endpoint: string | undefined,
): Prepared {
  const key = auth === undefined || Object.keys(auth.query).length === 0 ? undefined : auth.query;
  const query = key === undefined ? request.query : { ...request.query, ...key };
  return {
    url: buildUrl(request.baseUrl, request.path, query),
    sent:
      endpoint === undefined || endpoint === request.baseUrl
        ? undefined
        : buildUrl(endpoint, request.path, query),
    // the common case, the client's record alone, needs no merge here: sendHttp merges it with
    // the runtime's own headers anyway
    headers:
      auth === undefined && request.callHeaders === undefined
        ? (own ?? {})
        : mergeHeaders(own, auth?.headers, request.callHeaders),
    credentialHeaders: auth === undefined ? [] : Object.keys(auth.headers),
    credentialQuery: key,
  };
}

/**
 * The URL and headers of one attempt. Records are used as they are, with no promise in between;
 * a header or credential function is called (once: this is one attempt) and awaited.
 */
function prepare(request: HttpRequest, endpoint?: string): Prepared | Promise<Prepared> {
  const source = request.headers;
  const own = typeof source === "function" ? source() : source;
  const auth = request.auth === undefined ? undefined : applyAuth(request.auth);
  if (!isThenable(own) && !isThenable(auth)) return prepared(request, own, auth, endpoint);
  return Promise.all([own, auth]).then(([o, a]) => prepared(request, o, a, endpoint));
}

/** The stale-cache identity of a request as prepared (see `requestIdentity`). */
function identityOf(request: HttpRequest, ready: Prepared, vary: readonly string[]): string {
  return requestIdentity({
    method: request.method,
    url: ready.url,
    headers: ready.headers,
    vary: [...vary, ...ready.credentialHeaders, ...Object.keys(request.callHeaders ?? {})],
  });
}

/**
 * The stale-cache identity of `request`, for a call that sent no attempt (an open breaker, a full
 * bulkhead) and whose fallback looks up an entry: its headers are resolved as an attempt would
 * resolve them, calling a {@link HeaderSource} function once more.
 */
export async function httpIdentity(request: HttpRequest): Promise<string> {
  return identityOf(request, await prepare(request), request.vary ?? []);
}

/** A fetch body, typed through RequestInit so it matches both Node's and the DOM's declarations. */
type FetchBody = NonNullable<RequestInit["body"]>;

function encodeBody(body: unknown, headers: Record<string, string>): FetchBody | undefined {
  if (body === undefined) return undefined;
  if (typeof body === "string" || body instanceof URLSearchParams) return body;
  // with the DOM lib, a Uint8Array over any ArrayBufferLike is not a BodyInit type-wise; fetch
  // sends it all the same
  if (body instanceof Uint8Array) return body as FetchBody;
  if (!Object.keys(headers).some((h) => h.toLowerCase() === "content-type"))
    headers["content-type"] = "application/json";
  return JSON.stringify(body);
}

const utf8 = new TextDecoder();

/**
 * Reads a body as UTF-8 text, at most `limit` bytes of it. Past the limit the stream is
 * cancelled (which closes the connection's side of it) and `complete` is false, with the text
 * of the first `limit` bytes. Unless `cut` (keep the first bytes of an error body), a declared
 * `content-length` over the limit is refused unread.
 */
async function readText(
  response: Response,
  limit: number,
  cut: boolean,
): Promise<{ text: string; complete: boolean }> {
  const body = response.body;
  if (body === null) return { text: "", complete: true };
  const declared = response.headers.get("content-length");
  const length = declared === null ? Number.NaN : Number(declared);
  if (!cut && length > limit) {
    await body.cancel().catch(ignore);
    return { text: "", complete: false };
  }
  // A declared length within the limit, of a body sent as is, bounds what fetch can deliver:
  // it is read in one go, without a read (and a promise) per chunk. A compressed body's length
  // says nothing of what it inflates to, so it streams through the limit below.
  const encoding = response.headers.get("content-encoding");
  if (length <= limit && (encoding === null || encoding === "identity"))
    return { text: await response.text(), complete: true };
  const reader: ReadableStreamDefaultReader<Uint8Array> = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let complete = true;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (total + value.byteLength > limit) {
      chunks.push(value.subarray(0, limit - total));
      total = limit;
      complete = false;
      await reader.cancel().catch(ignore);
      break;
    }
    chunks.push(value);
    total += value.byteLength;
  }
  if (chunks.length === 1) return { text: utf8.decode(chunks[0]), complete };
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { text: utf8.decode(bytes), complete };
}

function ignore(): void {}

/** Whether `error` or one of its causes (a few levels deep) has the `code`. */
function hasCode(error: unknown, code: string): boolean {
  for (let depth = 0; depth < 5 && typeof error === "object" && error !== null; depth++) {
    if ((error as { code?: unknown }).code === code) return true;
    error = (error as { cause?: unknown }).cause;
  }
  return false;
}

function headerRecord(headers: Headers): Record<string, string> {
  const record: Record<string, string> = {};
  headers.forEach((value, name) => {
    record[name] = value;
  });
  return record;
}

/** Sends one request; a failure before a response becomes a `network` error. */
async function send(
  doFetch: typeof fetch,
  url: string,
  init: RequestInit,
  request: HttpRequest,
  ctx: AttemptContext,
  prefix: string,
): Promise<Response> {
  try {
    // fetch resolves when the response headers arrive: that wait is what `timeout.headers` bounds
    return await ctx.awaitHeaders(doFetch(url, init));
  } catch (cause) {
    // a bug (a base URL that does not parse, a body on a GET) surfaces as it is: it is not the
    // dependency failing (docs/runtime.md, "What counts as transient")
    if (isResilienceError(cause) || isProgrammingError(cause)) throw cause;
    const text = cause instanceof Error ? cause.message : String(cause);
    throw new ResilienceError({
      kind: "network",
      message: `${prefix}: ${request.method} ${request.path} failed: ${text}`,
      transient: ctx.retryOn.includes("network"),
      // undici's connect timeout (an Agent's `connect.timeout`, given as `dispatcher`)
      tier: hasCode(cause, "UND_ERR_CONNECT_TIMEOUT") ? "connect" : undefined,
      dependency: ctx.dependency,
      operation: ctx.operation,
      cause,
    });
  }
}

// the statuses fetch treats as redirects; a 300 or a 304 is an answer like any other
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

/**
 * Whether `response` is a redirect: a redirect status with `redirect: "manual"` on Node, Bun,
 * Deno and workerd, or the opaque redirect a browser gives instead (status 0, no headers).
 */
function isRedirect(response: Response): boolean {
  return response.type === "opaqueredirect" || REDIRECT_STATUSES.has(response.status);
}

// headers that describe a body, dropped with it when a redirect turns the request into a GET
// (the Fetch standard's request-body-header names)
const BODY_HEADERS: ReadonlySet<string> = new Set([
  "content-type",
  "content-length",
  "content-encoding",
  "content-language",
  "content-location",
]);

/** Where a redirect points, shown without its query, fragment or user info (they may be secret). */
function shown(target: URL): string {
  return target.origin + target.pathname + (target.search === "" ? "" : "?…");
}

/** Why a redirect is not followed, or `undefined` when it is (docs/runtime.md, "Redirects"). */
function refusal(
  request: HttpRequest,
  response: Response,
  location: string | null,
  target: URL | undefined,
  origin: string,
  hops: number,
  again: boolean,
  method: string,
): string | undefined {
  if (request.redirects !== "same-origin")
    return (
      "redirects are not followed (`redirects: same-origin` in the policy follows those to " +
      "the same origin)"
    );
  if (response.type === "opaqueredirect")
    return "the platform hides the location of a redirect (an opaque redirect): not followed";
  if (target === undefined)
    return location === null ? "it has no Location" : "its Location is not a URL";
  if (target.origin !== origin)
    return `only redirects to ${origin}, where the request was sent, are followed`;
  if (hops >= MAX_REDIRECTS)
    return `it follows ${String(hops)} redirects, and no more than ${String(MAX_REDIRECTS)} are`;
  if (again && request.repeatable !== true)
    return (
      `following it would send the ${method} again, and the operation is not repeatable ` +
      "(idempotent, or with an idempotency key)"
    );
  return undefined;
}

/**
 * Follows the redirects that `request.redirects` allows, from `first`, the answer to `url`, and
 * returns the first response that is not a redirect. A redirect it does not follow fails the
 * attempt with an `http` error (not transient) that keeps its status, headers and body and names
 * its location and the reason. Only redirects to the origin of `url` are ever followed, so the
 * request's headers (credentials and the deadline among them) reach that origin alone.
 */
async function followed(
  first: Response,
  url: string,
  firstInit: RequestInit,
  request: HttpRequest,
  credentialQuery: Readonly<Record<string, string>> | undefined,
  ctx: AttemptContext,
  doFetch: typeof fetch,
  prefix: string,
): Promise<Response> {
  const origin = new URL(url).origin;
  let response = first;
  let current = url;
  let method = request.method;
  let body = firstInit.body ?? undefined;
  for (let hops = 0; isRedirect(response); hops++) {
    const status = response.status;
    const location = response.headers.get("location");
    let target: URL | undefined;
    try {
      target = location === null ? undefined : new URL(location, current);
    } catch {
      target = undefined;
    }
    // a 303, and a 301 or 302 of a POST, turn the request into a GET without a body, as fetch
    // does; any other keeps its method and body
    const toGet =
      (status === 303 && method !== "GET" && method !== "HEAD") ||
      ((status === 301 || status === 302) && method === "POST");
    const again = !toGet && method !== "GET" && method !== "HEAD";
    const why = refusal(request, response, location, target, origin, hops, again, method);
    if (why !== undefined) {
      const limit = request.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
      const text = (await readText(response, limit, true).catch(() => undefined))?.text ?? "";
      const to = target === undefined ? "nowhere" : shown(target);
      const answered =
        response.type === "opaqueredirect"
          ? "answered a redirect"
          : `answered ${String(status)} redirecting to ${to}`;
      throw new ResilienceError({
        kind: "http",
        message: `${prefix}: ${method} ${request.path} ${answered}: ${why}`,
        dependency: ctx.dependency,
        operation: ctx.operation,
        status,
        headers: headerRecord(response.headers),
        body: text,
      });
    }
    // `target` is set whenever `why` is not
    const next = target as URL;
    await response.body?.cancel().catch(ignore);
    // the same origin: the headers of the first request, credentials included, with the
    // runtime's read again, so the deadline header says what is left now
    let headers = mergeHeaders(firstInit.headers as Record<string, string>, ctx.headers());
    if (toGet) {
      method = "GET";
      body = undefined;
      headers = Object.fromEntries(
        Object.entries(headers).filter(([name]) => !BODY_HEADERS.has(name.toLowerCase())),
      );
    }
    for (const [name, value] of Object.entries(credentialQuery ?? {}))
      if (next.searchParams.get(name) !== value) next.searchParams.set(name, value);
    const init: RequestInit = { ...firstInit, method, headers };
    if (body === undefined) delete init.body;
    else init.body = body;
    current = next.href;
    response = await send(doFetch, current, init, request, ctx, prefix);
    ctx.rateLimitSignals?.(response.status, response.headers);
  }
  return response;
}

/**
 * Sends one attempt of an HTTP request with `fetch` and decodes the response.
 *
 * - Sends the client's headers (a function is called once per attempt) with the call's over them,
 *   and `ctx.headers()` (propagated remaining time, idempotency key) over both; passes
 *   `ctx.signal`.
 * - With `vary` set (a stale fallback), reports the request's identity to `ctx.identify`.
 * - 2xx: returns the decoded body; invalid JSON, or a body over `maxResponseBytes`, throws a
 *   `parse` error (not transient). The body is read as it streams and cut at the limit.
 * - Other statuses: throws an `http` error keeping status, headers (lower-case) and body text,
 *   with `Retry-After` parsed, `transient` when the status is in `ctx.retryOn`.
 * - A failure before a response throws a `network` error (transient when `network` is retried).
 */
export async function sendHttp<T>(request: HttpRequest, ctx: AttemptContext): Promise<T> {
  const doFetch = request.fetch ?? globalThis.fetch;
  const pending = prepare(request, ctx.endpoint);
  const ready = pending instanceof Promise ? await pending : pending;
  if (request.vary !== undefined) ctx.identify?.(identityOf(request, ready, request.vary));
  // the runtime's own headers go last: a deadline or an idempotency key of the same name from
  // the client or the call is replaced, never joined to them (docs/runtime.md, "HTTP")
  const headers = mergeHeaders(ready.headers, ctx.headers());
  const body = encodeBody(request.body, headers);
  // a redirect is answered here, never by fetch, which would follow it to any origin with every
  // header of the request (docs/runtime.md, "Redirects")
  const init: RequestInit = {
    method: request.method,
    headers,
    signal: ctx.signal,
    redirect: "manual",
  };
  if (body !== undefined) init.body = body;
  // typed loosely: Node's RequestInit names undici's Dispatcher, the DOM's has no such field
  if (request.dispatcher !== undefined)
    (init as { dispatcher?: unknown }).dispatcher = request.dispatcher;
  const prefix = `${ctx.dependency}.${ctx.operation}`;
  const url = ready.sent ?? ready.url;
  let response = await send(doFetch, url, init, request, ctx, prefix);
  ctx.rateLimitSignals?.(response.status, response.headers);
  if (isRedirect(response))
    response = await followed(
      response,
      url,
      init,
      request,
      ready.credentialQuery,
      ctx,
      doFetch,
      prefix,
    );
  const limit = request.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  if (response.status < 200 || response.status > 299) {
    // an error body is only kept for diagnosis: past the limit it is cut, not refused
    const text = (await readText(response, limit, true).catch(() => undefined))?.text ?? "";
    const error: ResilienceError = new ResilienceError({
      kind: "http",
      message: `${prefix}: ${request.method} ${request.path} answered ${String(response.status)}`,
      dependency: ctx.dependency,
      operation: ctx.operation,
      status: response.status,
      headers: headerRecord(response.headers),
      body: text,
      retryAfterMs: parseRetryAfter(
        response.headers.get("retry-after"),
        response.headers.get("date"),
      ),
    });
    error.transient = matchesRetryOn(error, ctx.retryOn);
    throw error;
  }
  const type = request.responseType ?? "json";
  // the response, for a call that classifies outcomes (docs/runtime.md, "Classifying outcomes")
  const judged = ctx.judges === true;
  if (type === "none") {
    await response.body?.cancel();
    if (judged) ctx.received?.(response.status, headerRecord(response.headers), "");
    return undefined as T;
  }
  const { text, complete } = await readText(response, limit, false);
  if (!complete) {
    throw new ResilienceError({
      kind: "parse",
      message:
        `${prefix}: ${request.method} ${request.path} returned a body over maxResponseBytes ` +
        `(${String(limit)} bytes); the rest was not read`,
      dependency: ctx.dependency,
      operation: ctx.operation,
      status: response.status,
    });
  }
  if (judged) ctx.received?.(response.status, headerRecord(response.headers), text);
  if (type === "text") return text as T;
  let data: unknown;
  try {
    data = text === "" ? undefined : JSON.parse(text);
  } catch (cause) {
    throw new ResilienceError({
      kind: "parse",
      message: `${prefix}: ${request.method} ${request.path} returned invalid JSON`,
      dependency: ctx.dependency,
      operation: ctx.operation,
      status: response.status,
      body: text,
      cause,
    });
  }
  // without `validate` the JSON is cast, not checked: docs/runtime.md, "Response validation"
  if (request.validate === undefined) return data as T;
  return checkedResponse(
    data as T,
    request.validate,
    ctx,
    `${request.method} ${request.path} returned a body that`,
    { status: response.status, body: text },
  );
}
