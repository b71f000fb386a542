/**
 * `auth:` in the policy language (docs/policy.md, "Credentials"): schemes, the default
 * requirement, per-operation requirements, and RG118 for names no scheme declares and for
 * credentials on a function transport.
 */
import { describe, expect, it } from "vitest";
import { checkPolicyText } from "../../src/program/check.js";
import { diagnose } from "../helpers/diagnose.js";

const POLICY = `version: 1
dependency: vault
auth:
  schemes:
    token: { type: bearer }
    key: { type: apiKey, in: header, name: X-API-Key }
operations:
  getSecret: { method: GET, path: "/secrets/{name}" }
  rotate: { method: POST, path: /rotations, idempotent: true, auth: [[token, key]] }
  ping: { method: GET, path: /ping, auth: [] }
`;

describe("auth in a policy", () => {
  it("resolves the schemes, and each operation's requirement (by default each scheme alone)", () => {
    const { policy, diagnostics } = checkPolicyText("vault.yaml", POLICY);
    expect(diagnostics).toEqual([]);
    expect(policy?.auth).toEqual([
      { name: "token", type: "bearer" },
      { name: "key", type: "apiKey", in: "header", param: "X-API-Key" },
    ]);
    expect(Object.fromEntries(policy!.operations.map((o) => [o.name, o.auth]))).toEqual({
      getSecret: [["token"], ["key"]],
      rotate: [["token", "key"]],
      ping: [],
    });
  });

  it("takes auth.use as the default of the operations that set none", () => {
    const { policy } = checkPolicyText(
      "vault.yaml",
      POLICY.replace("operations:", "  use: [key]\noperations:"),
    );
    expect(policy!.operations.map((o) => o.auth)).toEqual([[["key"]], [["token", "key"]], []]);
  });

  it("reports a scheme no auth.schemes declares, at the name, with the nearest (RG118)", () => {
    const found = diagnose(POLICY.replace("auth: [[token, key]]", "auth: [[token, kye]]"));
    expect(found).toMatchObject([
      {
        code: "RG118",
        line: 9,
        message: 'auth names the scheme "kye", which auth.schemes does not declare',
        hint: 'did you mean "key"?',
      },
    ]);
    expect(diagnose(POLICY.replace("operations:", "  use: [tokn]\noperations:"))).toMatchObject([
      { code: "RG118", line: 7, hint: 'did you mean "token"?' },
    ]);
  });

  it("refuses credentials on a function transport (RG118)", () => {
    const found = diagnose(`version: 1
dependency: ledger
transport: function
auth:
  schemes: { token: { type: bearer } }
operations:
  post: { idempotent: true, auth: [token] }
`);
    expect(found.map((f) => [f.code, f.line])).toEqual([
      ["RG118", 4],
      ["RG118", 7],
    ]);
  });

  it("validates the schemes: an apiKey needs where and a name", () => {
    const found = diagnose(
      POLICY.replace(
        "{ type: apiKey, in: header, name: X-API-Key }",
        "{ type: apiKey, in: cookie, name: sid }",
      ),
    );
    expect(found.map((f) => f.code)).toEqual(["RG107"]);
  });
});
