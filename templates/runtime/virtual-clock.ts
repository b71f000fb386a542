// A virtual clock for tests and simulations: time moves only when told to.
import type { Clock, TimerHandle } from "./clock.js";

/**
 * A {@link Clock} whose time only moves when told to. Timers fire in order of due time (then
 * creation order) while the clock advances, with pending promise callbacks run between timers,
 * so code under test observes the same sequence as in real time, without waiting.
 */
export interface VirtualClock extends Clock {
  /** Moves time forward by `ms` milliseconds, firing every timer that falls due. */
  advance(ms: number): Promise<void>;
  /** Moves time forward to `time` (no-op if already past it), firing every timer that falls due. */
  advanceTo(time: number): Promise<void>;
  /**
   * Fires timers one after another until none are left, or `maxTimers` have fired (default
   * 100,000).
   */
  runAll(maxTimers?: number): Promise<void>;
  /** Lets pending promise callbacks run without moving time. */
  flush(): Promise<void>;
  /** Number of timers scheduled and not yet fired or cancelled. */
  readonly pendingTimers: number;
}

interface Entry {
  readonly at: number;
  readonly seq: number;
  readonly callback: () => void;
  live: boolean;
}

/**
 * Runs `fn` in a later macrotask: `setImmediate` where the host has it (Node, Bun, Deno), else
 * `setTimeout(fn, 0)`, as in a browser.
 */
const macrotask: (fn: () => void) => unknown =
  (globalThis as { setImmediate?: (fn: () => void) => unknown }).setImmediate ??
  ((fn) => setTimeout(fn, 0));

function before(a: Entry, b: Entry): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/**
 * Creates a {@link VirtualClock} starting at `startMs` (default 0). Its wall time, which only
 * reports read (`health().breaker.openedAt`), is `epochMs` (default 0, 1970-01-01T00:00:00Z)
 * plus its time, so reports are the same on every run.
 */
export function createVirtualClock(startMs = 0, epochMs = 0): VirtualClock {
  let now = startMs;
  let seq = 0;
  let live = 0;
  const heap: Entry[] = [];

  const push = (entry: Entry): void => {
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = heap[parent];
      if (p === undefined || !before(entry, p)) break;
      heap[i] = p;
      i = parent;
    }
    heap[i] = entry;
  };

  const pop = (): Entry | undefined => {
    const top = heap[0];
    const last = heap.pop();
    if (top === undefined || last === undefined || heap.length === 0) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const left = heap[l];
      if (left === undefined) break;
      const right = heap[l + 1];
      let child = l;
      let next = left;
      if (right !== undefined && before(right, left)) {
        child = l + 1;
        next = right;
      }
      if (!before(next, last)) break;
      heap[i] = next;
      i = child;
    }
    heap[i] = last;
    return top;
  };

  const nextLive = (): Entry | undefined => {
    for (;;) {
      const top = heap[0];
      if (top === undefined || top.live) return top;
      pop();
    }
  };

  // A macrotask turn drains every queued promise callback, however long the chain.
  const flush = (): Promise<void> => new Promise<void>((resolve) => macrotask(resolve));

  const advanceTo = async (time: number): Promise<void> => {
    await flush();
    for (;;) {
      const next = nextLive();
      if (next === undefined || next.at > time) break;
      pop();
      next.live = false;
      live--;
      if (next.at > now) now = next.at;
      next.callback();
      await flush();
    }
    if (time > now) now = time;
    await flush();
  };

  return {
    now: () => now,
    wallTime: () => epochMs + now,
    setTimer(callback: () => void, delayMs: number): TimerHandle {
      const entry: Entry = { at: now + Math.max(0, delayMs), seq: seq++, callback, live: true };
      live++;
      push(entry);
      return entry;
    },
    clearTimer(handle: TimerHandle): void {
      const entry = handle as Entry | undefined;
      if (entry !== undefined && entry.live) {
        entry.live = false;
        live--;
      }
    },
    advance: (ms) => advanceTo(now + ms),
    advanceTo,
    async runAll(maxTimers = 100_000): Promise<void> {
      await flush();
      for (let fired = 0; fired < maxTimers; fired++) {
        const next = nextLive();
        if (next === undefined) return;
        await advanceTo(next.at);
      }
    },
    flush,
    get pendingTimers() {
      return live;
    },
  };
}
