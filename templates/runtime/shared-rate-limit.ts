// A rate limit every replica shares: GCRA in one store step, and this replica's share of the
// rate when the store cannot answer (docs/store.md, "Global rate limit").
import type { Clock } from "./clock.js";
import type { RateLimiter, SharedGrant, SharedPermits } from "./rate-limit.js";
import type { SharedStore, StoreScript } from "./store.js";

/**
 * Called for each permit taken from the local share: the operation whose attempt took it, the
 * share's rate, and why the store could not answer.
 */
export type LocalShareListener = (operation: string, perSecond: number, reason: string) => void;

/** After a failed step, the limit takes its permits locally this long before it asks again. */
export const STORE_RETRY_MS = 1_000;

interface Taken {
  readonly granted: boolean;
  readonly waitMs: number;
  /** Permits free right after this step. */
  readonly free: number;
}

// Lua's numbers are doubles, written back in full so that nothing is lost between steps
const NUMBER = "%.17g";
// Times count microseconds from 2023-11-14 (Unix second 1.7e9), not from 1970: a double near
// 10^14 resolves 1/64 µs where one near 1.7 × 10^15 resolves 1/4, which matters at a million
// permits a second (an interval of 1 µs).
const EPOCH_S = 1_700_000_000;

/**
 * Takes a permit (GCRA, as {@link RateLimiter} does, on the store). KEYS[1] the theoretical
 * arrival time, in microseconds of the server's clock; ARGV the emission interval and the
 * tolerance in microseconds, the offset from now at which the attempt would go and the longest
 * it may wait beyond it, in milliseconds. Replies `{granted, waitMs, free}`: the wait beyond the
 * offset, and the permits left for an attempt now. The key expires when its time has passed.
 */
export const TAKE: StoreScript<Taken> = {
  name: "rate-limit-take",
  lua: `local t = redis.call('TIME')
local now = (tonumber(t[1]) - ${String(EPOCH_S)}) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local at = now + tonumber(ARGV[3]) * 1000
local tat = tonumber(redis.call('GET', KEYS[1])) or at
if tat < at then tat = at end
local wait = tat - tolerance - at
if wait < 0 then wait = 0 end
local granted = 0
if wait <= tonumber(ARGV[4]) * 1000 then
  granted = 1
  tat = tat + interval
  local px = math.max(1, math.ceil((tat - now) / 1000))
  redis.call('SET', KEYS[1], string.format('${NUMBER}', tat), 'PX', px)
end
local free = math.floor((tolerance + interval - (tat - now)) / interval + 1e-9)
if free < 0 then free = 0 end
return {granted, string.format('${NUMBER}', wait / 1000), free}`,
  parse: (reply) => {
    const [granted, wait, free] = reply as [number, string, number];
    return { granted: granted === 1, waitMs: Number(wait), free };
  },
  memory: (map, [key = ""], [interval = "1", tolerance = "0", offset = "0", bound = "0"], now) => {
    const nowUs = now * 1_000;
    const intervalUs = Number(interval);
    const toleranceUs = Number(tolerance);
    const at = nowUs + Number(offset) * 1_000;
    const stored = map.get(key, now);
    let tat = typeof stored === "number" && stored > at ? stored : at;
    const wait = Math.max(0, tat - toleranceUs - at);
    const granted = wait <= Number(bound) * 1_000;
    if (granted) {
      tat += intervalUs;
      map.set(key, tat, Math.ceil((tat - nowUs) / 1_000), now);
    }
    const free = Math.floor((toleranceUs + intervalUs - (tat - nowUs)) / intervalUs + 1e-9);
    return { granted, waitMs: wait / 1_000, free: Math.max(0, free) };
  },
};

/**
 * Gives back a permit taken for an attempt that never went. KEYS[1]; ARGV the interval in
 * microseconds. Permits are alike, so moving the arrival time back one interval is the same as
 * never having taken the last one.
 */
export const REFUND: StoreScript<void> = {
  name: "rate-limit-refund",
  lua: `local tat = tonumber(redis.call('GET', KEYS[1]))
if not tat then return 0 end
local t = redis.call('TIME')
local now = (tonumber(t[1]) - ${String(EPOCH_S)}) * 1000000 + tonumber(t[2])
tat = tat - tonumber(ARGV[1])
if tat <= now then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], string.format('${NUMBER}', tat), 'PX', math.ceil((tat - now) / 1000))
end
return 1`,
  parse: () => undefined,
  memory: (map, [key = ""], [interval = "0"], now) => {
    const stored = map.get(key, now);
    if (typeof stored !== "number") return;
    const tat = stored - Number(interval);
    map.set(key, tat, Math.ceil((tat - now * 1_000) / 1_000), now);
  },
};

/**
 * The store side of a rate limit whose settings say `store: redis`: one step per permit, on the
 * key every replica uses. When a step fails, permits come from the {@link RateLimiter} itself,
 * which runs at this replica's share of the rate (rate ÷ replicas), for {@link STORE_RETRY_MS};
 * then the next attempt asks the store again. A server's pause (Retry-After) stays per replica.
 */
export class StorePermits implements SharedPermits {
  /** Which store the permits come from. */
  readonly store: SharedStore;
  readonly #key: string;
  readonly #clock: Clock;
  readonly #intervalUs: number;
  readonly #toleranceUs: number;
  readonly #onLocal: LocalShareListener | undefined;
  #downUntil = Number.NEGATIVE_INFINITY;
  #free: number | undefined = undefined;

  constructor(
    store: SharedStore,
    key: string,
    clock: Clock,
    settings: { readonly rate: number; readonly periodMs: number; readonly burst: number },
    onLocal?: LocalShareListener,
  ) {
    this.store = store;
    this.#key = key;
    this.#clock = clock;
    this.#intervalUs = (settings.periodMs * 1_000) / Math.max(Number.MIN_VALUE, settings.rate);
    this.#toleranceUs = (Math.max(1, Math.floor(settings.burst)) - 1) * this.#intervalUs;
    this.#onLocal = onLocal;
  }

  /** Permits free after the last step on the store; `undefined` before the first. */
  get free(): number | undefined {
    return this.#free;
  }

  /** Whether permits come from the local share now, because a recent step failed. */
  usingLocalShare(now: number): boolean {
    return now < this.#downUntil;
  }

  /**
   * A permit for an attempt now that waits at most `boundMs`. Never rejects: a store that
   * cannot answer makes it take the permit from `local`'s share.
   */
  acquire(local: RateLimiter, boundMs: number, operation: string): Promise<SharedGrant> {
    const now = this.#clock.now();
    const pauseMs = local.pauseLeft(now);
    if (pauseMs > boundMs) return Promise.resolve(refused(pauseMs, true));
    if (this.usingLocalShare(now))
      return Promise.resolve(this.#local(local, now, boundMs, operation, null));
    return this.store
      .run(
        TAKE,
        [this.#key],
        [this.#intervalUs, this.#toleranceUs, pauseMs, Math.max(0, boundMs - pauseMs)],
      )
      .then(
        (taken): SharedGrant => {
          this.#free = taken.free;
          return taken.granted
            ? { granted: true, waitMs: pauseMs + taken.waitMs, local: false, paused: false }
            : refused(pauseMs + taken.waitMs, false);
        },
        (error: unknown) => {
          const at = this.#clock.now();
          this.#downUntil = at + STORE_RETRY_MS;
          return this.#local(local, at, Math.max(0, boundMs - (at - now)), operation, error);
        },
      );
  }

  /** Gives back a permit {@link StorePermits.acquire} granted, to where it came from. */
  refund(local: RateLimiter, grant: SharedGrant): void {
    if (!grant.granted) return;
    if (grant.local) {
      local.refund();
      return;
    }
    // best effort: a permit the store does not get back only makes the limit stricter
    this.store.run(REFUND, [this.#key], [this.#intervalUs]).catch(ignore);
  }

  #local(
    local: RateLimiter,
    now: number,
    boundMs: number,
    operation: string,
    error: unknown,
  ): SharedGrant {
    const wait = local.delayAt(now);
    if (wait > boundMs) return refused(wait, local.pausedAt(now));
    local.take(now + wait);
    this.#onLocal?.(operation, local.perSecond, reason(error));
    return { granted: true, waitMs: wait, local: true, paused: false };
  }
}

function refused(waitMs: number, paused: boolean): SharedGrant {
  return { granted: false, waitMs, local: false, paused };
}

function reason(error: unknown): string {
  if (error === null) return `the store failed less than ${String(STORE_RETRY_MS)} ms ago`;
  const message = (error as { message?: unknown } | undefined)?.message;
  return typeof message === "string" ? message : "the store did not answer";
}

function ignore(): void {
  // nothing to do
}
