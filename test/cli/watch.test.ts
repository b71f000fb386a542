/**
 * `resgen build --watch` (docs/build.md): after the first build it says how many files it watches,
 * and each rebuild starts with a line stamped with the time it ran. The clock is injected; the
 * test waits for the lines themselves, never for a duration.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { main } from "../../src/cli/cli.js";

const dir = mkdtempSync(join(tmpdir(), "resgen-watch-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("prints the files it watches and a timestamped line per rebuild", async () => {
  mkdirSync(join(dir, "resilience"));
  writeFileSync(join(dir, "resgen.config.yaml"), "version: 1\n");
  const policy = join(dir, "resilience/stock.yaml");
  writeFileSync(
    policy,
    [
      "version: 1",
      "dependency: stock",
      "timeout: { attempt: 500ms, total: 2s }",
      "retry: { maxAttempts: 2, budget: false }",
      "bulkhead: { maxConcurrent: 10 }",
      "operations:",
      "  getStock: { method: GET, path: /stock }",
      "",
    ].join("\n"),
  );

  let stdout = "";
  let waiting: { text: string; resolve: () => void } | undefined;
  /** Resolves once stdout holds `text`. */
  const printed = (text: string) =>
    new Promise<void>((resolve) => {
      if (stdout.includes(text)) resolve();
      else waiting = { text, resolve };
    });
  const controller = new AbortController();
  const times = [new Date(2024, 0, 2, 9, 5, 7), new Date(2024, 0, 2, 14, 30, 0)];
  const done = main(["node", "resgen", "build", "--watch"], {
    stdout: (t) => {
      stdout += t;
      if (waiting && stdout.includes(waiting.text)) waiting.resolve();
    },
    stderr: (t) => void (stdout += t),
    cwd: dir,
    color: false,
    signal: controller.signal,
    now: () => times.shift() ?? new Date(0),
  });

  await printed("watching 2 files (Ctrl-C stops)\n");
  expect(stdout).toMatch(
    /^src\/generated: \d+ written, 0 updated, 0 removed, 0 unchanged\nwatching 2 files \(Ctrl-C stops\)\n$/,
  );

  writeFileSync(policy, readFileSync(policy, "utf8").replace("attempt: 500ms", "attempt: 400ms"));
  await printed("[09:05:07] rebuilt after a change\n");
  await printed("1 updated");
  const after = stdout.slice(stdout.indexOf("[09:05:07]"));
  expect(after).toMatch(
    /^\[09:05:07\] rebuilt after a change\nsrc\/generated: 0 written, 1 updated, 0 removed, \d+ unchanged\n$/,
  );
  controller.abort();
  expect(await done).toBe(0);
});
