import { fileURLToPath } from "node:url";
import { RuleTester } from "@typescript-eslint/rule-tester";
import type { TSESLint } from "@typescript-eslint/utils";
import { afterAll, describe, it } from "vitest";
import noRetry from "../../eslint-plugin/rules/no-retry-non-idempotent.js";
import requireTimeout from "../../eslint-plugin/rules/require-timeout.js";
import retryInsideBreaker from "../../eslint-plugin/rules/retry-inside-breaker.js";

// What the rules learn from the type checker (`useTypeInformation`, on in
// configs["recommended-type-checked"]): fetch functions known by their type, typed options
// objects, retry helpers read from the other file of the project that declares them, and
// cockatiel policies made by a factory there (fixtures/typed-reach/policies.ts). Each
// case runs twice, with and without type information, to show what the types add.

RuleTester.afterAll = afterAll;
RuleTester.describe = describe;
RuleTester.it = it;
RuleTester.itOnly = it.only;

const FIXTURE = fileURLToPath(new URL("./fixtures/typed-reach/", import.meta.url));
const FILE = "file.ts";

const typed = new RuleTester({
  languageOptions: { parserOptions: { project: "./tsconfig.json", tsconfigRootDir: FIXTURE } },
});
const syntactic = new RuleTester();

/** A finding: its message id, with the suggestion's output where the rule offers one. */
type Expected = string | { readonly messageId: string; readonly suggestion: string };

interface Case {
  readonly code: string;
  /** The findings with type information, and without it. */
  readonly typed: readonly Expected[];
  readonly syntactic: readonly Expected[];
}

const SIGNAL = "signal: AbortSignal.timeout(10_000)";

/** A fetch without a signal: reported with types only, with the suggestion's `from` → `to`. */
function noSignal(code: string, from: string, to: string): Case {
  return {
    code,
    typed: [{ messageId: "fetchWithoutSignal", suggestion: code.replace(from, to) }],
    syntactic: [],
  };
}

function run<M extends string>(
  name: string,
  rule: TSESLint.RuleModule<M, readonly [Record<string, unknown>]>,
  cases: readonly Case[],
): void {
  // The tester bundles its own copy of @typescript-eslint/utils; the rule module is the same shape.
  const tested = rule as unknown as Parameters<RuleTester["run"]>[1] as never;
  for (const [tester, useTypeInformation, pick] of [
    [typed, true, (c: Case) => c.typed],
    [syntactic, false, (c: Case) => c.syntactic],
  ] as const) {
    const options = [{ useTypeInformation }];
    tester.run(`${name} (${useTypeInformation ? "typed" : "syntactic"})`, tested, {
      valid: cases
        .filter((c) => pick(c).length === 0)
        .map((c) => ({ code: c.code, filename: FILE, options })),
      invalid: cases
        .filter((c) => pick(c).length > 0)
        .map((c) => ({
          code: c.code,
          filename: FILE,
          options,
          errors: pick(c).map((e) =>
            typeof e === "string"
              ? { messageId: e }
              : {
                  messageId: e.messageId,
                  suggestions: [{ messageId: "addSignal", output: e.suggestion }],
                },
          ),
        })),
    });
  }
}

run("require-timeout", requireTimeout, [
  // fetch known by its type: a parameter, a class field, a destructured option
  noSignal(
    "export async function load(fetcher: typeof fetch, url: string) {\n  return fetcher(url);\n}",
    "fetcher(url)",
    `fetcher(url, { ${SIGNAL} })`,
  ),
  noSignal(
    "export class Api {\n  constructor(private readonly fetchImpl: typeof fetch) {}\n  get(url: string) { return this.fetchImpl(url, { method: 'GET' }); }\n}",
    "method: 'GET'",
    `method: 'GET', ${SIGNAL}`,
  ),
  noSignal(
    "export function make(opts: { fetch: typeof fetch }) {\n  const { fetch: f } = opts;\n  return (url: string) => f(url);\n}",
    "f(url)",
    `f(url, { ${SIGNAL} })`,
  ),
  // fetch re-exported from another file under a project name
  noSignal(
    'import { rawFetch } from "./http.js";\nexport const ping = () => rawFetch("/ping");',
    'rawFetch("/ping")',
    `rawFetch("/ping", { ${SIGNAL} })`,
  ),
  // a project wrapper with fetch's signature bounds its own requests: not fetch
  {
    code: 'import { boundedFetch } from "./http.js";\nexport const ping = () => boundedFetch("/ping");',
    typed: [],
    syntactic: [],
  },
  {
    code: "async function timed(url: string): Promise<Response> {\n  return fetch(url, { signal: AbortSignal.timeout(1000) });\n}\nexport const run = (f: typeof timed) => f('/x');",
    typed: [],
    syntactic: [],
  },
  // typed options: a type without `signal`, a required signal, the caller's optional one
  {
    code: "export function get(url: string, init: { headers: Record<string, string> }) {\n  return fetch(url, init);\n}",
    typed: ["fetchWithoutSignal"],
    syntactic: [],
  },
  noSignal(
    "export function get(url: string, init: { headers: Record<string, string> }) {\n  return fetch(url, { ...init, method: 'GET' });\n}",
    "method: 'GET'",
    `method: 'GET', ${SIGNAL}`,
  ),
  {
    code: "export function get(url: string, init: RequestInit & { signal: AbortSignal }) {\n  return fetch(url, init);\n}",
    typed: [],
    syntactic: [],
  },
  // a timer armed only when an optional key of a typed context is set
  {
    code: "export function send(url: string, ctx: { timeout?: number }) {\n  return fetch(url, { signal: ctx.timeout !== undefined ? AbortSignal.timeout(ctx.timeout) : undefined });\n}",
    typed: ["optInTimeout"],
    syntactic: [],
  },
  {
    code: "export class Hook {\n  constructor(private readonly opts: Partial<{ timeoutMs: number }>) {}\n  send(url: string) {\n    return fetch(url, { signal: this.opts.timeoutMs ? AbortSignal.timeout(this.opts.timeoutMs) : undefined });\n  }\n}",
    typed: ["optInTimeout"],
    syntactic: [],
  },
  {
    code: "type Ctx = { timeout?: number } & ({ retries?: number } | { schedule?: number[] });\nexport function send(url: string, ctx: Ctx) {\n  return fetch(url, { signal: ctx.timeout ? AbortSignal.timeout(ctx.timeout) : undefined });\n}",
    typed: ["optInTimeout"],
    syntactic: [],
  },
  {
    code: "interface Base { timeoutMs?: number }\ntype Opts = Base & { retries: number };\nexport class Client {\n  constructor(private readonly opts: Opts) {}\n  get(url: string) {\n    return fetch(url, { signal: this.opts.timeoutMs ? AbortSignal.timeout(this.opts.timeoutMs) : undefined });\n  }\n}",
    typed: ["optInTimeout"],
    syntactic: [],
  },
  {
    code: "type Opts = { timeoutMs: number } & { retries?: number };\nexport function get(url: string, opts: Opts) {\n  return fetch(url, { signal: opts.timeoutMs > 0 ? AbortSignal.timeout(opts.timeoutMs) : undefined });\n}",
    typed: [],
    syntactic: [],
  },
  {
    code: "export function get(url: string, init: RequestInit & { retries?: number }) {\n  return fetch(url, { ...init, headers: { accept: 'application/json' } });\n}",
    typed: ["untimedSignal"],
    syntactic: [],
  },
  {
    code: "export function send(url: string, ctx: { timeout: number }) {\n  return fetch(url, { signal: ctx.timeout > 0 ? AbortSignal.timeout(ctx.timeout) : undefined });\n}",
    typed: [],
    syntactic: [],
  },
  {
    code: "export function get(url: string, init?: RequestInit) {\n  return fetch(url, { ...init, headers: { accept: 'application/json' } });\n}",
    typed: ["untimedSignal"],
    syntactic: [],
  },
  {
    code: "export function get(url: string, init: RequestInit = {}) {\n  return fetch(url, init);\n}",
    typed: ["untimedSignal"],
    syntactic: [],
  },
  // options built by a helper in another file: its return type says which keys it carries
  {
    code: 'import { jsonHeaders } from "./options.js";\nexport const load = (url: string) => fetch(url, jsonHeaders());',
    typed: ["fetchWithoutSignal"],
    syntactic: [],
  },
  {
    code: 'import { bounded } from "./options.js";\nexport const load = (url: string) => fetch(url, bounded(2000));',
    typed: [],
    syntactic: [],
  },
  {
    code: 'import { withDefaults } from "./options.js";\nexport const load = (url: string, init: RequestInit) => fetch(url, withDefaults(init));',
    typed: [],
    syntactic: [],
  },
  // types that say nothing about the key stay silent
  {
    code: "export function get(url: string, init: any) {\n  return fetch(url, init);\n}",
    typed: [],
    syntactic: [],
  },
  {
    code: "export function get(url: string, init: Record<string, unknown>) {\n  return fetch(url, init as RequestInit);\n}",
    typed: [],
    syntactic: [],
  },
]);

const POST = "fetch('/orders', { method: 'POST', body: '{}', signal: AbortSignal.timeout(1000) })";

run("no-retry-non-idempotent", noRetry, [
  // a retry helper from another file, read from its body: a loop, handed on to the loop
  {
    code: `import { withBackoff } from "./backoff.js";\nexport const pay = () => withBackoff(() => ${POST});`,
    typed: ["retriedWithoutKey"],
    syntactic: [],
  },
  {
    code: `import { resilient } from "./backoff.js";\nexport const pay = () => resilient(async () => ${POST});`,
    typed: ["retriedWithoutKey"],
    syntactic: [],
  },
  {
    code: `import { withBackoff as retry } from "./backoff.js";\nexport async function pay() {\n  return retry(async () => { const res = await ${POST}; return res.json(); });\n}`,
    typed: ["retriedWithoutKey"],
    syntactic: ["retriedWithoutKey"],
  },
  // named like a retry, read as running its task once: only the name-based guess reports it
  {
    code: `import { retryLater } from "./later.js";\nexport const pay = () => retryLater(() => ${POST}, 100);`,
    typed: [],
    syntactic: ["retriedWithoutKey"],
  },
  // a GET through the helper, and a key made once outside it
  {
    code: 'import { withBackoff } from "./backoff.js";\nexport const load = () => withBackoff(() => fetch("/orders"));',
    typed: [],
    syntactic: [],
  },
  {
    code: 'import { withBackoff } from "./backoff.js";\nexport function pay() {\n  const key = crypto.randomUUID();\n  return withBackoff(() => fetch("/orders", { method: "POST", headers: { "Idempotency-Key": key } }));\n}',
    typed: [],
    syntactic: [],
  },
  // fetch known by its type, sending a POST inside a loop
  {
    code: "export async function pay(send: typeof fetch) {\n  for (let i = 0; i < 3; i++) {\n    try { return await send('/orders', { method: 'POST' }); } catch {}\n  }\n}",
    typed: ["retriedWithoutKey"],
    syntactic: ["retriedWithoutKey"],
  }, // a cockatiel policy made by a factory of another file: its retry handles every error unless
  // the call passes a filter, and maxRetries: 0 turns it off
  {
    code: `import { createServicePolicy } from "./policies.js";\nexport const pay = () => createServicePolicy().execute(() => ${POST});`,
    typed: ["retriedWithoutKey"],
    syntactic: [],
  },
  {
    code: `import { createServicePolicy } from "./policies.js";\nconst policy = createServicePolicy({ maxRetries: 2 });\nexport class Orders {\n  #policy = policy;\n  pay(options: { policy?: typeof policy }) {\n    return (options.policy ?? this.#policy).execute(() => ${POST});\n  }\n}`,
    typed: ["retriedWithoutKey"],
    syntactic: [],
  },
  {
    code: `import { createServicePolicy } from "./policies.js";\nconst policy = createServicePolicy({ maxRetries: 0 });\nexport const pay = () => policy.execute(() => ${POST});`,
    typed: [],
    syntactic: [],
  },
  {
    code: `import { handleWhen } from "cockatiel";\nimport { createServicePolicy } from "./policies.js";\nconst policy = createServicePolicy({ retryFilterPolicy: handleWhen((e) => (e as { code?: string }).code === "ECONNREFUSED") });\nexport const pay = () => policy.execute(() => ${POST});`,
    typed: [],
    syntactic: [],
  },
]);

run("retry-inside-breaker", retryInsideBreaker, [
  // a breaker made by a factory of another file and used for one call: it never opens
  {
    code: 'import { createServicePolicy } from "./policies.js";\nexport async function notify(send: () => Promise<void>) {\n  await createServicePolicy().execute(send);\n}',
    typed: ["breakerPerCall"],
    syntactic: [],
  },
  {
    code: 'import { createServicePolicy as make } from "./policies.js";\nexport const notify = (send: () => Promise<void>) => make({ maxRetries: 1 }).execute(send);',
    typed: ["breakerPerCall"],
    syntactic: [],
  },
  // a retry outside the breaker, configured by the call (services.ts): the handler a subclass
  // passes up through super(...) in a constant of defaults, the handler a factory call passes,
  // through cockatiel's handlers re-exported by the project
  {
    code: `import { BaseService, HttpError, handleWhen, type PolicyOptions } from "./services.js";\nfunction isRetryable(error: unknown): boolean {\n  if (error instanceof HttpError) return error.status >= 500;\n  return true;\n}\nconst DEFAULTS: PolicyOptions = { retryFilterPolicy: handleWhen(isRetryable) };\nexport class Orders extends BaseService {\n  constructor(policyOptions: PolicyOptions = {}) {\n    super({ name: "orders", policyOptions: { ...DEFAULTS, ...policyOptions } });\n  }\n}`,
    typed: ["retryWrapsBreaker"],
    syntactic: [],
  },
  {
    code: 'import { createOuterRetryPolicy, handleAll } from "./services.js";\nexport const policy = createOuterRetryPolicy({ maxRetries: 2, retryFilterPolicy: handleAll });',
    typed: ["retryWrapsBreaker"],
    syntactic: [],
  },
  // the factory's default, a filter that stops on the open circuit, or no retries at all
  {
    code: 'import { BaseService } from "./services.js";\nexport class Orders extends BaseService {\n  constructor() {\n    super({ name: "orders" });\n  }\n}',
    typed: [],
    syntactic: [],
  },
  {
    code: 'import { isBrokenCircuitError } from "cockatiel";\nimport { BaseService, handleWhen } from "./services.js";\nexport class Orders extends BaseService {\n  constructor() {\n    super({ name: "orders", policyOptions: { retryFilterPolicy: handleWhen((e) => !isBrokenCircuitError(e)) } });\n  }\n}',
    typed: [],
    syntactic: [],
  },
  {
    code: 'import { createOuterRetryPolicy, handleAll } from "./services.js";\nexport const policy = createOuterRetryPolicy({ maxRetries: 0, retryFilterPolicy: handleAll });',
    typed: [],
    syntactic: [],
  },
  // made once and kept: the breaker sees every call
  {
    code: 'import { createServicePolicy } from "./policies.js";\nconst policy = createServicePolicy();\nexport async function notify(send: () => Promise<void>) {\n  await policy.execute(send);\n}',
    typed: [],
    syntactic: [],
  },
]);
