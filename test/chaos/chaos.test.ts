/**
 * `resgen chaos`: the fault server stays on loopback and releases what it parks in a fixed order,
 * a drill is the same on every run, the promises are judged on what was measured, and the exit
 * code follows them. Every drill runs on a virtual clock: no test sleeps.
 */
import { describe, expect, it } from "vitest";
import { main } from "../../src/cli/cli.js";
import { brokePromise, chaos, judge, promises } from "../../src/chaos/chaos.js";
import { planDrills, healthyLatency, sampleValue } from "../../src/chaos/drills.js";
import { renderChaosJson, renderChaosText, quantile } from "../../src/chaos/report.js";
import { runDrill, type Measured } from "../../src/chaos/run.js";
import { createMemoryStore } from "../../templates/runtime/index.js";
import { startDrillServer, type Behaviour } from "../../src/chaos/server.js";
import { check } from "../../src/program/check.js";
import { PACKAGE_ROOT } from "../../src/version.js";

const EXAMPLE = "examples/checkout/resilience";

async function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(["node", "resgen", ...args], {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    cwd: PACKAGE_ROOT,
    color: false,
  });
  return { code, stdout, stderr };
}

async function policyOf(file: string) {
  const result = await check([file], { cwd: PACKAGE_ROOT });
  return result.policies[0]!;
}

describe("the drill server", () => {
  it("listens on 127.0.0.1 only and releases parked responses by due time, call, then attempt", async () => {
    let now = 0;
    const parked: number[] = [];
    const decide = ({ call }: { call: number }): Behaviour =>
      call === 9
        ? { kind: "hang" }
        : { kind: "answer", status: 200, latencyMs: call === 0 ? 50 : 10, body: "{}" };
    const server = await startDrillServer({
      now: () => now,
      decide,
      parked: (id) => parked.push(id),
    });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const send = (id: number, call: number, attempt: number) =>
        fetch(server.url, {
          headers: {
            "x-drill-request": String(id),
            "x-drill-call": String(call),
            "x-drill-attempt": String(attempt),
          },
        });
      // sent in an order the release order must not depend on
      const answers = [send(1, 2, 1), send(2, 0, 1), send(3, 1, 2), send(4, 1, 1)];
      // the hang ends when the server closes
      const hung = send(5, 9, 1).catch((error: unknown) => error);
      while (parked.length < 5) await new Promise((r) => setImmediate(r));
      expect(server.received).toBe(5);
      expect(server.nextDue()).toBe(10);
      const order: (number | undefined)[] = [];
      for (let i = 0; i < 4; i++) order.push(server.releaseNext());
      // call 1 attempt 1, call 1 attempt 2, call 2 (all due at 10), then call 0 (due at 50)
      expect(order).toEqual([4, 3, 1, 2]);
      // the hang is never released
      expect(server.nextDue()).toBe(Infinity);
      expect(server.releaseNext()).toBeUndefined();
      await Promise.all(answers.map(async (a) => expect((await a).status).toBe(200)));
      now = 100;
      await server.close();
      expect(await hung).toBeInstanceOf(TypeError);
    } finally {
      await server.close();
    }
  });
});

describe("the drills", () => {
  it("derive healthy latency from the declared quantiles, and bodies from the schema", async () => {
    const policy = await policyOf(`${EXAMPLE}/inventory.yaml`);
    expect(healthyLatency(policy, 0.5)).toBe(15);
    expect(healthyLatency(policy, 0.99)).toBe(60);
    expect(healthyLatency(policy, 0.999)).toBe(120);
    expect(sampleValue(policy.operations[0]!.response, policy.schemas)).toEqual({
      sku: "x",
      available: 1,
    });
  });

  it("give the same measurements on every run of the same seed", async () => {
    const policy = await policyOf(`${EXAMPLE}/payments.yaml`);
    const op = policy.operations.find((o) => o.name === "createCharge")!;
    const once = async () => {
      const out: Measured[] = [];
      for (const drill of planDrills(policy, op, { calls: 40, seed: 7 }))
        out.push(await runDrill(policy, op, drill, 7));
      return out;
    };
    const [a, b] = [await once(), await once()];
    expect(b).toEqual(a);
    const slow = a[0]!;
    // every attempt of the slow drill after the warm-up times out at 500ms
    expect(slow.latencies[slow.latencies.length - 1]).toBeGreaterThanOrEqual(500);
    expect(slow.transitions.length + slow.outcomes.failure).toBeGreaterThan(0);
  }, 60_000);

  it("open and close the breaker twice when the dependency flaps", async () => {
    const policy = await policyOf(`${EXAMPLE}/inventory.yaml`);
    const op = policy.operations[0]!;
    const flapping = planDrills(policy, op, { calls: 40, seed: 1 }).find(
      (d) => d.name === "flapping",
    )!;
    const measured = await runDrill(policy, op, flapping, 1);
    expect(measured.transitions.map((t) => t.to)).toEqual([
      "open",
      "half-open",
      "closed",
      "open",
      "half-open",
      "closed",
    ]);
    // the open period is the policy's 30s, passed on the virtual clock
    const [opened, half] = measured.transitions;
    expect(half!.atMs - opened!.atMs).toBe(30_000);
  }, 60_000);
});

describe("the promises", () => {
  const measured = (over: Partial<Measured>): Measured => ({
    calls: 100,
    outcomes: { success: 100, fallback: 0, failure: 0 },
    attempts: { total: 100, max: 1 },
    successfulAttempts: 0,
    latencies: [10, 20, 1000],
    transitions: [],
    fallbacks: {},
    rejected: { breaker: 0, bulkhead: 0, budget: 0, rateLimit: 0 },
    budget: null,
    requests: 100,
    virtualMs: 1000,
    limitSteps: [],
    ...over,
  });

  it("hold a call to the total timeout and the load to explain's outage bound", async () => {
    const policy = await policyOf(`${EXAMPLE}/inventory.yaml`);
    const op = policy.operations[0]!;
    // total 1s; 100 calls, budget of 100 tokens: at most 100 + 50 + 1 = 151 attempts
    expect(promises(op, measured({})).time.holds).toBe(true);
    expect(promises(op, measured({ latencies: [1001] })).time.holds).toBe(false);
    expect(promises(op, measured({ requests: 151 })).load.holds).toBe(true);
    expect(promises(op, measured({ requests: 152 })).load.holds).toBe(false);
    // successful attempts earn tokens back: 0.1 × 20 more retries
    expect(promises(op, measured({ requests: 153, successfulAttempts: 20 })).load.holds).toBe(true);
  });

  it("take nearest-rank quantiles", () => {
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2);
    expect(quantile([1, 2, 3, 4], 0.99)).toBe(4);
    expect(quantile([], 0.5)).toBe(0);
  });
});

describe("resgen chaos", () => {
  it("exits 2 when no policy matches, or no policy has the operation", async () => {
    const missing = await run(["chaos", "no/such/policy.yaml"]);
    expect(missing.code).toBe(2);
    expect(missing.stdout).toContain("RG004 cannot read no/such/policy.yaml");
    const unknown = await run(["chaos", `${EXAMPLE}/inventory.yaml`, "--operation", "nope"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe('resgen: no policy given has an operation "nope"\n');
  });

  it("exits 0 when every promise holds", async () => {
    const { code, stdout } = await run([
      "chaos",
      `${EXAMPLE}/inventory.yaml`,
      "--operation",
      "getStock",
      "--calls",
      "40",
    ]);
    expect(stdout).toContain("PASS  every call within the total 1s");
    expect(stdout).toMatch(/5 drills of 1 operation: every promise held\n$/);
    expect(code).toBe(0);
  }, 60_000);

  // the hedge budget starts full (5 tokens at 5%) and earns 5% a call: 200 calls may send
  // 200 + 5 + 10 requests, and explain's bound says so
  it("holds a hedging operation to the bound of a budget that starts full", async () => {
    const { code, stdout } = await run([
      "chaos",
      `${EXAMPLE}/recommendations.yaml`,
      "--operation",
      "getRecommendations",
    ]);
    expect(stdout).toContain("N + max(1, 100 × 0.05) + N × 0.05 = 200 + 5 + 10 → 215");
    expect(stdout).toContain("PASS  load within the budget's bound");
    expect(code).toBe(0);
  }, 60_000);

  it("exits 1 when any drill of any operation broke a promise", async () => {
    const result = await chaos([`${EXAMPLE}/inventory.yaml`], {
      cwd: PACKAGE_ROOT,
      operation: "getStock",
      calls: 40,
    });
    expect(result.exit).toBe(0);
    expect(brokePromise(result.policies)).toBe(false);
    const [policy] = result.policies;
    const [operation] = policy!.operations;
    const last = operation!.drills.at(-1)!;
    // one request more than the bound allows for this drill
    const bound = judge(policy!.policy, operation!.operation, last.measured).load.limit;
    const requests = Math.floor(bound * last.measured.calls) + 1;
    const broken = {
      ...last,
      measured: { ...last.measured, requests, attempts: { total: requests, max: 3 } },
    };
    const drills = [...operation!.drills.slice(0, -1), broken];
    expect(brokePromise([{ ...policy!, operations: [{ ...operation!, drills }] }])).toBe(true);
  }, 60_000);

  it("prints the same text on every run, and JSON with the same figures", async () => {
    const args = ["chaos", `${EXAMPLE}/geocoder.yaml`, "--calls", "30", "--seed", "3"];
    const first = await run(args);
    const second = await run(args);
    expect(second.stdout).toBe(first.stdout);
    const json = await run([...args, "--format", "json"]);
    const parsed = JSON.parse(json.stdout) as {
      seed: number;
      policies: { operations: { drills: { name: string }[] }[] }[];
    };
    expect(parsed.seed).toBe(3);
    expect(parsed.policies[0]!.operations[0]!.drills.map((d) => d.name)).toEqual([
      "slow",
      "down",
      "retry-after",
      "flapping",
      "partial",
    ]);
    const result = await chaos([`${EXAMPLE}/geocoder.yaml`], {
      cwd: PACKAGE_ROOT,
      calls: 30,
      seed: 3,
    });
    expect(renderChaosText(result)).toBe(first.stdout);
  }, 60_000);
});

describe("a rate limit kept in Redis", () => {
  const REDIS = "test/chaos/fixtures/limit-redis/catalog.yaml";
  const MEMORY = "test/chaos/fixtures/limit-memory/catalog.yaml";

  const partial = async (file: string, rig?: Parameters<typeof runDrill>[4]) => {
    const policy = await policyOf(file);
    const op = policy.operations[0]!;
    const drill = planDrills(policy, op, { calls: 200, seed: 1 }).find(
      (d) => d.name === "partial",
    )!;
    return { policy, op, measured: await runDrill(policy, op, drill, 1, rig) };
  };

  // 150/s against 100 calls a second, 20% of attempts answered 503: the limit has room for
  // every call and its retries, kept in memory or in the store
  it("is drilled in a store on the drill's clock, as the same limit kept in memory", async () => {
    const memory = await partial(MEMORY);
    const redis = await partial(REDIS);
    expect(memory.measured.outcomes.success).toBeGreaterThanOrEqual(180);
    // a retry under a shared limit takes its permit once its backoff is over (docs/store.md),
    // so it never sheds more than the limit in memory, which reserves it ahead
    expect(redis.measured.rejected.rateLimit).toBeLessThanOrEqual(
      memory.measured.rejected.rateLimit,
    );
    expect(redis.measured.outcomes.success).toBeGreaterThanOrEqual(
      memory.measured.outcomes.success,
    );
    expect(redis.measured.limitSteps.length).toBeGreaterThan(200);
    const judged = judge(redis.policy, redis.op, redis.measured);
    expect(judged.limit).toMatchObject({ holds: true, measured: 0 });
    expect(judged.pass).toBe(true);
    // and the report says how it was drilled
    const { code, stdout } = await run(["chaos", REDIS, "--calls", "40"]);
    expect(stdout).toContain(
      "  the rate limit kept in Redis: drilled in a memory store on the drill's clock, no Redis needed or touched\n",
    );
    expect(stdout).toMatch(/PASS {2}the rate limit kept in the store answered as 150\/s, burst 10/);
    expect(code).toBe(0);
  }, 60_000);

  it("fails the limit promise when the store answers on a clock other than the drill's", async () => {
    // the store without the drill's clock: it reads the system's time, which barely moves
    const { policy, op, measured } = await partial(REDIS, { store: () => createMemoryStore() });
    const judged = judge(policy, op, measured);
    expect(judged.limit!.holds).toBe(false);
    expect(judged.limit!.measured).toBeGreaterThan(0);
    expect(judged.pass).toBe(false);
    const result = await chaos([REDIS], {
      cwd: PACKAGE_ROOT,
      calls: 40,
      runDrill: (p, o, d, seed) => runDrill(p, o, d, seed, { store: () => createMemoryStore() }),
    });
    expect(result.exit).toBe(1);
    const text = renderChaosText(result);
    expect(text).toContain("FAIL  the rate limit kept in the store answered otherwise than 150/s");
    expect(text).not.toContain("every promise held");
  }, 60_000);
});

describe("a drill's verdict", () => {
  // observations that cannot all be true: the stack says 150 calls ended of 200 made
  it("never says PASS, and exits 1, when the observations contradict one another", async () => {
    const result = await chaos([`${EXAMPLE}/inventory.yaml`], {
      cwd: PACKAGE_ROOT,
      operation: "getStock",
      calls: 20,
      runDrill: async (policy, op, drill, seed) => {
        const m = await runDrill(policy, op, drill, seed);
        return { ...m, outcomes: { ...m.outcomes, success: m.outcomes.success - 5 } };
      },
    });
    expect(result.exit).toBe(1);
    expect(brokePromise(result.policies)).toBe(true);
    const text = renderChaosText(result);
    expect(text).not.toContain("PASS");
    expect(text).toContain("FAIL  the slow drill's observations disagree: 15 call(s) ended");
    expect(text).toMatch(/5 drills of 1 operation: 5 broke a promise\n$/);
    const json = JSON.parse(renderChaosJson(result)) as {
      exit: number;
      policies: { operations: { drills: { promises: { pass: boolean } }[] }[] }[];
    };
    expect(json.exit).toBe(1);
    expect(json.policies[0]!.operations[0]!.drills.every((d) => !d.promises.pass)).toBe(true);
  }, 60_000);

  it("judges each promise from what was measured", async () => {
    const policy = await policyOf(`${EXAMPLE}/inventory.yaml`);
    const op = policy.operations[0]!;
    const base: Measured = {
      calls: 3,
      outcomes: { success: 3, fallback: 0, failure: 0 },
      attempts: { total: 3, max: 1 },
      successfulAttempts: 3,
      latencies: [10, 20, 30],
      transitions: [],
      fallbacks: {},
      rejected: { breaker: 0, bulkhead: 0, budget: 0, rateLimit: 0 },
      budget: null,
      requests: 3,
      virtualMs: 1000,
      limitSteps: [],
    };
    expect(judge(policy, op, base).pass).toBe(true);
    // over the total of 1s
    expect(judge(policy, op, { ...base, latencies: [10, 20, 1001] }).pass).toBe(false);
    // a request that no attempt sent
    const extra = judge(policy, op, { ...base, requests: 4 });
    expect(extra.pass).toBe(false);
    expect(extra.time.holds).toBe(false);
    expect(extra.inconsistencies).toEqual([
      "4 request(s) reached the dependency, but 3 attempt(s) started",
    ]);
    // a success with no response
    expect(judge(policy, op, { ...base, requests: 2, attempts: { total: 3, max: 1 } }).pass).toBe(
      false,
    );
    // a call time missing
    expect(judge(policy, op, { ...base, latencies: [10, 20] }).inconsistencies).toHaveLength(1);
  });
});
