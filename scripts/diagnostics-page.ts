/**
 * docs/diagnostics.md, rendered from the codes table: every code with its meaning and, where the
 * table has one, an example policy and the output resgen prints for it. `npm run docs` writes
 * it; a test fails when the committed file differs.
 */
import { checkTexts } from "../src/program/check.js";
import { CODES, type Code, type CodeInfo } from "../src/diagnostics/codes.js";
import type { Diagnostic } from "../src/diagnostics/diagnostic.js";
import { formatPretty, SourceTexts } from "../src/diagnostics/format.js";

/** The files of a code's example: the example itself first, then the policies checked with it. */
export function exampleFiles(code: Code): { file: string; text: string }[] {
  const info: CodeInfo = CODES[code];
  if (info.example === undefined) return [];
  return [
    { file: `${code.toLowerCase()}.yaml`, text: info.example },
    ...Object.entries(info.context ?? {}).map(([file, text]) => ({ file, text })),
  ];
}

/**
 * What `resgen check` reports for a code's example (all its files checked together). Examples are
 * minimal policies, most without `latency`: the RG224 every one of them would also get is shown
 * only at RG224's own entry.
 */
export function checkExample(code: Code): Diagnostic[] {
  const diagnostics = checkTexts(exampleFiles(code)).diagnostics;
  // the examples leave latency out to stay short: the RG224 and RG226 that follow are shown at their own codes
  return diagnostics.filter((d) => d.code === code || (d.code !== "RG224" && d.code !== "RG226"));
}

/** The exit status of a run that reports a code (and nothing worse). */
function exitStatus(info: CodeInfo): string {
  if (info.exit !== "findings") return "2";
  return info.severity === "error" ? "1" : "0";
}

/** The text of docs/diagnostics.md. */
export function renderDiagnosticsDoc(): string {
  const out: string[] = [
    "# Diagnostics",
    "",
    "<!-- Generated from src/diagnostics/codes.ts by `npm run docs`. Do not edit by hand. -->",
    "",
    "Every problem resgen reports has a code, a severity, and a position (`file:line:col`) pointing at",
    "the YAML node responsible. Errors stop `resgen build`; warnings do not (unless `--max-warnings`",
    "says otherwise). Exit codes: `0` clean, `1` errors found, `2` usage or I/O error. Each code's",
    "exit category says which: the `exit` column gives the status a run that reports it ends with",
    "(a warning's `0` becomes `1` past `--max-warnings`; docs/build.md has the JSON printed on failure).",
    "",
    "RG0xx and RG1xx come from loading and validating a file. RG2xx come from the analyzer, which",
    "checks what a valid policy would do: each shows a policy that triggers it, the output, why it",
    "matters and the fix. A finding about an inherited value points at the line that set it (the",
    "policy's section or `defaults:` in resgen.config.yaml); one about a value derived from `latency`",
    "points at the latency entry it was derived from. The examples leave `latency` out to stay short;",
    "the RG224 and RG226 that would then follow each of them are shown at RG224 and RG226 only.",
    "",
    "RG4xx come from `resgen build --target istio|linkerd|grpc`: each names a policy setting the",
    "target cannot express, or expresses differently, and says what stays in the application",
    "(docs/targets.md has the mapping tables).",
    "",
    "| code | severity | exit | meaning |",
    "| --- | --- | --- | --- |",
  ];
  const codes = Object.keys(CODES) as Code[];
  for (const code of codes)
    out.push(
      `| [${code}](#${code.toLowerCase()}) | ${CODES[code].severity} | ${exitStatus(CODES[code])} | ${CODES[code].title} |`,
    );
  for (const code of codes) {
    const info: CodeInfo = CODES[code];
    out.push(
      "",
      `## ${code}`,
      "",
      `**${info.title}** (${info.severity}${info.exit === "findings" ? "" : `, exit ${exitStatus(info)}: ${info.exit === "usage" ? "usage or I/O error" : "internal error"}`})`,
      "",
    );
    out.push(info.fix === undefined ? info.help : `**Why it matters.** ${info.help}`);
    const files = exampleFiles(code);
    if (files.length > 0) {
      const diagnostics = checkExample(code);
      const sources = new SourceTexts();
      for (const f of files) sources.set(f.file, f.text);
      for (const f of files) out.push("", "```yaml", `# ${f.file}`, f.text.trimEnd(), "```");
      const names = files.map((f) => f.file).join(" ");
      const count = `${files.length} ${files.length === 1 ? "policy" : "policies"} checked: $1`;
      out.push(
        "",
        "```console",
        `$ resgen check ${names}`,
        formatPretty(diagnostics, sources)
          .trimEnd()
          .replace(/\n([^\n]*)$/, `\n${count}`),
        "```",
      );
    }
    if (info.fix !== undefined) out.push("", `**Fix.** ${info.fix}`);
  }
  return out.join("\n") + "\n";
}
