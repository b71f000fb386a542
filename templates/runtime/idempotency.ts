// Idempotency keys: their settings and how a key is made.
/** Idempotency-key settings of an operation. */
export interface IdempotencySettings {
  /**
   * Request header that carries the key (e.g. `Idempotency-Key`); `null` for function transports.
   */
  readonly header: string | null;
}

/**
 * A fresh idempotency key (a random UUID from `globalThis.crypto`). The stack makes one per
 * logical call, before the first attempt, and sends it on every attempt and hedge.
 */
export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}
