// Request coalescing: identical calls of a retry-safe read in flight at once share one attempt
// chain (docs/runtime.md, "Coalescing").
import { followAbort } from "./abort.js";
import type { Clock, TimerHandle } from "./clock.js";
import { abortedError, ResilienceError } from "./errors.js";

/**
 * One attempt chain (retries, hedges, breaker and bulkhead admission) shared by the calls that
 * joined it. It runs under its own signal, aborted only when every joined caller has gone, and
 * under its own deadline: the operation's total timeout from its start (each caller still gets
 * its own deadline error at its own deadline, while the chain goes on for the others).
 */
export class CoalescedChain {
  /** The shared chain's result: the same value (or error) for every caller that waits for it. */
  readonly result: Promise<unknown>;
  /** Number of the call that started the chain, as its events report it (`call`). */
  readonly call: number;
  /**
   * Clock time by which the chain itself ends (its total, less the margin): a caller whose own
   * deadline is no earlier needs no timer of its own.
   */
  readonly endsAt: number;
  /** Callers waiting for the result. */
  #waiting = 0;
  #settled = false;
  readonly #controller: AbortController | undefined;
  readonly #abandoned: () => void;

  /**
   * @param controller Aborts the chain's call; its signal is the one the chain runs under.
   *   `undefined` when the first caller cannot leave early: the chain then always has a caller
   *   until it settles, and is never abandoned.
   * @param result The chain's call, started with `controller.signal`.
   * @param call The chain's call number.
   * @param endsAt Clock time by which the chain ends on its own.
   * @param ended Called once when the chain settles or is abandoned: forget it, so the next
   *   identical call starts a new chain.
   */
  constructor(
    controller: AbortController | undefined,
    result: Promise<unknown>,
    call: number,
    endsAt: number,
    ended: () => void,
  ) {
    this.#controller = controller;
    this.call = call;
    this.endsAt = endsAt;
    this.#abandoned = ended;
    // the first reaction to the result: the chain is forgotten before any caller hears of it
    this.result = result.then(
      (value) => {
        this.#end();
        return value;
      },
      (error: unknown) => {
        this.#end();
        throw error;
      },
    );
  }

  /** Callers still waiting. */
  get waiting(): number {
    return this.#waiting;
  }

  #end(): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#abandoned();
  }

  /**
   * The share of a caller that cannot leave early (no signal, no deadline before the chain's):
   * the chain's own promise, nothing of its own to set up; it stays counted until the end.
   */
  share<R>(): Promise<R> {
    this.#waiting++;
    return this.result as Promise<R>;
  }

  /**
   * One caller's share of the chain: the chain's result, unless the caller's own deadline
   * (`at`, clock time) passes or one of its signals aborts first. Then the caller alone gets
   * its `deadline` or `aborted` error; the last caller to go aborts the chain.
   */
  join<R>(
    clock: Clock,
    now: number,
    at: number,
    names: { readonly dependency: string; readonly operation: string },
    signals: readonly (AbortSignal | undefined)[],
  ): Promise<R> {
    this.#waiting++;
    return new Promise<R>((resolve, reject) => {
      let done = false;
      let timer: TimerHandle = undefined;
      // one listener on each signal for every caller and call that follows it (abort.ts)
      const unfollows: (() => void)[] = [];
      const cleanup = (): void => {
        done = true;
        this.#waiting--;
        if (timer !== undefined) clock.clearTimer(timer);
        for (const unfollow of unfollows) unfollow();
      };
      const leave = (error: ResilienceError): void => {
        if (done) return;
        cleanup();
        reject(error);
        if (this.#waiting === 0 && !this.#settled) this.#abandon();
      };
      for (const signal of signals) {
        if (signal === undefined) continue;
        unfollows.push(
          followAbort(signal, () => {
            leave(abortedError(signal.reason));
          }),
        );
      }
      if (at < this.endsAt)
        timer = clock.setTimer(
          () => {
            leave(coalescedDeadline(names.dependency, names.operation, at - now));
          },
          at - now,
          now,
        );
      this.result.then(
        (value) => {
          if (done) return;
          cleanup();
          resolve(value as R);
        },
        (error: unknown) => {
          if (done) return;
          cleanup();
          // the chain's failure as it is, a transport's bug included: `as Error` only types it
          const reason = error as Error;
          reject(reason);
        },
      );
    });
  }

  // every caller has gone: nobody wants the answer, so the chain stops (its attempts aborted,
  // their breaker permits released without a verdict) and the next caller starts afresh
  #abandon(): void {
    this.#end();
    this.#controller?.abort(
      abortedError(undefined, "every caller of the coalesced call went away"),
    );
  }
}

/** The `deadline` error of a caller whose own deadline passed while it waited for its chain. */
export function coalescedDeadline(
  dependency: string,
  operation: string,
  ms: number,
): ResilienceError {
  return new ResilienceError({
    kind: "deadline",
    message:
      `${dependency}.${operation}: the caller's deadline (${String(Math.max(0, Math.floor(ms)))}` +
      " ms) passed while it waited for a coalesced call, which goes on for the others",
    tier: "deadline",
    dependency,
    operation,
    withoutStack: true,
  });
}
