// The closed breaker's own cost (one admission and one success), plain against the features
// that must not change it: open-duration backoff configured, and a breaker isolated and released
// before the run (docs/runtime.md, "Open-duration backoff", "Manual control"). Interleaved
// rounds, medians, ratios to the plain breaker: `npx tsx bench/breaker.ts`.
import {
  CircuitBreaker,
  createVirtualClock,
  type BreakerSettings,
} from "../templates/runtime/index.js";

const base: BreakerSettings = {
  failureRate: 0.5,
  slowCall: null,
  window: { kind: "time", durationMs: 10_000, buckets: 10 },
  minCalls: 20,
  openForMs: 30_000,
  halfOpen: { maxCalls: 3, successes: 3 },
};
const clock = createVirtualClock();
const released = new CircuitBreaker(base, clock);
released.isolate().dispose();
const breakers: Record<string, CircuitBreaker> = {
  plain: new CircuitBreaker(base, clock),
  "openFor backoff": new CircuitBreaker(
    { ...base, openBackoff: { capMs: 300_000, multiplier: 2 } },
    clock,
  ),
  "isolated then released": released,
};
const N = 2_000_000;
const ROUNDS = 9;

function run(breaker: CircuitBreaker): number {
  const started = performance.now();
  for (let i = 0; i < N; i++) breaker.onSuccess(breaker.tryAcquire(i), 1, i);
  if (breaker.state.state !== "closed") throw new Error("the breaker left closed");
  return ((performance.now() - started) * 1e6) / N;
}

const samples: Record<string, number[]> = {};
for (let r = 0; r < ROUNDS; r++)
  for (const [name, breaker] of Object.entries(breakers)) (samples[name] ??= []).push(run(breaker));
const median = (a: readonly number[]): number =>
  [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
const plain = median(samples["plain"]!);
console.log(`closed breaker, admission + success (median of ${String(ROUNDS)} rounds)`);
for (const [name, values] of Object.entries(samples)) {
  const ns = median(values);
  console.log(`  ${name.padEnd(24)} ${ns.toFixed(1).padStart(6)} ns  ${(ns / plain).toFixed(2)}×`);
}
