// Fault injection (docs/runtime.md, "Chaos"): faults the code that creates a client asks for,
// injected into its attempts at a rate, seeded so a run reproduces.
import { sleep, type Clock } from "./clock.js";
import { abortedError, ResilienceError } from "./errors.js";
import type { ChaosFaultKind } from "./events.js";
import { createSeededRandom, type Random } from "./random.js";
import { matchesRetryOn } from "./retry.js";
import type { AttemptContext, Transport } from "./transport.js";

/** What every fault has: how often, and where. */
interface FaultScope<Op extends string> {
  /** Share of attempts it is injected into, from 0 (never) to 1 (every attempt). */
  readonly rate: number;
  /** The operations it applies to; absent for every operation of the client. */
  readonly operations?: readonly Op[] | undefined;
}

/**
 * One fault (docs/runtime.md, "Chaos"). `latency` delays the attempt by `ms` before it is sent
 * (the attempt timeout still applies); `status` fails it as the dependency answering `status`
 * would, with a `Retry-After` of `retryAfterMs` rounded up to whole seconds as the header
 * carries it; `network` fails it as a connection reset would; `hang` never answers, so the
 * attempt ends at its timeout or the call's deadline.
 */
export type ChaosFault<Op extends string = string> =
  | (FaultScope<Op> & { readonly kind: "latency"; readonly ms: number })
  | (FaultScope<Op> & {
      readonly kind: "status";
      readonly status: number;
      readonly retryAfterMs?: number | undefined;
    })
  | (FaultScope<Op> & { readonly kind: "network" })
  | (FaultScope<Op> & { readonly kind: "hang" });

/**
 * The `chaos` option of a client. Only code can give it: no policy file turns chaos on.
 * `RESGEN_CHAOS=off` in the environment when the client is created turns it off for good.
 */
export interface ChaosOptions<Op extends string = string> {
  /** Seed of the draws, so the same calls get the same faults on every run. */
  readonly seed: number;
  /**
   * The faults, drawn in order for each attempt: every `latency` drawn adds its delay, and the
   * first `status`, `network` or `hang` drawn decides the outcome.
   */
  readonly faults: readonly ChaosFault<Op>[];
}

/** `client.chaos`: whether faults are being injected, the kill switch, and what was injected. */
export interface ChaosControl {
  /** Whether attempts that start now may get a fault. */
  readonly enabled: boolean;
  /** Stops injecting, for the life of the client: attempts that start after it get none. */
  disable(): void;
  /** Faults injected so far, by kind. */
  injected(): Readonly<Record<ChaosFaultKind, number>>;
}

/** The environment variable whose value `off` (or `0`, `false`) keeps chaos off at creation. */
export const CHAOS_KILL_SWITCH = "RESGEN_CHAOS";

const KINDS: readonly ChaosFaultKind[] = ["latency", "status", "network", "hang"];

/** Whether the environment says no chaos. Hosts without `process` (workerd, browsers) have none. */
export function chaosKilled(): boolean {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process
    ?.env;
  const value = env?.[CHAOS_KILL_SWITCH]?.trim().toLowerCase();
  return value === "off" || value === "0" || value === "false";
}

/**
 * The problems of a `chaos` option, each naming its place (`faults[1].rate: ...`); empty when
 * it is valid.
 */
export function chaosProblems(options: ChaosOptions): string[] {
  const problems: string[] = [];
  if (!Number.isFinite(options.seed)) problems.push(`seed: must be a finite number`);
  if (!Array.isArray(options.faults)) return [...problems, "faults: must be a list"];
  options.faults.forEach((fault: ChaosFault, i) => {
    const at = `faults[${String(i)}]`;
    if (!KINDS.includes(fault.kind)) {
      problems.push(`${at}.kind: must be one of ${KINDS.join(", ")}`);
      return;
    }
    if (!(fault.rate >= 0 && fault.rate <= 1)) problems.push(`${at}.rate: must be from 0 to 1`);
    if (fault.operations !== undefined && !Array.isArray(fault.operations))
      problems.push(`${at}.operations: must be a list of operation names`);
    if (fault.kind === "latency" && !(fault.ms >= 0 && Number.isFinite(fault.ms)))
      problems.push(`${at}.ms: must be a finite number of milliseconds, 0 or more`);
    if (fault.kind === "status") {
      if (!(Number.isInteger(fault.status) && fault.status >= 400 && fault.status <= 599))
        problems.push(`${at}.status: must be an error status from 400 to 599`);
      const after = fault.retryAfterMs;
      if (after !== undefined && !(after >= 0 && Number.isFinite(after)))
        problems.push(`${at}.retryAfterMs: must be a finite number of milliseconds, 0 or more`);
    }
  });
  return problems;
}

/** The faults one attempt gets: a delay, then perhaps an outcome. */
interface Draw {
  readonly delayMs: number;
  readonly outcome: ChaosFault | undefined;
  readonly kinds: readonly ChaosFaultKind[];
}

/** The control of a client created without the `chaos` option. */
export const NO_CHAOS: ChaosControl = Object.freeze({
  enabled: false,
  disable(): void {},
  injected: () => ({ latency: 0, status: 0, network: 0, hang: 0 }),
});

/**
 * The faults of one client and their draws. The stack asks {@link Chaos.wrap} for each call's
 * transport; a client without the option has no `Chaos` at all, so its calls pay nothing.
 */
export class Chaos implements ChaosControl {
  #faults: readonly ChaosFault[];
  #random: Random;
  readonly #clock: Clock;
  readonly #counts: Record<ChaosFaultKind, number> = { latency: 0, status: 0, network: 0, hang: 0 };
  #enabled: boolean;

  /** Throws a `RangeError` listing every problem of `options`. */
  constructor(options: ChaosOptions, clock: Clock, dependency: string) {
    const problems = chaosProblems(options);
    if (problems.length > 0)
      throw new RangeError(`${dependency}: invalid chaos option: ${problems.join("; ")}`);
    this.#faults = options.faults.map((fault) => ({ ...fault }));
    this.#random = createSeededRandom(options.seed);
    this.#clock = clock;
    this.#enabled = !chaosKilled();
  }

  /**
   * New seed and faults (`client.reconfigure({ chaos })`, checked by {@link chaosProblems}
   * first), for attempts that start after it. A kill switch already thrown stays thrown.
   */
  replace(options: ChaosOptions): void {
    this.#faults = options.faults.map((fault) => ({ ...fault }));
    this.#random = createSeededRandom(options.seed);
  }

  get enabled(): boolean {
    return this.#enabled;
  }

  disable(): void {
    this.#enabled = false;
  }

  injected(): Readonly<Record<ChaosFaultKind, number>> {
    return { ...this.#counts };
  }

  /** `transport` with this client's faults in front of each of its attempts. */
  wrap<T>(operation: string, transport: Transport<T>): Transport<T> {
    if (!this.#enabled) return transport;
    return (ctx) => this.#attempt(operation, transport, ctx);
  }

  #attempt<T>(operation: string, transport: Transport<T>, ctx: AttemptContext): Promise<T> | T {
    // disabled between the call's start and this attempt: the kill switch wins
    const draw = this.#enabled ? this.#draw(operation) : undefined;
    if (draw === undefined) return transport(ctx);
    for (const kind of draw.kinds) {
      this.#counts[kind]++;
      ctx.injected?.(kind);
    }
    if (draw.delayMs === 0) return this.#outcome(draw.outcome, transport, ctx);
    return sleep(this.#clock, draw.delayMs, ctx.signal).then(() =>
      this.#outcome(draw.outcome, transport, ctx),
    );
  }

  // Every fault that applies is drawn, whatever was drawn before it, so one fault's rate
  // never changes which attempts another gets.
  #draw(operation: string): Draw | undefined {
    let delayMs = 0;
    let outcome: ChaosFault | undefined;
    let kinds: ChaosFaultKind[] | undefined;
    for (const fault of this.#faults) {
      if (fault.operations !== undefined && !fault.operations.includes(operation)) continue;
      if (this.#random() >= fault.rate) continue;
      if (fault.kind === "latency") {
        // a delay of 0 is no fault: drawn, so the others' draws stay, but neither counted nor
        // reported (as Polly's latency strategy injects nothing for a zero delay)
        if (!(fault.ms > 0)) continue;
        delayMs += fault.ms;
      } else if (outcome === undefined) outcome = fault;
      else continue;
      (kinds ??= []).push(fault.kind);
    }
    return kinds === undefined ? undefined : { delayMs, outcome, kinds };
  }

  #outcome<T>(
    fault: ChaosFault | undefined,
    transport: Transport<T>,
    ctx: AttemptContext,
  ): Promise<T> | T {
    if (fault === undefined) return transport(ctx);
    if (fault.kind === "hang") return hang(ctx);
    const prefix = `${ctx.dependency}.${ctx.operation}`;
    if (fault.kind === "network") {
      throw new ResilienceError({
        kind: "network",
        message: `${prefix}: injected network error (chaos)`,
        transient: ctx.retryOn.includes("network"),
        dependency: ctx.dependency,
        operation: ctx.operation,
      });
    }
    if (fault.kind === "status") throw injectedStatus(fault.status, fault.retryAfterMs, ctx);
    return transport(ctx);
  }
}

/** The error a dependency answering `status` gives, as `sendHttp` makes it. */
function injectedStatus(
  status: number,
  retryAfterMs: number | undefined,
  ctx: AttemptContext,
): ResilienceError {
  const seconds = retryAfterMs === undefined ? undefined : Math.ceil(retryAfterMs / 1000);
  const headers: Record<string, string> =
    seconds === undefined ? {} : { "retry-after": String(seconds) };
  // a 429's Retry-After pauses the rate limit, as a real answer's would
  ctx.rateLimitSignals?.(status, { get: (name) => headers[name.toLowerCase()] ?? null });
  const error = new ResilienceError({
    kind: "http",
    message: `${ctx.dependency}.${ctx.operation}: injected ${String(status)} (chaos)`,
    dependency: ctx.dependency,
    operation: ctx.operation,
    status,
    headers,
    body: "",
    retryAfterMs: seconds === undefined ? undefined : seconds * 1000,
  });
  error.transient = matchesRetryOn(error, ctx.retryOn);
  return error;
}

/** An answer that never comes: settles only when the runtime gives up on the attempt. */
function hang<T>(ctx: AttemptContext): Promise<T> {
  const signal = ctx.signal;
  return new Promise<T>((_, reject) => {
    const fail = (): void => {
      reject(abortedError(signal.reason));
    };
    if (signal.aborted) fail();
    else signal.addEventListener("abort", fail, { once: true });
  });
}
