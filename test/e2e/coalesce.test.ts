/**
 * A client built from test/e2e/coalesce/catalog.yaml (`coalesce: true`) against a real HTTP
 * server on 127.0.0.1 that counts the requests it receives and answers when told to: identical
 * calls in flight send one request, two users never share one, and a caller that aborts leaves
 * the others their answer (docs/runtime.md, "Coalescing"). Every wait is bounded.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { HttpCallOptions } from "../../templates/runtime/index.js";
import { buildAndImport, failureOf, settlesWithin } from "./helpers.js";

interface Product {
  id: string;
  user?: string;
}
interface CatalogClient {
  getProduct(input: { readonly id: string }, options?: HttpCallOptions<Product>): Promise<Product>;
}
let gen: {
  createCatalogClient(config: { baseUrl: string; headers?: Record<string, string> }): CatalogClient;
};

interface HeldServer {
  readonly url: string;
  readonly requests: string[];
  /** Answers every request held so far. */
  release(): void;
  /** Resolves once `n` requests have arrived. */
  arrived(n: number): Promise<void>;
  close(): Promise<void>;
}

async function startHeldServer(): Promise<HeldServer> {
  const requests: string[] = [];
  let held: (() => void)[] = [];
  let waiters: (() => void)[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    requests.push(`${req.method ?? ""} ${req.url ?? ""} ${req.headers.authorization ?? "-"}`);
    for (const w of waiters) w();
    held.push(() => {
      const id = (req.url ?? "").split("/").pop() ?? "";
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ id, user: req.headers.authorization ?? "" }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    release() {
      const now = held;
      held = [];
      for (const answer of now) answer();
    },
    arrived(n) {
      return new Promise((resolve) => {
        const check = () => {
          if (requests.length >= n) resolve();
        };
        waiters.push(check);
        check();
      });
    },
    close() {
      waiters = [];
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

let server: HeldServer | undefined;
afterEach(async () => {
  server?.release();
  await server?.close();
  server = undefined;
});

// settled promises only: a tick for the calls to reach the chain, never a timed assertion
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("a coalescing client over a real socket", () => {
  beforeAll(async () => {
    gen = await buildAndImport("coalesce", ["test/e2e/coalesce/catalog.yaml"]);
  });

  it("ten identical calls in flight send one request and get one answer", async () => {
    server = await startHeldServer();
    const client = gen.createCatalogClient({ baseUrl: server.url });
    const calls = Array.from({ length: 10 }, () => client.getProduct({ id: "p1" }));
    await settlesWithin(server.arrived(1), 2_000);
    for (let i = 0; i < 5; i++) await tick();
    server.release();
    const answers = await settlesWithin(Promise.all(calls), 2_000);
    expect(server.requests).toEqual(["GET /products/p1 -"]);
    for (const a of answers) expect(a).toBe(answers[0]);
    // settled: the next call is a request of its own
    const next = client.getProduct({ id: "p1" });
    await settlesWithin(server.arrived(2), 2_000);
    server.release();
    await settlesWithin(next, 2_000);
    expect(server.requests).toHaveLength(2);
  });

  it("two users with different Authorization never share a request", async () => {
    server = await startHeldServer();
    const client = gen.createCatalogClient({ baseUrl: server.url });
    const as = (user: string) =>
      client.getProduct({ id: "p1" }, { headers: { Authorization: `Bearer ${user}` } });
    const calls = [as("alice"), as("bob"), as("alice"), as("bob")];
    await settlesWithin(server.arrived(2), 2_000);
    for (let i = 0; i < 5; i++) await tick();
    server.release();
    const answers = await settlesWithin(Promise.all(calls), 2_000);
    expect([...server.requests].sort()).toEqual([
      "GET /products/p1 Bearer alice",
      "GET /products/p1 Bearer bob",
    ]);
    expect(answers.map((a) => a.user)).toEqual([
      "Bearer alice",
      "Bearer bob",
      "Bearer alice",
      "Bearer bob",
    ]);
  });

  it("a caller that aborts leaves the others their answer", async () => {
    server = await startHeldServer();
    const client = gen.createCatalogClient({ baseUrl: server.url });
    const gone = new AbortController();
    const leaving = client.getProduct({ id: "p2" }, { signal: gone.signal });
    const staying = client.getProduct({ id: "p2" });
    await settlesWithin(server.arrived(1), 2_000);
    gone.abort();
    expect((await settlesWithin(failureOf(leaving), 2_000)).kind).toBe("aborted");
    server.release();
    expect(await settlesWithin(staying, 2_000)).toMatchObject({ id: "p2" });
    expect(server.requests).toHaveLength(1);
  });
});
