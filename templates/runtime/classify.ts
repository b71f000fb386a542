// What an attempt's outcome means: network failures, programming errors, the conditions retry
// settings name, and the types of the `classify` hook.
import type { ResilienceError } from "./errors.js";
/**
 * Recognising what a transport threw, when it is not a `ResilienceError`. A thrown error is
 * transient only when recognised (docs/runtime.md, "What counts as transient"): a Node or undici
 * network code, or an error the retry settings name by `code` or `name`; a `classify` hook may
 * say otherwise about any outcome. Programming errors surface as they are; anything else is a
 * failure of the dependency that is not retried.
 */

/**
 * An error named in the retry settings: by its `code` (`ECONNRESET`, `14`) or its `name`
 * (`ThrottlingException`).
 */
export type ErrorCondition = { readonly code: string | number } | { readonly name: string };

/**
 * What an attempt's outcome means for the call (docs/runtime.md, "Classifying outcomes"):
 * - `success`: an answer; the breaker and the retry budget count a success, nothing is retried;
 * - `transient`: a failure of the dependency worth another attempt: counted by the breaker, and
 *   retried while attempts, budget and deadline allow;
 * - `failure`: a failure of the dependency, counted by the breaker, not retried;
 * - `ignore`: counted by neither the breaker nor the budget, not retried (a 404 that is an
 *   answer, a caller abort).
 */
export type Verdict = "success" | "transient" | "failure" | "ignore";

/** What an HTTP attempt ended with: a response (any status), or an error before one. */
export type HttpAttemptResult<T = unknown, O extends string = string> =
  | {
      readonly type: "response";
      /** A 2xx status, decoded. */
      readonly ok: true;
      readonly operation: O;
      readonly status: number;
      /** Response headers, lower-case names. */
      readonly headers: Readonly<Record<string, string>>;
      /** The decoded body (the operation's response type). */
      readonly body: T;
      readonly error: undefined;
    }
  | {
      readonly type: "response";
      /** A status other than 2xx. */
      readonly ok: false;
      readonly operation: O;
      readonly status: number;
      readonly headers: Readonly<Record<string, string>>;
      /** The body parsed as JSON when it parses, else its text. */
      readonly body: unknown;
      /** The `http` error the runtime made of it. */
      readonly error: ResilienceError;
    }
  | AttemptError<O>;

/** What a function operation's attempt ended with: its resolved value, or what it threw. */
export type FunctionAttemptResult<T = unknown, O extends string = string> =
  | {
      readonly type: "value";
      readonly ok: true;
      readonly operation: O;
      /** What the function resolved to. */
      readonly value: T;
    }
  | AttemptError<O>;

/** An attempt that ended with an error and no response: thrown, timed out, network. */
export interface AttemptError<O extends string = string> {
  readonly type: "error";
  readonly ok: false;
  readonly operation: O;
  /** What the transport threw (as it was thrown), or the runtime's own `timeout` error. */
  readonly error: unknown;
}

/** Any attempt's outcome, as a `classify` hook sees it. */
export type AttemptResult<T = unknown, O extends string = string> =
  HttpAttemptResult<T, O> | FunctionAttemptResult<T, O>;

/** What a `classify` hook is told beside the outcome. */
export interface ClassifyContext {
  readonly dependency: string;
  readonly operation: string;
  /** 1-based attempt number within the logical call. */
  readonly attempt: number;
  /**
   * The verdict the runtime reached without the hook: `retry.on` (its statuses and body
   * conditions), `retry.errors` and the built-in rules (docs/runtime.md, "Classifying outcomes").
   */
  readonly builtIn: Verdict;
}

/**
 * Decides what an attempt's outcome means; `undefined` keeps the built-in verdict. A hook that
 * throws keeps the built-in verdict too, and a `classify-failed` event reports it.
 */
export type Classifier<R = AttemptResult> = (
  result: R,
  context: ClassifyContext,
) => Verdict | undefined;

/**
 * A condition on a response's status and decoded JSON body (the policy's `retry.on` entries such
 * as `{ status: 200, body: { path: $.status, equals: pending } }`): a response that matches is
 * transient, whatever its status.
 */
export interface ResultCondition {
  readonly status: number;
  /** Property names and array indexes from the body's root (`$.items[0].state`). */
  readonly path: readonly (string | number)[];
  /** The value found at `path`, compared with `===`. */
  readonly equals: string | number | boolean | null;
}

/** Whether a response of `status` and JSON `body` matches one of `conditions`. */
export function matchesResult(
  conditions: readonly ResultCondition[],
  status: number,
  body: unknown,
): boolean {
  for (const c of conditions) {
    if (c.status !== status) continue;
    let value: unknown = body;
    for (const key of c.path) {
      if (typeof value !== "object" || value === null) {
        value = undefined;
        break;
      }
      value = Object.hasOwn(value, key)
        ? (value as Record<string | number, unknown>)[key]
        : undefined;
    }
    if (value === c.equals) return true;
  }
  return false;
}

/** Node (libuv) codes of a connection that failed or broke: the dependency, not the request. */
export const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EPIPE",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
]);

// undici codes that describe a mistake in the request rather than the connection
const UNDICI_MISUSE: ReadonlySet<string> = new Set([
  "UND_ERR_INVALID_ARG",
  "UND_ERR_INVALID_RETURN_VALUE",
  "UND_ERR_NOT_SUPPORTED",
]);

// how far down a chain of `cause`s to look (fetch wraps the socket error once, sometimes twice)
const MAX_CAUSES = 4;

function field(value: unknown, key: "code" | "name" | "cause"): unknown {
  return typeof value === "object" && value !== null
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

function isNetworkCode(code: unknown): boolean {
  if (typeof code !== "string") return false;
  return NETWORK_ERROR_CODES.has(code) || (code.startsWith("UND_ERR_") && !UNDICI_MISUSE.has(code));
}

/**
 * True for a network failure: an error (or one of its causes) with a Node or undici network code,
 * or fetch's `TypeError: fetch failed`, which wraps the socket error as its `cause`.
 */
export function isNetworkFailure(error: unknown): boolean {
  let e = error;
  for (let depth = 0; depth <= MAX_CAUSES && typeof e === "object" && e !== null; depth++) {
    if (isNetworkCode(field(e, "code"))) return true;
    if (e instanceof TypeError && e.message === "fetch failed") return true;
    e = field(e, "cause");
  }
  return false;
}

/**
 * True for a programming error: a TypeError, RangeError, ReferenceError or SyntaxError that is
 * not a network failure (fetch reports a failed connection as a TypeError; that one is not a bug).
 */
export function isProgrammingError(error: unknown): boolean {
  return (
    (error instanceof TypeError ||
      error instanceof RangeError ||
      error instanceof ReferenceError ||
      error instanceof SyntaxError) &&
    !isNetworkFailure(error)
  );
}

/**
 * True when `error` or one of its causes matches one of `conditions` by `code` (as text) or `name`.
 */
export function matchesErrorCondition(
  error: unknown,
  conditions: readonly ErrorCondition[],
): boolean {
  if (conditions.length === 0) return false;
  let e = error;
  for (let depth = 0; depth <= MAX_CAUSES && typeof e === "object" && e !== null; depth++) {
    const code = field(e, "code");
    const name = field(e, "name");
    for (const c of conditions) {
      // codes compare as text: YAML reads `14` as a number, PostgreSQL's codes are strings of
      // digits
      if (
        "code" in c
          ? (typeof code === "string" || typeof code === "number") &&
            String(code) === String(c.code)
          : name !== undefined && name === c.name
      )
        return true;
    }
    e = field(e, "cause");
  }
  return false;
}
