/**
 * Clients built from test/e2e/bounds/*.yaml: a path parameter cannot move a request out of the
 * base path, and a body over the policy's `maxResponseBytes` is cut over a real socket and
 * never retried.
 */
import fc from "fast-check";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { CallOptions } from "../../templates/runtime/index.js";
import { startBodyServer, type BodyServer } from "../helpers/body-server.js";
import { buildAndImport, failureOf } from "./helpers.js";

// The shape of the generated clients (the build output is not part of the type-checked tree).
interface TenantsClient {
  getItem(
    input: { readonly mode: string; readonly id: string },
    options?: CallOptions<object>,
  ): Promise<object>;
}
interface ExportsClient {
  getReport(options?: CallOptions<string>): Promise<string>;
}

let tenants: {
  createTenantsClient(config: { baseUrl: string; fetch?: typeof fetch }): TenantsClient;
};
let exportsGen: { createExportsClient(config: { baseUrl: string }): ExportsClient };
let server: BodyServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

function capturing(): { fetch: typeof fetch; sent: string[] } {
  const sent: string[] = [];
  const fetch = ((url: string) => {
    sent.push(url);
    return Promise.resolve(new Response("{}"));
  }) as typeof globalThis.fetch;
  return { fetch, sent };
}

describe("a generated client's path parameters", () => {
  beforeAll(async () => {
    tenants = await buildAndImport("bounds-tenants", ["test/e2e/bounds/tenants.yaml"]);
  });
  const base = "https://api.example/tenants/acme";

  it("refuses . and .. with a rejected promise naming the parameter, sending nothing", async () => {
    const { fetch, sent } = capturing();
    const client = tenants.createTenantsClient({ baseUrl: base, fetch });
    for (const mode of [".", ".."]) {
      const call = client.getItem({ mode, id: "x" });
      await expect(call).rejects.toThrow(RangeError);
      await expect(call).rejects.toThrow(/\{mode\}/);
    }
    expect(sent).toEqual([]);
    await client.getItem({ mode: "...", id: "%2e%2e" });
    expect(sent).toEqual([`${base}/items/.../%252e%252e`]);
  });

  it("keeps the base path prefix and the template's segment count for any values (property)", async () => {
    const { fetch, sent } = capturing();
    const client = tenants.createTenantsClient({ baseUrl: base, fetch });
    const segments = new URL(`${base}/items/a/b`).pathname.split("/").length;
    const value = fc.oneof(
      fc.constantFrom(".", "..", "%2e", "%2E%2E", ".%2e", "/..", "..%2f", "\\..", "?", "#", ""),
      fc.string({ unit: "binary" }),
    );
    await fc.assert(
      fc.asyncProperty(value, value, async (mode, id) => {
        sent.length = 0;
        const outcome = await client.getItem({ mode, id }).then(
          () => undefined,
          (error: unknown) => error,
        );
        if (outcome !== undefined) {
          expect(outcome).toBeInstanceOf(RangeError);
          expect(sent).toEqual([]);
          return;
        }
        const url = new URL(sent[0]!);
        expect(url.pathname.startsWith("/tenants/acme/items/")).toBe(true);
        expect(url.pathname.split("/")).toHaveLength(segments);
      }),
      { numRuns: 300 },
    );
  });
});

describe("a generated client's maxResponseBytes", () => {
  beforeAll(async () => {
    exportsGen = await buildAndImport("bounds-exports", ["test/e2e/bounds/exports.yaml"]);
  });
  it("cuts a body over the policy's limit while it streams, and does not retry", async () => {
    // exports.yaml: maxResponseBytes 65536, three attempts on timeout, network and 5xx
    server = await startBodyServer({ size: 64 * 1024 * 1024 });
    const client = exportsGen.createExportsClient({ baseUrl: server.url });
    const started = performance.now();
    const error = await failureOf(client.getReport());
    expect(error).toMatchObject({ kind: "parse", transient: false, attempts: 1, status: 200 });
    expect(error.message).toContain("maxResponseBytes (65536 bytes)");
    await server.idle();
    expect(server.requests).toBe(1);
    expect(server.written).toBeLessThan(16 * 1024 * 1024);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
