// The admission gate of inbound middleware: concurrency limit, priority queue and load shedding.
import type { Clock, TimerHandle } from "./clock.js";

/**
 * How important an inbound request is when the service is overloaded: `critical` (health
 * checks, the paths the business cannot lose) is shed last, `low` (background sync, prefetch)
 * first.
 */
export type Priority = "critical" | "high" | "normal" | "low";

/** Priorities from most to least important. */
export const PRIORITIES: readonly Priority[] = ["critical", "high", "normal", "low"];

const RANK: Readonly<Record<Priority, number>> = { critical: 0, high: 1, normal: 2, low: 3 };

/** Concurrency limit and bounded queue for inbound work. */
export interface AdmissionSettings {
  /** Requests handled at once. */
  readonly maxConcurrent: number;
  /** Requests that may wait for a slot; 0 sheds at once when all slots are busy. */
  readonly maxQueue: number;
  /** Longest wait in the queue, in milliseconds (the request's deadline bounds it too). */
  readonly queueTimeoutMs: number;
  /** Adapts the limit to latency below `maxConcurrent`; absent or `null`: the limit is fixed. */
  readonly adaptive?: AdaptiveLimitSettings | null | undefined;
  /**
   * Slots each priority above the lowest keeps for itself: less important requests cannot take
   * them, more important ones can. A request is admitted while fewer than `limit − (reserves of
   * the priorities above it)` slots are busy, so a `critical` request finds a free slot while
   * its reserve is unused, whatever the queue holds. Absent: {@link defaultReserve}; `{}`: none.
   */
  readonly reserve?: Reserve | null | undefined;
}

/** Slots kept for a priority and those above it; the lowest priority has none to keep. */
export type Reserve = Readonly<Partial<Record<Exclude<Priority, "low">, number>>>;

/**
 * The reserve when the settings give none: one slot for `critical` when there are at least two
 * slots, else none.
 */
export function defaultReserve(maxConcurrent: number): Reserve {
  return maxConcurrent >= 2 ? { critical: 1 } : {};
}

/**
 * AIMD concurrency limit (additive increase, multiplicative decrease), as in Netflix's
 * concurrency-limits: a request slower than `latencyMs` (or one that failed) cuts the limit to
 * `limit × backoff`; a fast one raises it by 1 / limit, so about one slot per limit's worth of
 * fast requests. The limit stays within [`minLimit`, `maxConcurrent`] and starts at the maximum.
 */
export interface AdaptiveLimitSettings {
  /** Lowest limit. */
  readonly minLimit: number;
  /** Milliseconds above which a request counts as a sign of overload. */
  readonly latencyMs: number;
  /** Factor applied to the limit on a slow request, in (0, 1), e.g. 0.9. */
  readonly backoff: number;
}

/**
 * Why a request was not admitted: `overload` (queue full or waited too long) or `expired` (its
 * deadline passed while it waited).
 */
export type ShedReason = "overload" | "expired";

/**
 * What exactly refused it: `queue-full` (no slot and no place in the queue, or no time to wait),
 * `evicted` (a more important newcomer took its place in the queue), `queue-timeout` (waited
 * `queueTimeoutMs`), `expired` (its deadline passed).
 */
export type ShedCause = "queue-full" | "evicted" | "queue-timeout" | "expired";

/** A queued request: told once, either `admitted` or `shed`. */
interface Waiter {
  readonly rank: number;
  readonly admitted: () => void;
  readonly shed: (reason: ShedReason, cause: ShedCause) => void;
  readonly deadlineAt: number;
  // undefined until armed (TimerHandle is unknown, so it already admits undefined)
  timer: TimerHandle;
  done: boolean;
}

/** Snapshot of an {@link AdmissionGate}. */
export interface AdmissionHealth {
  /** Requests holding a slot. */
  readonly inFlight: number;
  /** Requests waiting for one. */
  readonly queued: number;
  /** Slots: the fixed limit, or the adaptive limit's current value (rounded down). */
  readonly maxConcurrent: number;
}

/**
 * Admission control for inbound work: a concurrency limit with a bounded priority queue. A free
 * slot admits at once (no allocation); with every slot busy a request waits in the queue of its
 * priority, bounded by the queue timeout and its deadline; with the queue full it takes the place
 * of the newest waiter of a lower priority, or is shed. A released slot goes to the oldest
 * waiter of the highest priority, so under overload the important work goes first and the
 * least important is shed. Saturation (queue length and queue wait) is the signal, not CPU.
 */
export class AdmissionGate {
  /** The settings it was created with. */
  readonly settings: AdmissionSettings;
  readonly #clock: Clock;
  // one FIFO per priority, indexed by rank; arrays with a head index so dequeue is O(1)
  readonly #queues: Waiter[][] = [[], [], [], []];
  readonly #heads: number[] = [0, 0, 0, 0];
  #queued = 0;
  #inFlight = 0;
  #limit: number;
  // by rank: the slots reserved for the priorities above it, which it cannot take
  readonly #held: readonly number[];

  constructor(settings: AdmissionSettings, clock: Clock) {
    this.settings = settings;
    this.#clock = clock;
    this.#limit = settings.maxConcurrent;
    const reserve = settings.reserve ?? defaultReserve(settings.maxConcurrent);
    const held = [0];
    let sum = 0;
    for (const priority of PRIORITIES.slice(0, -1)) {
      sum += Math.max(0, reserve[priority as keyof Reserve] ?? 0);
      held.push(sum);
    }
    this.#held = held;
  }

  // slots a request of this rank may fill; never below one, so an adaptive limit cut below the
  // reserves cannot starve the lower priorities for good
  #cap(rank: number): number {
    const cap = Math.floor(this.#limit) - (this.#held[rank] ?? 0);
    return cap > 1 ? cap : 1;
  }

  /**
   * Asks for a slot. Returns `true` when admitted at once (call {@link AdmissionGate.release}
   * when done), `false` when shed at once for overload, or a cancel function when queued: then
   * exactly one of `admitted` and `shed` is called later, unless cancel is called first.
   */
  enter(
    priority: Priority,
    deadlineAt: number,
    admitted: () => void,
    shed: (reason: ShedReason, cause: ShedCause) => void,
  ): boolean | (() => void) {
    const rank = RANK[priority];
    if (this.#inFlight < this.#cap(rank)) {
      this.#inFlight++;
      return true;
    }
    const waitMs = Math.min(this.settings.queueTimeoutMs, deadlineAt - this.#clock.now());
    if (waitMs <= 0) return false;
    if (this.#queued >= this.settings.maxQueue) {
      const victim = this.#newestBelow(rank);
      if (victim === undefined) return false;
      this.#finish(victim);
      victim.shed("overload", "evicted");
    }
    const waiter: Waiter = { rank, admitted, shed, deadlineAt, timer: undefined, done: false };
    // decided now: a timer may fire a fraction of a millisecond before its due time
    const expires = deadlineAt - this.#clock.now() <= this.settings.queueTimeoutMs;
    waiter.timer = this.#clock.setTimer(() => {
      if (waiter.done) return;
      this.#finish(waiter);
      waiter.shed(expires ? "expired" : "overload", expires ? "expired" : "queue-timeout");
    }, waitMs);
    const queue = this.#queues[rank];
    if (queue === undefined) return false;
    queue.push(waiter);
    this.#queued++;
    return () => {
      if (!waiter.done) this.#finish(waiter);
    };
  }

  /**
   * Gives back a slot; the oldest waiter of the highest priority gets it, if that priority may
   * fill one more slot (else the slot stays free, kept for the priorities that reserved it).
   *
   * @param latencyMs How long the request took, for the adaptive limit (ignored without one).
   * @param failed Whether it failed (a failure counts as slow for the adaptive limit).
   */
  release(latencyMs = 0, failed = false): void {
    const adaptive = this.settings.adaptive;
    if (adaptive) {
      const max = this.settings.maxConcurrent;
      this.#limit =
        failed || latencyMs > adaptive.latencyMs
          ? Math.max(adaptive.minLimit, this.#limit * adaptive.backoff)
          : Math.min(max, this.#limit + 1 / this.#limit);
      // above the (lowered) limit, a freed slot is not handed on
      if (this.#inFlight > Math.floor(this.#limit)) {
        this.#inFlight--;
        return;
      }
    }
    if (this.#inFlight > 0) this.#inFlight--;
    for (;;) {
      const next = this.#oldestFirst();
      if (next === undefined || this.#inFlight >= this.#cap(next.rank)) return;
      this.#finish(next);
      if (this.#clock.now() >= next.deadlineAt) {
        next.shed("expired", "expired");
        continue;
      }
      this.#inFlight++;
      next.admitted();
      return;
    }
  }

  /** Slots in use and waiters. */
  health(): AdmissionHealth {
    return {
      inFlight: this.#inFlight,
      queued: this.#queued,
      maxConcurrent: Math.floor(this.#limit),
    };
  }

  #finish(waiter: Waiter): void {
    if (waiter.done) return;
    waiter.done = true;
    this.#queued--;
    if (waiter.timer !== undefined) this.#clock.clearTimer(waiter.timer);
  }

  // the oldest waiter of the highest priority, left in its queue (finishing it removes it)
  #oldestFirst(): Waiter | undefined {
    for (let rank = 0; rank < this.#queues.length; rank++) {
      const queue = this.#queues[rank];
      if (queue === undefined) break;
      let head = this.#heads[rank] ?? 0;
      while (head < queue.length) {
        const waiter = queue[head];
        if (waiter !== undefined && !waiter.done) {
          this.#compact(rank, head);
          return waiter;
        }
        head++;
      }
      this.#compact(rank, head);
    }
    return undefined;
  }

  #newestBelow(rank: number): Waiter | undefined {
    for (let r = this.#queues.length - 1; r > rank; r--) {
      const queue = this.#queues[r];
      if (queue === undefined) continue;
      const head = this.#heads[r] ?? 0;
      for (let i = queue.length - 1; i >= head; i--) {
        const waiter = queue[i];
        if (waiter !== undefined && !waiter.done) return waiter;
      }
    }
    return undefined;
  }

  #compact(rank: number, head: number): void {
    const queue = this.#queues[rank];
    if (queue === undefined) return;
    if (head >= queue.length) {
      queue.length = 0;
      this.#heads[rank] = 0;
    } else if (head > 1024 && head * 2 > queue.length) {
      queue.splice(0, head);
      this.#heads[rank] = 0;
    } else {
      this.#heads[rank] = head;
    }
  }
}
