// Retry settings, which failures they retry, Retry-After, and the delay before the next attempt.
import { backoffDelay, type BackoffSettings } from "./backoff.js";
import type { ResilienceError } from "./errors.js";
import type { Random } from "./random.js";

/**
 * A failure worth retrying: an attempt `timeout`, a `network` failure, or an HTTP status.
 * Never list a 4xx that describes the request (400, 401, 403, 404, 422 …).
 */
export type RetryCondition = "timeout" | "network" | number;

/** Default retry conditions: timeout, network, 408, 425, 429, 500, 502, 503, 504. */
export const DEFAULT_RETRY_ON: readonly RetryCondition[] = [
  "timeout",
  "network",
  408,
  425,
  429,
  500,
  502,
  503,
  504,
];

/** Retry settings of an operation. */
export interface RetrySettings {
  /** Attempts in total, counting the first one (so 3 means up to 2 retries). */
  readonly maxAttempts: number;
  /** Delay between attempts. */
  readonly backoff: BackoffSettings;
  /** Failures that are retried. Defaults to {@link DEFAULT_RETRY_ON} when generated. */
  readonly on: readonly RetryCondition[];
  /**
   * `Retry-After` handling (the policy's `retryAfter`): the server's wait replaces the backoff
   * delay. A wait longer than `maxMs` milliseconds (`null`: no limit), or one that would pass the
   * deadline, ends the call at once with the last failure, whose `retryAfterMs` is the server's
   * wait. After a server-set wait, the backoff starts again from `baseMs` (gRPC A6 pushback).
   * `null` ignores the header.
   */
  readonly retryAfter: { readonly maxMs: number | null } | null;
}

/** Whether `error` matches one of the retry conditions. */
export function matchesRetryOn(error: ResilienceError, on: readonly RetryCondition[]): boolean {
  switch (error.kind) {
    case "timeout":
      return on.includes("timeout");
    case "network":
      return on.includes("network");
    case "http":
      return error.status !== undefined && on.includes(error.status);
    default:
      return false;
  }
}

/** The wait before a retry and where it came from. */
export interface RetryDelay {
  /** Milliseconds to wait. */
  readonly delayMs: number;
  /** Whether the wait came from `Retry-After` rather than the backoff. */
  readonly fromRetryAfter: boolean;
  /**
   * Whether the server asked for a wait longer than `retryAfter.maxMs`: then there is no retry,
   * and `delayMs` is the server's wait.
   */
  readonly beyondCap: boolean;
}

/**
 * The wait before the `retry`-th retry (1-based) after `error`: the server's `Retry-After`
 * when honoured and present, else the jittered backoff. A server's wait over the cap is not
 * shortened to the cap: it is returned as it is, with `beyondCap` set, and no retry is made.
 * Count `retry` from the last server-set wait, so that the backoff restarts at its base.
 *
 * @param previousMs The previous backoff delay (for decorrelated jitter); `baseMs` at first.
 */
export function retryDelay(
  settings: RetrySettings,
  retry: number,
  previousMs: number,
  random: Random,
  error: ResilienceError,
): RetryDelay {
  const after = settings.retryAfter;
  if (after !== null && error.retryAfterMs !== undefined) {
    const delayMs = Math.max(0, error.retryAfterMs);
    return {
      delayMs,
      fromRetryAfter: true,
      beyondCap: after.maxMs !== null && delayMs > after.maxMs,
    };
  }
  return {
    delayMs: backoffDelay(settings.backoff, retry, previousMs, random),
    fromRetryAfter: false,
    beyondCap: false,
  };
}

/**
 * Parses a `Retry-After` value into milliseconds: delta-seconds (`120`) or an HTTP-date, the
 * latter measured from the response's `Date` header when it parses, else from `wallNowMs`.
 * Returns `undefined` when absent or malformed; past dates give 0.
 *
 * @param wallNowMs Wall-clock milliseconds since the epoch. Defaults to `Date.now()`.
 */
export function parseRetryAfter(
  value: string | null | undefined,
  dateHeader?: string | null,
  wallNowMs: number = Date.now(),
): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1_000;
  // An HTTP-date always names its day or month; bare numbers such as "-5" are not dates.
  const at = /[A-Za-z]/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(at)) return undefined;
  const served =
    dateHeader === null || dateHeader === undefined ? Number.NaN : Date.parse(dateHeader);
  const from = Number.isNaN(served) ? wallNowMs : served;
  return Math.max(0, at - from);
}
