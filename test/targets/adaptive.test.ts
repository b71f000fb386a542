/**
 * The mapping report of an adaptive bulkhead (RG421, docs/targets.md, "Adaptive concurrency"):
 * every target says that it has no limit that follows latency and that the client keeps it;
 * Istio still emits the fixed pool the limit starts from.
 */
import { describe, expect, it } from "vitest";
import { checkTexts } from "../../src/program/check.js";
import { emitGrpc } from "../../src/targets/grpc.js";
import { emitIstio } from "../../src/targets/istio.js";
import { emitLinkerd } from "../../src/targets/linkerd.js";
import { isInformational } from "../../src/targets/report.js";

const policy = (bulkhead: string) => `version: 1
dependency: inventory
bulkhead: ${bulkhead}
operations:
  reserve: { method: GET, path: /stock, grpc: { service: inventory.v1.Stock, method: Reserve } }
`;
const ctx = {
  locate: { locate: () => undefined, locateKey: () => undefined },
  sourcePath: () => "inventory.yaml",
};
const targets = { istio: emitIstio, linkerd: emitLinkerd, grpc: emitGrpc } as const;

describe("adaptive bulkheads in the mapping report", () => {
  const adaptive = checkTexts([
    { file: "inventory.yaml", text: policy("{ maxConcurrent: 24, adaptive: { maxLimit: 96 } }") },
  ]).policies;
  const fixed = checkTexts([
    { file: "inventory.yaml", text: policy("{ maxConcurrent: 24 }") },
  ]).policies;

  for (const [name, emit] of Object.entries(targets)) {
    it(`${name}: one informational note for an adaptive bulkhead, none for a fixed one`, () => {
      const notes = emit(adaptive, ctx).diagnostics.filter((d) => d.code === "RG421");
      expect(notes).toHaveLength(1);
      expect(notes[0]!.message).toContain("the adaptive limit stays in the application");
      expect(isInformational(name as keyof typeof targets, "RG421")).toBe(true);
      expect(emit(fixed, ctx).diagnostics.some((d) => d.code === "RG421")).toBe(false);
      // nothing of the adaptation is emitted: no filter, no maxLimit
      for (const text of emit(adaptive, ctx).files.values()) {
        expect(text).not.toMatch(/adaptive_concurrency|96/);
      }
    });
  }

  it("istio: names Envoy's filter and what differs, and keeps the starting limit as the fixed pool", () => {
    const out = emitIstio(adaptive, ctx);
    const note = out.diagnostics.find((d) => d.code === "RG421")!;
    expect(note.message).toContain("envoy.filters.http.adaptive_concurrency");
    expect(note.message).toContain("503");
    const files = [...out.files.values()].join("\n");
    expect(files).toContain("http2MaxRequests: 24");
  });
});
