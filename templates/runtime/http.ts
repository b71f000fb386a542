import { isResilienceError, ResilienceError } from "./errors.js";
import { matchesRetryOn, parseRetryAfter } from "./retry.js";
import type { AttemptContext } from "./timeout.js";

/** A query-string value; arrays repeat the parameter, `undefined` and `null` omit it. */
export type QueryValue = string | number | boolean | null | undefined | readonly (string | number | boolean)[];

/** One HTTP request, as generated clients describe it. */
export interface HttpRequest {
  /** The fetch implementation. Defaults to `globalThis.fetch`. */
  readonly fetch?: typeof fetch | undefined;
  /** Base URL such as `https://payments.internal/v1` (a trailing slash is optional). */
  readonly baseUrl: string;
  /** HTTP method, upper case. */
  readonly method: string;
  /** Path with parameters already expanded and encoded, starting with `/`. */
  readonly path: string;
  /** Query parameters. */
  readonly query?: Readonly<Record<string, QueryValue>> | undefined;
  /** Extra request headers; the runtime's deadline and idempotency headers are added to them. */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** Body: strings, `Uint8Array`s and `URLSearchParams` are sent as is; anything else as JSON. */
  readonly body?: unknown;
  /** How to read a 2xx response: `json` (default; empty bodies give `undefined`), `text`, or `none`. */
  readonly responseType?: "json" | "text" | "none" | undefined;
}

/** Joins base URL, path and query into an absolute URL string. */
export function buildUrl(baseUrl: string, path: string, query?: Readonly<Record<string, QueryValue>>): string {
  const base = baseUrl.endsWith("/") ? baseUrl.slice(0, -1) : baseUrl;
  let url = base + (path.startsWith("/") ? path : `/${path}`);
  if (query !== undefined) {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) {
      if (value === undefined || value === null) continue;
      if (Array.isArray(value)) for (const item of value as readonly unknown[]) params.append(name, String(item));
      else params.append(name, String(value));
    }
    const text = params.toString();
    if (text !== "") url += (url.includes("?") ? "&" : "?") + text;
  }
  return url;
}

/** A fetch body, typed through RequestInit so it matches both Node's and the DOM's declarations. */
type FetchBody = NonNullable<RequestInit["body"]>;

function encodeBody(body: unknown, headers: Record<string, string>): FetchBody | undefined {
  if (body === undefined) return undefined;
  if (typeof body === "string" || body instanceof URLSearchParams) return body;
  // with the DOM lib, a Uint8Array over any ArrayBufferLike is not a BodyInit type-wise; fetch sends it all the same
  if (body instanceof Uint8Array) return body as FetchBody;
  if (!Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) headers["content-type"] = "application/json";
  return JSON.stringify(body);
}

function headerRecord(headers: Headers): Record<string, string> {
  const record: Record<string, string> = {};
  headers.forEach((value, name) => {
    record[name] = value;
  });
  return record;
}

/**
 * Sends one attempt of an HTTP request with `fetch` and decodes the response.
 *
 * - Adds `ctx.headers()` (propagated remaining time, idempotency key) and passes `ctx.signal`.
 * - 2xx: returns the decoded body; invalid JSON throws a `parse` error.
 * - Other statuses: throws an `http` error keeping status, headers (lower-case) and body text,
 *   with `Retry-After` parsed, `transient` when the status is in `ctx.retryOn`.
 * - A failure before a response throws a `network` error (transient when `network` is retried).
 */
export async function sendHttp<T>(request: HttpRequest, ctx: AttemptContext): Promise<T> {
  const doFetch = request.fetch ?? globalThis.fetch;
  const headers: Record<string, string> = { ...request.headers, ...ctx.headers() };
  const body = encodeBody(request.body, headers);
  const init: RequestInit = { method: request.method, headers, signal: ctx.signal };
  if (body !== undefined) init.body = body;
  const prefix = `${ctx.dependency}.${ctx.operation}`;
  let response: Response;
  try {
    response = await doFetch(buildUrl(request.baseUrl, request.path, request.query), init);
  } catch (cause) {
    if (isResilienceError(cause)) throw cause;
    const text = cause instanceof Error ? cause.message : String(cause);
    throw new ResilienceError({
      kind: "network",
      message: `${prefix}: ${request.method} ${request.path} failed: ${text}`,
      transient: ctx.retryOn.includes("network"),
      dependency: ctx.dependency,
      operation: ctx.operation,
      cause,
    });
  }
  if (response.status < 200 || response.status > 299) {
    const text = await response.text().catch(() => "");
    const error: ResilienceError = new ResilienceError({
      kind: "http",
      message: `${prefix}: ${request.method} ${request.path} answered ${response.status}`,
      dependency: ctx.dependency,
      operation: ctx.operation,
      status: response.status,
      headers: headerRecord(response.headers),
      body: text,
      retryAfterMs: parseRetryAfter(response.headers.get("retry-after"), response.headers.get("date")),
    });
    error.transient = matchesRetryOn(error, ctx.retryOn);
    throw error;
  }
  const type = request.responseType ?? "json";
  if (type === "none") {
    await response.body?.cancel();
    return undefined as T;
  }
  const text = await response.text();
  if (type === "text") return text as T;
  if (text === "") return undefined as T;
  try {
    return JSON.parse(text) as T;
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
}
