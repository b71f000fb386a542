// The client-side rate limiter: GCRA over one timestamp, and the server's pause signals.
/**
 * A client-side rate limit (docs/runtime.md, "Rate limit"): `rate` permits per `periodMs`, with
 * up to `burst` permits at once after a quiet spell. Every attempt takes one permit.
 */
export interface RateLimitSettings {
  /** Permits per period (e.g. 100 with `periodMs` 1000 for `100/s`). */
  readonly rate: number;
  /** The period of `rate`, in milliseconds (1000 for `/s`, 60000 for `/min`). */
  readonly periodMs: number;
  /** Permits that may go at once after a quiet spell (at least 1). */
  readonly burst: number;
  /**
   * Longest a call waits for a permit, in milliseconds; the call's deadline bounds it too. 0:
   * reject at once with `rate-limited` when no permit is free.
   */
  readonly maxWaitMs: number;
  /**
   * Longest pause a server may impose (`Retry-After` on a 429, or the RateLimit header fields
   * with no quota left); longer waits are cut to this. 0: the server's signals are ignored.
   */
  readonly maxPauseMs: number;
  /**
   * `redis`: every replica takes its permits from one limit in the store (docs/store.md,
   * "Global rate limit"); absent or `memory`: this process has the whole rate.
   */
  readonly store?: "memory" | "redis" | undefined;
  /**
   * Replicas that share a `redis` limit: while the store cannot answer, each takes permits at
   * rate ÷ replicas (and burst ÷ replicas, at least 1) on its own.
   */
  readonly replicas?: number | undefined;
}

/** Snapshot of a {@link RateLimiter}. */
export interface RateLimitHealth {
  /** Permits that could go at once right now. */
  readonly available: number;
  /** Permits per second. */
  readonly perSecond: number;
  readonly burst: number;
  /** Milliseconds left of a pause the server asked for; 0 when none. */
  readonly pausedForMs: number;
  /** The quota the server last announced in `RateLimit-Policy` (e.g. `100;w=60`), if any. */
  readonly serverPolicy: string | undefined;
  /** For a limit the replicas share: its store, and whether this replica uses its local share. */
  readonly shared?: SharedRateLimitHealth | undefined;
}

/** What {@link RateLimitHealth} says of a limit kept in a store. */
export interface SharedRateLimitHealth {
  readonly store: "memory" | "redis";
  readonly replicas: number;
  /** Permits come from rate ÷ replicas on this replica, because a recent store step failed. */
  readonly localShare: boolean;
}

/** What a shared rate limit answered for one attempt. */
export interface SharedGrant {
  /** Whether a permit was taken. */
  readonly granted: boolean;
  /**
   * Milliseconds the attempt waits before it goes (granted), or until a permit would have been
   * free (refused).
   */
  readonly waitMs: number;
  /** The permit came from this replica's share of the rate: the store could not answer. */
  readonly local: boolean;
  /** Refused because a server's response paused the limit, not for the rate. */
  readonly paused: boolean;
}

/**
 * Where a limit the replicas share takes its permits: the store's side, in shared-rate-limit.ts
 * (`StorePermits`). `local` is the limiter itself: its pause, and its share of the rate.
 */
export interface SharedPermits {
  readonly store: { readonly kind: "memory" | "redis" };
  /** Permits free after the last step on the store; `undefined` before the first. */
  readonly free: number | undefined;
  /** Whether permits come from the local share now, because a recent step failed. */
  usingLocalShare(now: number): boolean;
  acquire(local: RateLimiter, boundMs: number, operation: string): Promise<SharedGrant>;
  refund(local: RateLimiter, grant: SharedGrant): void;
}

/** What the limiter reads of a response: the Fetch API's `Headers` has it. */
export interface HeaderLookup {
  get(name: string): string | null;
}

/** Why a server paused the limiter. */
export type PauseSource = "retry-after" | "ratelimit" | "ratelimit-reset";

/** Called when a server's response pauses the limiter. */
export type PauseListener = (pauseMs: number, source: PauseSource) => void;

// float slack for comparisons of accumulated multiples of the emission interval
const EPSILON = 1e-6;

/**
 * The generic cell rate algorithm (GCRA, ATM Forum TM 4.0; the virtual scheduling form): one
 * theoretical arrival time `tat` stands for a token bucket of `burst` tokens refilled every
 * `intervalMs`. An attempt at `t` conforms when `tat − t ≤ toleranceMs`, and then moves `tat`
 * to `max(tat, t) + intervalMs`. A server's pause adds a second floor, `pausedUntil`.
 */
export class RateLimiter {
  #settings: RateLimitSettings;
  /**
   * Where permits come from when the replicas share the limit; `null` for a limit of this
   * process alone. Then this limiter's own timestamp runs at the local share of the rate.
   */
  readonly shared: SharedPermits | null;
  #intervalMs = 0;
  #toleranceMs = 0;
  readonly #onPause: PauseListener | undefined;
  #tat = Number.NEGATIVE_INFINITY;
  #pausedUntil = Number.NEGATIVE_INFINITY;
  #policy: string | undefined = undefined;

  constructor(settings: RateLimitSettings, onPause?: PauseListener, shared?: SharedPermits) {
    this.#settings = settings;
    this.shared = shared ?? null;
    this.#rates(settings);
    this.#onPause = onPause;
  }

  /** The settings in force: those it was created with, or the last {@link reconfigure}'s. */
  get settings(): RateLimitSettings {
    return this.#settings;
  }

  /**
   * Replaces the burst, longest wait and longest pause (the caller validates them,
   * reconfigure.ts). Permits already taken stay taken; a pause in force runs out as it was set.
   */
  reconfigure(settings: RateLimitSettings): void {
    this.#settings = settings;
    this.#rates(settings);
  }

  #rates(settings: RateLimitSettings): void {
    const shared = this.shared;
    const share = shared === null ? 1 : Math.max(1, Math.floor(settings.replicas ?? 1));
    const rate = Math.max(Number.MIN_VALUE, settings.rate / share);
    this.#intervalMs = Math.max(0, settings.periodMs) / rate;
    const burst = Math.max(1, Math.floor(Math.max(1, Math.floor(settings.burst)) / share));
    this.#toleranceMs = (burst - 1) * this.#intervalMs;
  }

  /** Milliseconds between permits at the steady rate. */
  get intervalMs(): number {
    return this.#intervalMs;
  }

  /**
   * Milliseconds past `at` until a permit is free for an attempt at `at` (0: at once). Reads
   * only: {@link RateLimiter.take} takes the permit.
   */
  delayAt(at: number): number {
    const byRate = this.#tat - this.#toleranceMs - at;
    const byPause = this.#pausedUntil - at;
    const wait = byRate > byPause ? byRate : byPause;
    return wait > EPSILON ? wait : 0;
  }

  /** Whether the wait {@link RateLimiter.delayAt} reports for `at` is the server's pause. */
  pausedAt(at: number): boolean {
    return this.#pausedUntil - at > EPSILON && this.#pausedUntil >= this.#tat - this.#toleranceMs;
  }

  /** Milliseconds left at `at` of a pause a server asked for; 0 when none. */
  pauseLeft(at: number): number {
    const left = this.#pausedUntil - at;
    return left > EPSILON ? left : 0;
  }

  /**
   * A permit from the store the replicas share, for an attempt now that may wait `boundMs`
   * (only when {@link RateLimiter.shared} is set), on behalf of `operation`. One round trip;
   * never rejects.
   */
  acquire(boundMs: number, operation: string): Promise<SharedGrant> {
    const shared = this.shared;
    if (shared === null) throw new TypeError("acquire() is for a limit kept in a store");
    return shared.acquire(this, boundMs, operation);
  }

  /** Gives back a permit {@link RateLimiter.acquire} granted, for an attempt that never went. */
  giveBack(grant: SharedGrant): void {
    this.shared?.refund(this, grant);
  }

  /** Takes a permit for an attempt at `at` (a time {@link RateLimiter.delayAt} said is free). */
  take(at: number): void {
    const tat = this.#tat;
    this.#tat = (tat > at ? tat : at) + this.#intervalMs;
  }

  /** Gives back the permit last taken, for an attempt that never went (refused, aborted). */
  refund(): void {
    this.#tat -= this.#intervalMs;
  }

  /** Pauses issuing until `now + pauseMs`, cut to `maxPauseMs`; a shorter pause changes nothing. */
  pause(now: number, pauseMs: number, source: PauseSource): void {
    const cap = this.settings.maxPauseMs;
    if (!(cap > 0) || !(pauseMs > 0)) return;
    const ms = pauseMs < cap ? pauseMs : cap;
    if (now + ms <= this.#pausedUntil) return;
    this.#pausedUntil = now + ms;
    this.#onPause?.(ms, source);
  }

  /**
   * Reads a response's rate-limit signals and pauses when the server says the quota is spent:
   * `Retry-After` on a 429 (or a 503), the IETF `RateLimit` field with `r=0` (its `t=` the
   * seconds to the reset), or the older `RateLimit-Remaining: 0` with `RateLimit-Reset`.
   * `RateLimit-Policy` is kept for {@link RateLimiter.health}.
   *
   * As draft-ietf-httpapi-ratelimit-headers-11 (section 7) says, a `Retry-After` the limiter
   * reads takes precedence: the RateLimit fields of that response are not read. A malformed
   * RateLimit field is ignored ({@link exhaustedResetMs}), as are `RateLimit-Remaining` and
   * `RateLimit-Reset` values that are not non-negative integers.
   *
   * @param retryAfterMs The parsed `Retry-After`, when the caller has parsed it already.
   */
  observe(now: number, status: number, headers: HeaderLookup, retryAfterMs?: number): void {
    if (!(this.settings.maxPauseMs > 0)) return;
    const policy = headers.get("ratelimit-policy");
    if (policy !== null) this.#policy = policy;
    if ((status === 429 || status === 503) && retryAfterMs !== undefined) {
      this.pause(now, retryAfterMs, "retry-after");
      return;
    }
    const field = headers.get("ratelimit");
    if (field !== null) {
      const resetMs = exhaustedResetMs(field);
      if (resetMs !== undefined) this.pause(now, resetMs, "ratelimit");
      return;
    }
    const remaining = countOf(headers.get("ratelimit-remaining"));
    if (remaining !== 0) return;
    const reset = countOf(headers.get("ratelimit-reset"));
    if (reset !== undefined) this.pause(now, reset * 1_000, "ratelimit-reset");
  }

  /** Permits free now, the rate, and any pause in force. */
  health(now: number): RateLimitHealth {
    const interval = this.#intervalMs;
    const burst = Math.max(1, Math.floor(this.settings.burst));
    const ahead = this.#tat > now ? this.#tat - now : 0;
    const free =
      interval > 0
        ? Math.floor((this.#toleranceMs + interval - ahead) / interval + EPSILON)
        : burst;
    const local = Math.max(0, Math.min(burst, free));
    const pausedForMs = Math.max(0, Math.ceil(this.#pausedUntil - now));
    const shared = this.shared;
    if (shared === null)
      return {
        available: local,
        perSecond: this.perSecond,
        burst,
        pausedForMs,
        serverPolicy: this.#policy,
      };
    // the limit the replicas share, as the store last reported it
    const { rate, periodMs, replicas } = this.settings;
    const localShare = shared.usingLocalShare(now);
    const whole = Math.max(1, Math.floor(this.settings.burst));
    return {
      available: localShare ? local : Math.min(whole, shared.free ?? whole),
      perSecond: Math.round(((rate * 1_000) / periodMs) * 1_000) / 1_000,
      burst: whole,
      pausedForMs,
      serverPolicy: this.#policy,
      shared: {
        store: shared.store.kind,
        replicas: Math.max(1, Math.floor(replicas ?? 1)),
        localShare,
      },
    };
  }

  /** Permits per second of this limiter's own timestamp (the local share, when shared). */
  get perSecond(): number {
    const interval = this.#intervalMs;
    return interval > 0 ? Math.round((1_000 / interval) * 1_000) / 1_000 : Infinity;
  }
}

/**
 * Milliseconds to the reset of the quota the `RateLimit` field says is spent (the longest, when
 * several are), or `undefined` when none is, or when the field is malformed. Reads the
 * structured-field List of draft-ietf-httpapi-ratelimit-headers-11 (`"default";r=0;t=30`) and the
 * Dictionary of its earlier revisions (`limit=100, remaining=0, reset=30`), both parsed as RFC 9651
 * (Structured Field Values) says, so a parameter given twice counts with its last value.
 *
 * The draft's section 7 says "Malformed RateLimit header fields MUST be ignored": a field that
 * does not parse, or one item whose `r` (`remaining`) is missing or not a non-negative Integer, or
 * whose `t` (`reset`) is present but not one, makes the whole field say nothing. A spent quota
 * with no `t` says nothing either: there is no wait to take from it (docs/runtime.md, "Rate
 * limit").
 */
export function exhaustedResetMs(field: string): number | undefined {
  const members = parseList(field) ?? parseDictionary(field);
  if (members === undefined) return undefined;
  // the List's items each carry `r` and `t`; the Dictionary is one quota in three members
  const quotas: Map<string, BareItem>[] = [];
  if (members.kind === "list") for (const item of members.items) quotas.push(item.params);
  else {
    const remaining = members.entries.get("remaining");
    const reset = members.entries.get("reset");
    const one = new Map<string, BareItem>();
    if (remaining !== undefined) one.set("r", remaining);
    if (reset !== undefined) one.set("t", reset);
    quotas.push(one);
  }
  let longest: number | undefined;
  for (const params of quotas) {
    const remaining = params.get("r");
    const reset = params.get("t");
    if (!isCount(remaining)) return undefined;
    if (reset !== undefined && !isCount(reset)) return undefined;
    if (remaining.value > 0 || reset === undefined) continue;
    const ms = reset.value * 1_000;
    if (longest === undefined || ms > longest) longest = ms;
  }
  return longest;
}

/** A non-negative Integer, as the draft requires of `r` and `t`. */
function isCount(item: BareItem | undefined): item is { type: "integer"; value: number } {
  return item !== undefined && item.type === "integer" && item.value >= 0;
}

/**
 * A delta-seconds count of the older `RateLimit-Remaining` and `RateLimit-Reset` fields: a
 * non-negative integer of at most 15 digits, or `undefined` when the value is anything else.
 */
function countOf(value: string | null): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  return /^\d{1,15}$/.test(text) ? Number(text) : undefined;
}

/** A bare item of RFC 9651; only Integers are read, the others are parsed to be skipped. */
type BareItem = { readonly type: "integer"; readonly value: number } | { readonly type: "other" };

interface ListItem {
  readonly params: Map<string, BareItem>;
}

/** A cursor over a field value, for the parsers of RFC 9651, section 4.2. */
class Cursor {
  index = 0;
  constructor(readonly text: string) {}
  /** Whether the cursor is past the last character. */
  done(): boolean {
    return this.index >= this.text.length;
  }
  /** The character at the cursor (`""` at the end); a method, so TypeScript never narrows it. */
  char(): string {
    return this.text.charAt(this.index);
  }
  /** Skips spaces (`SP`), or optional whitespace (`SP` and `HTAB`) when `tabs`. */
  skip(tabs: boolean): void {
    while (this.char() === " " || (tabs && this.char() === "\t")) this.index++;
  }
}

const KEY_START = /[a-z*]/;
const KEY_CHAR = /[a-z0-9_\-.*]/;
const TOKEN_START = /[A-Za-z*]/;
const TOKEN_CHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z:/]/;

function parseKey(c: Cursor): string | undefined {
  if (!KEY_START.test(c.char())) return undefined;
  const from = c.index;
  while (!c.done() && KEY_CHAR.test(c.char())) c.index++;
  return c.text.slice(from, c.index);
}

// Integer (at most 15 digits) or Decimal (at most 12 digits, then 1 to 3 after the point)
function parseNumber(c: Cursor): BareItem | undefined {
  const match = /^-?(\d+)(?:\.(\d*))?/.exec(c.text.slice(c.index));
  if (match === null) return undefined;
  const [all, whole = "", fraction] = match;
  c.index += all.length;
  if (fraction === undefined)
    return whole.length <= 15 ? { type: "integer", value: Number(all) } : undefined;
  return whole.length <= 12 && fraction.length >= 1 && fraction.length <= 3
    ? { type: "other" }
    : undefined;
}

function parseBareItem(c: Cursor): BareItem | undefined {
  const first = c.char();
  if (first === "-" || (first >= "0" && first <= "9")) return parseNumber(c);
  if (first === '"') {
    for (c.index++; !c.done(); c.index++) {
      const ch = c.char();
      if (ch === "\\") {
        c.index++;
        if (c.char() !== '"' && c.char() !== "\\") return undefined;
      } else if (ch === '"') {
        c.index++;
        return { type: "other" };
      } else if (ch < " " || ch > "~") return undefined;
    }
    return undefined;
  }
  if (TOKEN_START.test(first)) {
    while (!c.done() && TOKEN_CHAR.test(c.char())) c.index++;
    return { type: "other" };
  }
  if (first === ":") {
    const match = /^:[A-Za-z0-9+/=]*:/.exec(c.text.slice(c.index));
    if (match === null) return undefined;
    c.index += match[0].length;
    return { type: "other" };
  }
  if (first === "?") {
    const value = c.text.charAt(c.index + 1);
    if (value !== "0" && value !== "1") return undefined;
    c.index += 2;
    return { type: "other" };
  }
  if (first === "@") {
    c.index++;
    const date = parseNumber(c);
    return date?.type === "integer" ? { type: "other" } : undefined;
  }
  return undefined;
}

const TRUE: BareItem = { type: "other" };

// Parameters: `;` then key, `=` and a bare item (a key alone is Boolean true); a key given
// twice keeps its last value (RFC 9651, section 4.2.3.2)
function parseParams(c: Cursor): Map<string, BareItem> | undefined {
  const params = new Map<string, BareItem>();
  while (c.char() === ";") {
    c.index++;
    c.skip(false);
    const pair = parseKeyValue(c);
    if (pair === undefined) return undefined;
    params.set(pair[0], pair[1]);
  }
  return params;
}

// A key, then `=` and a bare item, or the key alone (Boolean true)
function parseKeyValue(c: Cursor): [string, BareItem] | undefined {
  const key = parseKey(c);
  if (key === undefined) return undefined;
  if (c.char() !== "=") return [key, TRUE];
  c.index++;
  const item = parseBareItem(c);
  return item === undefined ? undefined : [key, item];
}

// After a member: the end of the field, or a comma and another member.
function nextMember(c: Cursor): "end" | "more" | undefined {
  c.skip(true);
  if (c.done()) return "end";
  if (c.char() !== ",") return undefined;
  c.index++;
  c.skip(true);
  return c.done() ? undefined : "more";
}

/** A List of Items (RFC 9651, section 4.2.1), or `undefined` when the field is not one. */
function parseList(field: string): { kind: "list"; items: ListItem[] } | undefined {
  const c = new Cursor(field);
  c.skip(false);
  const items: ListItem[] = [];
  if (c.done()) return undefined;
  for (;;) {
    if (parseBareItem(c) === undefined) return undefined;
    const params = parseParams(c);
    if (params === undefined) return undefined;
    items.push({ params });
    const next = nextMember(c);
    if (next === undefined) return undefined;
    if (next === "end") return { kind: "list", items };
  }
}

/** A Dictionary (RFC 9651, section 4.2.2): each member's value, by key; the last one counts. */
function parseDictionary(
  field: string,
): { kind: "dictionary"; entries: Map<string, BareItem> } | undefined {
  const c = new Cursor(field);
  c.skip(false);
  const entries = new Map<string, BareItem>();
  if (c.done()) return undefined;
  for (;;) {
    const pair = parseKeyValue(c);
    if (pair === undefined) return undefined;
    const [key, value] = pair;
    if (parseParams(c) === undefined) return undefined;
    entries.set(key, value);
    const next = nextMember(c);
    if (next === undefined) return undefined;
    if (next === "end") return { kind: "dictionary", entries };
  }
}
