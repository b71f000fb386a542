// The retry budget: a token bucket that keeps retries to a fraction of a dependency's calls.
/**
 * Retry throttling as in gRPC proposal A6 ("Client-side retry support"): one token bucket shared
 * by every operation of a dependency, so retries stop amplifying load during an outage.
 */
export interface BudgetSettings {
  /** Bucket size; the bucket starts full. A retry needs more than half of it. */
  readonly maxTokens: number;
  /** Tokens earned back by each successful attempt (e.g. 0.1); counted to the thousandth. */
  readonly tokenRatio: number;
}

/** Snapshot of a {@link RetryBudget}. */
export interface BudgetHealth {
  /** Tokens left, rounded to the thousandth. */
  readonly tokens: number;
  /** Bucket size. */
  readonly maxTokens: number;
  /** Whether a retry (or hedge) would be allowed right now. */
  readonly allowsRetry: boolean;
}

/** A retry budget's persisted state: its tokens. */
export interface BudgetSnapshot {
  readonly tokens: number;
}

/** Tokens are counted in integer thousandths, as gRPC implementations of A6 do. */
const MILLI = 1_000;

/**
 * A failed attempt that the retry policy would retry costs one token, charged before the retry
 * decision; a success earns `tokenRatio`. Retries and hedges are allowed only while
 * tokens > maxTokens / 2 (strictly). Tokens never leave [0, maxTokens].
 *
 * Tokens are counted in integer thousandths of a token (A6 allows three decimals in
 * `tokenRatio`), so no float drift can move a count across the strict `>` boundary: with 100
 * tokens and a ratio of 0.1, 50 failures and 10 successes leave exactly 51 tokens.
 */
export class RetryBudget {
  /** Bucket size (tokens). */
  readonly maxTokens: number;
  /** Tokens earned per successful attempt, rounded to thousandths. */
  readonly tokenRatio: number;
  // thousandths of a token
  readonly #max: number;
  readonly #ratio: number;
  #milli: number;

  constructor(settings: BudgetSettings) {
    this.#max = Math.round(Math.max(0, settings.maxTokens) * MILLI) || 0;
    this.#ratio = Math.round(Math.max(0, settings.tokenRatio) * MILLI) || 0;
    this.maxTokens = this.#max / MILLI;
    this.tokenRatio = this.#ratio / MILLI;
    this.#milli = this.#max;
  }

  /** Current token count, to the thousandth. */
  get tokens(): number {
    return this.#milli / MILLI;
  }

  /** Charges one token for a failed attempt the retry policy would retry. */
  onFailure(): void {
    this.#milli = this.#milli > MILLI ? this.#milli - MILLI : 0;
  }

  /** Earns `tokenRatio` for a successful attempt. */
  onSuccess(): void {
    const next = this.#milli + this.#ratio;
    this.#milli = next < this.#max ? next : this.#max;
  }

  /** Whether another retry or hedge may be sent: tokens > maxTokens / 2, compared exactly. */
  allowsRetry(): boolean {
    return this.#milli * 2 > this.#max;
  }

  /** The tokens to persist (docs/runtime.md, "Snapshot and restore"), to the thousandth. */
  snapshot(): BudgetSnapshot {
    return { tokens: this.tokens };
  }

  /** `undefined` when `value` is a budget snapshot this bucket can restore, else the problem. */
  checkSnapshot(value: unknown): string | undefined {
    const tokens = (value as { tokens?: unknown } | null)?.tokens;
    if (typeof tokens !== "number" || !(tokens >= 0) || tokens > this.maxTokens)
      return `budget.tokens must be a number from 0 to ${String(this.maxTokens)}`;
    return undefined;
  }

  /** Restores a snapshot {@link RetryBudget.checkSnapshot} accepted. */
  restore(snapshot: BudgetSnapshot): void {
    this.#milli = Math.min(this.#max, Math.max(0, Math.round(snapshot.tokens * MILLI)));
  }

  /** Snapshot for health reports (tokens rounded to the thousandth). */
  health(): BudgetHealth {
    return { tokens: this.tokens, maxTokens: this.maxTokens, allowsRetry: this.allowsRetry() };
  }
}
