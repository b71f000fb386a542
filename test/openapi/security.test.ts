/**
 * OpenAPI security → the client's typed `auth` option (docs/openapi.md, "Credentials"): HTTP
 * bearer and basic, apiKey in a header or the query, per-operation requirements (`security: []`
 * sends none, the document's default otherwise), and a warning (RG611) at each scheme that
 * cannot be mapped. The public Museum (HTTP basic) and Petstore (apiKey, oauth2) descriptions are
 * read from ../shared/openapi; the clients are compiled under tsc --strict and called against a
 * server on 127.0.0.1.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, type BuildResult } from "../../src/build/build.js";
import { LineIndex } from "../../src/diagnostics/position.js";
import { PACKAGE_ROOT } from "../../src/version.js";
import { compile } from "../helpers/tsc.js";
import { startRecorder, type Recorder } from "./recorder.js";

const SHARED = join(PACKAGE_ROOT, "..", "shared", "openapi");
const present =
  existsSync(join(SHARED, "petstore3.openapi.yaml")) &&
  existsSync(join(SHARED, "museum.openapi.yaml"));
const OUT = join(PACKAGE_ROOT, "test/openapi/__out__/security");

type Credential = string | (() => string | Promise<string>);
type Call<I, R> = (input: I, options?: { headers?: Record<string, string> }) => Promise<R>;
interface Museum {
  createMuseumClient(config: {
    baseUrl: string;
    auth?: { basic?: { username: string; password: string } };
  }): { getMuseumHours: Call<{ query?: { limit?: number } }, unknown> };
}
interface Petstore {
  createPetstoreClient(config: { baseUrl: string; auth?: { apiKey?: Credential } }): {
    getPetById: Call<{ petId: number }, unknown>;
    findPetsByStatus: Call<{ query?: { status?: string } }, unknown>;
  };
}
interface Vault {
  createVaultClient(config: {
    baseUrl: string;
    auth?: {
      bearer?: Credential;
      apiKey?: { legacyKey?: Credential; tenantKey?: Credential };
    };
  }): {
    getSecret: Call<{ name: string }, { value: string }>;
    listExports(options?: { headers?: Record<string, string> }): Promise<string[]>;
    getHealth(): Promise<void>;
    listSessions(): Promise<string[]>;
  };
}

const USAGE = `import { createMuseumClient } from "./museum.js";
import { createPetstoreClient } from "./petstore.js";
import { createVaultClient } from "./vault.js";

declare function token(): Promise<string>;
const baseUrl = "http://127.0.0.1:1";

export function usage(): void {
  createMuseumClient({ baseUrl, auth: { basic: { username: "ada", password: "s3cret" } } });
  // @ts-expect-error basic credentials need a password
  createMuseumClient({ baseUrl, auth: { basic: { username: "ada" } } });
  // @ts-expect-error the museum has no bearer scheme
  createMuseumClient({ baseUrl, auth: { bearer: "t" } });
  createPetstoreClient({ baseUrl, auth: { apiKey: "k-1" } });
  createPetstoreClient({ baseUrl, auth: { apiKey: () => "k-2" } });
  // @ts-expect-error petstore_auth (oauth2) is not mapped: there is no bearer member
  createPetstoreClient({ baseUrl, auth: { bearer: "t" } });
  createVaultClient({ baseUrl, auth: { bearer: token, apiKey: { legacyKey: "old", tenantKey: () => "t-1" } } });
  // @ts-expect-error two apiKey schemes: the key is named by scheme
  createVaultClient({ baseUrl, auth: { apiKey: "k" } });
  // @ts-expect-error a credential is a string or a function returning one
  createVaultClient({ baseUrl, auth: { bearer: 42 } });
}
`;

describe.skipIf(!present)(
  "OpenAPI security (skipped: ../shared/openapi is not next to the repository)",
  () => {
    let result: BuildResult;
    let server: Recorder;
    let museum: Museum;
    let petstore: Petstore;
    let vault: Vault;

    beforeAll(async () => {
      server = await startRecorder();
      rmSync(OUT, { recursive: true, force: true });
      result = await build(
        [
          "test/openapi/public/petstore.yaml",
          "test/openapi/public/museum.yaml",
          "test/openapi/fixtures/security/vault.yaml",
        ],
        { cwd: PACKAGE_ROOT, out: OUT, allowOutsideProject: true },
      );
      writeFileSync(join(OUT, "usage.ts"), USAGE);
      const load = (name: string) => import(pathToFileURL(join(OUT, `${name}.ts`)).href);
      if (result.written) {
        museum = (await load("museum")) as Museum;
        petstore = (await load("petstore")) as Petstore;
        vault = (await load("vault")) as Vault;
      }
    }, 60_000);
    afterAll(async () => {
      await server.close();
      rmSync(OUT, { recursive: true, force: true });
    });

    it("warns at each scheme the client cannot send, once, and maps the rest", () => {
      expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
      const unmapped = result.diagnostics
        .filter((d) => d.code === "RG611")
        .map((d) => {
          const text = readFileSync(join(PACKAGE_ROOT, d.file), "utf8");
          const { line } = new LineIndex(text).position(d.span.start);
          return `${d.file}:${line} ${d.message.split(":")[0]!}`;
        });
      expect(unmapped).toEqual([
        "../shared/openapi/petstore3.openapi.yaml:828 security scheme petstore_auth is of type oauth2",
        "test/openapi/fixtures/security/vault.openapi.yaml:54 security scheme session is an apiKey in a cookie",
        "test/openapi/fixtures/security/vault.openapi.yaml:55 security scheme sso is of type openIdConnect",
      ]);
      const vaultPolicy = result.checked.policies.find((p) => p.dependency === "vault")!;
      expect(vaultPolicy.auth).toEqual([
        { name: "token", type: "bearer" },
        { name: "legacyKey", type: "apiKey", in: "query", param: "api_key" },
        { name: "tenantKey", type: "apiKey", in: "header", param: "X-Tenant-Key" },
      ]);
      expect(Object.fromEntries(vaultPolicy.operations.map((o) => [o.name, o.auth]))).toEqual({
        getSecret: [["token"]],
        listExports: [["legacyKey"], ["token", "tenantKey"]],
        getHealth: [],
        listSessions: [],
      });
    });

    it("the typed auth option compiles under tsc --strict, and refuses what the schemes do not take", async () => {
      const files = result.plans[0]!.changes.filter((c) => c.kind !== "remove").map((c) =>
        join(OUT, c.path),
      );
      expect(await compile([...files, join(OUT, "usage.ts")], "NodeNext")).toBe("");
    }, 60_000);

    it("museum: HTTP basic on every operation (the document's default), as base64 of UTF-8", async () => {
      server.reply("GET /museum-hours", 200, []);
      const client = museum.createMuseumClient({
        baseUrl: server.url,
        auth: { basic: { username: "ada", password: "pässwörd:1" } },
      });
      await client.getMuseumHours({});
      const sent = server.requests.at(-1)!.headers["authorization"]!;
      expect(sent).toBe(`Basic ${Buffer.from("ada:pässwörd:1", "utf8").toString("base64")}`);
      // without credentials nothing is sent, and the server decides
      await museum.createMuseumClient({ baseUrl: server.url }).getMuseumHours({});
      expect(server.requests.at(-1)!.headers["authorization"]).toBeUndefined();
    });

    it("petstore: the api_key header where an operation accepts it, nothing where it needs oauth2", async () => {
      server.reply("GET /api/v3/pet/7", 200, { id: 7, name: "Rex", photoUrls: [] });
      server.reply("GET /api/v3/pet/findByStatus", 200, []);
      let issued = 0;
      const client = petstore.createPetstoreClient({
        baseUrl: `${server.url}/api/v3`,
        auth: { apiKey: () => `key-${++issued}` },
      });
      await client.getPetById({ petId: 7 });
      expect(server.requests.at(-1)!.headers["api_key"]).toBe("key-1");
      await client.findPetsByStatus({ query: { status: "sold" } });
      const oauthOnly = server.requests.at(-1)!;
      expect(oauthOnly.headers["api_key"]).toBeUndefined();
      expect(oauthOnly.headers["authorization"]).toBeUndefined();
      // an oauth2 token goes through the call's headers
      await client.findPetsByStatus({}, { headers: { authorization: "Bearer from-oauth" } });
      expect(server.requests.at(-1)!.headers["authorization"]).toBe("Bearer from-oauth");
      expect(issued).toBe(1);
    });

    it("vault: bearer, an apiKey in the query, both of an alternative together, and security: []", async () => {
      server.reply("GET /secrets/db", 200, { value: "x" });
      server.reply("GET /exports", 200, []);
      server.reply("GET /health", 204, undefined);
      server.reply("GET /sessions", 200, []);
      const all = vault.createVaultClient({
        baseUrl: server.url,
        auth: {
          bearer: () => Promise.resolve("jwt-1"),
          apiKey: { legacyKey: "old key", tenantKey: "tenant-9" },
        },
      });
      await all.getSecret({ name: "db" });
      expect(server.requests.at(-1)!.headers["authorization"]).toBe("Bearer jwt-1");
      // the first alternative that is fully given: the query key
      await all.listExports();
      expect(server.requests.at(-1)).toMatchObject({ query: { api_key: "old key" } });
      expect(server.requests.at(-1)!.headers["authorization"]).toBeUndefined();
      // without it, the bearer token and the tenant header together
      const bearer = vault.createVaultClient({
        baseUrl: server.url,
        auth: { bearer: "jwt-2", apiKey: { tenantKey: "tenant-9" } },
      });
      await bearer.listExports();
      expect(server.requests.at(-1)!.headers).toMatchObject({
        authorization: "Bearer jwt-2",
        "x-tenant-key": "tenant-9",
      });
      expect(server.requests.at(-1)!.query).toEqual({});
      // half of an alternative is not enough: nothing is sent
      await vault
        .createVaultClient({ baseUrl: server.url, auth: { bearer: "jwt-3" } })
        .listExports();
      expect(server.requests.at(-1)!.headers["authorization"]).toBeUndefined();
      // security: [] sends no credentials; neither does an operation that accepts only unmapped schemes
      await all.getHealth();
      await all.listSessions();
      for (const request of server.requests.slice(-2)) {
        expect(request.headers["authorization"]).toBeUndefined();
        expect(request.query).toEqual({});
      }
      // the call's own headers go over the credentials
      await all.getSecret({ name: "db" }, { headers: { Authorization: "Bearer end-user" } });
      expect(server.requests.at(-1)!.headers["authorization"]).toBe("Bearer end-user");
    });
  },
);
