/**
 * Small policies under test/e2e/fixtures (a keyless POST under a retry, a breaker that trips
 * after four calls), built by `build()` and run over real sockets against the fault server.
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFaultServer, type FaultServer } from "../../examples/checkout/demo/fault-server.js";
import type { BreakerHealth, CallOptions } from "../../templates/runtime/index.js";
import { buildAndImport, failureOf } from "./helpers.js";

// The shape of the clients generated from test/e2e/fixtures/*.yaml (the build output is not
// part of the type-checked tree, so the parts used here are spelled out).
interface Health {
  readonly breaker: Pick<BreakerHealth, "state" | "calls" | "failures"> | null;
}
interface AuditClient {
  appendEntry(
    input: { readonly body: { message: string } },
    options?: CallOptions<void>,
  ): Promise<void>;
  listEntries(options?: CallOptions<string[]>): Promise<string[]>;
}
interface FlakyClient {
  getThing(
    input: { readonly id: string },
    options?: CallOptions<{ id: string }>,
  ): Promise<{ id: string }>;
  health(): Health;
}
interface Fixtures {
  createAuditClient(config: { baseUrl: string }): AuditClient;
  createFlakyClient(config: { baseUrl: string }): FlakyClient;
}

let gen: Fixtures;
let server: FaultServer;

beforeAll(async () => {
  gen = await buildAndImport<Fixtures>("fixtures", ["test/e2e/fixtures"]);
});

beforeEach(async () => {
  server = await startFaultServer();
});

afterEach(async () => {
  await server.close();
});

describe("fixture clients over real sockets", () => {
  it("sends a POST without an idempotency key exactly once, even when it fails with 503 or times out", async () => {
    // the dependency retries 3× on timeout and 503: the GET of the same client shows it does
    server.route("GET /entries", { status: 503 });
    const audit = gen.createAuditClient({ baseUrl: server.url });
    expect(await failureOf(audit.listEntries())).toMatchObject({
      kind: "http",
      status: 503,
      attempts: 3,
    });
    expect(server.count("GET /entries")).toBe(3);

    server.route("POST /entries", { status: 503 }, [{ hang: true }]);
    const timedOut = await failureOf(audit.appendEntry({ body: { message: "first" } }));
    expect(timedOut).toMatchObject({ kind: "timeout", attempts: 1 });
    expect(server.count("POST /entries")).toBe(1);

    const refused = await failureOf(audit.appendEntry({ body: { message: "second" } }));
    expect(refused).toMatchObject({ kind: "http", status: 503, attempts: 1, transient: true });
    expect(server.count("POST /entries")).toBe(2);
    expect(server.effects("POST /entries")).toBe(2);
    expect(server.requests("POST /entries").map((r) => [r.body, r.idempotencyKey])).toEqual([
      [{ message: "first" }, undefined],
      [{ message: "second" }, undefined],
    ]);
  });

  it("sends nothing while the breaker is open", async () => {
    // flaky: minCalls 4, failure rate 50%, open for 30s, no retry
    server.route("GET /things/:id", { status: 503 });
    const flaky = gen.createFlakyClient({ baseUrl: server.url });
    for (let i = 0; i < 4; i++) {
      expect(await failureOf(flaky.getThing({ id: `t${i}` }))).toMatchObject({
        kind: "http",
        status: 503,
      });
    }
    expect(server.count("GET /things/:id")).toBe(4);
    expect(flaky.health().breaker).toMatchObject({ state: "open" });

    // the dependency has recovered, but the breaker does not know it yet: nothing is sent
    server.route("GET /things/:id", { body: { id: "t" } });
    const rejected = await Promise.all(
      Array.from({ length: 20 }, (_, i) => failureOf(flaky.getThing({ id: `r${i}` }))),
    );
    for (const error of rejected)
      expect(error).toMatchObject({ kind: "circuit-open", attempts: 0 });
    expect(server.count("GET /things/:id")).toBe(4);
    expect(server.count()).toBe(4);
  });
});
