/**
 * `npm run demo`: the same checkout load, first with hand-written calls (naive.ts), then with the
 * clients resgen generated from the policies (generated.ts), while the optional recommendations
 * dependency slows from 20 ms to 5 s partway through. Loopback only; about 20 s in all.
 */
import { generatedHealth, generatedVariant } from "./generated.js";
import { naiveVariant } from "./naive.js";
import { runScenario, type ScenarioOptions, type ScenarioResult } from "./scenario.js";
import { edgeDeadlineScenario } from "./edge.js";

const options: ScenarioOptions = {
  ratePerSecond: 50,
  durationMs: 6_000,
  slowAtMs: 1_500,
  healthyLatencyMs: 20,
  slowLatencyMs: 5_000,
  userDeadlineMs: 2_000,
  warmupCheckouts: 10,
  lostChargeResponseEvery: 25,
};

/** Event-loop delay (p99, ms) above which the process was starved of CPU and timings are noise. */
const BUSY_LOOP_DELAY_MS = 50;

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return 0;
  return (
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0
  );
}

function latency(values: readonly number[], p: number): string {
  const value = percentile(values, p);
  return value >= options.userDeadlineMs
    ? `≥ ${options.userDeadlineMs} ms`
    : `${Math.round(value)} ms`;
}

function rate(part: number, whole: number): string {
  return whole === 0 ? "-" : `${((100 * part) / whole).toFixed(1)} %`;
}

function sum(map: ReadonlyMap<string, number>): number {
  let n = 0;
  for (const v of map.values()) n += v;
  return n;
}

function breakdown(map: ReadonlyMap<string, number>): string {
  return [...map]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");
}

async function main(): Promise<void> {
  const seconds = (ms: number) => `${(ms / 1_000).toFixed(1)} s`;
  console.log(
    `Checkout demo: ${Math.round((options.durationMs / 1_000) * options.ratePerSecond)} checkouts at ${options.ratePerSecond}/s for ${seconds(options.durationMs)} per run. ` +
      `A checkout = stock + reservation + card charge (essential) and recommendations (optional), in parallel.\n` +
      `At ${seconds(options.slowAtMs)} recommendations slows from ${options.healthyLatencyMs} ms to ${seconds(options.slowLatencyMs)}. ` +
      `A shopper waits at most ${seconds(options.userDeadlineMs)}: a checkout not answered by then has failed. ` +
      `Every ${options.lostChargeResponseEvery}th charge, payments charges the card but the connection drops before it answers.\n`,
  );
  console.log("running with hand-written calls (naive.ts) ...");
  const naive = await runScenario(naiveVariant, options);
  console.log("running with the generated clients (generated.ts) ...\n");
  const generated = await runScenario(generatedVariant, options);

  const rows: Array<[string, (r: ScenarioResult) => string]> = [
    [
      "checkout success (answered OK within 2 s)",
      (r) => `${rate(r.succeeded, r.checkouts)}  (${r.succeeded}/${r.checkouts})`,
    ],
    ["p50 checkout latency", (r) => latency(r.latencies, 50)],
    ["p99 checkout latency", (r) => latency(r.latencies, 99)],
    ["calls that reached recommendations once slow", (r) => String(r.recommendationCallsWhileSlow)],
    ["peak requests held open by recommendations", (r) => String(r.peakHeldOpen)],
    ["fallbacks served (empty recommendations)", (r) => String(sum(r.fallbacks))],
    [
      "duplicate charges (a card charged twice)",
      (r) => `${r.duplicateCharges}  (of ${r.lostChargeResponses} lost responses)`,
    ],
    [
      "first breaker to open",
      (r) =>
        r.breakerOpened === null
          ? "none"
          : `${r.breakerOpened.dependency}, at ${seconds(r.breakerOpened.atMs)}`,
    ],
    ["event-loop delay p99 (high = busy machine)", (r) => `${Math.round(r.loopDelayP99Ms)} ms`],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  const cells = rows.map(([label, cell]) => [label, cell(naive), cell(generated)] as const);
  const column = Math.max("naive".length, ...cells.map(([, n]) => n.length));
  console.log(`${"".padEnd(width)}   ${"naive".padEnd(column)}   generated`);
  for (const [label, n, g] of cells)
    console.log(`${label.padEnd(width)}   ${n.padEnd(column)}   ${g}`);
  console.log("");
  for (const [name, r] of [
    ["naive", naive],
    ["generated", generated],
  ] as const) {
    const details = [
      r.gaveUp > 0 ? `${r.gaveUp} checkouts given up at ${seconds(options.userDeadlineMs)}` : "",
      r.errors.size > 0 ? `errors: ${breakdown(r.errors)}` : "",
      r.fallbacks.size > 0 ? `fallbacks by cause: ${breakdown(r.fallbacks)}` : "",
    ].filter((s) => s !== "");
    console.log(
      `${name}: ${details.length === 0 ? "every checkout answered in time" : details.join("; ")}`,
    );
  }
  console.log(
    "\nWhat happened: the hand-written fetch has no timeout, so once recommendations slowed every checkout waited for it " +
      "and the shopper gave up; its retries and its catch-all fallback never came into play, because a slow answer is not an error. " +
      "The generated client cut each recommendations attempt at 250 ms (one hedged copy at 45 ms) and served its labelled fallback, an empty list" +
      (generated.breakerOpened?.dependency !== "recommendations"
        ? "; the checkout itself never waited for the slow dependency."
        : "; once half the calls in the breaker's window had failed, the breaker opened and checkouts stopped calling recommendations at all.") +
      "\nWhen a charge's response was lost, both retried: the hand-written retry sent a new POST and charged the card again, " +
      "while the generated client resent the same Idempotency-Key, so payments recognised the charge it had already made.",
  );

  // what the checkout would serve on a /health endpoint: breaker state and window, bulkhead, budget
  console.log("\nhealth() of each generated client after the run:");
  for (const health of generatedHealth()) console.log(JSON.stringify(health));

  console.log(
    "\nThe checkout's own front door (createCheckoutMiddleware, from resilience/checkout-service.yaml):",
  );
  for (const line of await edgeDeadlineScenario()) console.log(line);

  // the naive run's own pile of open requests delays its event loop too, so only the generated
  // run tells whether the machine had CPU to spare
  const busiest = generated.loopDelayP99Ms;
  if (busiest > BUSY_LOOP_DELAY_MS) {
    console.log(
      `\nNote: timers fired up to ${Math.round(busiest)} ms late (event-loop delay p99): the machine was too busy for these numbers ` +
        "to mean much (the generated clients' 180 ms attempt timeouts fire on a starved process too). Run the demo again on an idle machine.",
    );
  }

  // a starved process times out its own calls; only on a machine with CPU to spare is a low
  // success rate a regression of the generated clients
  if (busiest <= BUSY_LOOP_DELAY_MS && generated.succeeded < 0.99 * generated.checkouts) {
    console.error(
      `\ngenerated clients: checkout success ${rate(generated.succeeded, generated.checkouts)} is under 99 %`,
    );
    process.exitCode = 1;
  }
}

await main();
