// The memory store at its bound (docs/store.md, "The memory store's bound"):
// `npx tsx bench/store-bound.ts`. Times one write of a new key to the store's map (TtlMap) at
// 100,000 keys, against the same write with room to spare, and prints the ratios: a full map
// costs O(log n) a write, whether it evicts a key or refuses one.
//
//   --quick   fewer rounds (a smoke run; figures are noisier)
import { StoreFullError, TtlMap } from "../templates/runtime/store.js";

const BOUND = 100_000;
const WRITES = 100_000;
const ROUNDS = process.argv.includes("--quick") ? 3 : 9;
const DAY_MS = 24 * 60 * 60 * 1_000;
const KEEP = { keep: true } as const;

/** A map of BOUND keys holding `held` keys, kept or not, expiring over a day. */
function filled(held: number, keep: boolean): TtlMap {
  const map = new TtlMap(BOUND);
  for (let i = 0; i < held; i++) map.set(`held-${i}`, i, DAY_MS + i, 0, { keep });
  return map;
}

/** Nanoseconds per write: the median of ROUNDS rounds of WRITES writes each. */
function time(setup: () => TtlMap, write: (map: TtlMap, i: number) => void): number {
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const map = setup();
    const start = performance.now();
    for (let i = 0; i < WRITES; i++) write(map, i);
    rounds.push(((performance.now() - start) * 1e6) / WRITES);
  }
  rounds.sort((a, b) => a - b);
  return rounds[Math.floor(rounds.length / 2)]!;
}

// with room: half full, a new key written and deleted again, so the size stays where it was
const roomy = time(
  () => filled(BOUND / 2, true),
  (map, i) => {
    map.set(`new-${i}`, i, DAY_MS, 1, KEEP);
    map.delete(`new-${i}`);
  },
);
// full of evictable keys (a cache): each new key evicts the one nearest to expiry
const evicting = time(
  () => filled(BOUND, false),
  (map, i) => map.set(`new-${i}`, i, 2 * DAY_MS, 1, KEEP),
);
// full of kept keys (locks, stored responses): each new key is refused
const refusing = time(
  () => filled(BOUND, true),
  (map, i) => {
    try {
      map.set(`new-${i}`, i, DAY_MS, 1, KEEP);
      throw new Error("a full map of kept keys took a new one");
    } catch (error) {
      if (!(error instanceof StoreFullError)) throw error;
    }
  },
);

const row = (name: string, ns: number): string =>
  `${name.padEnd(56)} ${(ns / 1_000).toFixed(2).padStart(7)} µs  ${(ns / roomy).toFixed(1)}×`;
console.log(`the memory store's map, ${String(BOUND)} keys at most, median of ${String(ROUNDS)}`);
console.log(row("a new key, half full (write and delete)", roomy));
console.log(row("a new key, full: evicts the evictable key nearest expiry", evicting));
console.log(row("a new key, full of kept keys: refused (StoreFullError)", refusing));
