import type { Clock, TimerHandle } from "./clock.js";
import type { Deadline } from "./deadline.js";
import { ResilienceError } from "./errors.js";
import type { RetryCondition } from "./retry.js";

/** What a transport receives for one attempt. */
export interface AttemptContext {
  /**
   * Aborts when the attempt times out, the caller aborts, or a hedged sibling wins. Created on
   * first read, so transports that ignore it cost nothing extra. The runtime stops waiting at the
   * timeout whether or not the transport honours the signal.
   */
  readonly signal: AbortSignal;
  /** Milliseconds this attempt may take: min(attempt timeout, deadline − margin); may be `Infinity`. */
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
}

/** Sends one attempt. Throw (or reject) to report failure; see `networkError` and `http.ts`. */
export type Transport<T> = (ctx: AttemptContext) => Promise<T> | T;

/** The logical call an attempt belongs to (what {@link Attempt} needs from it). */
export interface AttemptOwner {
  readonly clock: Clock;
  readonly dependency: string;
  readonly operation: string;
  readonly idempotencyKey: string | undefined;
  readonly deadline: Deadline;
  readonly retryOn: readonly RetryCondition[];
  headersFor(timeoutMs: number): Record<string, string>;
}

/**
 * Bookkeeping run the moment an attempt settles: the attempt reports to it directly, so no
 * promise of the attempt's own stands between the transport and the logical call.
 */
export interface AttemptSettlement<T> {
  /** The transport returned `value` in time. */
  succeeded(attempt: Attempt, value: T): void;
  /** The transport failed, or the runtime ended the attempt (timeout, cancellation) with `error`. */
  failed(attempt: Attempt, error: unknown): void;
}

/**
 * One attempt: the context handed to the transport, and the race between the transport and the
 * attempt timeout (or a cancellation). The race settles first and the signal is aborted after,
 * so a transport that never settles cannot hold the caller.
 */
export class Attempt implements AttemptContext {
  readonly #owner: AttemptOwner;
  /** 1-based attempt number. */
  readonly attempt: number;
  /** Whether this is a hedged copy. */
  readonly hedge: boolean;
  /** Milliseconds this attempt may take. */
  readonly timeoutMs: number;
  /** Milliseconds the response headers may take; `Infinity` for no limit of their own. */
  readonly headersTimeoutMs: number;
  /** The circuit-breaker permit it was admitted with (see `Permit`). */
  readonly permit: number;
  /** Clock time it started. */
  readonly started: number;
  readonly #timeoutKind: "timeout" | "deadline";
  #controller: AbortController | undefined;
  #cancelled: ResilienceError | undefined;
  #settlement: AttemptSettlement<never> | undefined;
  #timer: TimerHandle | undefined;
  #headersTimer: TimerHandle | undefined;
  #settled = false;

  constructor(
    owner: AttemptOwner,
    attempt: number,
    hedge: boolean,
    timeoutMs: number,
    timeoutKind: "timeout" | "deadline",
    permit: number,
    started: number,
    headersTimeoutMs = Number.POSITIVE_INFINITY,
  ) {
    this.#owner = owner;
    this.attempt = attempt;
    this.hedge = hedge;
    this.timeoutMs = timeoutMs;
    this.#timeoutKind = timeoutKind;
    this.permit = permit;
    this.started = started;
    this.headersTimeoutMs = headersTimeoutMs;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#cancelled !== undefined) this.#controller.abort(this.#cancelled);
    }
    return this.#controller.signal;
  }

  get idempotencyKey(): string | undefined {
    return this.#owner.idempotencyKey;
  }

  get deadline(): Deadline {
    return this.#owner.deadline;
  }

  get dependency(): string {
    return this.#owner.dependency;
  }

  get operation(): string {
    return this.#owner.operation;
  }

  get retryOn(): readonly RetryCondition[] {
    return this.#owner.retryOn;
  }

  headers(): Record<string, string> {
    return this.#owner.headersFor(this.timeoutMs);
  }

  awaitHeaders<R>(pending: Promise<R>): Promise<R> {
    if (this.#settled || !Number.isFinite(this.headersTimeoutMs) || this.#headersTimer !== undefined) return pending;
    const clock = this.#owner.clock;
    const timer = clock.setTimer(() => this.cancel(this.#headersError()), this.headersTimeoutMs, this.started);
    this.#headersTimer = timer;
    const clear = (): void => clock.clearTimer(timer);
    pending.then(clear, clear);
    return pending;
  }

  /** The error the runtime ended this attempt with (timeout, cancellation), if it did. */
  get cancelledWith(): ResilienceError | undefined {
    return this.#cancelled;
  }

  /** Ends the attempt with `error`: settles the race, then aborts the transport's signal. */
  cancel(error: ResilienceError): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#cancelled = error;
    this.#clearTimers();
    this.#settlement?.failed(this, error);
    this.#controller?.abort(error);
  }

  /**
   * Calls the transport and races it against the timeout; `settlement` hears how the race
   * ended, exactly once. A synchronous answer (or throw) is reported before `start` returns.
   */
  start<T>(transport: Transport<T>, settlement: AttemptSettlement<T>): void {
    this.#settlement = settlement as AttemptSettlement<never>;
    let pending: Promise<T> | T;
    try {
      pending = transport(this);
    } catch (error) {
      if (this.#finish()) settlement.failed(this, error);
      return;
    }
    // A synchronous answer cannot outlive its timeout, so it needs neither timer nor race.
    if (!isThenable(pending)) {
      if (this.#finish()) settlement.succeeded(this, pending);
      return;
    }
    const settled = pending instanceof Promise ? pending : Promise.resolve(pending);
    if (this.#settled) {
      // cancelled while the transport was starting: its late failure is nobody's to report
      settled.catch(ignore);
      return;
    }
    if (Number.isFinite(this.timeoutMs)) {
      this.#timer = this.#owner.clock.setTimer(() => this.cancel(this.#timeoutError()), this.timeoutMs, this.started);
    }
    settled.then(
      (value) => {
        if (this.#finish()) settlement.succeeded(this, value);
      },
      (error: unknown) => {
        if (this.#finish()) settlement.failed(this, error);
      },
    );
  }

  #finish(): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    this.#clearTimers();
    return true;
  }

  #clearTimers(): void {
    if (this.#timer !== undefined) this.#owner.clock.clearTimer(this.#timer);
    if (this.#headersTimer !== undefined) this.#owner.clock.clearTimer(this.#headersTimer);
  }

  #headersError(): ResilienceError {
    const owner = this.#owner;
    return new ResilienceError({
      kind: "timeout",
      tier: "headers",
      message: `${owner.dependency}.${owner.operation}: attempt ${this.attempt} got no response headers within ${Math.round(this.headersTimeoutMs)} ms`,
      transient: owner.retryOn.includes("timeout"),
      dependency: owner.dependency,
      operation: owner.operation,
      withoutStack: true,
    });
  }

  #timeoutError(): ResilienceError {
    const owner = this.#owner;
    const ms = Math.round(this.timeoutMs);
    const byDeadline = this.#timeoutKind === "deadline";
    return new ResilienceError({
      kind: this.#timeoutKind,
      tier: byDeadline ? "deadline" : "attempt",
      message: byDeadline
        ? `${owner.dependency}.${owner.operation}: deadline reached during attempt ${this.attempt} (${ms} ms left)`
        : `${owner.dependency}.${owner.operation}: attempt ${this.attempt} timed out after ${ms} ms`,
      transient: !byDeadline && owner.retryOn.includes("timeout"),
      dependency: owner.dependency,
      operation: owner.operation,
      withoutStack: true,
    });
  }
}

function isThenable<T>(value: Promise<T> | T): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

function ignore(): void {}
