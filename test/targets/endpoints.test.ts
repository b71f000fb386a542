/**
 * The mapping report of several endpoints (RG420, docs/targets.md, "Endpoints"): every target
 * says how the mesh balances over a Service's pods, ejects one and retries elsewhere, and that
 * the client keeps its list; nothing is emitted for the list.
 */
import { describe, expect, it } from "vitest";
import { checkTexts } from "../../src/program/check.js";
import { emitGrpc } from "../../src/targets/grpc.js";
import { emitIstio } from "../../src/targets/istio.js";
import { emitLinkerd } from "../../src/targets/linkerd.js";
import { isInformational } from "../../src/targets/report.js";

const POLICY = `version: 1
dependency: search
timeout: { attempt: 300ms }
retry: { maxAttempts: 3, budget: {} }
breaker: { minCalls: 20 }
endpoints: { max: 4, choose: round-robin }
bulkhead: false
operations:
  find: { method: GET, path: /find, grpc: { service: search.v1.Search, method: Find } }
`;

describe("endpoints in the mapping report", () => {
  const ctx = {
    locate: { locate: () => undefined, locateKey: () => undefined },
    sourcePath: () => "search.yaml",
  };
  const targets = { istio: emitIstio, linkerd: emitLinkerd, grpc: emitGrpc } as const;
  const { policies } = checkTexts([{ file: "search.yaml", text: POLICY }]);
  const without = checkTexts([
    { file: "search.yaml", text: POLICY.replace(/^endpoints:.*\n/m, "") },
  ]).policies;

  for (const [name, emit] of Object.entries(targets)) {
    it(`${name}: one informational note, and the same files as without endpoints`, () => {
      const out = emit(policies, ctx);
      const notes = out.diagnostics.filter((d) => d.code === "RG420");
      expect(notes).toHaveLength(1);
      expect(notes[0]?.message).toContain("stay in the application");
      expect(isInformational(name as keyof typeof targets, "RG420")).toBe(true);
      const plain = emit(without, ctx);
      expect(plain.diagnostics.some((d) => d.code === "RG420")).toBe(false);
      expect([...out.files.entries()]).toEqual([...plain.files.entries()]);
    });
  }

  it("istio: names outlierDetection and the previous_hosts retry predicate", () => {
    const note = emitIstio(policies, ctx).diagnostics.find((d) => d.code === "RG420");
    expect(note?.message).toContain("outlierDetection");
    expect(note?.message).toContain("previous_hosts");
  });

  it("linkerd and grpc: a retry may reach the endpoint that failed", () => {
    expect(
      emitLinkerd(policies, ctx).diagnostics.find((d) => d.code === "RG420")?.message,
    ).toContain("may reach the endpoint that failed");
    const grpc = emitGrpc(policies, ctx).diagnostics.find((d) => d.code === "RG420")?.message;
    expect(grpc).toContain("gRFC A6");
    expect(grpc).toContain("outlier_detection");
  });
});
