/**
 * Thrown errors named in `retry.on` by code or name (docs/policy.md, "Which failures are
 * retried"): positioned diagnostics, the resolved model, and the emitted runtime settings.
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

describe("retry.on names thrown errors by code or name", () => {
  it("resolves outcomes and named errors apart, each once, in the order written", () => {
    const p = resolve(
      policy(
        "transport: function\nretry:\n  on: [network, 503, { code: ECONNRESET }, { name: ThrottlingException }, { code: 14 }, { code: ECONNRESET }, 503]\n  budget: {}\n",
        "  get:\n    retry: { on: [timeout, { name: AbortError }] }\n  put:\n    idempotent: true\n",
      ),
    );
    const get = p.operations.find((o) => o.name === "get")!;
    const put = p.operations.find((o) => o.name === "put")!;
    expect(put.retry).toMatchObject({
      on: ["network", 503],
      errors: [{ code: "ECONNRESET" }, { name: "ThrottlingException" }, { code: 14 }],
    });
    // an operation's retry.on replaces the dependency's, named errors included
    expect(get.retry).toMatchObject({ on: ["timeout"], errors: [{ name: "AbortError" }] });
  });

  it("defaults to no named errors, and emits `errors` only when there are some", () => {
    const p = resolve(
      policy(
        "retry: { on: [network, { code: E_BUSY }] }\n",
        "  get:\n    method: GET\n    path: /a\n  other:\n    method: GET\n    path: /b\n    retry: { on: [network] }\n",
      ),
    );
    const [get, other] = p.operations;
    expect(other!.retry?.errors).toEqual([]);
    expect(operationSettings(get!, true)).toMatchObject({
      retry: { on: ["network"], errors: [{ code: "E_BUSY" }] },
    });
    expect((operationSettings(other!, true) as { retry: object }).retry).not.toHaveProperty(
      "errors",
    );
    const client = emitClient(p);
    expect(client).toContain('errors: [{ code: "E_BUSY" }]');
    // the client's config takes a classify hook and hands it to the runtime
    expect(client).toContain("readonly classify?: Classifier<");
    expect(client).toContain("classify: config.classify as Classifier | undefined");
  });

  it("refuses an entry with both code and name, or neither, at the entry (RG106)", () => {
    const both = policy("retry:\n  on: [network, { code: ECONNRESET, name: Foo }]\n");
    const [d] = diagnose(both);
    expect(d).toMatchObject({
      code: "RG106",
      ...at(both, "{ code"),
      message: "an error in retry.on is matched by its code or by its name, not both",
    });
    const none = policy("retry:\n  on: [network, {}]\n");
    expect(diagnose(none)).toEqual([
      expect.objectContaining({
        code: "RG106",
        ...at(none, "{}"),
        message: "an error in retry.on needs its code or its name",
        hint: expect.stringContaining("{ code: ECONNRESET }") as unknown,
      }),
    ]);
  });

  it("suggests the key for a typo, and refuses a code or name that cannot be one", () => {
    const typo = policy("retry:\n  on: [{ cod: ECONNRESET }]\n");
    expect(diagnose(typo)).toEqual([
      expect.objectContaining({ code: "RG101", ...at(typo, "cod"), hint: 'did you mean "code"?' }),
    ]);
    const spaced = policy("retry:\n  on: [{ name: not a name }]\n");
    expect(diagnose(spaced)).toEqual([
      expect.objectContaining({
        code: "RG103",
        ...at(spaced, "not a name"),
        message: 'retry.on.0.name has an invalid format: "not a name"',
      }),
    ]);
  });
});
