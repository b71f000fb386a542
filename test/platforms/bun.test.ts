/**
 * A generated client on Bun (docs/platforms.md): Bun runs the generated TypeScript as it is.
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

const ENTRY = probeEntry('"bun " + Bun.version', "process.argv[2]");

describe("Bun", () => {
  it("runs a generated client: a success, an attempt timeout, stale, static and network fallbacks, ambient deadlines", async () => {
    const bun = findBinary("bun");
    const project = await buildProbeProject();
    writeFileSync(join(project.dir, "main.ts"), ENTRY);
    const server = await startProbeServer();
    try {
      // --no-install: the script imports nothing that is not on disk, and Bun must not fetch it
      const report = await runScript(bun, ["run", "--no-install", "main.ts", server.url], {
        cwd: project.dir,
        timeoutMs: 20_000,
      });
      expect(report.platform).toMatch(/^bun \d+\.\d+\.\d+$/);
      expectProbeReport(report, server);
    } finally {
      await server.close();
      rmSync(project.dir, { recursive: true, force: true });
    }
  });
});
