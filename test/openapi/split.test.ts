/**
 * An OpenAPI description split across files, on disk: a project whose policy names the root
 * document, whose paths and schemas live in other files (one of them next to the policies,
 * matched by the same glob), built into a client that compiles under tsc --strict.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, type BuildResult } from "../../src/build/build.js";
import { PACKAGE_ROOT } from "../../src/version.js";
import { compile } from "../helpers/tsc.js";

const ROOT = join(PACKAGE_ROOT, "test/openapi/__out__/split");
const OUT = join(ROOT, "src/generated");

const FILES: Record<string, string> = {
  "resgen.config.yaml": "version: 1\npolicies: resilience/*.yaml\nout: src/generated\n",
  "resilience/shop.yaml": "version: 1\ndependency: shop\nopenapi: ../api/shop.openapi.yaml\n",
  // a piece of the description that sits next to the policies and matches their glob
  "resilience/errors.yaml":
    "components:\n  schemas:\n    Problem: { type: object, properties: { title: { type: string } }, required: [title] }\n",
  "api/shop.openapi.yaml": `openapi: 3.1.0
info: { title: Shop, version: 1.0.0 }
paths:
  /pets:
    $ref: "./paths/pets.yaml"
  /pets/{petId}:
    get:
      operationId: getPet
      parameters:
        - $ref: "./parameters.yaml#/PetId"
      responses:
        "200":
          description: A pet.
          content:
            application/json:
              schema: { $ref: "./schemas/pet.yaml" }
`,
  "api/paths/pets.yaml": `get:
  operationId: listPets
  parameters:
    - { name: limit, in: query, schema: { type: integer } }
  responses:
    "200":
      description: Pets.
      content:
        application/json:
          schema: { type: array, items: { $ref: "../schemas/pet.yaml" } }
post:
  operationId: addPet
  parameters:
    - { name: Idempotency-Key, in: header, required: true, schema: { type: string } }
  requestBody:
    content:
      application/json:
        schema: { $ref: "../schemas/pet.yaml" }
  responses:
    "201":
      description: Added.
      content:
        application/json:
          schema: { $ref: "../schemas/pet.yaml" }
`,
  "api/parameters.yaml":
    "PetId: { name: petId, in: path, required: true, schema: { type: integer } }\n",
  "api/schemas/pet.yaml": `type: object
properties:
  name: { type: string }
  kind: { type: string, enum: [cat, dog] }
  problems: { type: array, items: { $ref: "../../resilience/errors.yaml#/components/schemas/Problem" } }
required: [name, kind]
`,
  "usage.ts": `import { createShopClient, type Problem } from "./src/generated/shop.js";

export async function usage(baseUrl: string): Promise<void> {
  const shop = createShopClient({ baseUrl });
  const pets = await shop.listPets({ query: { limit: 2 } });
  const kind: "cat" | "dog" = pets[0]!.kind;
  const pet = await shop.getPet({ petId: 7 });
  const problems: Problem[] | undefined = pet.problems;
  await shop.addPet({ body: { name: "Rex", kind: "dog" } });
  // @ts-expect-error petId is an integer in parameters.yaml
  await shop.getPet({ petId: "7" });
  // @ts-expect-error kind is "cat" | "dog" in schemas/pet.yaml
  await shop.addPet({ body: { name: "Rex", kind: "cow" } });
  void [kind, problems];
}
`,
};

describe("an OpenAPI description split across files", () => {
  let result: BuildResult;

  beforeAll(async () => {
    rmSync(ROOT, { recursive: true, force: true });
    for (const [file, text] of Object.entries(FILES)) {
      mkdirSync(dirname(join(ROOT, file)), { recursive: true });
      writeFileSync(join(ROOT, file), text);
    }
    result = await build([], { cwd: ROOT });
  });
  afterAll(() => rmSync(ROOT, { recursive: true, force: true }));

  it("builds one client from the files its $refs reach, and takes none of them for a policy", () => {
    expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(result.checked.policies.map((p) => p.dependency)).toEqual(["shop"]);
    const shop = result.checked.policies[0]!;
    expect(shop.operations.map((o) => [o.method, o.path, o.name].join(" "))).toEqual([
      "GET /pets listPets",
      "POST /pets addPet",
      "GET /pets/{petId} getPet",
    ]);
    expect(shop.operations.find((o) => o.name === "addPet")).toMatchObject({
      repeatable: true,
      idempotency: "key",
    });
    // the files are known to the build, for positions and for --watch
    expect([...result.checked.documents.keys()].sort()).toEqual(
      [
        "api/parameters.yaml",
        "api/paths/pets.yaml",
        "api/schemas/pet.yaml",
        "api/shop.openapi.yaml",
        "resilience/errors.yaml",
        "resilience/shop.yaml",
        "resgen.config.yaml",
      ].sort(),
    );
  });

  it("compiles under tsc --strict, typed from every file", async () => {
    const files = result.plans[0]!.changes.filter((c) => c.kind !== "remove").map((c) =>
      join(OUT, c.path),
    );
    expect(await compile([...files, join(ROOT, "usage.ts")], "NodeNext")).toBe("");
  });
});

describe("a broken file of a split description, next to the policies", () => {
  const root = join(PACKAGE_ROOT, "test/openapi/__out__/split-broken");
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("is reported once, and the $ref that names it says it cannot be read", async () => {
    rmSync(root, { recursive: true, force: true });
    const files = {
      ...FILES,
      "resilience/errors.yaml":
        "components:\n  schemas:\n    Problem: { type: object, properties: { title: { type: string } \n",
    };
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, file)), { recursive: true });
      writeFileSync(join(root, file), text);
    }
    const broken = await build([], { cwd: root });
    const syntax = broken.diagnostics.filter((d) => d.file === "resilience/errors.yaml");
    expect(syntax.length).toBeGreaterThan(0);
    expect(new Set(syntax.map((d) => `${d.code} ${d.span.start} ${d.message}`)).size).toBe(
      syntax.length,
    );
    const ref = broken.diagnostics.find((d) => d.code === "RG603");
    expect(ref).toMatchObject({
      file: "api/schemas/pet.yaml",
      message:
        '$ref "../../resilience/errors.yaml#/components/schemas/Problem" names a file that cannot be read: resilience/errors.yaml could not be read as YAML or JSON',
    });
    expect(broken.written).toBe(false);
  });
});
