/**
 * `resgen tune --write` on policies that are symbolic links, or that have a mode of their own:
 * a link inside the project is written through, to its target, atomically and keeping the
 * target's mode; a link out of the project is never written through (docs/tune.md, "Writing").
 * Real links and modes in a temporary folder.
 */
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/cli.js";

const POLICY = `version: 1
dependency: stock
latency: { p50: 15ms, p95: 30ms, p99: 60ms, p999: 120ms, rps: 100 }
timeout: { total: 2s }
operations:
  getStock: { method: GET, path: "/items/{sku}" }
`;
const TUNED = POLICY.replace(
  "latency: { p50: 15ms, p95: 30ms, p99: 60ms, p999: 120ms, rps: 100 }",
  "latency: { p50: 500ms, p95: 950ms, p99: 990ms, p999: 999ms, rps: 100 }",
);

const M = "resilience_client_attempt_duration_seconds";
const OK =
  'resilience_dependency="stock",resilience_operation="getStock",resilience_outcome="success"';

/** 10000 successes spread evenly over 0–1s in 10ms buckets. */
function uniformExport(): string {
  const lines = [`# TYPE ${M} histogram`];
  for (let i = 1; i <= 100; i++)
    lines.push(`${M}_bucket{${OK},le="${(i * 0.01).toFixed(4)}"} ${String(i * 100)}`);
  lines.push(`${M}_bucket{${OK},le="+Inf"} 10000`, `${M}_count{${OK}} 10000`, "");
  return lines.join("\n");
}

let top: string;
let project: string;
beforeEach(() => {
  top = mkdtempSync(join(tmpdir(), "resgen-tune-links-"));
  project = join(top, "project");
  mkdirSync(join(project, "shared"), { recursive: true });
  writeFileSync(join(project, "resgen.config.yaml"), "version: 1\npolicies: 'resilience/*.yaml'\n");
  mkdirSync(join(project, "resilience"));
  writeFileSync(join(project, "m.prom"), uniformExport());
});
afterEach(() => rmSync(top, { recursive: true, force: true }));

async function tune(...args: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await main(
    ["node", "resgen", "tune", "--from", "m.prom", "--window", "100s", ...args],
    {
      stdout: (t) => void (stdout += t),
      stderr: (t) => void (stderr += t),
      cwd: project,
      color: false,
    },
  );
  return { code, stdout, stderr };
}

const mode = (file: string) => statSync(file).mode & 0o777;

describe("tune --write", () => {
  it("keeps a policy's mode", async () => {
    const file = join(project, "resilience", "stock.yaml");
    writeFileSync(file, POLICY);
    chmodSync(file, 0o600);
    const { code } = await tune("--write");
    expect(code).toBe(0);
    expect(readFileSync(file, "utf8")).toBe(TUNED);
    expect(mode(file)).toBe(0o600);
  });

  it("writes through a link inside the project to its target, which keeps its mode", async () => {
    const target = join(project, "shared", "stock.yaml");
    writeFileSync(target, POLICY);
    chmodSync(target, 0o640);
    const link = join(project, "resilience", "stock.yaml");
    symlinkSync("../shared/stock.yaml", link);
    const { code, stdout, stderr } = await tune("--write");
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toContain(
      "wrote resilience/stock.yaml (through its link to shared/stock.yaml)\n",
    );
    // the link is still a link, to the same place; the target has the tuned text and its mode
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe("../shared/stock.yaml");
    expect(readFileSync(target, "utf8")).toBe(TUNED);
    expect(mode(target)).toBe(0o640);
    // no temporary file left beside either
    expect(readdirSync(join(project, "shared"))).toEqual(["stock.yaml"]);
    expect(readdirSync(join(project, "resilience"))).toEqual(["stock.yaml"]);
  });

  it("refuses to write through a link whose target is outside the project, writing nothing", async () => {
    const outside = join(top, "elsewhere");
    mkdirSync(outside);
    const target = join(outside, "stock.yaml");
    writeFileSync(target, POLICY);
    const link = join(project, "resilience", "stock.yaml");
    symlinkSync(target, link);
    // reading it at all takes --allow-outside-project; writing through it is refused even then
    const { code, stdout, stderr } = await tune("--write", "--allow-outside-project");
    expect(code).toBe(2);
    expect(stderr).toBe(
      "resgen: cannot write resilience/stock.yaml: it is a symbolic link (or lies under one) to a file outside the project, and tune writes nothing outside the project; nothing written\n",
    );
    expect(stdout).not.toContain("wrote");
    expect(readFileSync(target, "utf8")).toBe(POLICY);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readdirSync(outside)).toEqual(["stock.yaml"]);
  });

  it("writes nothing at all when one of the policies links out of the project", async () => {
    const inside = join(project, "resilience", "a.yaml");
    writeFileSync(inside, POLICY.replace("stock", "stock"));
    const outside = join(top, "elsewhere");
    mkdirSync(outside);
    writeFileSync(
      join(outside, "b.yaml"),
      POLICY.replace("dependency: stock", "dependency: stock2"),
    );
    symlinkSync(join(outside, "b.yaml"), join(project, "resilience", "b.yaml"));
    writeFileSync(
      join(project, "m.prom"),
      uniformExport() +
        uniformExport().split("\n").slice(1).join("\n").replaceAll('"stock"', '"stock2"'),
    );
    const { code } = await tune("--write", "--allow-outside-project");
    expect(code).toBe(2);
    expect(readFileSync(inside, "utf8")).toBe(POLICY);
  });
});
