// Writes schema/*.schema.json from the zod schema (npm run schema).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { JSON_SCHEMAS } from "../src/language/json-schema.js";
import { PACKAGE_ROOT } from "../src/version.js";

for (const [name, render] of Object.entries(JSON_SCHEMAS)) {
  writeFileSync(join(PACKAGE_ROOT, "schema", name), render());
  console.log(`wrote schema/${name}`);
}
