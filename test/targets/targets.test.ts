/**
 * Mesh and gRPC targets: golden output from the checkout example, the mapping report of a policy
 * that uses every setting the targets cannot express as it is, and how the planner treats the
 * files of each target.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { build, type BuildResult } from "../../src/build/build.js";
import { main } from "../../src/cli/cli.js";
import { isGenerated } from "../../src/model/header.js";
import { parseTargets } from "../../src/targets/index.js";
import { PACKAGE_ROOT } from "../../src/version.js";
import { buildTargets, emitted } from "./helpers.js";

// the parts of the emitted manifests and service config that these tests read
interface Route {
  readonly name: string;
  readonly retries?: unknown;
  readonly timeout?: string;
  readonly match?: unknown;
}
interface VirtualService {
  readonly metadata: unknown;
  readonly spec: { readonly hosts: readonly string[]; readonly http: readonly Route[] };
}
interface DestinationRule {
  readonly spec: {
    readonly trafficPolicy: {
      readonly connectionPool: { readonly http: unknown };
      readonly retryBudget: unknown;
    };
  };
}
interface ServiceProfile {
  readonly metadata: unknown;
  readonly spec: {
    readonly routes: readonly { readonly name: string; readonly isRetryable?: boolean }[];
    readonly retryBudget: unknown;
  };
}
interface GrpcServiceConfig {
  readonly retryThrottling: unknown;
  readonly methodConfig: unknown;
}

/** The YAML documents of an emitted file, as plain values. */
const documents = (text: string): unknown[] =>
  parseAllDocuments(text).map((d) => d.toJS() as unknown);

describe("checkout example, all targets", () => {
  let result: BuildResult;
  beforeAll(async () => {
    result = await buildTargets("examples/checkout", ["istio", "linkerd", "grpc"], "checkout");
  });

  it("builds without errors and writes no TypeScript when ts is not asked for", () => {
    expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    const paths = [...emitted(result).keys()];
    expect(paths.filter((p) => p.endsWith(".ts"))).toEqual([]);
    expect(paths).toEqual([
      "grpc/geocoder.json",
      "istio/geocoder.yaml",
      "istio/inventory.yaml",
      "istio/payments.yaml",
      "istio/recommendations.yaml",
      "linkerd/geocoder.yaml",
      "linkerd/inventory.yaml",
      "linkerd/payments.yaml",
      "linkerd/recommendations.yaml",
    ]);
  });

  it("matches the golden files", async () => {
    for (const [path, content] of emitted(result))
      await expect(content).toMatchFileSnapshot(`./expected/checkout/${path}`);
  });

  it("marks every file as generated, so the planner may update and remove it", () => {
    for (const content of emitted(result).values()) expect(isGenerated(content)).toBe(true);
  });

  it("maps payments faithfully: attempts count retries, route timeout is the total, statuses are listed", () => {
    const [vs, dr] = documents(emitted(result).get("istio/payments.yaml")!) as [
      VirtualService,
      DestinationRule,
    ];
    const createCharge = vs.spec.http.find((r) => r.name === "createCharge");
    expect(createCharge?.retries).toEqual({
      attempts: 2,
      perTryTimeout: "500ms",
      retryOn: "connect-failure,refused-stream,reset,429,502,503,504",
      backoff: "50ms",
    });
    expect(createCharge?.timeout).toBe("2s");
    expect(vs.spec.http.at(-1)).toEqual({
      name: "default",
      route: [{ destination: { host: "payments.checkout.svc.cluster.local" } }],
    });
    expect(dr.spec.trafficPolicy.connectionPool.http).toEqual({
      http2MaxRequests: 25,
      http1MaxPendingRequests: 10,
    });
    expect(dr.spec.trafficPolicy.retryBudget).toEqual({ percent: 10 });
  });

  it("turns Istio's default retries off where the policy does not retry (the hedged read)", () => {
    const vs = documents(emitted(result).get("istio/recommendations.yaml")!)[0] as VirtualService;
    const hedged = vs.spec.http.find((r) => r.name === "getRecommendations");
    expect(hedged).toMatchObject({
      timeout: "250ms",
      retries: { attempts: 0 },
      match: [{ uri: { regex: "/users/[^/]+/recommendations" }, method: { exact: "GET" } }],
    });
  });

  it("marks only retry-safe operations retryable in Linkerd", () => {
    const sp = parse(emitted(result).get("linkerd/recommendations.yaml")!) as ServiceProfile;
    const byName = Object.fromEntries(sp.spec.routes.map((r) => [r.name, r]));
    expect(byName["POST /clicks"]?.isRetryable).toBe(true);
    expect(byName["GET /users/{userId}/recommendations"]).toBeDefined();
    expect(byName["GET /users/{userId}/recommendations"]?.isRetryable).toBeUndefined();
    expect(sp.spec.retryBudget).toEqual({ retryRatio: 0.1, minRetriesPerSecond: 5, ttl: "10s" });
  });

  it("reports what each target cannot express, once per place and target", () => {
    const codes = new Set(
      result.diagnostics.filter((d) => d.code.startsWith("RG4")).map((d) => d.code),
    );
    expect([...codes].sort()).toEqual([
      "RG401",
      "RG402",
      "RG404",
      "RG405",
      "RG406",
      "RG407",
      "RG408",
      "RG409",
      "RG410",
      "RG411",
      "RG412",
      "RG413",
      "RG414",
    ]);
    const keys = result.diagnostics.map((d) => `${d.file}:${d.span.start}:${d.code}:${d.message}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("is deterministic", async () => {
    const again = await buildTargets(
      "examples/checkout",
      ["grpc", "linkerd", "istio"],
      "checkout-again",
    );
    expect(emitted(again)).toEqual(emitted(result));
  });
});

describe("mapping report of a policy with every lossy setting", () => {
  let result: BuildResult;
  const FILE = "test/targets/fixtures/lossy/resilience/ledger.yaml";
  const lines = readFileSync(join(PACKAGE_ROOT, FILE), "utf8").split("\n");
  /** 1-based line:col of a diagnostic. */
  const at = (start: number) => {
    let offset = 0;
    for (let i = 0; i < lines.length; i++) {
      if (start <= offset + lines[i]!.length) return `${i + 1}:${start - offset + 1}`;
      offset += lines[i]!.length + 1;
    }
    return "?";
  };
  const report = (target: string) =>
    result.diagnostics
      .filter((d) => d.code.startsWith("RG4") && d.message.startsWith(`${target}: `))
      .map((d) => `${at(d.span.start)} ${d.code} ${d.message.slice(target.length + 2)}`);

  beforeAll(async () => {
    result = await buildTargets(
      "test/targets/fixtures/lossy",
      ["istio", "linkerd", "grpc"],
      "lossy",
    );
  });

  it("puts every note in the policy file", () => {
    expect(
      result.diagnostics.filter((d) => d.code.startsWith("RG4")).every((d) => d.file === FILE),
    ).toBe(true);
    expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  });

  it("istio: every lossy setting, at the node that set it", () => {
    expect(report("istio").map((l) => l.split(" ").slice(0, 2).join(" "))).toEqual([
      "3:1 RG414", // deadline.propagate is a built-in default: the policy
      "10:1 RG408", // retry.backoff: decorrelated jitter, multiplier 3, cap 400ms
      "13:3 RG409", // 425 has no gRPC code
      "13:3 RG409", // timeout asks for reset
      "13:3 RG409", // 503 becomes UNAVAILABLE
      "14:3 RG410", // retryAfter
      "15:3 RG411", // budget becomes a percentage
      "16:1 RG402", // breaker becomes outlier detection
      "18:3 RG403", // slowCall
      "22:31 RG404", // bulkhead.maxQueue: queue semantics, queueTimeout, drop-oldest
      "23:1 RG405", // fallback: provided
      "25:3 RG413", // the idempotency key of post
      "32:5 RG406", // balance is hedged
      "33:3 RG401", // audit has no route
    ]);
  });

  it("linkerd: attempts, attempt timeout and backoff cannot be said at all", () => {
    const codes = report("linkerd").map((l) => l.split(" ")[1]);
    expect(codes).toEqual([
      "RG414",
      "RG412",
      "RG408",
      "RG407",
      "RG409",
      "RG410",
      "RG411",
      "RG402",
      "RG403",
      "RG404",
      "RG405",
      "RG413",
      "RG406",
      "RG401",
    ]);
    expect(report("linkerd")).toContain(
      "11:3 RG407 operation post: Linkerd has no attempt count: instead of 7 attempts, retries go on while the budget and the 3s timeout allow",
    );
  });

  it("grpc: attempts capped at 5, throttling clamped, codes without a status left out", () => {
    const lines = report("grpc");
    expect(lines).toContain(
      "11:3 RG407 operation post: gRPC allows at most 5 attempts: 7 becomes 5",
    );
    expect(lines).toContain(
      "32:27 RG407 operation balance: gRPC allows at most 5 attempts: 6 becomes 5",
    );
    expect(lines).toContain(
      "15:13 RG411 gRPC allows at most 1000 tokens: maxTokens 5000 becomes 1000",
    );
    expect(lines).toContain(
      "15:30 RG411 gRPC keeps 3 decimals of tokenRatio: 0.1234 becomes 0.123",
    );
    expect(lines).toContain(
      "13:3 RG409 operation post: timeout, 425 have no gRPC status code: not retried by the channel",
    );
    expect(lines).toContain(
      "12:53 RG408 operation post: gRPC always draws full jitter (policy: decorrelated)",
    );
    expect(lines).toContain(
      "33:3 RG401 operation audit: names no gRPC method: it is left out of the service config",
    );
    const config = JSON.parse(emitted(result).get("grpc/ledger.json")!) as GrpcServiceConfig;
    expect(config.retryThrottling).toEqual({ maxTokens: 1000, tokenRatio: 0.123 });
    expect(config.methodConfig).toEqual([
      {
        name: [{ service: "ledger.v1.Ledger", method: "Post" }],
        timeout: "3s",
        retryPolicy: {
          maxAttempts: 5,
          initialBackoff: "0.02s",
          maxBackoff: "0.4s",
          backoffMultiplier: 3,
          retryableStatusCodes: ["UNAVAILABLE"],
        },
      },
      {
        name: [{ service: "ledger.v1.Ledger", method: "Balance" }],
        timeout: "3s",
        hedgingPolicy: {
          maxAttempts: 5,
          hedgingDelay: "0.04s",
          nonFatalStatusCodes: ["RESOURCE_EXHAUSTED", "UNAVAILABLE", "UNKNOWN"],
        },
      },
    ]);
  });

  it("takes the host from the policy and the namespace from the project", () => {
    const files = emitted(result);
    expect((parse(files.get("linkerd/ledger.yaml")!) as ServiceProfile).metadata).toMatchObject({
      name: "ledger.accounts.svc.cluster.local",
      namespace: "accounts",
    });
    const vs = documents(files.get("istio/ledger.yaml")!)[0] as VirtualService;
    expect(vs.metadata).toMatchObject({ name: "ledger", namespace: "payments" });
    expect(vs.spec.hosts).toEqual(["ledger.accounts.svc.cluster.local"]);
    expect(vs.spec.http[0]?.match).toEqual([
      { uri: { exact: "/ledger.v1.Ledger/Post" }, method: { exact: "POST" } },
    ]);
  });
});

describe("the client and an engine both retrying", () => {
  it("is reported per operation when ts is built with a mesh target, with the multiplied attempts", async () => {
    const result = await buildTargets("examples/checkout", ["ts", "istio"], "layered");
    const layered = result.diagnostics
      .filter((d) => d.code === "RG416")
      .map((d) => `${d.file} ${d.message}`);
    expect(layered).toContain(
      "examples/checkout/resilience/payments.yaml istio: operations getCharge, createCharge: built for ts and istio, the generated client and istio both retry: up to 3 × 3 = 9 attempts per call",
    );
    // the hedged read does not retry, so it is not multiplied
    expect(layered.some((l) => l.includes("getRecommendations"))).toBe(false);
  });
});

describe("two operations naming one gRPC method", () => {
  it("is an error: gRPC would refuse the whole service config", async () => {
    const dir = mkdtempSync(join(tmpdir(), "resgen-grpc-"));
    try {
      const policy =
        "version: 1\ndependency: geo\ntransport: function\noperations:\n  a: { grpc: { service: geo.v1.Geo, method: Find } }\n  b: { grpc: { service: geo.v1.Geo, method: Find } }\n";
      writeFileSync(join(dir, "geo.yaml"), policy);
      const result = await build(["geo.yaml"], { cwd: dir, out: "out", targets: ["grpc"] });
      const errors = result.diagnostics.filter((d) => d.severity === "error");
      expect(errors.map((d) => [d.code, d.message])).toEqual([
        [
          "RG415",
          "grpc: operation b: names geo.v1.Geo/Find, as a does: a service config cannot configure one method twice, so only a's settings are written",
        ],
      ]);
      expect(result.written).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("targets and the output folder", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "resgen-targets-"));
    writeFileSync(
      join(dir, "pay.yaml"),
      "version: 1\ndependency: pay\noperations:\n  get: { method: GET, path: /charges }\n",
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("a build of some targets leaves the files of the others alone, and removes its own stale files", async () => {
    await build(["pay.yaml"], { cwd: dir, out: "out", targets: ["ts", "istio"] });
    expect(existsSync(join(dir, "out/pay.ts"))).toBe(true);
    expect(existsSync(join(dir, "out/istio/pay.yaml"))).toBe(true);

    const meshOnly = await build(["pay.yaml"], { cwd: dir, out: "out", targets: ["linkerd"] });
    expect(meshOnly.plans[0]!.changes.map((c) => `${c.kind} ${c.path}`)).toEqual([
      "create linkerd/pay.yaml",
    ]);
    expect(existsSync(join(dir, "out/pay.ts"))).toBe(true);

    // a generated-looking file no build wrote is left alone; a file this target wrote and no longer generates is removed
    mkdirSync(join(dir, "out/linkerd"), { recursive: true });
    writeFileSync(
      join(dir, "out/linkerd/old.yaml"),
      readFileSync(join(dir, "out/linkerd/pay.yaml")),
    );
    writeFileSync(
      join(dir, "pay2.yaml"),
      "version: 1\ndependency: pay2\noperations:\n  get: { method: GET, path: /charges }\n",
    );
    await build(["pay.yaml", "pay2.yaml"], { cwd: dir, out: "out", targets: ["linkerd"] });
    const again = await build(["pay.yaml"], {
      cwd: dir,
      out: "out",
      targets: ["linkerd"],
      check: true,
    });
    expect(again.plans[0]!.changes.map((c) => `${c.kind} ${c.path}`)).toEqual([
      "remove linkerd/pay2.yaml",
    ]);
    expect(existsSync(join(dir, "out/pay.ts"))).toBe(true);
  });

  it("never overwrites a YAML or JSON file without the generated marker", async () => {
    mkdirSync(join(dir, "out/grpc"), { recursive: true });
    writeFileSync(
      join(dir, "out/istio/pay.yaml"),
      "apiVersion: networking.istio.io/v1\nkind: VirtualService\n",
    );
    const result = await build(["pay.yaml"], { cwd: dir, out: "out", targets: ["istio"] });
    expect(result.diagnostics.map((d) => d.code)).toContain("RG302");
    expect(result.written).toBe(false);
  });

  it("recognises the header of each format", () => {
    expect(
      isGenerated("# Code generated by resgen 0.1.0 from a.yaml. DO NOT EDIT.\nkind: X\n"),
    ).toBe(true);
    expect(
      isGenerated(
        '{\n  "//": "Code generated by resgen 0.1.0 from a.yaml. DO NOT EDIT.",\n  "methodConfig": []\n}\n',
      ),
    ).toBe(true);
    expect(isGenerated('{\n  "//": "hand-written",\n  "methodConfig": []\n}\n')).toBe(false);
    expect(isGenerated("kind: VirtualService\n")).toBe(false);
  });
});

describe("--target", () => {
  it("takes repeated and comma-separated names and refuses unknown ones", async () => {
    expect(parseTargets(["istio,grpc", "ts", "istio"])).toEqual({
      targets: ["ts", "istio", "grpc"],
      unknown: [],
    });
    expect(parseTargets(["envoy"]).unknown).toEqual(["envoy"]);
    const err: string[] = [];
    const io = {
      stdout: () => {},
      stderr: (t: string) => void err.push(t),
      cwd: PACKAGE_ROOT,
      color: false,
    };
    expect(
      await main(
        ["node", "resgen", "build", "examples/checkout", "--check", "--target", "istio,envoy"],
        io,
      ),
    ).toBe(2);
    expect(err.join("")).toContain('unknown target "envoy"');
  });

  it("checks mesh files with --check like the clients", async () => {
    const out: string[] = [];
    const io = {
      stdout: (t: string) => void out.push(t),
      stderr: (t: string) => void out.push(t),
      cwd: PACKAGE_ROOT,
      color: false,
    };
    const code = await main(
      [
        "node",
        "resgen",
        "build",
        "examples/checkout",
        "--check",
        "-o",
        "test/targets/__out__/cli",
        "--allow-outside-project",
        "-t",
        "grpc",
      ],
      io,
    );
    expect(code).toBe(1);
    expect(out.join("")).toContain("test/targets/__out__/cli/grpc/geocoder.json: missing");
  });
});

describe("a coalesced operation", () => {
  it("is noted by every target as staying in the application (RG418, informational), at its coalesce", async () => {
    const dir = mkdtempSync(join(tmpdir(), "resgen-coalesce-"));
    try {
      const policy =
        'version: 1\ndependency: catalog\nbulkhead: { maxConcurrent: 10 }\noperations:\n  get:\n    method: GET\n    path: "/p/{id}"\n    coalesce: true\n    grpc: { service: cat.v1.Catalog, method: Get }\n  put: { method: PUT, path: "/p/{id}" }\n';
      writeFileSync(join(dir, "catalog.yaml"), policy);
      const result = await build(["catalog.yaml"], {
        cwd: dir,
        out: "out",
        targets: ["istio", "linkerd", "grpc"],
      });
      const notes = result.diagnostics.filter((d) => d.code === "RG418");
      expect(notes.map((d) => d.message).sort()).toEqual([
        "grpc: operation get: identical calls in flight are coalesced by the application's client; gRPC's service config has no request coalescing, so each caller's request reaches the dependency",
        "istio: operation get: identical calls in flight are coalesced by the application's client; Istio (Envoy) has no request coalescing in a VirtualService or DestinationRule, so each caller's request reaches the dependency",
        "linkerd: operation get: identical calls in flight are coalesced by the application's client; Linkerd has no request coalescing in a ServiceProfile, so each caller's request reaches the dependency",
      ]);
      for (const d of notes) {
        expect(d.severity).toBe("warning");
        expect(d.note?.informational).toBe(true);
        expect(policy.slice(d.span.start, d.span.end)).toBe("coalesce");
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
