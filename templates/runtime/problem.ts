// The front door's refusals as RFC 9457 problem details (application/problem+json): small bodies,
// one per kind, built from constants only, never from the request (docs/services.md, "Refusals").

/** Why the front door answered without running the handler. */
export type ProblemKind =
  | "overloaded"
  | "deadline-exceeded"
  | "ambiguous-path"
  | "idempotency-key-missing"
  | "idempotency-key-invalid"
  | "idempotency-key-in-use"
  | "idempotency-key-reused"
  | "idempotency-unavailable";

/**
 * Where every problem `type` starts: the docs section of the kind (docs/services.md), on the
 * project's one base address. Stable: a kind keeps its URI.
 */
export const PROBLEM_TYPE_BASE =
  "https://github.com/resgen-dev/resgen/blob/main/docs/services.md#problem-";

/** A title per kind: what happened and what the caller can do about it. */
export const PROBLEM_TITLES: Readonly<Record<ProblemKind, string>> = {
  overloaded: "The service is overloaded; retry after Retry-After seconds",
  "deadline-exceeded":
    "The request's deadline passed, or left too little time, before it could be handled; " +
    "retry with a longer deadline",
  "ambiguous-path":
    "The request path is ambiguous (encoded slashes, dot segments, empty segments, ';' or " +
    "backslashes); send its plain form",
  "idempotency-key-missing": "This route requires an idempotency key; send one",
  "idempotency-key-invalid":
    "The idempotency key must be 1 to 255 visible ASCII characters; send a valid key",
  "idempotency-key-in-use":
    "A request with this idempotency key is still being handled; retry after Retry-After seconds",
  "idempotency-key-reused":
    "This idempotency key was used for a different request; send a new key for a new request",
  "idempotency-unavailable":
    "The service cannot guarantee at-most-once handling right now; retry after Retry-After seconds",
};

/** Headers and body of a problem answer. */
export interface ProblemAnswer {
  readonly headers: Record<string, string>;
  readonly body: Uint8Array;
}

/**
 * The answer of one kind: `type`, `title`, `status`, and `retryAfter` (seconds, as the
 * Retry-After header says) when the caller should retry. Build it once per kind and status where
 * it is constant: it reads nothing from the request.
 */
export function problemAnswer(
  kind: ProblemKind,
  status: number,
  retryAfterS?: number,
): ProblemAnswer {
  const problem: Record<string, string | number> = {
    type: PROBLEM_TYPE_BASE + kind,
    title: PROBLEM_TITLES[kind],
    status,
  };
  if (retryAfterS !== undefined) problem["retryAfter"] = retryAfterS;
  const body = new TextEncoder().encode(JSON.stringify(problem));
  const headers: Record<string, string> = {
    "content-type": "application/problem+json",
    "content-length": String(body.byteLength),
  };
  if (retryAfterS !== undefined) headers["retry-after"] = String(retryAfterS);
  return { headers, body };
}
