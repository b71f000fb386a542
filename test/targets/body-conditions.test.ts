/**
 * retry.on's body conditions in the mapping report: no mesh target retries by the body, so each
 * says how it expresses retryable responses (status and headers only) and that the
 * application's client retries it (docs/targets.md).
 */
import { describe, expect, it } from "vitest";
import { buildTargets } from "./helpers.js";

describe("a body condition in retry.on", () => {
  it("is noted by istio and linkerd as retried by the application only", async () => {
    const result = await buildTargets(
      "test/e2e/fixtures/jobs.yaml",
      ["istio", "linkerd", "grpc"],
      "body-conditions",
    );
    const notes = result.diagnostics
      .filter((d) => d.code === "RG409" && d.message.includes("$.status"))
      .map((d) => d.message);
    // the operation is HTTP: the grpc target does not address it (RG401), so says nothing of it
    expect(notes).toHaveLength(2);
    expect(notes.find((m) => m.includes("Envoy's retryOn"))).toContain(
      '200 when $.status is "pending": Envoy\'s retryOn conditions and retriableStatusCodes see the status and headers, never the body',
    );
    expect(notes.find((m) => m.includes("responseClasses"))).toContain("status only");
    for (const note of notes)
      expect(note).toContain(
        "the application's client retries it (as it applies a classify hook, which no target can express)",
      );
  });
});
