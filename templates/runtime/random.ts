// Randomness for jitter: the default source and a seeded one for tests.
/** A source of uniform random numbers in [0, 1), like `Math.random`. */
export type Random = () => number;

/** The default source: `Math.random`. */
export const defaultRandom: Random = () => Math.random();

/**
 * A small deterministic generator (mulberry32) for reproducible tests and simulations.
 * Not suitable for anything security-related.
 */
export function createSeededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
