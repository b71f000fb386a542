/**
 * Responses retried by a value in their body (`retry.on` entries such as `{ status: 200, body:
 * { path: $.status, equals: pending } }`, docs/policy.md, "Which failures are retried"):
 * positioned diagnostics, the resolved model, explain and the emitted runtime settings.
 */
import { describe, expect, it } from "vitest";
import { checkPolicyText } from "../../src/program/check.js";
import { emitClient, operationSettings } from "../../src/emit/client.js";
import type { ResolvedPolicy } from "../../src/model/resolved.js";
import { at, diagnose, policy } from "../helpers/diagnose.js";

function resolve(text: string): ResolvedPolicy {
  const { policy: resolved, diagnostics } = checkPolicyText("policy.yaml", text, {});
  expect(diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  return resolved!;
}

const PENDING = "{ status: 200, body: { path: $.status, equals: pending } }";

describe("retry.on retries a response by a value in its body", () => {
  it("resolves body conditions apart from statuses, each once, with the path in segments", () => {
    const p = resolve(
      policy(
        `retry:\n  on: [network, 503, ${PENDING}, { status: 202, body: { path: "$.jobs[0].done", equals: false } }, ${PENDING}]\n`,
        "  get:\n    method: GET\n    path: /a\n",
      ),
    );
    const get = p.operations[0]!;
    expect(get.retry).toMatchObject({
      on: ["network", 503],
      errors: [],
      results: [
        { status: 200, path: "$.status", segments: ["status"], equals: "pending" },
        { status: 202, path: "$.jobs[0].done", segments: ["jobs", 0, "done"], equals: false },
      ],
    });
    expect(operationSettings(get, true)).toMatchObject({
      retry: {
        on: ["network", 503],
        results: [
          { status: 200, path: ["status"], equals: "pending" },
          { status: 202, path: ["jobs", 0, "done"], equals: false },
        ],
      },
    });
    const client = emitClient(p);
    expect(client).toContain("results: [");
    expect(client).toContain('path: ["status"]');
    // the method's JSDoc says what is retried
    expect(client).toContain('200 when $.status is "pending"');
  });

  it("emits no `results` when retry.on has no body condition", () => {
    const p = resolve(
      policy("retry: { on: [network] }\n", "  get:\n    method: GET\n    path: /a\n"),
    );
    expect(
      (operationSettings(p.operations[0]!, true) as { retry: object }).retry,
    ).not.toHaveProperty("results");
  });

  it("refuses a path that is not $ followed by .name and [index] steps, at the path", () => {
    const bad = policy(
      "retry:\n  on: [{ status: 200, body: { path: status.ok, equals: pending } }]\n",
    );
    expect(diagnose(bad)).toEqual([
      expect.objectContaining({
        code: "RG106",
        ...at(bad, "status.ok"),
        message: expect.stringContaining('"status.ok" is not a body path') as unknown,
      }),
    ]);
  });

  it("refuses an unknown field of the condition or of its body, at the field", () => {
    const typo = policy(
      "retry:\n  on: [{ status: 200, body: { path: $.status, equal: pending } }]\n",
    );
    expect(diagnose(typo)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          code: "RG101",
          ...at(typo, "equal:"),
          hint: 'did you mean "equals"?',
        }),
      ]),
    );
    const extra = policy(
      "retry:\n  on: [{ status: 200, when: x, body: { path: $.status, equals: pending } }]\n",
    );
    expect(diagnose(extra)).toEqual([
      expect.objectContaining({ code: "RG101", ...at(extra, "when") }),
    ]);
  });

  it("refuses a response without its status or its body, and one mixed with an error", () => {
    const alone = policy("retry:\n  on: [{ status: 200 }]\n");
    expect(diagnose(alone)).toEqual([
      expect.objectContaining({
        code: "RG106",
        ...at(alone, "{ status"),
        message: "a response in retry.on by its status alone is written as the status",
      }),
    ]);
    const mixed = policy(
      "retry:\n  on: [{ code: E1, status: 200, body: { path: $.s, equals: 1 } }]\n",
    );
    expect(diagnose(mixed)).toEqual([
      expect.objectContaining({
        code: "RG106",
        message: expect.stringContaining("not both") as unknown,
      }),
    ]);
  });
});
