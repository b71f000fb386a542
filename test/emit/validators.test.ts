/**
 * Response validation (`validate: response`, docs/policy.md "Response validation"): the
 * validators generated into a client accept exactly the values a small JSON Schema interpreter
 * written here accepts (a property test), name the JSON path of the first problem, and an
 * invalid response fails the call with a `parse` error that is not retried. Without
 * `validate: response` the JSON is cast unchecked.
 */
import { rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build } from "../../src/build/build.js";
import { checkPolicyText } from "../../src/program/check.js";
import type { JsonSchema } from "../../src/model/resolved.js";
import { PACKAGE_ROOT } from "../../src/version.js";

const OUT = join(PACKAGE_ROOT, "test", "emit", "__out__", "validators");

interface Shop {
  listItems(): Promise<unknown>;
  getPet(input: { id: string }): Promise<unknown>;
  ping(): Promise<unknown>;
}
interface ShopModule {
  createShopClient(config: { baseUrl: string; observer?: (e: { type: string }) => void }): Shop;
}

/** The answer the server gives next, and the attempts it has seen. */
const server = { body: "{}" as string, status: 200, attempts: 0, url: "" };
let http: Server;
let shop: ShopModule;
let schemas: Readonly<Record<string, JsonSchema>>;
let listItems: JsonSchema;

beforeAll(async () => {
  http = createServer((req, res) => {
    req.resume();
    server.attempts++;
    res.writeHead(server.status, { "content-type": "application/json" }).end(server.body);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  server.url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  rmSync(OUT, { recursive: true, force: true });
  const result = await build([join(PACKAGE_ROOT, "test/emit/fixtures/validate/shop.yaml")], {
    cwd: PACKAGE_ROOT,
    out: OUT,
    allowOutsideProject: true,
  });
  expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  const policy = result.checked.policies[0]!;
  schemas = policy.schemas;
  listItems = policy.operations.find((o) => o.name === "listItems")!.response!;
  shop = (await import(pathToFileURL(join(OUT, "shop.ts")).href)) as ShopModule;
}, 60_000);
afterAll(async () => {
  http.closeAllConnections();
  await new Promise<void>((resolve) => http.close(() => resolve()));
  rmSync(OUT, { recursive: true, force: true });
});

async function answer(client: Shop, body: unknown, status = 200) {
  server.body = JSON.stringify(body);
  server.status = status;
  server.attempts = 0;
  return client.listItems().then(
    (data) => ({ data, error: undefined as unknown, attempts: server.attempts }),
    (error: unknown) => ({ data: undefined, error, attempts: server.attempts }),
  );
}

describe("a client with validate: response", () => {
  it("returns a valid body as it is", async () => {
    const client = shop.createShopClient({ baseUrl: server.url });
    const body = {
      items: [{ sku: "a", price: 1, status: "active", parent: { sku: "p", price: 2 } }],
      next: null,
      counts: { a: 3 },
      "unit price": "1.50",
    };
    expect(await answer(client, body)).toEqual({ data: body, error: undefined, attempts: 1 });
  });

  it("fails an invalid body with a parse error naming the JSON path, not retried", async () => {
    const client = shop.createShopClient({ baseUrl: server.url });
    const items = [0, 1, 2, 3].map((i) => ({ sku: `s${i}`, price: i === 3 ? "9.99" : i }));
    const { error, attempts } = await answer(client, { items });
    expect(error).toMatchObject({ kind: "parse", transient: false, status: 200 });
    expect((error as Error).message).toBe(
      "shop.listItems: GET /items returned a body that does not match its schema: $.items[3].price: expected number, got string",
    );
    expect(attempts).toBe(1);
  });

  it.each([
    [{}, "$.items: required property missing"],
    [{ items: {} }, "$.items: expected array, got object"],
    [{ items: [{ sku: "a" }] }, "$.items[0].price: required property missing"],
    [{ items: [{ sku: "a", price: 1, colour: "red" }] }, "$.items[0].colour: unexpected property"],
    [
      { items: [{ sku: "a", price: 1, status: "gone" }] },
      '$.items[0].status: expected one of "active" | "retired", got "gone"',
    ],
    [
      { items: [{ sku: "a", price: 1, parent: { sku: 7, price: 1 } }] },
      "$.items[0].parent.sku: expected string, got number 7",
    ],
    [{ items: [], next: 5 }, "$.next: expected string, got number 5"],
    [{ items: [], counts: { a: 1.5 } }, "$.counts.a: expected integer, got number 1.5"],
    [{ items: [], counts: { "b c": "x" } }, '$.counts["b c"]: expected integer, got string'],
    [{ items: [], "unit price": true }, '$["unit price"]: expected number or string, got boolean'],
    [{ items: [], toString: 1 }, "$.toString: expected string, got number 1"],
    [[], "$: expected object, got array"],
  ])("reports %j as %s", async (body, problem) => {
    const { error } = await answer(shop.createShopClient({ baseUrl: server.url }), body);
    expect((error as Error).message.split("does not match its schema: ")[1]).toBe(problem);
  });

  it("checks oneOf alternatives in order, through $refs", async () => {
    const client = shop.createShopClient({ baseUrl: server.url });
    server.status = 200;
    server.body = JSON.stringify({ kind: "cat", lives: 9 });
    expect(await client.getPet({ id: "1" })).toEqual({ kind: "cat", lives: 9 });
    server.body = JSON.stringify({ kind: "dog" });
    expect(await client.getPet({ id: "2" })).toEqual({ kind: "dog" });
    server.body = JSON.stringify({ kind: "cat" });
    const error = await client.getPet({ id: "3" }).catch((e: unknown) => e);
    expect((error as Error).message.split("does not match its schema: ")[1]).toBe(
      "$: matches none of the 2 alternatives; the first fails at .lives: required property missing",
    );
  });

  it("counts an invalid body against the breaker, like invalid JSON, and a fallback could serve", async () => {
    const events: string[] = [];
    const client = shop.createShopClient({
      baseUrl: server.url,
      observer: (e) => {
        if (e.type === "attempt-end") events.push(e.type);
      },
    });
    await answer(client, { items: 1 });
    expect(events).toEqual(["attempt-end"]);
  });

  it("casts without checking where validation is off (validate: none): the default", async () => {
    const client = shop.createShopClient({ baseUrl: server.url });
    server.status = 200;
    server.body = JSON.stringify({ not: "a string" });
    // ping's schema says string; the body is an object, returned as it is
    expect(await client.ping()).toEqual({ not: "a string" });
    const { policy } = checkPolicyText(
      "plain.yaml",
      "version: 1\ndependency: plain\noperations:\n  get: { method: GET, path: /x, response: { type: string } }\n",
    );
    expect(policy!.operations[0]!.validateResponse).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------------
// An independent reading of the schema subset, to compare the generated validator with.

function conforms(value: unknown, schema: JsonSchema): boolean {
  if (schema.nullable === true && value === null) return true;
  if (schema.$ref !== undefined && !conforms(value, schemas[schema.$ref.slice(10)]!)) return false;
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    const kind =
      value === null
        ? "null"
        : Array.isArray(value)
          ? "array"
          : typeof value === "number"
            ? Number.isInteger(value)
              ? ["integer", "number"]
              : ["number"]
            : typeof value;
    if (!types.some((t) => (Array.isArray(kind) ? kind.includes(t) : kind === t))) return false;
  }
  if (schema.enum !== undefined && !schema.enum.some((e) => e === value)) return false;
  if (schema.const !== undefined && schema.const !== value) return false;
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const record = value as Record<string, unknown>;
    for (const key of schema.required ?? []) if (!Object.hasOwn(record, key)) return false;
    for (const [key, sub] of Object.entries(schema.properties ?? {}))
      if (Object.hasOwn(record, key) && !conforms(record[key], sub)) return false;
    const extra = schema.additionalProperties;
    for (const key of Object.keys(record)) {
      if (Object.hasOwn(schema.properties ?? {}, key)) continue;
      if (extra === false) return false;
      if (typeof extra === "object" && !conforms(record[key], extra)) return false;
    }
  }
  if (Array.isArray(value) && schema.items !== undefined)
    if (!value.every((item) => conforms(item, schema.items!))) return false;
  for (const member of schema.allOf ?? []) if (!conforms(value, member)) return false;
  for (const alternatives of [schema.oneOf, schema.anyOf])
    if (alternatives !== undefined && !alternatives.some((a) => conforms(value, a))) return false;
  return true;
}

/** Values near the listItems schema: right shapes with wrong leaves, missing and extra keys. */
const scalar = fc.oneof(
  fc.constantFrom("active", "retired", "gone", "", "1.5"),
  fc.integer({ min: -3, max: 3 }),
  fc.constantFrom(1.5, 0, -0),
  fc.boolean(),
  fc.constant(null),
);
const item = fc.dictionary(
  fc.constantFrom("sku", "price", "status", "parent", "colour"),
  fc.oneof(scalar, fc.record({ sku: scalar, price: scalar })),
  { maxKeys: 5 },
);
/** Values the schema allows. */
const number = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }));
const validItem = fc.record(
  { sku: fc.string(), price: number, status: fc.constantFrom("active", "retired") },
  { requiredKeys: ["sku", "price"] },
);
const valid = fc.record(
  {
    items: fc.array(
      fc.oneof(validItem, fc.record({ sku: fc.string(), price: number, parent: validItem })),
      { maxLength: 4 },
    ),
    next: fc.option(fc.string(), { nil: null }),
    counts: fc.dictionary(fc.constantFrom("a", "b c"), fc.integer(), { maxKeys: 2 }),
    "unit price": fc.oneof(number, fc.string()),
    toString: fc.string(),
  },
  { requiredKeys: ["items"] },
);

/** Every place in a JSON value: its container and key. */
function places(
  value: unknown,
): { parent: Record<string, unknown> | unknown[]; key: string | number }[] {
  if (typeof value !== "object" || value === null) return [];
  const entries = Array.isArray(value)
    ? value.map((v, i) => [i, v] as const)
    : Object.entries(value as Record<string, unknown>);
  return entries.flatMap(([key, v]) => [
    { parent: value as Record<string, unknown> | unknown[], key },
    ...places(v),
  ]);
}

/** A valid value with one change: a leaf replaced, a key deleted, or an extra key added. */
const mutated = fc
  .tuple(valid, fc.nat(), fc.constantFrom("replace", "delete", "add"), scalar)
  .map(([value, n, how, replacement]) => {
    const copy = JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
    const all = places(copy);
    if (all.length === 0) return copy;
    const { parent, key } = all[n % all.length]!;
    const record = parent as Record<string | number, unknown>;
    if (how === "replace") record[key] = replacement;
    else if (how === "delete" && !Array.isArray(parent)) Reflect.deleteProperty(record, key);
    else if (!Array.isArray(parent)) record["extra"] = replacement;
    return copy;
  });

const body = fc.oneof(
  valid,
  mutated,
  mutated,
  fc.dictionary(
    fc.constantFrom("items", "next", "counts", "unit price", "toString", "other"),
    fc.oneof(
      scalar,
      fc.array(fc.oneof(item, scalar), { maxLength: 4 }),
      fc.dictionary(fc.constantFrom("a", "b c"), scalar, { maxKeys: 2 }),
    ),
    { maxKeys: 6 },
  ),
  fc.jsonValue({ maxDepth: 3 }),
);

describe("the generated validator", () => {
  it("accepts exactly what the schema allows (property)", async () => {
    const tally = { valid: 0, invalid: 0 };
    const client = shop.createShopClient({ baseUrl: server.url });
    await fc.assert(
      fc.asyncProperty(body, async (value) => {
        const { error } = await answer(client, value);
        // JSON has no -0: the body the client reads is the JSON text's value
        const sent = JSON.parse(JSON.stringify(value)) as unknown;
        expect(error === undefined, JSON.stringify(sent)).toBe(conforms(sent, listItems));
        if (error !== undefined) expect(error).toMatchObject({ kind: "parse" });
        if (error === undefined) tally.valid++;
        else tally.invalid++;
      }),
      { numRuns: 300 },
    );
    // both kinds of value were tried, many times
    expect(Math.min(tally.valid, tally.invalid)).toBeGreaterThan(50);
  }, 60_000);
});
