/**
 * docs/diagnostics.md, rendered from the codes table: every code with its meaning and, where the
 * table has one, an example policy and the output resgen prints for it. `npm run docs` writes
 * it; a test fails when the committed file differs.
 */
import { checkPolicyText } from "../check.js";
import { CODES, type Code } from "./codes.js";
import { formatPretty, SourceTexts } from "./format.js";

export function renderDiagnosticsDoc(): string {
  const out: string[] = [
    "# Diagnostics",
    "",
    "<!-- Generated from src/diagnostics/codes.ts by `npm run docs`. Do not edit by hand. -->",
    "",
    "Every problem resgen reports has a code, a severity, and a position (`file:line:col`) pointing at",
    "the YAML node responsible. Errors stop `resgen build`; warnings do not (unless `--max-warnings`",
    "says otherwise). Exit codes: `0` clean, `1` errors found, `2` usage or I/O error.",
    "",
    "| code | severity | meaning |",
    "| --- | --- | --- |",
  ];
  const codes = Object.keys(CODES) as Code[];
  for (const code of codes) out.push(`| [${code}](#${code.toLowerCase()}) | ${CODES[code].severity} | ${CODES[code].title} |`);
  for (const code of codes) {
    const info: { title: string; severity: string; help: string; example?: string } = CODES[code];
    out.push("", `## ${code}`, "", `**${info.title}** (${info.severity})`, "", info.help);
    if (info.example !== undefined) {
      const file = `${code.toLowerCase()}.yaml`;
      const { diagnostics } = checkPolicyText(file, info.example);
      const sources = new SourceTexts();
      sources.set(file, info.example);
      out.push("", "```yaml", `# ${file}`, info.example.trimEnd(), "```", "", "```console", `$ resgen check ${file}`, `${formatPretty(diagnostics, sources).trimEnd().replace(/\n([^\n]*)$/, "\n1 policy checked: $1")}`, "```");
    }
  }
  return out.join("\n") + "\n";
}
