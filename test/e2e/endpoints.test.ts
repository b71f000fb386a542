/**
 * Several endpoints against two real HTTP servers on 127.0.0.1 (docs/runtime.md, "Endpoints"):
 * the generated client is given both base URLs, one server answers 503 to everything, and the
 * calls keep succeeding: each attempt that reaches the faulty replica is retried on the other,
 * the faulty replica's own breaker opens and it is sent nothing more, while the healthy one's
 * stays closed. Bounded in time; the servers stop after the file.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFaultServer, type FaultServer } from "../../examples/checkout/demo/fault-server.js";
import { createSeededRandom, type DependencyHealth } from "../../templates/runtime/index.js";
import { buildAndImport, settlesWithin } from "./helpers.js";

interface ReplicasClient {
  getItem(input: { sku: string }): Promise<{ sku: string }>;
  health(): DependencyHealth;
}
interface Generated {
  createReplicasClient(config: {
    baseUrl: string | readonly string[];
    random?: () => number;
  }): ReplicasClient;
}

const ROUTE = "GET /items/:sku";
let good: FaultServer;
let bad: FaultServer;
let generated: Generated;

beforeAll(async () => {
  [good, bad, generated] = await Promise.all([
    startFaultServer(),
    startFaultServer(),
    buildAndImport<Generated>("endpoints", ["test/e2e/fixtures/replicas.yaml"]),
  ]);
  good.route(ROUTE, (r) => ({ body: { sku: r.params.sku } }));
  bad.route(ROUTE, { status: 503 });
}, 60_000);

afterAll(async () => {
  await Promise.all([good.close(), bad.close()]);
});

describe("two replicas, one failing", () => {
  it("retries on the other replica and opens only the failing replica's breaker", async () => {
    const client = generated.createReplicasClient({
      baseUrl: [good.url, bad.url],
      random: createSeededRandom(11),
    });
    const answers: string[] = [];
    for (let i = 0; i < 20; i++) {
      const item = await settlesWithin(client.getItem({ sku: `s${String(i)}` }), 5_000);
      answers.push(item.sku);
    }
    // every call succeeded: a 503 from the faulty replica was retried on the healthy one
    expect(answers).toEqual(Array.from({ length: 20 }, (_, i) => `s${String(i)}`));
    expect(good.count(ROUTE)).toBe(20);
    // the faulty replica's breaker opened at minCalls (4) failures: it was sent nothing more
    expect(bad.count(ROUTE)).toBe(4);
    const endpoints = client.health().endpoints ?? [];
    expect(endpoints.map((e) => [e.endpoint, e.breaker?.state, e.attempts, e.failures])).toEqual([
      [good.url, "closed", 20, 0],
      [bad.url, "open", 4, 4],
    ]);
    // each retried call went to the two replicas, never twice to the same one
    const retried = bad.requests(ROUTE).map((r) => r.path);
    for (const path of retried)
      expect(good.requests(ROUTE).filter((r) => r.path === path)).toHaveLength(1);
  }, 30_000);

  it("with one base URL, sends everything there and reports no endpoints", async () => {
    good.resetRecords();
    const client = generated.createReplicasClient({ baseUrl: good.url });
    await settlesWithin(client.getItem({ sku: "one" }), 5_000);
    expect(good.count(ROUTE)).toBe(1);
    expect(client.health()).not.toHaveProperty("endpoints");
    expect(client.health().breaker?.state).toBe("closed");
  });
});
