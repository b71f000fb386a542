// Several endpoints of one dependency (docs/runtime.md, "Endpoints"): a breaker per endpoint, the
// choice among the endpoints that admit an attempt, and a retry or hedge sent elsewhere.
import {
  CircuitBreaker,
  REJECTED,
  type BreakerControl,
  type BreakerHealth,
  type BreakerIsolation,
  type BreakerSettings,
  type BreakerTransitionListener,
  type Permit,
} from "./breaker.js";
import type { Clock } from "./clock.js";
import type { BreakerStateName } from "./events.js";
import type { Random } from "./random.js";

/** How a dependency's endpoints are chosen; plain data, emitted by generated clients. */
export interface EndpointSettings {
  /**
   * `power-of-two` (default): two endpoints drawn at random from those the call has not tried,
   * the one with fewer attempts in flight wins (ties: the first drawn). `round-robin`: the next
   * one in turn from a random start.
   */
  readonly choose: "power-of-two" | "round-robin";
  /** Most endpoints a client accepts (bounds the metrics' `endpoint` label); at most 16. */
  readonly max: number;
}

/** The default choice, for a dependency created with a list but no settings. */
export const DEFAULT_ENDPOINTS: EndpointSettings = { choose: "power-of-two", max: 8 };

/** Most endpoints any dependency accepts: a call's tried endpoints are bits of one number. */
export const MAX_ENDPOINTS = 16;

/** One endpoint in a dependency's health report. */
export interface EndpointHealth {
  /** The endpoint as given (a base URL for HTTP clients). */
  readonly endpoint: string;
  /** Its own breaker; `null` when the dependency has none. */
  readonly breaker: BreakerHealth | null;
  /** Attempts sent to it and not settled yet. */
  readonly inFlight: number;
  /** Attempts sent to it since the client was created. */
  readonly attempts: number;
  /** Of those, failures counted against it (what a breaker counts; ignored outcomes are not). */
  readonly failures: number;
}

/** One endpoint: its address, its breaker and its counts. */
export class Endpoint {
  readonly url: string;
  /** Bit of this endpoint in a call's set of tried endpoints. */
  readonly bit: number;
  readonly breaker: CircuitBreaker | null;
  inFlight = 0;
  attempts = 0;
  failures = 0;

  constructor(url: string, bit: number, breaker: CircuitBreaker | null) {
    this.url = url;
    this.bit = bit;
    this.breaker = breaker;
  }

  health(): EndpointHealth {
    return {
      endpoint: this.url,
      breaker: this.breaker?.health() ?? null,
      inFlight: this.inFlight,
      attempts: this.attempts,
      failures: this.failures,
    };
  }
}

/**
 * The endpoints of a dependency given two or more: a dependency with one endpoint has no pool,
 * and its calls do no work of this module.
 */
export class EndpointPool {
  readonly endpoints: readonly Endpoint[];
  readonly settings: EndpointSettings;
  /** The breaker permit {@link EndpointPool.pick} took with the endpoint it returned. */
  permit: Permit = REJECTED;
  readonly #random: Random;
  readonly #all: number;
  #cursor: number;

  constructor(
    urls: readonly string[],
    settings: EndpointSettings,
    breaker: BreakerSettings | null,
    clock: Clock,
    random: Random,
    onTransition: (endpoint: string) => BreakerTransitionListener,
  ) {
    const max = Math.min(MAX_ENDPOINTS, Math.max(2, Math.floor(settings.max)));
    if (urls.length > max)
      throw new RangeError(
        `${String(urls.length)} endpoints given, at most ${String(max)} allowed`,
      );
    if (new Set(urls).size !== urls.length)
      throw new RangeError("the same endpoint is given twice");
    this.settings = settings;
    this.#random = random;
    this.endpoints = urls.map(
      (url, i) =>
        new Endpoint(
          url,
          1 << i,
          breaker === null ? null : new CircuitBreaker(breaker, clock, onTransition(url)),
        ),
    );
    this.#all = (1 << urls.length) - 1;
    this.#cursor = Math.floor(random() * urls.length);
  }

  /** Gives every endpoint's breaker new settings (see {@link CircuitBreaker.reconfigure}). */
  reconfigure(breaker: BreakerSettings): void {
    for (const endpoint of this.endpoints) endpoint.breaker?.reconfigure(breaker);
  }

  /**
   * Chooses the endpoint of the next attempt and takes its breaker permit (in
   * {@link EndpointPool.permit}). Endpoints the call has not tried (`tried`, a set of bits) come
   * first, as Envoy's `previous_hosts` retry predicate and gRPC's retries (gRFC A6) send a retry
   * to another backend; when none of them admits it, any endpoint that does. `undefined` when
   * every endpoint's breaker refuses.
   */
  pick(now: number, tried: number): Endpoint | undefined {
    let refused = 0;
    for (let pass = 0; pass < 2; pass++) {
      for (;;) {
        const free = this.#all & ~(refused | (pass === 0 ? tried : 0));
        if (free === 0) break;
        const endpoint = this.#choose(free);
        const breaker = endpoint.breaker;
        const permit = breaker === null ? 0 : breaker.tryAcquire(now);
        if (permit !== REJECTED) {
          this.permit = permit;
          return endpoint;
        }
        refused |= endpoint.bit;
      }
    }
    return undefined;
  }

  // One endpoint among the bits of `free` (at least one).
  #choose(free: number): Endpoint {
    const endpoints = this.endpoints;
    const n = endpoints.length;
    if (this.settings.choose === "round-robin") {
      for (let k = 0; k < n; k++) {
        const i = (this.#cursor + k) % n;
        if ((free & (1 << i)) !== 0) {
          this.#cursor = (i + 1) % n;
          return endpoints[i] as Endpoint;
        }
      }
    }
    const count = bits(free);
    const a = nth(free, Math.floor(this.#random() * count));
    if (count === 1) return endpoints[a] as Endpoint;
    const b = nth(free & ~(1 << a), Math.floor(this.#random() * (count - 1)));
    const first = endpoints[a] as Endpoint;
    const second = endpoints[b] as Endpoint;
    return second.inFlight < first.inFlight ? second : first;
  }

  /** The endpoint whose breaker admits a trial soonest, and in how many milliseconds. */
  soonest(now: number): { readonly endpoint: Endpoint; readonly inMs: number } {
    let best = this.endpoints[0] as Endpoint;
    let inMs = Number.POSITIVE_INFINITY;
    for (const endpoint of this.endpoints) {
      const breaker = endpoint.breaker;
      if (breaker === null) continue;
      const state = breaker.state.state;
      const wait = state === "open" ? breaker.retryInMs(now) : state === "isolated" ? Infinity : 0;
      if (wait < inMs) {
        inMs = wait;
        best = endpoint;
      }
    }
    return { endpoint: best, inMs };
  }

  /** What every endpoint's breaker says at once, as one state (see {@link combinedState}). */
  get state(): BreakerStateName {
    return combinedState(this.endpoints.map((e) => e.breaker?.state.state ?? "closed"));
  }

  /** Manual control of every endpoint's breaker at once (`client.breaker`). */
  control(): BreakerControl {
    const controls = this.endpoints.map((e) => (e.breaker as CircuitBreaker).control());
    return {
      get state(): BreakerStateName {
        return combinedState(controls.map((c) => c.state));
      },
      isolate(): BreakerIsolation {
        const held = controls.map((c) => c.isolate());
        return {
          dispose: () => {
            for (const h of held) h.dispose();
          },
        };
      },
      reset(): void {
        for (const c of controls) c.reset();
      },
    };
  }

  health(): readonly EndpointHealth[] {
    return this.endpoints.map((e) => e.health());
  }
}

/**
 * The endpoints' breakers read as one: `closed` while any endpoint is closed (calls go there),
 * else `half-open` while any is trying, else `isolated` when all are held open by hand, else
 * `open`.
 */
export function combinedState(states: readonly BreakerStateName[]): BreakerStateName {
  if (states.includes("closed")) return "closed";
  if (states.includes("half-open")) return "half-open";
  if (states.every((s) => s === "isolated")) return "isolated";
  return "open";
}

/**
 * The endpoints of a client's `baseUrl` (or `endpoints`) option: a list of two or more, or
 * `undefined` for a single one, which keeps the dependency's one breaker and no pool.
 */
export function endpointList(
  given: string | readonly string[] | undefined,
): readonly string[] | undefined {
  if (given === undefined || typeof given === "string") return undefined;
  if (given.length === 0) throw new RangeError("the list of endpoints is empty");
  return given.length === 1 ? undefined : given;
}

/** The first endpoint of a `baseUrl` option: the request's own base URL and identity. */
export function firstEndpoint(given: string | readonly string[]): string {
  if (typeof given === "string") return given;
  const first = given[0];
  if (first === undefined) throw new RangeError("the list of endpoints is empty");
  return first;
}

function bits(mask: number): number {
  let count = 0;
  for (let m = mask; m !== 0; m &= m - 1) count++;
  return count;
}

// Index of the k-th set bit (0-based) of `mask`.
function nth(mask: number, k: number): number {
  for (let i = 0, seen = 0; i < MAX_ENDPOINTS; i++) {
    if ((mask & (1 << i)) === 0) continue;
    if (seen === k) return i;
    seen++;
  }
  return 0;
}
