/**
 * The texts `resgen init` writes (docs/quickstart.md). Each policy it writes passes `resgen check`
 * with no finding in the project file it writes beside it; test/cli/init.test.ts checks that for
 * every mode.
 */
import { clientNames } from "../model/names.js";

/** The project file: where the policies are, where the clients go, and the shared defaults. */
export function configText(
  policies: string,
  out: string,
  emit: { readonly runtime?: "vendored" | "package"; readonly platform?: "node" | "web" } = {},
): string {
  const runtime =
    emit.runtime === "package"
      ? "runtime: package   # the clients import resgen/runtime: install resgen as a dependency\n"
      : "";
  const platform =
    emit.platform === "web"
      ? "platform: web      # no AsyncLocalStorage: each call is given its deadline\n"
      : "";
  return `# yaml-language-server: $schema=node_modules/resgen/schema/project.schema.json
# resgen's project file: where the policies are, where \`resgen build\` writes the clients, and
# what every policy inherits unless it says otherwise (node_modules/resgen/docs/build.md).
version: 1
policies: ${policies}
out: ${out}    # commit it: the code the service runs is reviewed like the rest
${runtime}${platform}defaults:
  retry:
    backoff: { base: 50ms, cap: 1s, multiplier: 2, jitter: full }
    budget: { maxTokens: 100, tokenRatio: 0.1 }   # at most 1 retry per 10 successes in steady state
  breaker:
    failureRate: 50%                 # opens when half the calls in the window fail
    window: { duration: 10s, buckets: 10 }
    minCalls: 20
    openFor: 30s
`;
}

/** Where a policy's settings come from, and the keys every mode writes the same way. */
interface PolicyText {
  readonly name: string;
  /** The policy schema, relative to the policy file. */
  readonly schema: string;
  /** The output folder, as written in the project file. */
  readonly out: string;
}

const header = (p: PolicyText, lines: readonly string[]) =>
  [
    `# yaml-language-server: $schema=${p.schema}`,
    `# How this service calls ${p.name}: \`resgen build\` turns it into ${clientNames(p.name).factory}`,
    `# in ${p.out}/. Every key, its default and its formula: node_modules/resgen/docs/policy.md`,
    ...lines,
    "version: 1",
    `dependency: ${p.name}`,
  ].join("\n") + "\n";

const STACK = `essential: true                       # false: the service can do without it (a fallback)
timeout: { attempt: 1s, total: 3.5s } # each attempt; the whole call, retries and backoff included
retry: { maxAttempts: 3 }             # counts the first; backoff and budget: resgen.config.yaml
bulkhead: { maxConcurrent: 25 }       # calls in flight at once (or declare the measured latency)
`;

/** `--base-url`: a hand-written policy with one GET operation. */
export function baseUrlPolicy(p: PolicyText & { readonly baseUrl: string }): string {
  return (
    header(p, [`# Base URL: ${p.baseUrl}, given to ${clientNames(p.name).factory}({ baseUrl }).`]) +
    STACK +
    `operations:
  getRoot: { method: GET, path: / }   # rename it and set its path; add the others the same way:
  # getItem:
  #   method: GET
  #   path: /items/{id}                # {id} becomes a typed input field
  #   response: { type: object, properties: { id: { type: string } }, required: [id] }
  # createItem:
  #   method: POST
  #   path: /items
  #   idempotency: { header: Idempotency-Key }   # makes the POST safe to retry
  #   body: { type: object, properties: { name: { type: string } }, required: [name] }
`
  );
}

/** No flags: a commented template of a hand-written policy. */
export function templatePolicy(p: PolicyText): string {
  return (
    header(p, [
      "# A template: rename the file and `dependency` after the dependency, then set its operations.",
    ]) +
    `description: What the dependency is; emitted as JSDoc on the client.
transport: http                       # http (fetch) | function (wraps any async call: an SDK, a database)
# latency: { p50: 20ms, p95: 45ms, p99: 80ms, p999: 200ms, rps: 200 }   # measured when healthy;
#                                       attempt timeouts, slow calls and the bulkhead follow from it
` +
    STACK +
    `# breaker: { failureRate: 25%, openFor: 10s }   # overrides resgen.config.yaml's defaults
# fallback: { kind: value, value: [] }          # what to serve when it fails (with essential: false)
operations:
  getItem:
    method: GET
    path: /items/{id}                 # {id} becomes a typed input field
    response:
      type: object
      properties: { id: { type: string }, name: { type: string } }
      required: [id]
  # createItem:
  #   method: POST
  #   path: /items
  #   idempotency: { header: Idempotency-Key }   # makes the POST safe to retry
  #   body: { type: object, properties: { name: { type: string } }, required: [name] }
`
  );
}

/** `--openapi`: the operations come from the description; the policy says how to call them. */
export function openApiPolicy(
  p: PolicyText & { readonly openapi: string; readonly operations: readonly string[] },
): string {
  const listed = p.operations.slice(0, 20);
  const more = p.operations.length - listed.length;
  return (
    header(p, [
      `# Its operations (methods, paths, parameters, bodies, responses) come from ${p.openapi};`,
      "# this file says how to call them (node_modules/resgen/docs/openapi.md).",
    ]) +
    `openapi: ${yamlString(p.openapi)}\n` +
    STACK.replace(
      "retry: { maxAttempts: 3 }             # counts the first;",
      "retry: { maxAttempts: 3 }             # retry-safe operations only;",
    ) +
    "# operations:                         # without it, every operation; with it, only these, each\n" +
    "#                                       with its own timeout, retry or fallback if it needs one\n" +
    listed.map((op) => `#   ${op}: {}\n`).join("") +
    (more > 0 ? `#   ... and ${more} more\n` : "")
  );
}

/**
 * The flat config `init` writes where the project has none; README.md shows the same text. `out`
 * is the output folder relative to the project, or undefined when it is outside it.
 */
export function eslintConfigText(file: string, out: string | undefined): string {
  const ignores =
    out === undefined
      ? ""
      : `  { ignores: [${JSON.stringify(`${out}/`)}] }, // generated by resgen build; resgen check lints the policies\n`;
  return `// ${file}
import tsParser from "@typescript-eslint/parser";
import resgen from "resgen/eslint-plugin";

export default [
${ignores}  { files: ["**/*.ts"], languageOptions: { parser: tsParser } },
  resgen.configs.recommended,
];
`;
}

/** What to add to an ESLint config the project has already. */
export function eslintLines(out: string | undefined): string[] {
  return [
    'import tsParser from "@typescript-eslint/parser"; // unless .ts files have a parser already',
    'import resgen from "resgen/eslint-plugin";',
    ...(out === undefined ? [] : ['import { globalIgnores } from "eslint/config";']),
    "",
    "// in the exported array:",
    ...(out === undefined
      ? []
      : [
          `globalIgnores([${JSON.stringify(`${out}/`)}]), // generated by resgen build; resgen check lints the policies`,
        ]),
    '{ files: ["**/*.ts"], languageOptions: { parser: tsParser } },',
    "resgen.configs.recommended,",
  ];
}

/** A path as a YAML scalar: plain where that reads the same, else double-quoted (JSON is YAML). */
function yamlString(text: string): string {
  return /^[A-Za-z0-9._/-]+$/.test(text) ? text : JSON.stringify(text);
}
