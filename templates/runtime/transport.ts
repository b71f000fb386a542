// The contract between the call engine and a transport: what one attempt receives, and the function
// that sends it.
import type { Deadline } from "./deadline.js";
import type { ChaosFaultKind } from "./events.js";
import type { HeaderLookup } from "./rate-limit.js";
import type { RetryCondition } from "./retry.js";

/** What a transport receives for one attempt. */
export interface AttemptContext {
  /**
   * Aborts when the attempt times out, the caller aborts, or a hedged sibling wins. Created on
   * first read, so transports that ignore it cost nothing extra. The runtime stops waiting at the
   * timeout whether or not the transport honours the signal.
   */
  readonly signal: AbortSignal;
  /**
   * Milliseconds this attempt may take: min(attempt timeout, deadline − margin); may be `Infinity`.
   */
  readonly timeoutMs: number;
  /**
   * Milliseconds the response headers may take from the attempt's start (`timeout.headers`), when
   * that is shorter than {@link AttemptContext.timeoutMs}; `Infinity` otherwise.
   */
  readonly headersTimeoutMs: number;
  /** 1-based attempt number within the logical call (hedged copies included). */
  readonly attempt: number;
  /** Whether this attempt is a hedged copy. */
  readonly hedge: boolean;
  /** The logical call's idempotency key (the same on every attempt), if the operation has one. */
  readonly idempotencyKey: string | undefined;
  /** The logical call's deadline. */
  readonly deadline: Deadline;
  /**
   * The endpoint this attempt goes to (a base URL for HTTP), chosen by the runtime for a
   * dependency given several (docs/runtime.md, "Endpoints"): `sendHttp` sends the request there.
   * `undefined` with one endpoint; optional, so a test's own context need not have it.
   */
  readonly endpoint?: string | undefined;
  /** Dependency name. */
  readonly dependency: string;
  /** Operation name. */
  readonly operation: string;
  /** Failures the operation retries, used to label HTTP errors as transient. */
  readonly retryOn: readonly RetryCondition[];
  /** Headers to send: the propagated remaining time and the idempotency key, when configured. */
  headers(): Record<string, string>;
  /**
   * Races `pending`, the wait for the response headers (fetch resolves when they arrive), against
   * {@link AttemptContext.headersTimeoutMs}: past it the attempt fails with a `timeout` error
   * whose `tier` is `headers`, and the signal aborts. Returns `pending`. Transports that never
   * call it have no headers timeout (docs/runtime.md, "Tiered timeouts").
   */
  awaitHeaders<R>(pending: Promise<R>): Promise<R>;
  /**
   * Tells a stale fallback the identity of the request this attempt sends (`requestIdentity`),
   * for a request whose headers are resolved per attempt (a client's `headers` function): a
   * success is stored under it, and a failure looks up the last one reported. `sendHttp` calls it
   * when its request has `vary`. Optional, so a test's own context need not have it.
   */
  identify?(identity: string): void;
  /**
   * Whether the call classifies outcomes (a `classify` hook, or `retry.on` body conditions):
   * then a transport that decoded a 2xx response reports it with {@link AttemptContext.received}
   * before it returns the body. Optional, like `identify`.
   */
  readonly judges?: boolean;
  /**
   * Reports the 2xx response an attempt decoded: its status, headers (lower-case names) and
   * body text, for the `classify` hook and the body conditions (docs/runtime.md, "Classifying
   * outcomes"). `sendHttp` calls it when {@link AttemptContext.judges} is set.
   */
  received?(status: number, headers: Readonly<Record<string, string>>, text: string): void;
  /**
   * Hands the rate limit a response's status and headers, so a `Retry-After` on a 429 or the
   * RateLimit header fields can pause it (docs/runtime.md, "Rate limit"). `sendHttp` calls it
   * for every response. Optional, so a test's own context need not have it.
   */
  rateLimitSignals?(status: number, headers: HeaderLookup): void;
  /**
   * Labels this attempt with a fault the client's `chaos` option injected into it: its
   * `attempt-end` event carries it, and a `chaos-injected` event is emitted (docs/runtime.md,
   * "Chaos"). Optional, like `identify`.
   */
  injected?(fault: ChaosFaultKind): void;
}

/** Sends one attempt. Throw (or reject) to report failure; see `networkError` and `http.ts`. */
export type Transport<T> = (ctx: AttemptContext) => Promise<T> | T;
