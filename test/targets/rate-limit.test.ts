/**
 * The mapping report of a rate limit (RG419, docs/targets.md, "Rate limits"): every target says
 * how it would express the limit and that the client keeps it, once for the dependency's limit
 * and once per operation with its own, and emits nothing for it.
 */
import { describe, expect, it } from "vitest";
import { checkTexts } from "../../src/program/check.js";
import { emitGrpc } from "../../src/targets/grpc.js";
import { emitIstio } from "../../src/targets/istio.js";
import { emitLinkerd } from "../../src/targets/linkerd.js";
import { isInformational } from "../../src/targets/report.js";

const POLICY = `version: 1
dependency: maps
rateLimit: { rate: 6000/min, burst: 20 }
operations:
  route: { method: GET, path: /route, grpc: { service: maps.v1.Maps, method: Route } }
  tiles:
    method: GET
    path: /tiles
    grpc: { service: maps.v1.Maps, method: Tiles }
    rateLimit: { rate: 5/s }
  ping: { method: GET, path: /ping, rateLimit: false }
`;

describe("rate limits in the mapping report", () => {
  const { policies } = checkTexts([{ file: "maps.yaml", text: POLICY }]);
  // without positions, the notes at the dependency's limit and the operation's own merge into one
  const ctx = {
    locate: { locate: () => undefined, locateKey: () => undefined },
    sourcePath: () => "maps.yaml",
  };
  const targets = { istio: emitIstio, linkerd: emitLinkerd, grpc: emitGrpc } as const;

  for (const [name, emit] of Object.entries(targets)) {
    it(`${name}: a note for the limits, naming the operation with its own, not the one with none`, () => {
      const out = emit(policies, ctx);
      const notes = out.diagnostics.filter((d) => d.code === "RG419");
      expect(notes).toHaveLength(1);
      expect(notes.map((d) => d.note?.operations)).toEqual([["tiles"]]);
      for (const d of notes) expect(d.message).toContain("stays in the application");
      expect(isInformational(name as keyof typeof targets, "RG419")).toBe(true);
      // nothing of the limit is emitted
      for (const text of out.files.values()) expect(text).not.toMatch(/local_ratelimit|6000/);
    });
  }

  it("istio: says what would map (rate and burst) and what stays (per-replica buckets, waits, pauses)", () => {
    const note = emitIstio(policies, ctx).diagnostics.find((d) => d.code === "RG419")!;
    expect(note.message).toContain("local_ratelimit");
    expect(note.message).toContain("N replicas send N × rate");
    expect(note.message).toContain("Retry-After");
  });
});
