/**
 * The `chaos` option of a generated client (docs/runtime.md, "Chaos"): typed by the client's
 * operations, compiled under tsc --strict, and over HTTP to a server on 127.0.0.1 an injected
 * fault never reaches the server while every other attempt does.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build } from "../../src/build/build.js";
import { PACKAGE_ROOT } from "../../src/version.js";
import type { ChaosControl, ChaosOptions } from "../../templates/runtime/index.js";
import { compile } from "../helpers/tsc.js";

const OUT = join(PACKAGE_ROOT, "test", "runtime", "__out__", "chaos-client");

interface Inventory {
  getStock(input: { sku: string }): Promise<{ sku: string; available: number }>;
  reserve(input: {
    sku: string;
    reservationId: string;
    body: { quantity: number };
  }): Promise<{ reservationId: string }>;
  readonly chaos: ChaosControl;
}
interface Module {
  createInventoryClient(config: { baseUrl: string; chaos?: ChaosOptions }): Inventory;
}

let server: Server;
let baseUrl = "";
const paths: string[] = [];
let mod: Module;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      paths.push(`${req.method ?? ""} ${req.url ?? ""}`);
      const sku = req.url?.split("/")[2] ?? "";
      const body = req.method === "GET" ? { sku, available: 1 } : { reservationId: "r1" };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  const result = await build([join(PACKAGE_ROOT, "examples/checkout/resilience/inventory.yaml")], {
    cwd: PACKAGE_ROOT,
    out: join(OUT, "generated"),
    allowOutsideProject: true,
  });
  expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  mod = (await import(pathToFileURL(join(OUT, "generated", "inventory.ts")).href)) as Module;
}, 60_000);
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(OUT, { recursive: true, force: true });
});

describe("the generated types", () => {
  it("name the client's operations and the faults' fields", async () => {
    const usage = join(OUT, "usage.ts");
    writeFileSync(
      usage,
      `import { createInventoryClient, type ChaosControl } from "./generated/index.js";

const baseUrl = "http://inventory.internal";
export function uses(): ChaosControl {
  createInventoryClient({
    baseUrl,
    chaos: {
      seed: 1,
      faults: [
        { kind: "latency", ms: 200, rate: 0.1, operations: ["getStock"] },
        { kind: "status", status: 429, retryAfterMs: 1_000, rate: 0.05 },
        { kind: "network", rate: 0.01, operations: ["getStock", "reserve"] },
        { kind: "hang", rate: 0.01 },
      ],
    },
  });
  // @ts-expect-error an operation the client does not have
  createInventoryClient({ baseUrl, chaos: { seed: 1, faults: [{ kind: "hang", rate: 1, operations: ["refund"] }] } });
  // @ts-expect-error a status fault says which status
  createInventoryClient({ baseUrl, chaos: { seed: 1, faults: [{ kind: "status", rate: 1 }] } });
  // @ts-expect-error draws are seeded
  createInventoryClient({ baseUrl, chaos: { faults: [] } });
  return createInventoryClient({ baseUrl }).chaos;
}
`,
    );
    expect(await compile([usage], "NodeNext")).toBe("");
  }, 60_000);
});

describe("the generated client over HTTP", () => {
  it("sends no request for an attempt a fault failed, and every other one", async () => {
    paths.length = 0;
    const inventory = mod.createInventoryClient({
      baseUrl,
      chaos: { seed: 5, faults: [{ kind: "network", rate: 1, operations: ["getStock"] }] },
    });
    await expect(inventory.getStock({ sku: "s1" })).rejects.toMatchObject({
      kind: "network",
      attempts: 3,
    });
    await inventory.reserve({ sku: "s1", reservationId: "r1", body: { quantity: 1 } });
    expect(paths).toEqual(["PUT /items/s1/reservations/r1"]);
    expect(inventory.chaos.injected().network).toBe(3);
    inventory.chaos.disable();
    expect(await inventory.getStock({ sku: "s2" })).toEqual({ sku: "s2", available: 1 });
    expect(paths).toEqual(["PUT /items/s1/reservations/r1", "GET /items/s2/stock"]);
  }, 30_000);
});
