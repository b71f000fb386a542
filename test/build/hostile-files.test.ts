/**
 * The compiler as an attacker, or a careless colleague, would use it (docs/security.md): paths and
 * references that leave the project, special files, output folders that are not the build's own,
 * links, hand edits and I/O failures. The worst outcome allowed is a diagnostic: nothing outside
 * the project is read or printed, and nothing resgen did not write is deleted or overwritten.
 */
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { check } from "../../src/program/check.js";
import { PACKAGE_ROOT } from "../../src/version.js";
import { exampleProject, readTree, runCli } from "./helpers.js";

/** A folder holding `project/` (the project) and `secrets/` beside it, outside the project. */
let base: string;
let dir: string;
const SECRET = "hunter2-do-not-print";

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), "resgen-hostile-"));
  dir = join(base, "project");
  mkdirSync(join(base, "secrets"));
  writeFileSync(
    join(base, "secrets/creds.yaml"),
    `password: ${SECRET}\nschema: { type: string }\n`,
  );
  writeFileSync(
    join(base, "secrets/payments.yaml"),
    `version: 1\ndependency: stolen\ndescription: ${SECRET}\noperations:\n  get: { method: GET, path: /x }\n`,
  );
  mkdirSync(join(dir, "resilience"), { recursive: true });
  writeFileSync(
    join(dir, "resgen.config.yaml"),
    "version: 1\npolicies: resilience/*.yaml\nout: src/generated\n",
  );
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

const cli = (...args: string[]) => runCli(dir, ...args);
const output = (r: { stdout: string; stderr: string }) => r.stdout + r.stderr;

/** A policy whose one operation's response is the schema `ref` names, through an OpenAPI document. */
function policyWithRef(ref: string): void {
  writeFileSync(
    join(dir, "resilience/api.yaml"),
    "version: 1\ndependency: api\nopenapi: ./api.openapi.yaml\n",
  );
  writeFileSync(
    join(dir, "resilience/api.openapi.yaml"),
    [
      "openapi: 3.0.3",
      "info: { title: api, version: '1' }",
      "paths:",
      "  /a:",
      "    get:",
      "      operationId: getA",
      "      responses:",
      "        '200':",
      "          description: ok",
      "          content:",
      "            application/json:",
      `              schema: { $ref: ${JSON.stringify(ref)} }`,
      "",
    ].join("\n"),
  );
}

describe("references and inputs stay inside the project", () => {
  it("never reads a $ref to the process environment; the error points at the $ref", async () => {
    process.env["RESGEN_TEST_SECRET"] = SECRET;
    try {
      policyWithRef("/proc/self/environ");
      for (const command of ["check", "build"]) {
        const r = await cli(command);
        expect(r.code, command).toBe(1);
        expect(output(r)).not.toContain(SECRET);
        expect(r.stdout).toContain(
          'resilience/api.openapi.yaml:12:31 error RG603 $ref "/proc/self/environ" names a file that cannot be read: it is outside the project',
        );
      }
      expect(existsSync(join(dir, "src/generated"))).toBe(false);
    } finally {
      delete process.env["RESGEN_TEST_SECRET"];
    }
  });

  it("prints what docs/security.md shows for it", async () => {
    policyWithRef("/proc/self/environ");
    const shown = /```sh\n\$ resgen check\n([^`]*)```/.exec(
      readFileSync(join(PACKAGE_ROOT, "docs/security.md"), "utf8"),
    )?.[1];
    expect(shown).toBeDefined();
    expect((await cli("check")).stdout).toContain(shown!);
  });

  it("never reads or shows a $ref that climbs out of the project, and it is an error, not a warning", async () => {
    policyWithRef("../../secrets/creds.yaml#/schema");
    const r = await cli("build");
    expect(r.code).toBe(1);
    expect(output(r)).not.toContain(SECRET);
    expect(r.stdout).toMatch(
      /error RG603 \$ref "\.\.\/\.\.\/secrets\/creds\.yaml#\/schema" names a file that cannot be read: it is outside the project/,
    );
    expect(r.stdout).toContain("nothing written");
  });

  it("follows no link out of the project", async () => {
    symlinkSync(join(base, "secrets/creds.yaml"), join(dir, "resilience/creds.yaml"));
    policyWithRef("./creds.yaml#/schema");
    const r = await cli("check");
    expect(output(r)).not.toContain(SECRET);
    expect(r.stdout).toContain("it is outside the project");
  });

  it("refuses a FIFO at once instead of waiting for a writer", async () => {
    execFileSync("mkfifo", [join(dir, "resilience/pipe.yaml")]);
    policyWithRef("./pipe.yaml");
    const result = await check([], { cwd: dir });
    expect(result.diagnostics.map((d) => `${d.code} ${d.message}`)).toContainEqual(
      expect.stringMatching(
        /^RG603 .*"\.\/pipe\.yaml" names a file that cannot be read: it is a FIFO, not a regular file$/,
      ),
    );
  }, 10_000);

  it("refuses a device and a huge file before reading a byte, even where outside files are allowed", async () => {
    policyWithRef("/dev/urandom");
    const device = await check([], { cwd: dir, allowOutsideProject: true });
    expect(device.diagnostics.map((d) => d.message)).toContainEqual(
      expect.stringContaining("it is a device, not a regular file"),
    );
    // a sparse file of 8 GiB: reading it would take the memory and the time the limit exists to save
    writeFileSync(join(dir, "resilience/huge.yaml"), "");
    truncateSync(join(dir, "resilience/huge.yaml"), 8 * 1024 ** 3);
    const huge = await check(["resilience/huge.yaml"], { cwd: dir });
    expect(huge.diagnostics.map((d) => `${d.code} ${d.message}`)).toEqual([
      "RG003 cannot read resilience/huge.yaml: it is 8589934592 bytes or more, over the 1048576 byte limit",
    ]);
  });

  it("refuses a policy glob that reaches outside the project, at the glob, without reading the files", async () => {
    for (const glob of ["../secrets/*.yaml", JSON.stringify(join(base, "secrets/*.yaml"))]) {
      writeFileSync(join(dir, "resgen.config.yaml"), `version: 1\npolicies: ${glob}\n`);
      const r = await cli("check");
      expect(r.code, glob).toBe(1);
      expect(output(r)).not.toContain(SECRET);
      expect(r.stdout).toContain(
        `resgen.config.yaml:2:11 error RG115 the policy glob "${JSON.parse(glob.startsWith('"') ? glob : JSON.stringify(glob)) as string}" reaches outside the project`,
      );
      // where it is intended, a flag says so
      expect((await cli("check", "--allow-outside-project")).stdout).toContain("stolen");
    }
  });

  it("refuses a policy glob whose matches are links out of the project", async () => {
    symlinkSync(join(base, "secrets"), join(dir, "resilience/shared"));
    writeFileSync(join(dir, "resgen.config.yaml"), "version: 1\npolicies: resilience/**/*.yaml\n");
    const r = await cli("check");
    expect(output(r)).not.toContain(SECRET);
    expect(r.stdout).toContain(
      "resgen.config.yaml:2:11 error RG115 the policy glob matches resilience/shared/payments.yaml, which is outside the project",
    );
  });

  it("refuses an OpenAPI document outside the project, at the policy's openapi key", async () => {
    writeFileSync(
      join(dir, "resilience/api.yaml"),
      "version: 1\ndependency: api\nopenapi: ../../secrets/creds.yaml\n",
    );
    const r = await cli("check");
    expect(output(r)).not.toContain(SECRET);
    expect(r.stdout).toContain(
      "resilience/api.yaml:3:10 error RG115 cannot read the OpenAPI document ../secrets/creds.yaml: it is outside the project",
    );
  });
});

describe("names that clash across policies", () => {
  it("refuses two dependencies that would share one module file", async () => {
    for (const name of ["ab", "AB"])
      writeFileSync(
        join(dir, `resilience/${name}-policy.yaml`),
        `version: 1\ndependency: ${name}\noperations:\n  get: { method: GET, path: /x }\n`,
      );
    const r = await cli("build");
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /error RG301 dependency "(ab|AB)" and "(ab|AB)" \(resilience\/(ab|AB)-policy\.yaml\) both become ab\.ts/,
    );
    expect(existsSync(join(dir, "src/generated"))).toBe(false);
  });

  it("refuses a service whose factory is the runtime's own, and one whose module a dependency has", async () => {
    writeFileSync(
      join(dir, "resilience/edge.yaml"),
      "version: 1\nkind: service\nservice: inbound\ndeadline: { edge: 2s, max: 5s }\n",
    );
    writeFileSync(
      join(dir, "resilience/front.yaml"),
      "version: 1\nkind: service\nservice: checkout\ndeadline: { edge: 2s, max: 5s }\n",
    );
    writeFileSync(
      join(dir, "resilience/dep.yaml"),
      "version: 1\ndependency: checkout-service\noperations:\n  get: { method: GET, path: /x }\n",
    );
    const r = await cli("build");
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      'resilience/edge.yaml:3:10 error RG301 service "inbound" becomes createInboundMiddleware(), the runtime function its module calls',
    );
    expect(r.stdout).toContain(
      'resilience/front.yaml:3:10 error RG301 service "checkout" becomes the module checkout-service.ts, as dependency "checkout-service" does',
    );
    expect(existsSync(join(dir, "src/generated"))).toBe(false);
  });
});

describe("the output folder is the build's own", () => {
  let project: string;
  beforeEach(() => {
    project = exampleProject("resgen-hostile-out-");
  });
  afterEach(() => rmSync(project, { recursive: true, force: true }));
  const run = (...args: string[]) => runCli(project, ...args);
  /** A file another tool generated, with resgen's header, that no build of this project wrote. */
  const foreign = "// Code generated by resgen 0.0.1 from elsewhere. DO NOT EDIT.\nexport {};\n";

  it("refuses the project root, an ancestor and a folder outside the project, deleting nothing", async () => {
    mkdirSync(join(project, "node_modules/other/gen"), { recursive: true });
    writeFileSync(join(project, "node_modules/other/gen/client.ts"), foreign);
    for (const args of [
      ["--out", "."],
      ["--out", ".."],
      ["--out", "../elsewhere"],
    ]) {
      const r = await run("build", ...args);
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.stdout).toMatch(
        /error RG304 --out \.*[\w/.]*: the output folder .* is (the project root|an ancestor of the project root|outside the project)/,
      );
    }
    writeFileSync(
      join(project, "resgen.config.yaml"),
      readFileSync(join(project, "resgen.config.yaml"), "utf8").replace(
        "out: src/generated",
        "out: ../../..",
      ),
    );
    const climbing = await run("build");
    expect(climbing.stdout).toContain("resgen.config.yaml:6:6 error RG304 the output folder");
    expect(readFileSync(join(project, "node_modules/other/gen/client.ts"), "utf8")).toBe(foreign);
  });

  it("removes only files its own record names: never another package's generated files inside the folder", async () => {
    await run("build");
    const nested = join(project, "src/generated/node_modules/other");
    mkdirSync(nested, { recursive: true });
    writeFileSync(join(nested, "client.ts"), foreign);
    writeFileSync(join(project, "src/generated/extra.ts"), foreign);
    rmSync(join(project, "resilience/geocoder.yaml"));
    const r = await run("build");
    expect(r.code).toBe(0);
    expect(existsSync(join(project, "src/generated/geocoder.ts"))).toBe(false);
    expect(readFileSync(join(nested, "client.ts"), "utf8")).toBe(foreign);
    expect(readFileSync(join(project, "src/generated/extra.ts"), "utf8")).toBe(foreign);
  });

  it("honours an absolute out inside the project instead of re-rooting it, and refuses one outside", async () => {
    const config = join(project, "resgen.config.yaml");
    const text = readFileSync(config, "utf8");
    writeFileSync(config, text.replace("out: src/generated", `out: ${join(project, "gen")}`));
    expect((await run("build")).code).toBe(0);
    expect(existsSync(join(project, "gen/payments.ts"))).toBe(true);
    expect(existsSync(join(project, project))).toBe(false);
    const outside = mkdtempSync(join(tmpdir(), "resgen-outside-"));
    try {
      writeFileSync(config, text.replace("out: src/generated", `out: ${outside}`));
      expect((await run("build")).stdout).toContain("error RG304");
      expect(readTree(outside).size).toBe(0);
      expect((await run("build", "--allow-outside-project")).code).toBe(0);
      expect(existsSync(join(outside, "payments.ts"))).toBe(true);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it("never writes through a symbolic link inside the folder, and names the link", async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), "resgen-link-"));
    try {
      mkdirSync(join(project, "src/generated"), { recursive: true });
      symlinkSync(elsewhere, join(project, "src/generated/runtime"));
      const r = await run("build");
      expect(r.code).toBe(1);
      expect(r.stdout).toContain(
        "src/generated/runtime:1:1 error RG305 src/generated/runtime is a symbolic link; resgen never writes through one",
      );
      expect(readTree(elsewhere).size).toBe(0);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it("refuses to overwrite or remove a generated file edited by hand, naming it, unless forced", async () => {
    await run("build");
    const path = join(project, "src/generated/payments.ts");
    const edited = readFileSync(path, "utf8").replace(
      "export function",
      "// a local fix\nexport function",
    );
    writeFileSync(path, edited);
    const policy = join(project, "resilience/payments.yaml");
    writeFileSync(policy, readFileSync(policy, "utf8").replace("maxAttempts: 3", "maxAttempts: 2"));
    const refused = await run("build");
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain(
      "src/generated/payments.ts:1:1 error RG306 src/generated/payments.ts was edited by hand since resgen wrote it; refusing to overwrite it",
    );
    expect(readFileSync(path, "utf8")).toBe(edited);
    // an edited file the build no longer generates is not removed either
    const geocoder = join(project, "src/generated/geocoder.ts");
    writeFileSync(geocoder, readFileSync(geocoder, "utf8") + "// mine\n");
    rmSync(join(project, "resilience/geocoder.yaml"));
    expect((await run("build")).stdout).toContain(
      "error RG306 src/generated/geocoder.ts was edited by hand since resgen wrote it; refusing to remove it",
    );
    const forced = await run("build", "--force");
    expect(forced.code).toBe(0);
    expect(readFileSync(path, "utf8")).not.toContain("a local fix");
    expect(existsSync(geocoder)).toBe(false);
  });

  it("reports an I/O failure as one line with a code and the path, exit 2, and leaves the folder as it was", async () => {
    await run("build");
    // a policy change that needs files in runtime/, where a file now stands in the way of the folder
    const policy = join(project, "resilience/payments.yaml");
    writeFileSync(policy, readFileSync(policy, "utf8").replace("maxAttempts: 3", "maxAttempts: 2"));
    rmSync(join(project, "src/generated/runtime"), { recursive: true });
    writeFileSync(join(project, "src/generated/runtime"), "not a folder\n");
    const before = readTree(join(project, "src/generated"));
    const blocked = await run("build");
    expect(blocked.code).toBe(2);
    expect(blocked.stdout).toMatch(
      /^src\/generated\/runtime\/[\w.-]+:1:1 error RG307 cannot write src\/generated\/runtime\/[\w.-]+: a file is where a folder should be; the output folder was left as it was$/m,
    );
    expect(output(blocked)).not.toMatch(/\n\s+at /); // no stack trace
    // payments.ts, staged before runtime/ failed, was not swapped in, and no temporary file is left
    expect(readTree(join(project, "src/generated"))).toEqual(before);

    const file = join(project, "a-file");
    writeFileSync(file, "");
    const intoFile = await run("build", "--out", "a-file");
    expect(intoFile.code).toBe(2);
    expect(intoFile.stdout).toContain(
      "a-file:1:1 error RG307 cannot write a-file: it is a file, not a folder; the output folder was left as it was",
    );
  });
});
