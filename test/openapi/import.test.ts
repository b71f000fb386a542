/**
 * OpenAPI import: what each part of a document becomes (operations, parameters, bodies, schemas,
 * idempotency), what is reported and where (file:line:col in the document or the policy).
 */
import { describe, expect, it } from "vitest";
import { check, checkTexts } from "../../src/program/check.js";
import type { Diagnostic } from "../../src/diagnostics/diagnostic.js";
import { SourceTexts } from "../../src/diagnostics/format.js";
import { emitClient } from "../../src/emit/client.js";
import { PACKAGE_ROOT } from "../../src/version.js";

const POLICY = "version: 1\ndependency: shop\nopenapi: ./api.yaml\n";

/** An OpenAPI 3.1 document with the given paths and schemas (YAML flow/block text, indented by the caller). */
function doc(paths: string, schemas = "", version = "3.1.0"): string {
  return `openapi: ${version}\ninfo: { title: Shop, version: 1.0.0 }\npaths:\n${paths}${schemas ? `components:\n  schemas:\n${schemas}` : ""}`;
}

/** Checks the policy with api.yaml (and `others`, more files next to it). */
function run(api: string, policy = POLICY, others: Readonly<Record<string, string>> = {}) {
  const files = [
    { file: "shop.yaml", text: policy },
    { file: "api.yaml", text: api },
    ...Object.entries(others).map(([file, text]) => ({ file, text })),
  ];
  // these policies declare no latency, bulkhead or timeout, on purpose: the warnings about that
  // (RG224, RG226) are not the subject here
  const checked = checkTexts(files);
  const result = {
    ...checked,
    diagnostics: checked.diagnostics.filter((d) => d.code !== "RG224" && d.code !== "RG226"),
  };
  const sources = new SourceTexts();
  for (const f of files) sources.set(f.file, f.text);
  const at = (d: Diagnostic) => {
    const { line, column } = sources.position(d);
    return `${d.file}:${line}:${column} ${d.code}`;
  };
  return { ...result, policy: result.policies[0], at: result.diagnostics.map(at) };
}

const get = (id: string, schema: string) =>
  `  /${id}:\n    get:\n      operationId: ${id}\n      responses:\n        "200":\n          description: OK.\n          content:\n            application/json:\n              schema: ${schema}\n`;

describe("operations", () => {
  it("takes method, path, path and query parameters, JSON body and 2xx JSON response", () => {
    const api = doc(
      `  /carts/{cartId}/items:
    parameters:
      - { name: cartId, in: path, required: true, schema: { type: integer } }
    post:
      operationId: addItem
      summary: Adds an item to a cart.
      parameters:
        - { name: source, in: query, schema: { type: string, enum: [web, app] } }
        - { name: tags, in: query, required: true, schema: { type: array, items: { type: string } } }
        - { name: trace, in: header, schema: { type: string } }
      requestBody:
        content:
          application/xml: { schema: { type: string } }
          application/json; charset=utf-8: { schema: { $ref: "#/components/schemas/Item" } }
      responses:
        "201": { description: Created., content: { application/json: { schema: { $ref: "#/components/schemas/Item" } } } }
        "400": { description: Bad., content: { application/json: { schema: { type: object } } } }
`,
      "    Item: { type: object, properties: { sku: { type: string } }, required: [sku] }\n",
    );
    const { policy, diagnostics } = run(api);
    expect(diagnostics).toEqual([]);
    const op = policy!.operations[0]!;
    expect(op).toMatchObject({
      name: "addItem",
      description: "Adds an item to a cart.",
      method: "POST",
      path: "/carts/{cartId}/items",
      params: [{ name: "cartId", type: "integer", declared: true }],
      query: [
        { name: "source", type: "string", enum: ["web", "app"], required: false },
        { name: "tags", type: "array", items: "string", required: true },
      ],
      body: { $ref: "#/schemas/Item" },
      response: { $ref: "#/schemas/Item" },
      repeatable: false,
    });
    // an imported operation the policy does not list is located in the document
    expect(op.source).toEqual({
      file: "api.yaml",
      path: ["paths", "/carts/{cartId}/items", "post"],
    });
    expect(policy!.schemas).toEqual({
      Item: { type: "object", properties: { sku: { type: "string" } }, required: ["sku"] },
    });
  });

  it("reads JSON documents too (JSON is YAML), with positions", () => {
    const api = JSON.stringify(
      {
        openapi: "3.0.3",
        info: { title: "Shop", version: "1.0.0" },
        paths: {
          "/items/{id}": {
            get: {
              operationId: "getItem",
              responses: {
                "200": {
                  description: "OK.",
                  content: {
                    "application/json": { schema: { $ref: "#/components/schemas/Itme" } },
                  },
                },
              },
            },
          },
        },
        components: { schemas: { Item: { type: "object" } } },
      },
      null,
      2,
    );
    const { at, diagnostics } = run(api);
    // line 17 of the pretty-printed JSON: `"$ref": "#/components/schemas/Itme"`, at the value
    expect(api.split("\n")[16]!.indexOf('"#/components')).toBe(26);
    expect(at).toEqual(["api.yaml:17:27 RG603"]);
    expect(diagnostics[0]!.hint).toBe("fix the reference, or add the schema it names");
  });

  it("imports only the operations the policy lists, with their overrides", () => {
    const api = doc(get("a", "{ type: string }") + get("b", "{ type: integer }"));
    const { policy, diagnostics } = run(
      api,
      `${POLICY}retry: { maxAttempts: 3, budget: {} }\noperations:\n  b: { retry: false, timeout: { attempt: 100ms, total: 300ms } }\n`,
    );
    expect(diagnostics).toEqual([]);
    expect(policy!.operations.map((o) => [o.name, o.retry, o.timeout.attemptMs])).toEqual([
      ["b", null, 100],
    ]);
    expect(policy!.operations[0]!.source).toEqual({ file: "shop.yaml", path: ["operations", "b"] });
  });
});

describe("idempotency from the document", () => {
  const post = (extra: string) =>
    `  /charges:\n    post:\n      operationId: charge\n${extra}      responses: { "201": { description: Created. } }\n`;

  it("an Idempotency-Key header parameter (any case) makes the operation keyed", () => {
    const { policy, diagnostics } = run(
      doc(
        post(
          "      parameters:\n        - { name: idempotency-key, in: header, required: true, schema: { type: string } }\n",
        ),
      ),
      `${POLICY}retry: { maxAttempts: 3, budget: {} }\n`,
    );
    expect(diagnostics).toEqual([]);
    expect(policy!.operations[0]).toMatchObject({
      repeatable: true,
      idempotency: "key",
      idempotencyKey: { header: "idempotency-key" },
    });
  });

  it("the header names are configurable", () => {
    const api = doc(
      post(
        "      parameters:\n        - { name: X-Request-Token, in: header, schema: { type: string } }\n",
      ),
    );
    const plain = run(api).policy!.operations[0]!;
    expect(plain.idempotency).toBe("none");
    const configured = run(
      api,
      "version: 1\ndependency: shop\nopenapi: { document: ./api.yaml, idempotencyHeaders: [x-request-token] }\n",
    ).policy!.operations[0]!;
    expect(configured.idempotencyKey).toEqual({ header: "X-Request-Token" });
  });

  it("x-idempotent: true is honoured as an assertion", () => {
    const { policy } = run(doc(post("      x-idempotent: true\n")));
    expect(policy!.operations[0]).toMatchObject({ repeatable: true, idempotency: "asserted" });
  });

  it("the analyzer's rules apply as for inline operations: a retried POST without a key", () => {
    const { at, diagnostics } = run(
      doc(post("")),
      `${POLICY}retry: { maxAttempts: 3, budget: {} }\noperations:\n  charge: { retry: { maxAttempts: 2 } }\n`,
    );
    expect(at).toEqual(["shop.yaml:6:13 RG201"]);
    expect(diagnostics[0]!.message).toMatch(
      /operation charge: retry \(maxAttempts 2\) is set on a POST that is not idempotent/,
    );
    // inherited and not listed: the warning names the operation, at the policy's retry
    expect(run(doc(post("")), `${POLICY}retry: { maxAttempts: 3, budget: {} }\n`).at).toEqual([
      "shop.yaml:4:1 RG202",
    ]);
  });
});

describe("schemas", () => {
  const typeOf = (schema: string, schemas = "", version = "3.1.0") => {
    const { policy, diagnostics } = run(doc(get("thing", schema), schemas, version));
    expect(diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    const text = emitClient(policy!);
    return {
      text,
      response: /export type ThingResponse = ([\s\S]*?);\n(?=[^\s}]|\n)/.exec(text)?.[1],
      diagnostics,
    };
  };

  it("allOf is an intersection, oneOf and anyOf unions, const and enum literals", () => {
    expect(
      typeOf(
        "{ allOf: [{ $ref: '#/components/schemas/A' }, { type: object, properties: { b: { type: string } } }] }",
        "    A: { type: object, properties: { a: { type: integer } }, required: [a] }\n",
      ).response,
    ).toBe("A & {\n  b?: string;\n}");
    expect(typeOf("{ oneOf: [{ type: string }, { type: integer }] }").response).toBe(
      "string | number",
    );
    expect(typeOf("{ anyOf: [{ const: on }, { const: 1 }, { type: 'null' }] }").response).toBe(
      '"on" | 1 | null',
    );
    expect(typeOf("{ type: string, enum: [a, b] }").response).toBe('"a" | "b"');
  });

  it("nullable (3.0) and type lists (3.1) become unions with null", () => {
    expect(typeOf("{ type: string, nullable: true }", "", "3.0.3").response).toBe("string | null");
    expect(typeOf("{ type: [string, 'null'] }").response).toBe("string | null");
    expect(typeOf("{ type: [string, integer] }").response).toBe("string | number");
  });

  it("oneOf with a discriminator narrows each alternative by its tag", () => {
    const schemas =
      "    Cat: { type: object, properties: { kind: { type: string }, meows: { type: boolean } } }\n    Dog: { type: object, properties: { kind: { type: string } } }\n";
    const { response } = typeOf(
      "{ oneOf: [{ $ref: '#/components/schemas/Cat' }, { $ref: '#/components/schemas/Dog' }], discriminator: { propertyName: kind, mapping: { dog: '#/components/schemas/Dog' } } }",
      schemas,
    );
    expect(response).toBe('(Cat & {\n  kind: "Cat";\n}) | (Dog & {\n  kind: "dog";\n})');
  });

  it("recursive schemas become recursive named types", () => {
    const { text } = typeOf(
      "{ $ref: '#/components/schemas/Node' }",
      "    Node: { type: object, properties: { name: { type: string }, children: { type: array, items: { $ref: '#/components/schemas/Node' } } } }\n",
    );
    expect(text).toContain(
      "export interface Node {\n  name?: string;\n  children?: Array<Node>;\n}",
    );
  });

  it("a schema that is its own type with nothing in between is an error, not a circular alias", () => {
    const schemas =
      "    A: { $ref: '#/components/schemas/B' }\n    B: { allOf: [{ $ref: '#/components/schemas/A' }, { type: object }] }\n";
    const { at, diagnostics, policy } = run(
      doc(get("thing", "{ $ref: '#/components/schemas/A' }"), schemas),
    );
    expect(at).toEqual(["api.yaml:15:5 RG603"]);
    expect(diagnostics[0]!.message).toBe(
      "schema A is its own type through A → B → A, with no object or array in between",
    );
    expect(policy).toBeUndefined();
  });

  it("schemas named like globals or runtime types get another type name", () => {
    const schemas =
      "    Record: { type: object, properties: { at: { $ref: '#/components/schemas/Date' }, error: { $ref: '#/components/schemas/Error' } } }\n    Date: { type: string }\n    Error: { type: object, properties: { title: { type: string } } }\n";
    const { text, response } = typeOf(
      "{ type: array, items: { $ref: '#/components/schemas/Record' } }",
      schemas,
    );
    expect(response).toBe("Array<RecordSchema>");
    expect(text).toContain(
      "export interface RecordSchema {\n  at?: DateSchema;\n  error?: ErrorSchema;\n}",
    );
  });

  it("what a type cannot express is reported at the keyword, naming the schema", () => {
    const { at, diagnostics } = run(
      doc(
        get("thing", "{ $ref: '#/components/schemas/Code' }"),
        "    Code: { type: string, not: { const: '' } }\n",
      ),
    );
    expect(at).toEqual(["api.yaml:15:27 RG606"]);
    expect(diagnostics[0]!.message).toBe(
      "schema Code uses `not` (a negated schema), which a TypeScript type cannot express: the generated type ignores it and is wider than the schema",
    );
  });
});

describe("problems in the document and the policy", () => {
  it("a missing $ref and an unknown operationId point into the document and the policy", async () => {
    const result = await check(["test/openapi/fixtures/broken/orders.yaml"], { cwd: PACKAGE_ROOT });
    const at = result.diagnostics.map((d) => {
      const { line, column } = result.sources.position(d);
      return `${d.file}:${line}:${column} ${d.code} ${d.message}`;
    });
    expect(at).toEqual([
      'test/openapi/fixtures/broken/orders.openapi.yaml:50:26 RG603 $ref "#/components/schemas/OrderLine" points at nothing: #/components/schemas has no "OrderLine"',
      'test/openapi/fixtures/broken/orders.yaml:7:3 RG604 operation "getOrders" is not an operationId of test/openapi/fixtures/broken/orders.openapi.yaml',
    ]);
    expect(result.diagnostics[1]!.hint).toBe('did you mean "getOrder"?');
    expect(result.policies).toEqual([]);
  });

  it("the document next to the policies is not checked as a policy", async () => {
    const result = await check(["test/openapi/fixtures/broken"], { cwd: PACKAGE_ROOT });
    expect(result.fileCount).toBe(1);
    expect(result.diagnostics.map((d) => d.code)).toEqual(["RG603", "RG604"]);
  });

  it("a missing document is reported at the policy's openapi key", async () => {
    const { diagnostics } = checkTexts([
      { file: "shop.yaml", text: "version: 1\ndependency: shop\nopenapi: ./nowhere.yaml\n" },
    ]);
    expect(diagnostics.map((d) => [d.code, d.span.start, d.message])).toEqual([
      ["RG601", 37, "cannot read the OpenAPI document nowhere.yaml: no such file"],
    ]);
    const result = await check(["test/openapi/fixtures/missing.yaml"], { cwd: PACKAGE_ROOT });
    expect(
      result.diagnostics.map(
        (d) =>
          `${d.file}:${result.sources.position(d).line}:${result.sources.position(d).column} ${d.code} ${d.message}`,
      ),
    ).toEqual([
      "test/openapi/fixtures/missing.yaml:3:10 RG601 cannot read the OpenAPI document test/openapi/fixtures/nowhere.openapi.yaml: no such file",
    ]);
  });

  it("Swagger 2.0 and unknown versions are refused", () => {
    expect(run("swagger: '2.0'\ninfo: { title: Shop, version: 1.0.0 }\npaths: {}\n").at).toEqual([
      "api.yaml:1:10 RG602",
    ]);
    expect(run("openapi: 4.0.0\ninfo: { title: Shop, version: 1.0.0 }\npaths: {}\n").at).toEqual([
      "api.yaml:1:10 RG602",
    ]);
  });

  it("a version written as a list or a mapping is refused, and its message quotes no [object Object]", () => {
    // a one-item list once read as its item ("3.1.0"), and a mapping as "[object Object]"
    for (const version of ["[3.1.0]", "{ v: 3.1.0 }"]) {
      const { diagnostics } = run(
        `openapi: ${version}\ninfo: { title: Shop, version: 1.0.0 }\npaths: {}\n`,
      );
      expect(diagnostics.map((d) => [d.code, d.message])).toEqual([
        ["RG602", expect.stringContaining('the "openapi" version field is not a version number')],
      ]);
    }
    const swagger = run(
      "swagger: { v: 2 }\ninfo: { title: Shop, version: 1.0.0 }\npaths: {}\n",
    ).diagnostics;
    expect(swagger.map((d) => [d.code, d.message])).toEqual([
      ["RG602", expect.stringContaining("Swagger is not supported")],
    ]);
  });

  it("operations without operationId, duplicates and keys the document owns are reported", () => {
    const noId = doc(
      '  /a:\n    get:\n      responses: { "204": { description: No content. } }\n' +
        get("b", "{ type: string }"),
    );
    expect(run(noId).at).toEqual(["api.yaml:5:5 RG605"]);
    const dup = doc(
      get("b", "{ type: string }") + get("b", "{ type: string }").replace("/b:", "/c:"),
    );
    expect(run(dup).at).toEqual(["api.yaml:15:20 RG610"]);
    expect(
      run(doc(get("b", "{ type: string }")), `${POLICY}operations:\n  b: { path: /x }\n`).at,
    ).toEqual(["shop.yaml:5:8 RG609"]);
  });

  it("a listed operation that cannot be imported is an error, an unlisted one a warning", () => {
    const binary = doc(
      '  /file:\n    get:\n      operationId: download\n      responses: { "200": { description: File., content: { application/pdf: { schema: { type: string } } } } }\n' +
        get("b", "{ type: string }"),
    );
    expect(run(binary).at).toEqual(["api.yaml:5:5 RG607"]);
    expect(run(binary, `${POLICY}operations:\n  download: {}\n`).at).toEqual([
      "api.yaml:5:5 RG608",
    ]);
  });
});

describe("a description split across files", () => {
  const api = doc(
    `  /pets:
    $ref: "./paths/pets.yaml#/pets"
  /owners/{ownerId}:
    get:
      operationId: getOwner
      parameters:
        - $ref: "./parameters.yaml#/OwnerId"
      responses:
        "200":
          $ref: "./responses.yaml#/Owner"
`,
  );
  const others = {
    "paths/pets.yaml": `pets:
  get:
    operationId: listPets
    parameters:
      - { name: limit, in: query, schema: { type: integer } }
    responses:
      "200":
        description: Pets.
        content:
          application/json:
            schema: { type: array, items: { $ref: "../schemas.yaml#/components/schemas/Pet" } }
`,
    "parameters.yaml":
      "OwnerId: { name: ownerId, in: path, required: true, schema: { type: string } }\n",
    "responses.yaml": `Owner:
  description: An owner.
  content:
    application/json:
      schema: { $ref: "./schemas.yaml#/components/schemas/Owner" }
`,
    "schemas.yaml": `components:
  schemas:
    Pet:
      type: object
      properties: { name: { type: string }, owner: { $ref: "#/components/schemas/Owner" } }
      required: [name]
    Owner:
      type: object
      properties: { id: { type: string }, pets: { type: array, items: { $ref: "#/components/schemas/Pet" } } }
      required: [id]
`,
  };

  it("follows $refs from file to file, each read relative to the file it is written in", () => {
    const { policy, diagnostics } = run(api, POLICY, others);
    expect(diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(policy?.operations.map((o) => [o.method, o.path, o.name].join(" "))).toEqual([
      "GET /pets listPets",
      "GET /owners/{ownerId} getOwner",
    ]);
    expect(
      policy?.operations.find((o) => o.name === "getOwner")?.params.map((p) => p.name),
    ).toEqual(["ownerId"]);
    // one named schema per target, however many files refer to it, and recursive across files
    expect(Object.keys(policy?.schemas ?? {}).sort()).toEqual(["Owner", "Pet"]);
    const text = emitClient(policy!);
    expect(text).toContain("export interface Pet {\n  name: string;\n  owner?: Owner;\n}");
    expect(text).toContain("export interface Owner {\n  id: string;\n  pets?: Array<Pet>;\n}");
    // an imported operation is located in the file that declares it
    expect(policy?.operations.find((o) => o.name === "listPets")?.source).toEqual({
      file: "paths/pets.yaml",
      path: ["pets", "get"],
    });
  });

  it("points at the file, line and column of each problem, in whichever file it is", () => {
    const broken = {
      ...others,
      "schemas.yaml": others["schemas.yaml"].replace(
        "properties: { name: { type: string },",
        "properties: { name: { type: string, not: { const: x } },",
      ),
      "responses.yaml": others["responses.yaml"].replace(
        "#/components/schemas/Owner",
        "#/components/schemas/Ownr",
      ),
    };
    const { at, diagnostics } = run(api, POLICY, broken);
    expect(at).toEqual(["responses.yaml:5:23 RG603", "schemas.yaml:5:43 RG606"]);
    expect(diagnostics.find((d) => d.code === "RG603")?.message).toBe(
      '$ref "./schemas.yaml#/components/schemas/Ownr" points at nothing: #/components/schemas has no "Ownr"',
    );
  });

  it("says which references cannot be followed: a missing file, the network, a pointer that is not one", () => {
    const api2 = doc(
      `  /a:
    $ref: "./gone.yaml#/a"
  /b:
    $ref: "https://example.com/api.yaml#/b"
  /c:
    get:
      operationId: c
      responses:
        "200":
          description: C.
          content:
            application/json:
              schema: { $ref: "./schemas.yaml#components" }
`,
    );
    const { at, diagnostics } = run(api2, POLICY, { "schemas.yaml": "components: {}\n" });
    expect(at.filter((a) => a.endsWith("RG603"))).toEqual([
      "api.yaml:5:11 RG603",
      "api.yaml:7:11 RG603",
      "api.yaml:16:31 RG603",
    ]);
    expect(diagnostics.filter((d) => d.code === "RG603").map((d) => d.message)).toEqual([
      '$ref "./gone.yaml#/a" names a file that cannot be read: no such file',
      '$ref "https://example.com/api.yaml#/b" names a remote document; resgen reads files next to the description, never the network',
      '$ref "./schemas.yaml#components" is not a JSON pointer (after # comes /)',
    ]);
  });

  it("reports a schema that is its own type across files where it is defined", () => {
    const { at, diagnostics } = run(doc(get("thing", "{ $ref: './a.yaml#/A' }")), POLICY, {
      "a.yaml": "A: { allOf: [{ $ref: './b.yaml#/B' }] }\n",
      "b.yaml": "B: { $ref: './a.yaml#/A' }\n",
    });
    expect(at).toEqual(["a.yaml:1:1 RG603"]);
    expect(diagnostics[0]!.message).toBe(
      "schema A is its own type through A → B → A, with no object or array in between",
    );
  });
});
