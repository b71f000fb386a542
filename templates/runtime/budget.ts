/**
 * Retry throttling as in gRPC proposal A6 ("Client-side retry support"): one token bucket shared
 * by every operation of a dependency, so retries stop amplifying load during an outage.
 */
export interface BudgetSettings {
  /** Bucket size; the bucket starts full. A retry needs more than half of it. */
  readonly maxTokens: number;
  /** Tokens earned back by each successful attempt (e.g. 0.1). */
  readonly tokenRatio: number;
}

/** Snapshot of a {@link RetryBudget}. */
export interface BudgetHealth {
  /** Tokens left. */
  readonly tokens: number;
  /** Bucket size. */
  readonly maxTokens: number;
  /** Whether a retry (or hedge) would be allowed right now. */
  readonly allowsRetry: boolean;
}

/**
 * A failed attempt costs one token, charged before the retry decision; a success earns
 * `tokenRatio`. Retries and hedges are allowed only while tokens > maxTokens / 2 (strictly).
 * Tokens never leave [0, maxTokens].
 */
export class RetryBudget {
  /** Bucket size (tokens). */
  readonly maxTokens: number;
  /** Tokens earned per successful attempt. */
  readonly tokenRatio: number;
  #tokens: number;

  constructor(settings: BudgetSettings) {
    this.maxTokens = Math.max(0, settings.maxTokens);
    this.tokenRatio = Math.max(0, settings.tokenRatio);
    this.#tokens = this.maxTokens;
  }

  /** Current token count. */
  get tokens(): number {
    return this.#tokens;
  }

  /** Charges one token for a failed attempt. */
  onFailure(): void {
    this.#tokens = this.#tokens > 1 ? this.#tokens - 1 : 0;
  }

  /** Earns `tokenRatio` for a successful attempt. */
  onSuccess(): void {
    const next = this.#tokens + this.tokenRatio;
    this.#tokens = next < this.maxTokens ? next : this.maxTokens;
  }

  /** Whether another retry or hedge may be sent. */
  allowsRetry(): boolean {
    return this.#tokens > this.maxTokens / 2;
  }

  /** Snapshot for health reports. */
  health(): BudgetHealth {
    return { tokens: this.#tokens, maxTokens: this.maxTokens, allowsRetry: this.allowsRetry() };
  }
}
