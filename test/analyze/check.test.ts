/**
 * One CLI test per analyzer code: `resgen check` on a fixture reports the code at the node
 * responsible, with the numbers in the message, and exits 1 for an error, 0 for a warning (1 with
 * --max-warnings 0).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkTexts } from "../../src/program/check.js";
import { main, type Io } from "../../src/cli/cli.js";
import { CODES, type Code } from "../../src/diagnostics/codes.js";
import { PACKAGE_ROOT } from "../../src/version.js";
import { at } from "../helpers/diagnose.js";

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

const DIR = "test/fixtures/analyze";
/** First lines of the findings: `file:line:col severity CODE message`. */
const allHeads = (stdout: string) =>
  stdout.split("\n").filter((l) => /^\S+:\d+:\d+ (error|warning) RG\d+ /.test(l));
// the fixtures leave latency out to stay short: the RG226 (unmeasured timeout) that follows is not what they show
const heads = (stdout: string, keep?: Code) =>
  allHeads(stdout).filter((l) => keep === "RG226" || !/ RG226 /.test(l));

interface Case {
  readonly code: Code;
  /** What to pass to `resgen check`; defaults to the fixture named after the code. */
  readonly arg?: string;
  /** The file the finding is in, relative to the package root; defaults to `arg`. */
  readonly file?: string;
  /** Text of the node the finding must point at (its first occurrence, or the `nth`), and an offset into it. */
  readonly node: string;
  readonly nth?: number;
  readonly skip?: number;
  /** Figures and names the message must show. */
  readonly says: readonly string[];
}

const CASES: readonly Case[] = [
  {
    code: "RG201",
    node: "retry",
    nth: 2,
    says: ["operation createCharge", "maxAttempts 2", "POST"],
  },
  { code: "RG202", node: "retry", says: ["operation refund", "PATCH", "attempted once"] },
  {
    code: "RG203",
    node: "hedge",
    says: ["operation query", "maxAttempts 3", "maxAttempts 2", "6 attempts"],
  },
  { code: "RG204", node: "hedge", says: ["operation createCharge", "2 concurrent copies"] },
  { code: "RG205", node: "1s, total", says: ["attempt timeout 1s", "total timeout 800ms"] },
  { code: "RG206", node: "none", says: ["jitter: none", "200 of them", "after 20ms"] },
  {
    code: "RG207",
    node: "1s }",
    says: [
      "4 attempts × 400ms + backoff 100ms + 200ms + 400ms = 2.3s",
      "total timeout 1s",
      "only 2 of 4 attempts fit",
    ],
  },
  { code: "RG208", node: "250ms", says: ["250ms", "p99 300ms"] },
  { code: "RG209", node: "3s", says: ["3s", "5 × 150ms = 750ms", "20×"] },
  { code: "RG210", node: "retry", says: ["4 attempts", "40 rps become 160 rps"] },
  {
    code: "RG211",
    node: "minCalls: 3",
    skip: 10,
    says: ["minCalls 3", "2 failed calls out of 3", "50%"],
  },
  { code: "RG212", node: "5s", says: ["2 rps × 5 s = 10 calls", "minCalls 20"] },
  { code: "RG213", node: "5s", says: ["window 5s", "2 × 3s = 6s"] },
  { code: "RG214", node: "200 }", says: ["maxConcurrent 200", "50 × 300ms × 2 = 30"] },
  { code: "RG215", node: "getTrending", says: ["operation getTrending", "essential: false"] },
  { code: "RG216", node: "{ items", says: ["$.items[0].score", "expected number", '"high"'] },
  { code: "RG217", node: "{ max: 5s }", says: ["retryAfter.max 5s", "total timeout 1s"] },
  { code: "RG218", node: '"#/schemas/Money"', says: ['"#/schemas/Money"', "Charge"] },
  { code: "RG219", node: "customerId", says: ['"customerId"', "/charges/{chargeId}"] },
  {
    code: "RG220",
    arg: `${DIR}/chain`,
    file: `${DIR}/chain/gateway.yaml`,
    node: "orders",
    says: ["gateway → orders → payments", "3 × 3 × 3 = 27"],
  },
  { code: "RG221", node: "ledgr", says: ['"ledgr"'] },
  {
    code: "RG222",
    node: "fallback",
    says: [
      "operation redeem",
      "inherited from the policy's `fallback`",
      "POST /redemptions",
      "not a retry-safe read",
    ],
  },
  {
    code: "RG223",
    node: "fallback",
    says: ["operation getRecommendations", "essential: false", "only fallback is stale"],
  },
  {
    code: "RG224",
    node: "payments",
    says: ["neither latency nor a bulkhead", "nothing bounds the calls in flight"],
  },
  {
    code: "RG225",
    node: "404",
    says: [
      "operation getCharge",
      "retry.on lists 404",
      "describes the request",
      "never counts against the breaker",
    ],
  },
  { code: "RG226", node: "dependency", says: ["built-in default 2s", "not a measurement"] },
  {
    code: "RG230",
    node: "3, budget",
    says: [
      "latency.rps 80/s × 3 attempts (lookup, retry.maxAttempts) = 240/s",
      "over rateLimit.rate 100/s",
      "up to 140/s of the attempts are turned away as rate-limited",
    ],
  },
  {
    code: "RG231",
    node: "8 }",
    says: [
      "latency.rps 10/s × window 10s / endpoints.max 8 = 12.5 calls per endpoint per window",
      "under breaker.minCalls 20",
    ],
  },
  { code: "RG232", node: "endpoints", says: ["transport: function", "cannot send an attempt"] },
  {
    code: "RG233",
    node: "{ delay: 50ms }",
    says: ["find hedges under a rate limit kept in Redis", "never sends its hedges"],
  },
  {
    code: "RG227",
    arg: `${DIR}/hops`,
    file: `${DIR}/hops/orders.yaml`,
    node: "payments",
    says: ["2 attempts × 800ms + backoff 50ms + margin 10ms", "1660ms ≥ 1s"],
  },
  {
    code: "RG228",
    node: "coalesce: true",
    nth: 2,
    says: ["operation charge", "POST /charges", "not a retry-safe read"],
  },
  { code: "RG229", node: "coalesce", says: ["operation geocode", "function operation"] },
  {
    code: "RG234",
    node: "maxLimit: 40",
    skip: 10,
    says: ["adaptive maxLimit 40", "rps × p99 = 500 × 100ms = 50", "rejects healthy traffic"],
  },
  {
    code: "RG235",
    node: "fallback",
    says: ["operation getProfile", "GET /profiles/{id}", "declares no response", "nothing to keep"],
  },
];

describe("analyzer codes through resgen check", () => {
  it("covers every RG2xx code that has an example", () => {
    const analyzer = (Object.keys(CODES) as Code[]).filter(
      (c) => c.startsWith("RG2") && "example" in CODES[c],
    );
    expect(CASES.map((c) => c.code).sort()).toEqual(analyzer.sort());
  });

  for (const c of CASES) {
    it(`${c.code} ${CODES[c.code].title}`, async () => {
      const arg = c.arg ?? `${DIR}/${c.code.toLowerCase()}.yaml`;
      const file = c.file ?? arg;
      const text = readFileSync(join(PACKAGE_ROOT, file), "utf8");
      const pos = at(text, c.node, c.nth ?? 1);
      const severity = CODES[c.code].severity;

      const r = await run("check", arg);
      const found = heads(r.stdout, c.code);
      expect(found, r.stdout).toHaveLength(1);
      expect(found[0]).toMatch(
        new RegExp(
          `^${file.replace(/[.]/g, "\\.")}:${pos.line}:${pos.column + (c.skip ?? 0)} ${severity} ${c.code} `,
        ),
      );
      for (const s of c.says) expect(found[0]).toContain(s);
      // a hint with the fix follows the code frame
      expect(r.stdout).toMatch(/\n {2,}= hint: \S/);
      expect(r.code).toBe(severity === "error" ? 1 : 0);
      expect((await run("check", arg, "--max-warnings", "0")).code).toBe(1);
    });
  }
});

describe("positions of inherited and derived values", () => {
  it("points into resgen.config.yaml for values inherited from the project defaults", async () => {
    const config = `${DIR}/project/resgen.config.yaml`;
    const text = readFileSync(join(PACKAGE_ROOT, config), "utf8");
    const r = await run("check", `${DIR}/project`);
    const retry = at(text, "retry");
    const minCalls = at(text, "minCalls: 2");
    expect(heads(r.stdout)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^${config}:${retry.line}:${retry.column} warning RG202 operation createCharge: .*inherited from the project defaults.*attempted once$`,
        ),
      ),
      expect.stringMatching(
        new RegExp(
          `^${config}:${minCalls.line}:${minCalls.column + 10} warning RG211 breaker.minCalls 2 `,
        ),
      ),
    ]);
    expect(r.code).toBe(0);
    expect((await run("check", `${DIR}/project`, "--max-warnings", "1")).code).toBe(1);
    expect((await run("check", `${DIR}/project`, "--max-warnings", "2")).code).toBe(0);
  });

  it("points at the latency entry a derived timeout came from, and at an explicit total", async () => {
    const file = `${DIR}/derived.yaml`;
    const text = readFileSync(join(PACKAGE_ROOT, file), "utf8");
    const r = await run("check", file, "--format", "json");
    const json = JSON.parse(r.stdout) as {
      diagnostics: { code: string; line: number; column: number; message: string }[];
    };
    // attempt = min(1.5 × p999 = 600ms, total 250ms): under p99 and equal to the total with one attempt (allowed)
    expect(json.diagnostics.map((d) => [d.code, d.line, d.column])).toEqual([
      ["RG208", at(text, "400ms").line, at(text, "400ms").column],
    ]);
    expect(json.diagnostics[0]!.message).toContain("attempt timeout 250ms is under p99 300ms");
    expect(r.code).toBe(0);
  });
});

describe("unmeasured timeouts (RG226)", () => {
  const text = readFileSync(join(PACKAGE_ROOT, `${DIR}/rg226.yaml`), "utf8");
  it("are reported once for the policy when every operation uses the default, else at each operation", () => {
    expect(
      checkTexts([{ file: "p.yaml", text }]).diagnostics.filter((d) => d.code === "RG226"),
    ).toHaveLength(1);
    const some = text.replace(
      'path: "/charges/{id}" }',
      'path: "/charges/{id}", timeout: { attempt: 300ms } }',
    );
    const found = checkTexts([{ file: "p.yaml", text: some }]).diagnostics.filter(
      (d) => d.code === "RG226",
    );
    expect(found.map((d) => d.message)).toEqual([
      expect.stringMatching(
        /^operation refund: the attempt timeout is resgen's built-in default 2s/,
      ),
    ]);
  });

  it("are not reported where the project file says `checks: { unmeasuredTimeouts: false }`", () => {
    const config = { checks: { unmeasuredTimeouts: false } };
    expect(
      checkTexts([{ file: "p.yaml", text }], { config }).diagnostics.map((d) => d.code),
    ).toEqual([]);
    expect(
      checkTexts([{ file: "p.yaml", text }], {
        config: { checks: { unmeasuredTimeouts: true } },
      }).diagnostics.map((d) => d.code),
    ).toEqual(["RG226"]);
  });
});

describe("the bundled example", () => {
  it("passes with no errors and no warnings", async () => {
    const r = await run("check", "examples/checkout", "--max-warnings", "0");
    expect(heads(r.stdout)).toEqual([]);
    expect(r.code).toBe(0);
  });
});
