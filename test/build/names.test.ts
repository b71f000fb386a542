/**
 * Names that would break the generated output: a dependency whose module is a file resgen writes
 * itself (the barrel, the runtime, ...), operations that collide with the client's own members,
 * `then` or Object.prototype. `check` refuses them at the name; every other valid name builds
 * into code that compiles.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";
import { build } from "../../src/build/build.js";
import { check, checkPolicyText } from "../../src/program/check.js";
import { emitClient } from "../../src/emit/client.js";
import { methodName, moduleName, pascalCase } from "../../src/model/identifiers.js";
import {
  CLIENT_MEMBERS,
  CLIENT_RUNTIME,
  CLIENT_TELEMETRY,
  RESERVED_METHODS,
  RESERVED_MODULES,
  RESERVED_TYPE_NAMES,
} from "../../src/model/names.js";
import { serviceNames } from "../../src/model/names.js";
import { NAME_PATTERN } from "../../src/language/schema.js";
import { PACKAGE_ROOT } from "../../src/version.js";
import { at, diagnose } from "../helpers/diagnose.js";
import { compile } from "../helpers/tsc.js";
import { runCli } from "./helpers.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A new project folder holding `files` (relative path → text). */
function project(prefix: string, files: Record<string, string>, root = tmpdir()): string {
  mkdirSync(root, { recursive: true });
  const dir = mkdtempSync(join(root, prefix));
  dirs.push(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const policyText = (dependency: string, operations: readonly string[]) =>
  `version: 1\ndependency: ${JSON.stringify(dependency)}\noperations:\n${operations.map((op, i) => `  ${JSON.stringify(op)}: { method: GET, path: /r${i} }\n`).join("")}`;

describe("the names that broke the output", () => {
  const files = {
    "resilience/index.yaml":
      "version: 1\ndependency: index\noperations:\n  getThing: { method: GET, path: /things }\n",
    "resilience/health.yaml":
      "version: 1\ndependency: monitor\noperations:\n  getThing: { method: GET, path: /things }\n  health: { method: GET, path: /health }\n",
    "resilience/subscribe.yaml":
      "version: 1\ndependency: feed\noperations:\n  subscribe: { method: POST, path: /subscriptions, idempotent: true }\n",
    "resilience/then.yaml":
      "version: 1\ndependency: jobs\noperations:\n  then: { method: GET, path: /next }\n",
  };

  it("are errors of check, each at its key", async () => {
    const dir = project("resgen-names-", files);
    const result = await check(["resilience"], { cwd: dir });
    const errors = result.diagnostics
      .filter((d) => d.severity === "error")
      .map((d) => ({
        code: d.code,
        file: d.file,
        ...result.sources.index(d.file).position(d.span.start),
      }));
    expect(errors).toEqual([
      {
        code: "RG301",
        file: "resilience/health.yaml",
        ...at(files["resilience/health.yaml"], "health:"),
      },
      {
        code: "RG301",
        file: "resilience/index.yaml",
        ...at(files["resilience/index.yaml"], "dependency:"),
      },
      {
        code: "RG301",
        file: "resilience/subscribe.yaml",
        ...at(files["resilience/subscribe.yaml"], "subscribe:"),
      },
      {
        code: "RG301",
        file: "resilience/then.yaml",
        ...at(files["resilience/then.yaml"], "then:"),
      },
    ]);
    expect(result.policies).toEqual([]);
  });

  it("stop resgen build, which writes nothing and says where", async () => {
    const dir = project("resgen-names-", files);
    const r = await runCli(dir, "build", "resilience", "--out", "generated");
    expect(r.code).toBe(1);
    const where = (file: keyof typeof files, needle: string) => {
      const { line, column } = at(files[file], needle);
      return `${file}:${line}:${column} error RG301`;
    };
    for (const line of [
      where("resilience/index.yaml", "dependency:"),
      where("resilience/health.yaml", "health:"),
      where("resilience/subscribe.yaml", "subscribe:"),
      where("resilience/then.yaml", "then:"),
    ]) {
      expect(r.stdout + r.stderr).toContain(line);
    }
    expect(r.stdout + r.stderr).toMatch(/index\.ts, the barrel/);
    expect(r.stdout + r.stderr).toMatch(/thenable/);
    expect(existsSync(join(dir, "generated"))).toBe(false);
  });
});

/** Spellings of a name that the generator turns into the same module or method. */
const spellings = (name: string): string[] => {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return [
    ...new Set([
      name,
      name.toUpperCase(),
      pascalCase(name),
      words.join("-").toLowerCase(),
      words.join("_"),
    ]),
  ].filter((s) => new RegExp(NAME_PATTERN).test(s));
};

describe("reserved names", () => {
  it("cover every file and folder a build writes at the top of the output folder", async () => {
    const dir = project("resgen-names-layout-", {
      "resgen.config.yaml":
        "version: 1\npolicies: resilience/*.yaml\nout: generated\ntelemetry: opentelemetry\n",
      "resilience/payments.yaml":
        'version: 1\ndependency: payments\noperations:\n  getCharge: { method: GET, path: "/charges/{id}", grpc: { service: pay.v1.Payments, method: GetCharge } }\n',
      "resilience/edge.yaml": "version: 1\nkind: service\nservice: edge\ndeadline: { edge: 2s }\n",
    });
    const result = await build([dir], { cwd: dir, targets: ["ts", "istio", "linkerd", "grpc"] });
    expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    const tops = new Set(
      result.plans.flatMap((p) => p.changes.map((c) => c.path.split("/")[0]!.replace(/\.ts$/, ""))),
    );
    const own = new Set([moduleName("payments"), serviceNames("edge").module]);
    expect([...tops].filter((t) => !own.has(t)).sort()).toEqual([
      "grpc",
      "index",
      "istio",
      "linkerd",
      "runtime",
      "telemetry",
    ]);
    for (const t of tops) if (!own.has(t)) expect(RESERVED_MODULES.has(t), t).toBe(true);
  });

  it("cover every member of the generated client besides the operations' methods", () => {
    const probe = checkedPolicy(policyText("probe", ["getThing"]));
    const text = emitClient(probe);
    const file = ts.createSourceFile("probe.ts", text, ts.ScriptTarget.Latest);
    const client = file.statements.find(
      (s): s is ts.InterfaceDeclaration =>
        ts.isInterfaceDeclaration(s) && s.name.text === "ProbeClient",
    )!;
    const members = client.members.map((m) =>
      m.name && ts.isIdentifier(m.name) ? m.name.text : "?",
    );
    const returned: string[] = [];
    const visit = (node: ts.Node): void => {
      if (
        ts.isReturnStatement(node) &&
        node.expression &&
        ts.isObjectLiteralExpression(node.expression)
      ) {
        for (const p of node.expression.properties)
          if (p.name && ts.isIdentifier(p.name)) returned.push(p.name.text);
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
    const own = members.filter((m) => m !== "getThing");
    // `breaker` only where the policy has a breaker (docs/runtime.md, "Manual control")
    const expected = CLIENT_MEMBERS.filter((m) => m !== "breaker" || probe.breaker !== null);
    expect(own.sort()).toEqual([...expected].sort());
    expect(returned.filter((m) => m !== "getThing").sort()).toEqual([...expected].sort());
    for (const m of [
      ...CLIENT_MEMBERS,
      "then",
      "constructor",
      "toString",
      "hasOwnProperty",
      "__proto__",
      "valueOf",
      "isPrototypeOf",
    ])
      expect(RESERVED_METHODS.has(m), m).toBe(true);
  });

  it("as a dependency, in every spelling that gives the same module, are errors at the dependency key", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...RESERVED_MODULES.keys()).chain((m) => fc.constantFrom(...spellings(m))),
        (name) => {
          const text = policyText(name, ["getThing"]);
          expect(moduleName(name)).toBe(moduleName(name).toLowerCase());
          expect(diagnose(text).filter((d) => d.severity === "error")).toEqual([
            expect.objectContaining({
              code: "RG301",
              ...at(text, "dependency:"),
              message: expect.stringContaining(`${moduleName(name)}.ts`) as unknown,
            }),
          ]);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("as an operation, in every spelling that gives the same method, are errors at the operation's key", () => {
    const reachable = [...RESERVED_METHODS.keys()].filter((m) =>
      spellings(m).some((s) => methodName(s) === m),
    );
    // only names that no valid operation name can become (`__proto__`, `__defineGetter__`) are left out
    expect(
      [...RESERVED_METHODS.keys()]
        .filter((m) => !reachable.includes(m))
        .every((m) => m.startsWith("__")),
    ).toBe(true);
    fc.assert(
      fc.property(
        fc
          .constantFrom(...reachable)
          .chain((m) => fc.constantFrom(...spellings(m).filter((s) => methodName(s) === m))),
        fc.boolean(),
        (name, first) => {
          const ops = first ? [name, "getThing"] : ["getThing", name];
          const text = policyText("things", ops);
          expect(diagnose(text).filter((d) => d.severity === "error")).toEqual([
            expect.objectContaining({
              code: "RG301",
              ...at(text, `${JSON.stringify(name)}:`),
              message: expect.stringContaining(`${methodName(name)}()`) as unknown,
            }),
          ]);
        },
      ),
      { numRuns: 200 },
    );
    // the others are no valid name at all
    expect(diagnose(policyText("things", ["__proto__"])).some((d) => d.severity === "error")).toBe(
      true,
    );
  });

  it("leave function-transport operations alone: their methods are run<Name>()", () => {
    const text =
      "version: 1\ndependency: things\ntransport: function\noperations:\n  health: {}\n  then: {}\n  toString: {}\n";
    expect(diagnose(text).filter((d) => d.severity === "error")).toEqual([]);
  });
});

describe("what a client module imports", () => {
  it("is named only from the runtime's tables, each a name the runtime exports", () => {
    const exported = (file: string) => {
      const source = ts.createSourceFile(
        file,
        readFileSync(join(PACKAGE_ROOT, file), "utf8"),
        ts.ScriptTarget.Latest,
      );
      return new Set(
        source.statements.flatMap((s) =>
          ts.isExportDeclaration(s) && s.exportClause && ts.isNamedExports(s.exportClause)
            ? s.exportClause.elements.map((e) => e.name.text)
            : [],
        ),
      );
    };
    const runtime = exported("templates/runtime/index.ts");
    for (const name of Object.keys(CLIENT_RUNTIME)) expect(runtime.has(name), name).toBe(true);
    const telemetry = readFileSync(
      join(PACKAGE_ROOT, "templates/telemetry/opentelemetry.ts"),
      "utf8",
    );
    for (const name of Object.keys(CLIENT_TELEMETRY))
      expect(telemetry).toMatch(
        new RegExp(`export (async )?(function|interface|type|const) ${name}\\b`),
      );
    for (const name of [...Object.keys(CLIENT_RUNTIME), ...Object.keys(CLIENT_TELEMETRY)])
      expect(RESERVED_TYPE_NAMES.has(name), name).toBe(true);
  });

  it("leaves schemas named after each of those names their own types, and the module compiles under tsc --strict", async () => {
    const types = [...Object.values(CLIENT_RUNTIME), ...Object.values(CLIENT_TELEMETRY)]
      .filter((s) => s.typeOnly)
      .map((s) => s.name);
    const schemas = types
      .map((t) => `  ${t}: { type: object, properties: { id: { type: string } } }`)
      .join("\n");
    const ops = types
      .map(
        (t, i) =>
          `  get${i}: { method: GET, path: /r${i}, response: { $ref: "#/schemas/${t}" }, fallback: { kind: stale, otherwise: { kind: provided } } }`,
      )
      .join("\n");
    const dir = project(
      "resgen-names-runtime-",
      {
        "resgen.config.yaml":
          "version: 1\npolicies: resilience/*.yaml\nout: generated\ntelemetry: opentelemetry\n",
        "resilience/shadow.yaml": `version: 1\ndependency: shadow\noperations:\n${ops}\nschemas:\n${schemas}\n`,
      },
      OUT,
    );
    const result = await build([dir], { cwd: dir });
    expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    const written = result.plans
      .flatMap((p) => p.changes)
      .filter((c) => c.kind !== "remove" && !c.path.startsWith("telemetry/"));
    const shadow = written.find((c) => c.path === "shadow.ts");
    for (const t of types)
      expect(shadow?.kind !== "remove" && shadow?.content).toContain(
        `export interface ${t}Schema {`,
      );
    // the adapter imports @opentelemetry/api, which this repository has: compile it too
    const files = result.plans.flatMap((p) => p.changes).filter((c) => c.kind !== "remove");
    expect(
      await compile(
        files.map((c) => join(dir, "generated", c.path)),
        "NodeNext",
      ),
    ).toBe("");
  }, 60_000);
});

/** Names the generated modules use as identifiers or members, as policy names: none of them may break the output. */
const TRICKY = [
  "dependency",
  "config",
  "input",
  "options",
  "own",
  "fn",
  "ctx",
  "path",
  "query",
  "body",
  "r",
  "promise",
  "response",
  "record",
  "observer",
  "clock",
  "random",
  "fetch",
  "headers",
  "base-url",
  "telemetry-options",
  "create-dependency",
  "send-http",
  "build-url",
  "call-options",
  "dependency-settings",
  "operation-settings",
  "outcome",
  "attempt-context",
  "resilience-error",
  "dependency-health",
  "delete",
  "class",
  "new",
  "default",
  "function",
  "import",
  "export",
  "await",
  "yield",
  "let",
  "static",
  "enum",
  "arguments",
  "eval",
  "prototype",
  "object",
  "string",
  "undefined",
  "healthy",
  "subscribed",
  "thenable",
  "then-next",
  "indexes",
  "runtimes",
  "to-strings",
  "Object",
  "Error",
  "Array",
  "Json",
  "Math",
  "Symbol",
];

const nameArb = fc.oneof(
  fc.constantFrom(...TRICKY),
  fc.stringMatching(/^[A-Za-z][A-Za-z0-9_-]{0,10}$/),
);

/** A policy exercising path parameters, query (own()), bodies, idempotency keys, stale fallbacks (buildUrl) and named schemas. */
function rich(
  dependency: string,
  operations: readonly string[],
  schema: string,
  transport: "http" | "function",
): string {
  const ops = operations.map((op, i) => {
    const key = JSON.stringify(op);
    if (transport === "function")
      return i % 2 === 0
        ? `  ${key}: { response: { $ref: "#/schemas/${schema}" } }`
        : `  ${key}: { body: { type: object, properties: { x: { type: string } } } }`;
    switch (i % 3) {
      case 0:
        return `  ${key}: { method: GET, path: "/a${i}/{id}", query: { limit: { type: integer, required: false } }, response: { $ref: "#/schemas/${schema}" }, fallback: { kind: stale } }`;
      case 1:
        return `  ${key}: { method: POST, path: /b${i}, idempotency: { header: Idempotency-Key }, body: { $ref: "#/schemas/${schema}" } }`;
      default:
        return `  ${key}: { method: GET, path: /c${i}, response: { type: array, items: { type: string } }, fallback: { kind: value, value: [] } }`;
    }
  });
  return [
    "version: 1",
    `dependency: ${JSON.stringify(dependency)}`,
    `transport: ${transport}`,
    "retry: { maxAttempts: 2, budget: {} }",
    "operations:",
    ...ops,
    "schemas:",
    `  ${schema}: { type: object, properties: { id: { type: string } }, required: [id] }`,
    "",
  ].join("\n");
}

const OUT = join(PACKAGE_ROOT, "test/build/__out__");

describe("valid names outside the reserved ones", () => {
  const isReserved = (dependency: string, ops: readonly string[], transport: "http" | "function") =>
    RESERVED_MODULES.has(moduleName(dependency)) ||
    (transport === "http" && ops.some((op) => RESERVED_METHODS.has(methodName(op))));

  const policyArb = fc
    .record({
      dependency: nameArb,
      ops: fc.uniqueArray(nameArb, { minLength: 1, maxLength: 4, selector: (n) => pascalCase(n) }),
      schema: fc.stringMatching(/^[A-Za-z][A-Za-z0-9_]{0,8}$/),
      transport: fc.constantFrom("http" as const, "http" as const, "function" as const),
    })
    .filter((p) => !isReserved(p.dependency, p.ops, p.transport));
  const projectArb = fc
    .uniqueArray(policyArb, {
      minLength: 4,
      maxLength: 6,
      selector: (p) => pascalCase(p.dependency),
    })
    .filter((ps) => new Set(ps.map((p) => moduleName(p.dependency))).size === ps.length);

  it("pass check, and build into modules that compile under tsc --strict", async () => {
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(projectArb, async (policies) => {
        const files = Object.fromEntries(
          policies.map((p, i) => [
            `resilience/p${i}.yaml`,
            rich(p.dependency, p.ops, p.schema, p.transport),
          ]),
        );
        const dir = project(`names-${runs++}-`, files, OUT);
        const result = await build([join(dir, "resilience")], {
          cwd: dir,
          out: join(dir, "generated"),
        });
        expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
        const written = result.plans.flatMap((p) => p.changes).filter((c) => c.kind !== "remove");
        expect(written.filter((c) => !c.path.startsWith("runtime/")).length).toBe(
          policies.length + 1,
        );
        expect(
          await compile(
            written.map((c) => join(dir, "generated", c.path)),
            "NodeNext",
          ),
        ).toBe("");
      }),
      // seeded, so a run reproduces; the `new` example is a name that once compiled to a construct signature
      {
        numRuns: 2,
        endOnFailure: true,
        seed: 20261201,
        examples: [
          [
            [
              {
                dependency: "promise",
                ops: ["new", "random"],
                schema: "H",
                transport: "http" as const,
              },
              {
                dependency: "path",
                ops: ["object", "import"],
                schema: "M",
                transport: "http" as const,
              },
              { dependency: "sdk", ops: ["new"], schema: "S", transport: "function" as const },
              { dependency: "orders", ops: ["get"], schema: "O", transport: "http" as const },
            ],
          ],
        ],
      },
    );
  }, 120_000);
});

/** The resolved policy of one valid text. */
function checkedPolicy(text: string) {
  const { policy, diagnostics } = checkPolicyText("policy.yaml", text);
  if (!policy) throw new Error(JSON.stringify(diagnostics));
  return policy;
}
