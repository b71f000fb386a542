// The bulkhead: a dependency's concurrency limit, with a bounded queue.
import { followAbort } from "./abort.js";
import {
  GradientLimit,
  type GradientLimitHealth,
  type GradientLimitSettings,
} from "./adaptive-limit.js";
import type { Clock, TimerHandle } from "./clock.js";
import { abortedError, ResilienceError } from "./errors.js";
import type { Emitter } from "./events.js";

/** Concurrency limit for one dependency. */
export interface BulkheadSettings {
  /**
   * Logical calls allowed in flight at once (retries included in their call's permit); with
   * `adaptive`, the limit it starts from.
   */
  readonly maxConcurrent: number;
  /** Calls allowed to wait for a permit; 0 rejects at once when full. */
  readonly maxQueue: number;
  /**
   * Longest wait in the queue, in milliseconds (then `bulkhead-full`); the call's deadline bounds
   * it too (then `deadline`). 0 means the deadline alone bounds the wait.
   */
  readonly queueTimeoutMs: number;
  /**
   * With a full queue: `reject` turns the newcomer away; `drop-oldest` evicts the longest
   * waiter (with a `bulkhead-full` error) to make room.
   */
  readonly overflow: "reject" | "drop-oldest";
  /**
   * Present when the limit follows the dependency's latency (docs/runtime.md, "Adaptive
   * concurrency"); absent or null for a fixed `maxConcurrent`.
   */
  readonly adaptive?: GradientLimitSettings | null;
}

/** Snapshot returned by {@link Bulkhead.health}. */
export interface BulkheadHealth {
  /** Logical calls holding a permit. */
  readonly inFlight: number;
  /** Calls waiting for a permit. */
  readonly queued: number;
  /** Permit count: the adaptive limit's current value when there is one. */
  readonly maxConcurrent: number;
  /** Queue size. */
  readonly maxQueue: number;
  /** The adaptive limit and the latencies it follows; only with `adaptive` settings. */
  readonly adaptive?: GradientLimitHealth;
}

interface Waiter {
  readonly operation: string;
  readonly resolve: () => void;
  readonly reject: (error: ResilienceError) => void;
  timer: TimerHandle;
  /** Stops following the caller's signal (abort.ts). */
  unfollow: (() => void) | undefined;
}

/**
 * Semaphore with a bounded FIFO queue. A permit is held for the whole logical call, across
 * retries; {@link Bulkhead.leave} hands it straight to the oldest waiter.
 */
export class Bulkhead {
  #settings: BulkheadSettings;
  readonly #dependency: string;
  readonly #clock: Clock;
  readonly #events: Emitter;
  readonly #waiters = new Set<Waiter>();
  #inFlight = 0;
  /** Permits: `maxConcurrent`, or the adaptive limit's current value. */
  #limit: number;
  /** The adaptive limit, or null for a fixed one. */
  readonly adaptive: GradientLimit | null;

  constructor(dependency: string, settings: BulkheadSettings, clock: Clock, events: Emitter) {
    this.#dependency = dependency;
    this.#settings = settings;
    this.#clock = clock;
    this.#events = events;
    const adaptive = settings.adaptive;
    this.adaptive =
      adaptive === undefined || adaptive === null
        ? null
        : new GradientLimit(settings.maxConcurrent, adaptive);
    this.#limit = this.adaptive === null ? settings.maxConcurrent : this.adaptive.limit;
  }

  /** The settings in force: those it was created with, or the last {@link reconfigure}'s. */
  get settings(): BulkheadSettings {
    return this.#settings;
  }

  /**
   * Replaces the size, queue and queue timeout (the caller validates them, reconfigure.ts). Calls
   * holding a permit keep it: a lowered limit admits no one until they fall below it, a raised
   * one admits waiters at once. Waiters already queued keep their timers.
   */
  reconfigure(settings: BulkheadSettings): void {
    this.#settings = settings;
    if (this.adaptive !== null) return;
    this.#limit = settings.maxConcurrent;
    this.#admitWaiters();
  }

  /** Permits: `maxConcurrent`, or the adaptive limit's current value. */
  get limit(): number {
    return this.#limit;
  }

  /** Logical calls holding a permit. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Calls waiting for a permit. */
  get queued(): number {
    return this.#waiters.size;
  }

  /**
   * Asks for a permit. Returns `undefined` when admitted at once, a promise when queued (it
   * resolves once admitted, or rejects), and a `bulkhead-full` error when rejected at once
   * (returned, not thrown, to keep load shedding cheap).
   *
   * @param deadlineMs Milliseconds left before the call's deadline (bounds the queue wait).
   */
  enter(
    operation: string,
    deadlineMs: number,
    signal?: AbortSignal,
  ): Promise<void> | ResilienceError | undefined {
    if (this.#inFlight < this.#limit) {
      this.#inFlight++;
      return undefined;
    }
    const { maxQueue, queueTimeoutMs, overflow } = this.settings;
    const deadlineBound = queueTimeoutMs <= 0 || deadlineMs < queueTimeoutMs;
    const waitMs = deadlineBound ? deadlineMs : queueTimeoutMs;
    if (maxQueue <= 0 || waitMs <= 0) return this.#reject(operation, "full");
    if (this.#waiters.size >= maxQueue) {
      if (overflow === "reject") return this.#reject(operation, "queue-full");
      const oldest = this.#waiters.values().next().value;
      if (oldest !== undefined) {
        this.#remove(oldest);
        oldest.reject(this.#reject(oldest.operation, "evicted"));
      }
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        operation,
        resolve,
        reject,
        timer: undefined,
        unfollow: undefined,
      };
      waiter.timer = this.#clock.setTimer(() => {
        this.#remove(waiter);
        reject(
          deadlineBound ? this.#deadline(operation) : this.#reject(operation, "queue-timeout"),
        );
      }, waitMs);
      // one listener on the signal for every waiter and call that follows it (abort.ts)
      if (signal !== undefined) {
        waiter.unfollow = followAbort(signal, () => {
          this.#remove(waiter);
          reject(abortedError(signal.reason));
        });
      }
      this.#waiters.add(waiter);
      if (this.#events.active) {
        this.#events.emit({
          type: "bulkhead-queued",
          dependency: this.#dependency,
          operation,
          inFlight: this.#inFlight,
          queued: this.#waiters.size,
        });
      }
    });
  }

  /**
   * Feeds the adaptive limit one completed call (only with one): how long it held its permit,
   * and the clock's time it ended at.
   * Call before {@link Bulkhead.leave}. A raised limit admits waiters at once; a lowered one
   * admits no one until the calls in flight fall below it (none is cut short).
   */
  observe(operation: string, heldMs: number, now: number): void {
    const adaptive = this.adaptive;
    if (adaptive === null || !adaptive.sample(heldMs, this.#inFlight, now)) return;
    const previous = this.#limit;
    this.#limit = adaptive.limit;
    if (this.#events.active) {
      const health = adaptive.health();
      this.#events.emit({
        type: "bulkhead-limit-changed",
        dependency: this.#dependency,
        operation,
        previous,
        limit: this.#limit,
        latencyMs: health.latencyMs,
        baselineMs: health.baselineMs,
      });
    }
    this.#admitWaiters();
  }

  // the oldest waiters, while the limit has room for them
  #admitWaiters(): void {
    while (this.#inFlight < this.#limit && this.#waiters.size > 0) {
      const next = this.#waiters.values().next().value;
      if (next === undefined) break;
      this.#remove(next);
      this.#inFlight++;
      next.resolve();
    }
  }

  /** Returns a permit, admitting the oldest waiter if any (and if the limit has room for it). */
  leave(): void {
    // (reading the oldest waiter makes an iterator, so only when there is one)
    const next = this.#waiters.size === 0 ? undefined : this.#waiters.values().next().value;
    // a permit handed over keeps the count: only while the count is within a lowered limit
    if (next !== undefined && this.#inFlight <= this.#limit) {
      this.#remove(next);
      next.resolve();
    } else if (this.#inFlight > 0) {
      this.#inFlight--;
    }
  }

  /** A snapshot of occupancy. */
  health(): BulkheadHealth {
    const health: BulkheadHealth = {
      inFlight: this.#inFlight,
      queued: this.#waiters.size,
      maxConcurrent: this.#limit,
      maxQueue: this.settings.maxQueue,
    };
    return this.adaptive === null ? health : { ...health, adaptive: this.adaptive.health() };
  }

  #remove(waiter: Waiter): void {
    this.#waiters.delete(waiter);
    this.#clock.clearTimer(waiter.timer);
    if (waiter.unfollow !== undefined) waiter.unfollow();
  }

  #deadline(operation: string): ResilienceError {
    if (this.#events.active) {
      this.#events.emit({
        type: "deadline-exceeded",
        dependency: this.#dependency,
        operation,
        stage: "queue",
      });
    }
    return new ResilienceError({
      kind: "deadline",
      tier: "deadline",
      message:
        `${this.#dependency}.${operation}: ` + "deadline reached while waiting for a bulkhead slot",
      dependency: this.#dependency,
      operation,
      withoutStack: true,
    });
  }

  #reject(
    operation: string,
    reason: "full" | "queue-full" | "evicted" | "queue-timeout",
  ): ResilienceError {
    if (this.#events.active) {
      this.#events.emit({
        type: "bulkhead-rejected",
        dependency: this.#dependency,
        operation,
        inFlight: this.#inFlight,
        queued: this.#waiters.size,
        reason,
      });
    }
    const detail =
      reason === "full"
        ? `all ${String(this.#limit)} slots busy`
        : reason === "queue-full"
          ? `all ${String(this.#limit)} slots busy and ` +
            `${String(this.settings.maxQueue)} waiting`
          : reason === "evicted"
            ? "evicted from the queue by a newer call"
            : "no slot freed up in time";
    return new ResilienceError({
      kind: "bulkhead-full",
      tier: reason === "queue-timeout" ? "queue" : undefined,
      message: `${this.#dependency}.${operation}: bulkhead full (${detail})`,
      dependency: this.#dependency,
      operation,
      withoutStack: true,
    });
  }
}
