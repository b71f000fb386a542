/**
 * Idempotent routes in service policies: validation with positions, defaults, the analyzer's
 * RG505, RG506 and RG507, and the generated factory, which takes a store only when a route keeps
 * its keys in Redis (compiled with tsc in strict mode).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkTexts } from "../../src/program/check.js";
import { build } from "../../src/build/build.js";
import { compile } from "../helpers/tsc.js";

const at = (text: string, d: { span: { start: number } }) => {
  const before = text.slice(0, d.span.start).split("\n");
  return `${before.length}:${before.at(-1)!.length + 1}`;
};

const service = (routes: string[]) =>
  [
    "version: 1",
    "kind: service",
    "service: shop",
    "deadline: { max: 30s }",
    "admission: { maxConcurrent: 8 }",
    "routes:",
    ...routes,
    "",
  ].join("\n");

const findings = (text: string) =>
  checkTexts([{ file: "shop.yaml", text }]).diagnostics.map(
    (d) => `${d.code} ${d.severity} ${at(text, d)}`,
  );

describe("routes in a service policy", () => {
  it("resolves an idempotent route's defaults: the header, 24h, memory, 1 MiB, Authorization and Cookie", () => {
    const text = service(['  - { route: "POST /orders", idempotency: {} }']);
    const r = checkTexts([{ file: "shop.yaml", text }]);
    expect(r.diagnostics).toEqual([]);
    expect(r.services[0]?.routes).toEqual([
      expect.objectContaining({
        method: "POST",
        path: "/orders",
        essential: false,
        idempotency: {
          header: "idempotency-key",
          ttlMs: 86_400_000,
          store: "memory",
          required: false,
          maxBytes: 1_048_576,
          scope: ["authorization", "cookie"],
        },
      }),
    ]);
  });

  it("points at what is wrong: a route without a path, an unknown key, a ttl and a size out of range, an unknown store", () => {
    const text = service([
      '  - { route: "POST orders", idempotency: {} }',
      '  - { route: "POST /a", idempotency: { tll: 1h } }',
      '  - { route: "POST /b", idempotency: { ttl: 500ms } }',
      '  - { route: "POST /c", idempotency: { store: postgres } }',
      '  - { route: "POST /d", idempotency: { maxBytes: 0 } }',
    ]);
    expect(findings(text)).toEqual([
      "RG103 error 7:14",
      "RG101 error 8:40",
      "RG106 error 9:45",
      "RG107 error 10:47",
      "RG106 error 11:50",
    ]);
  });

  it("warns when keys expire before callers stop retrying (RG505), at the ttl", () => {
    expect(findings(service(['  - { route: "POST /orders", idempotency: { ttl: 10s } }']))).toEqual(
      ["RG505 warning 7:50"],
    );
    expect(findings(service(['  - { route: "POST /orders", idempotency: { ttl: 30s } }']))).toEqual(
      [],
    );
  });

  it("warns about idempotency on a safe method (RG506), but not on a route without a method", () => {
    expect(findings(service(['  - { route: "GET /orders", idempotency: {} }']))).toEqual([
      "RG506 warning 7:14",
    ]);
    expect(findings(service(['  - { route: "/orders/*", idempotency: {} }']))).toEqual([]);
  });

  it("warns when every caller shares one key space (RG507), at the scope", () => {
    expect(
      findings(service(['  - { route: "POST /orders", idempotency: { scope: [] } }'])),
    ).toEqual(["RG507 warning 7:52"]);
    expect(
      findings(service(['  - { route: "POST /orders", idempotency: { scope: [X-Api-Key] } }'])),
    ).toEqual([]);
  });

  it("generates a factory that requires a store only when a route keeps its keys in Redis", async () => {
    const dir = mkdtempSync(join(tmpdir(), "resgen-routes-"));
    try {
      for (const [name, store] of [
        ["redis", "redis"],
        ["memory", "memory"],
      ] as const) {
        writeFileSync(
          join(dir, `${name}-service.yaml`),
          service([`  - { route: "POST /orders", idempotency: { store: ${store} } }`]).replace(
            "service: shop",
            `service: ${name}`,
          ),
        );
      }
      const result = await build([dir], { cwd: dir, out: join(dir, "out") });
      expect(result.diagnostics).toEqual([]);
      writeFileSync(
        join(dir, "use.ts"),
        [
          'import { createMemoryMiddleware, createRedisMiddleware } from "./out/index.js";',
          'import { createRedisStore, type RedisScriptClient } from "./out/runtime/index.js";',
          "declare const client: RedisScriptClient;",
          "createMemoryMiddleware();",
          "createRedisMiddleware({ store: createRedisStore(client) });",
          "// @ts-expect-error: a route keeps its keys in Redis, so the store is required",
          "createRedisMiddleware();",
          "",
        ].join("\n"),
      );
      writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
      expect(await compile([join(dir, "use.ts")], "NodeNext")).toBe("");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
