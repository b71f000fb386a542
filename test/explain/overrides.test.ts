/**
 * `resgen explain --overrides <file>`: the stack after an overrides document, checked by the
 * runtime's validator (the one `client.reconfigure` uses); a refused document prints every
 * problem and exits 1 without a report.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { main, type Io } from "../../src/cli/cli.js";
import { PACKAGE_ROOT } from "../../src/version.js";
import { documentText, LEVELS, PROTOTYPE_NAMES } from "../helpers/prototype.js";

const PAYMENTS = "examples/checkout/resilience/payments.yaml";
const dir = mkdtempSync(join(tmpdir(), "resgen-overrides-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function document(name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value));
  return path;
}

const run = async (...args: string[]) => {
  let stdout = "";
  let stderr = "";
  const io: Io = {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    cwd: PACKAGE_ROOT,
    color: false,
  };
  const code = await main(["node", "resgen", ...args], io);
  return { code, stdout, stderr };
};

/** The row of `key` in an operation's stack, its whitespace collapsed. */
function row(text: string, key: string): string | undefined {
  const line = text.split("\n").find((l) => l.trim().split(/\s+/).includes(key));
  return line?.trim().replace(/\s+/g, " ");
}

describe("explain --overrides", () => {
  it("shows the overridden values, their origin and the worst case they make", async () => {
    const file = document("ok.json", {
      operations: { getCharge: { timeout: { attemptMs: 300 }, retry: { maxAttempts: 2 } } },
      breaker: { minCalls: 40 },
    });
    const { code, stdout } = await run(
      "explain",
      PAYMENTS,
      "--operation",
      "getCharge",
      "--overrides",
      file,
    );
    expect(code).toBe(0);
    expect(row(stdout, "timeout.attempt")).toMatch(
      /^6\. attempt timeout timeout\.attempt 300ms override: --overrides /,
    );
    expect(row(stdout, "retry.maxAttempts")).toMatch(/^4\. retry retry\.maxAttempts 2 override:/);
    expect(row(stdout, "breaker.minCalls")).toMatch(/^breaker\.minCalls 40 override:/);
    expect(stdout).toContain("2 attempts × 300ms + backoff 50ms = 650ms, within the total 2s");
  });

  it("shows the same numbers in JSON", async () => {
    const file = document("json.json", {
      operations: { getCharge: { timeout: { totalMs: 1800 } } },
    });
    const { code, stdout } = await run(
      "explain",
      PAYMENTS,
      "--format",
      "json",
      "--overrides",
      file,
    );
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as {
      operations: { name: string; worstCase: { totalMs: number } }[];
    };
    expect(report.operations.find((o) => o.name === "getCharge")?.worstCase.totalMs).toBe(1_800);
  });

  it("refuses a document the runtime would refuse, listing every problem", async () => {
    const file = document("bad.json", {
      operations: { getCharge: { timeout: { attemptMs: 5_000 } }, nope: {} },
      bulkhead: { size: 3 },
    });
    const { code, stdout, stderr } = await run("explain", PAYMENTS, "--overrides", file);
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr.split("\n")).toEqual([
      `resgen: ${file} refused for payments:`,
      "  - operations.getCharge.timeout: attempt timeout 5000ms (timeout.attempt) must be below the total 2000ms (timeout.total): one slow attempt would use the whole deadline, so the other 2 attempts could never run",
      "  - operations.nope: no such operation (operations: getCharge, createCharge)",
      "  - bulkhead.size: not reconfigurable (reconfigurable here: maxConcurrent, maxQueue, queueTimeoutMs)",
      "",
    ]);
  });

  it("refuses a document that is not JSON", async () => {
    const file = document("text.json", "{ operations: }");
    const { code, stderr } = await run("explain", PAYMENTS, "--overrides", file);
    expect(code).toBe(1);
    expect(stderr).toMatch(/refused for payments:\n {2}- not JSON: /);
  });

  it("refuses every Object.prototype name at every level, naming its path, and exits 1", async () => {
    let cases = 0;
    for (const level of LEVELS) {
      for (const name of PROTOTYPE_NAMES) {
        const text = documentText(level, name);
        const file = document(`proto-${String(cases)}.json`, text);
        const { code, stdout, stderr } = await run("explain", PAYMENTS, "--overrides", file);
        expect(code, text).toBe(1);
        expect(stdout, text).toBe("");
        const path = [...level, name].join(".");
        // payments has no rate limit: that section is refused as a whole, by its name
        const named = level[0] === "rateLimit" ? "rateLimit" : path;
        expect(stderr, text).toContain(`  - ${named}`);
        cases++;
      }
    }
    expect(cases).toBe(LEVELS.length * PROTOTYPE_NAMES.length);
  }, 60_000);
});
