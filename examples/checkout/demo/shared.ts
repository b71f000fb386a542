/**
 * What both threads of the demo use: the identifiers a checkout's requests carry, and seeded
 * randomness.
 */

/** Identifiers of checkout `i`, as its requests to the dependencies carry them. */
export const ids = (i: number) => ({
  sku: `sku-${i}`,
  reservationId: `r-${i}`,
  orderId: `order-${i}`,
  userId: `user-${i}`,
});

/** The checkout an identifier of {@link ids} belongs to. */
export function checkoutOf(identifier: unknown): number | undefined {
  if (typeof identifier !== "string") return undefined;
  const match = /-(\d+)$/.exec(identifier);
  return match === null ? undefined : Number(match[1]);
}

/** mulberry32: a small seeded generator of numbers in [0, 1), for jitter and fault draws. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
