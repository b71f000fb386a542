/**
 * A generated client on Deno (docs/platforms.md): Deno runs the generated TypeScript with
 * `--sloppy-imports`, since the generated modules import `./x.js` for `./x.ts` as Node's module
 * resolution wants, and with network access to the test server's address only.
 */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  buildProbeProject,
  expectProbeReport,
  findBinary,
  runScript,
  startProbeServer,
  probeEntry,
} from "./harness.js";

const ENTRY = probeEntry('"deno " + Deno.version.deno', "Deno.args[0]");

describe("Deno", () => {
  it("runs a generated client: a success, an attempt timeout, stale, static and network fallbacks, ambient deadlines", async () => {
    const deno = findBinary("deno");
    const project = await buildProbeProject();
    writeFileSync(join(project.dir, "main.ts"), ENTRY);
    const server = await startProbeServer();
    try {
      const report = await runScript(
        deno,
        [
          "run",
          "--sloppy-imports",
          "--no-config",
          "--no-prompt",
          `--allow-net=127.0.0.1:${server.port}`,
          "main.ts",
          server.url,
        ],
        { cwd: project.dir, timeoutMs: 20_000 },
      );
      expect(report.platform).toMatch(/^deno \d+\.\d+\.\d+$/);
      expectProbeReport(report, server);
    } finally {
      await server.close();
      rmSync(project.dir, { recursive: true, force: true });
    }
  });
});
