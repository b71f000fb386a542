// Prints the runtime simulations (virtual time, seeded): `npm run simulate`.
import {
  adaptiveTrace,
  breakerTrace,
  cascade,
  outageAmplification,
  retryStorm,
  ADAPTIVE_SCENARIO,
  type CascadeOptions,
} from "./simulations.js";

const storm = retryStorm({
  clients: 200,
  retry: 3,
  baseMs: 100,
  capMs: 10_000,
  windowMs: 20,
  seed: 42,
});
console.log(
  "Retry storm: 200 clients fail together; busiest 20 ms window of the 3rd retry (base 100 ms)",
);
for (const [jitter, count] of Object.entries(storm))
  console.log(`  ${jitter.padEnd(13)} ${String(count).padStart(4)} clients`);

const budgeted = await outageAmplification({
  calls: 100,
  maxAttempts: 4,
  budget: { maxTokens: 100, tokenRatio: 0.1 },
  seed: 7,
});
const unbudgeted = await outageAmplification({ calls: 100, maxAttempts: 4, budget: null, seed: 7 });
console.log("\nTotal outage: 100 calls, 4 attempts per call");
console.log(
  `  retry budget 100 tokens, ratio 0.1  ${budgeted.attempts} attempts (${budgeted.amplification.toFixed(2)}x)`,
);
console.log(
  `  no budget                           ${unbudgeted.attempts} attempts (${unbudgeted.amplification.toFixed(2)}x)`,
);

const trace = await breakerTrace({
  rate: 100,
  durationMs: 90_000,
  failFromMs: 10_000,
  recoverAtMs: 60_000,
  latencyMs: 5,
});
console.log("\nBreaker at 100 calls/s; the dependency fails from 10 s and recovers at 60 s");
for (const t of trace.transitions) {
  const window =
    t.to === "open" && t.from === "closed"
      ? `  (${t.failures} of the last ${t.calls} calls failed)`
      : "";
  console.log(`  ${(t.atMs / 1_000).toFixed(3).padStart(7)} s  ${t.from} -> ${t.to}${window}`);
}
console.log(
  `  ${trace.attempts} calls reached the dependency, ${trace.rejected} were rejected by the open breaker, ${trace.succeeded} succeeded`,
);

const scenario: Omit<CascadeOptions, "mode"> = {
  rate: 200,
  pool: 200,
  durationMs: 60_000,
  slowFromMs: 10_000,
  healthyMs: 20,
  slowMs: 5_000,
  workMs: 30,
  seed: 42,
};
console.log(
  "\nCascade: checkout at 200 rps with a pool of 200 requests; recommendations slows from 20 ms to 5 s at 10 s (60 s)",
);
console.log(
  "                   checkout success   turned away   in-flight peak   calls reaching the slow dependency   fallbacks",
);
for (const mode of ["naive", "stack"] as const) {
  const r = await cascade({ ...scenario, mode });
  const label = mode === "naive" ? "naive calls" : "generated stack";
  const success = `${(r.successRate * 100).toFixed(1)} % (${r.succeeded}/${r.requests})`;
  console.log(
    `  ${label.padEnd(16)} ${success.padStart(21)}   ${String(r.rejected).padStart(11)}   ${String(r.peakInFlight).padStart(14)}   ${String(r.slowCalls).padStart(34)}   ${String(r.degraded).padStart(9)}`,
  );
}

const adaptive = ADAPTIVE_SCENARIO;
console.log(
  "\nAdaptive concurrency: offered load ramps 100 -> 800 calls/s over 20 s; the dependency takes 50 ms up to 20 calls in flight and shares it past them,",
);
console.log(
  "  drops to 8 from 40 s to 60 s, attempt timeout 500 ms; bulkhead maxConcurrent 100, static or adaptive (Gradient2, tolerance 1.5, 1 s windows)",
);
const runs = [
  ["static", await adaptiveTrace({ ...adaptive, mode: "static" })],
  ["adaptive", await adaptiveTrace({ ...adaptive, mode: "adaptive" })],
] as const;
const columns = ["limit", "in flight", "latency", "answered/s", "rejected/s", "timeouts/s"];
const widths = [5, 9, 8, 10, 10, 10];
const line = (cells: readonly string[]) => cells.map((c, i) => c.padStart(widths[i]!)).join(" ");
const cell = (r: (typeof runs)[number][1]["trace"][number]) =>
  line([
    String(r.limit),
    String(r.inFlight),
    `${r.latencyMs.toFixed(0)} ms`,
    String(r.answered),
    String(r.rejected),
    String(r.timedOut),
  ]);
console.log(`  ${"".padStart(6)}  ${"static".padEnd(57)}|  adaptive`);
console.log(`  ${"t".padStart(6)}  ${line(columns)}  |  ${line(columns)}`);
runs[0][1].trace.forEach((row, i) => {
  const other = runs[1][1].trace[i]!;
  console.log(`  ${`${String(row.atMs / 1_000)} s`.padStart(6)}  ${cell(row)}  |  ${cell(other)}`);
});
console.log("  (in flight: most calls the dependency held at once, timed-out ones included)");
for (const [mode, r] of runs) {
  console.log(
    `  ${mode.padEnd(8)} ${r.answered} answered, ${r.rejected} turned away by the bulkhead, ${r.timedOut} timed out; the limit changed ${r.limitChanges} times`,
  );
}
