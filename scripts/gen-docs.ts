// Writes the generated docs (npm run docs).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderDiagnosticsDoc } from "./diagnostics-page.js";
import { PACKAGE_ROOT } from "../src/version.js";

writeFileSync(join(PACKAGE_ROOT, "docs", "diagnostics.md"), renderDiagnosticsDoc());
console.log("wrote docs/diagnostics.md");
