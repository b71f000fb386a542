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
 * Bookkeeping run the moment an attempt settles, before its promise does (so the caller needs no
 * async frame of its own around the race).
 */
export interface AttemptSettlement<T> {
  /** Records a success; returns the value the attempt resolves with. */
  succeeded(attempt: Attempt, value: T): T;
  /** Records a failure (timeouts and cancellations included); returns the error it rejects with. */
  failed(attempt: Attempt, error: unknown): unknown;
}

const AS_IS: AttemptSettlement<never> = { succeeded: (_attempt, value) => value, failed: (_attempt, error) => error };

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
  readonly #timeoutKind: "timeout" | "deadline";
  #controller: AbortController | undefined;
  #cancelled: ResilienceError | undefined;
  #reject: ((error: unknown) => void) | undefined;
  #settlement: AttemptSettlement<never> = AS_IS;
  #timer: TimerHandle | undefined;
  #settled = false;

  constructor(owner: AttemptOwner, attempt: number, hedge: boolean, timeoutMs: number, timeoutKind: "timeout" | "deadline") {
    this.#owner = owner;
    this.attempt = attempt;
    this.hedge = hedge;
    this.timeoutMs = timeoutMs;
    this.#timeoutKind = timeoutKind;
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

  /** The error the runtime ended this attempt with (timeout, cancellation), if it did. */
  get cancelledWith(): ResilienceError | undefined {
    return this.#cancelled;
  }

  /** Ends the attempt with `error`: settles the race, then aborts the transport's signal. */
  cancel(error: ResilienceError): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#cancelled = error;
    if (this.#timer !== undefined) this.#owner.clock.clearTimer(this.#timer);
    this.#reject?.(this.#settlement.failed(this, error));
    this.#controller?.abort(error);
  }

  /**
   * Calls the transport and races it against the timeout. `settlement` records the outcome as
   * the race settles, and its results are what the returned promise settles with.
   */
  run<T>(transport: Transport<T>, settlement?: AttemptSettlement<T>): Promise<T> {
    const settle = (settlement ?? AS_IS) as AttemptSettlement<T>;
    this.#settlement = settle as AttemptSettlement<never>;
    let pending: Promise<T> | T;
    try {
      pending = transport(this);
    } catch (error) {
      this.#settled = true;
      return Promise.reject(settle.failed(this, error));
    }
    // A synchronous answer cannot outlive its timeout, so it needs neither timer nor race.
    if (!isThenable(pending)) {
      this.#settled = true;
      return Promise.resolve(settle.succeeded(this, pending));
    }
    return new Promise<T>((resolve, reject) => {
      if (this.#settled) {
        reject(settle.failed(this, this.#cancelled));
        return;
      }
      this.#reject = reject;
      if (Number.isFinite(this.timeoutMs)) {
        this.#timer = this.#owner.clock.setTimer(() => this.cancel(this.#timeoutError()), this.timeoutMs);
      }
      Promise.resolve(pending).then(
        (value) => {
          if (this.#finish()) resolve(settle.succeeded(this, value));
        },
        (error: unknown) => {
          if (this.#finish()) reject(settle.failed(this, error));
        },
      );
    });
  }

  #finish(): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    if (this.#timer !== undefined) this.#owner.clock.clearTimer(this.#timer);
    return true;
  }

  #timeoutError(): ResilienceError {
    const owner = this.#owner;
    const ms = Math.round(this.timeoutMs);
    const byDeadline = this.#timeoutKind === "deadline";
    return new ResilienceError({
      kind: this.#timeoutKind,
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
