/**
 * Body conditions of `retry.on` (docs/policy.md, "Which failures are retried") read the decoded
 * body's own properties only: a path through a name every object inherits finds nothing, so a
 * hostile or careless path cannot match every response.
 */
import { describe, expect, it } from "vitest";
import { matchesResult } from "../../templates/runtime/classify.js";

describe("matchesResult", () => {
  const when = (path: (string | number)[], equals: string | number | boolean | null) => [
    { status: 200, path, equals },
  ];

  it("matches a value at the path of the response's status", () => {
    expect(
      matchesResult(when(["job", "state"], "pending"), 200, { job: { state: "pending" } }),
    ).toBe(true);
    expect(matchesResult(when(["items", 1], 7), 200, { items: [1, 7] })).toBe(true);
    expect(
      matchesResult(when(["job", "state"], "pending"), 202, { job: { state: "pending" } }),
    ).toBe(false);
  });

  it("never reads an inherited property", () => {
    expect(matchesResult(when(["constructor", "name"], "Object"), 200, {})).toBe(false);
    expect(matchesResult(when(["__proto__", "constructor", "name"], "Object"), 200, {})).toBe(
      false,
    );
    expect(matchesResult(when(["length"], 2), 200, { items: [1, 2] })).toBe(false);
    expect(matchesResult(when(["items", "length"], 2), 200, { items: [1, 2] })).toBe(true);
  });

  it("finds nothing through a value that is not an object", () => {
    expect(matchesResult(when(["a", "b"], null), 200, { a: "text" })).toBe(false);
    expect(matchesResult(when(["a"], null), 200, null)).toBe(false);
  });
});
