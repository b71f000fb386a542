// What a thrown error means: network failures, programming errors, and the conditions retry
// settings name.
/**
 * Recognising what a transport threw, when it is not a `ResilienceError`. A thrown error is
 * transient only when recognised (docs/runtime.md, "What counts as transient"): a Node or undici
 * network code, an error the retry settings name by `code` or `name`, or one the `classify` hook
 * calls transient. Programming errors surface as they are; anything else is a failure of the
 * dependency that is not retried.
 */

/**
 * An error named in the retry settings: by its `code` (`ECONNRESET`, `14`) or its `name`
 * (`ThrottlingException`).
 */
export type ErrorCondition = { readonly code: string | number } | { readonly name: string };

/**
 * What a `classify` hook says about an error a transport threw:
 * - `transient`: a failure of the dependency worth another attempt (retried like a network
 *   failure);
 * - `failure`: a failure of the dependency, counted by the breaker, not retried;
 * - `bug`: a programming error: no breaker verdict, no retry, no fallback; it is thrown as it is;
 * - `undefined`: no opinion, the runtime decides.
 */
export type ErrorVerdict = "transient" | "failure" | "bug";

/** Decides what an error thrown by a transport means; see {@link ErrorVerdict}. */
export type ErrorClassifier = (
  error: unknown,
  context: { readonly dependency: string; readonly operation: string },
) => ErrorVerdict | undefined;

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
