// Compile scaling: `resgen build` (the programmatic `build()`) on 10, 100 and 500 generated
// policies in a temporary folder, cold and as a no-op rebuild: `npm run bench:build`.
//
// The policies are the four of examples/checkout, repeated under new dependency names, with the
// example's project file. `--profile` also writes a CPU profile of the cold 500-policy build.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { cpus, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build, type BuildResult } from "../src/build.js";

const here = dirname(fileURLToPath(import.meta.url));
const example = join(here, "..", "examples", "checkout");
const profile = process.argv.includes("--profile");

const templates = readdirSync(join(example, "resilience"))
  .filter((name) => name.endsWith(".yaml"))
  .sort()
  .map((name) => readFileSync(join(example, "resilience", name), "utf8"));
const config = readFileSync(join(example, "resgen.config.yaml"), "utf8");

/** Writes `count` policies and the project file into a new temporary folder. */
function project(count: number): string {
  const root = mkdtempSync(join(tmpdir(), `resgen-bench-${count}-`));
  mkdirSync(join(root, "resilience"));
  writeFileSync(join(root, "resgen.config.yaml"), config.replace(/\$schema=\S+/, "$schema=none"));
  for (let i = 0; i < count; i++) {
    const template = templates[i % templates.length]!;
    const text = template.replace(/^dependency: (\S+)$/m, (_line, name: string) => `dependency: ${name}${i}`);
    writeFileSync(join(root, "resilience", `policy-${String(i).padStart(3, "0")}.yaml`), text);
  }
  return root;
}

interface Timing {
  readonly seconds: number;
  readonly files: number;
  readonly written: number;
}

async function timeBuild(root: string): Promise<Timing> {
  const started = performance.now();
  const result: BuildResult = await build([], { cwd: root });
  const seconds = (performance.now() - started) / 1_000;
  const errors = result.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0) throw new Error(`build failed: ${errors[0]!.message}`);
  const files = result.plans.reduce((n, plan) => n + plan.changes.length + plan.unchanged, 0);
  const written = result.plans.reduce((n, plan) => n + plan.changes.length, 0);
  return { seconds, files, written };
}

console.log(`machine: ${cpus()[0]?.model.trim() ?? "unknown"}, ${cpus().length} cores, Node ${process.version}`);
// Warm the module graph (ts-morph, zod, yaml) so the first row does not pay for loading it.
{
  const root = project(4);
  await timeBuild(root);
  rmSync(root, { recursive: true, force: true });
}

const rows: Array<{ policies: number; cold: Timing; noop: Timing }> = [];
for (const count of [10, 100, 500]) {
  const root = project(count);
  let session: Session | undefined;
  if (profile && count === 500) {
    session = new Session();
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.start");
  }
  const cold = await timeBuild(root);
  if (session !== undefined) {
    const { profile: cpu } = await session.post("Profiler.stop");
    const file = join(tmpdir(), "resgen-build-500.cpuprofile");
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(cpu));
    console.log(`profile of the cold 500-policy build: ${file}`);
    session.disconnect();
  }
  const noop = await timeBuild(root);
  if (noop.written !== 0) throw new Error(`a rebuild with nothing changed wrote ${noop.written} files`);
  rows.push({ policies: count, cold, noop });
  rmSync(root, { recursive: true, force: true });
}

console.log("\npolicies   files   cold build          no-op rebuild");
for (const { policies, cold, noop } of rows) {
  const rate = (t: Timing): string => `${t.seconds.toFixed(2)} s (${Math.round(t.files / t.seconds)} files/s)`;
  console.log(`${String(policies).padStart(8)}   ${String(cold.files).padStart(5)}   ${rate(cold).padEnd(18)}  ${rate(noop)}`);
}
