/**
 * Every diagnostic resgen can report, in one table. The docs table in docs/diagnostics.md is
 * generated from this list (a test keeps them in sync), so a code cannot exist undocumented.
 */
export type Severity = "error" | "warning";

/**
 * What a code does to the exit status (docs/build.md, "Exit codes"): `findings` are problems in
 * the inputs (an error exits 1; a warning exits 0 unless `--max-warnings` says otherwise);
 * `usage` means the command could not do its work on what it was given (a file that cannot be
 * read, arguments matching nothing, an output folder that cannot be written): exit 2;
 * `internal` is a failure of resgen itself, reported instead of a crash: exit 2.
 */
export type ExitCategory = "findings" | "usage" | "internal";

export interface CodeInfo {
  readonly severity: Severity;
  /** What the code does to the exit status. */
  readonly exit: ExitCategory;
  /** One line: what the code means. */
  readonly title: string;
  /** Why it matters and how to fix it, for the docs table. */
  readonly help: string;
  /**
   * A policy that triggers the code. docs/diagnostics.md shows it with the output resgen really
   * prints for it, so the docs cannot drift from the checker.
   */
  readonly example?: string;
  /**
   * Other policies checked together with `example`, by file name, for codes that look across
   * policies (retries multiplied along `calls`, a dependency declared twice).
   */
  readonly context?: Readonly<Record<string, string>>;
  /** How to fix it, for the docs (analyzer codes). */
  readonly fix?: string;
}

export const CODES = {
  RG001: {
    severity: "error",
    exit: "findings",
    title: "YAML syntax error",
    help: "The file is not valid YAML. Fix the syntax at the position shown; nothing else in the file is checked until it parses.",
    example: "version: 1\ndependency: [payments\noperations: {}\n",
  },
  RG002: {
    severity: "error",
    exit: "findings",
    title: "Duplicate key",
    help: "A mapping names the same key twice, so one of the two values would be silently lost. Keep one.",
    example:
      "version: 1\ndependency: payments\nretry: { maxAttempts: 2 }\nretry: { maxAttempts: 3 }\noperations:\n  get: { method: GET, path: /charges }\n",
  },
  RG003: {
    severity: "error",
    exit: "findings",
    title: "Document refused: too large, too deep or too many aliases",
    help: "Policies are small files. A document over 1 MiB (checked on the file's size before it is read), one nested more than 256 levels deep, or one that expands aliases beyond the limit (an alias bomb) is refused before it can exhaust memory or the stack.",
  },
  RG004: {
    severity: "error",
    exit: "usage",
    title: "File cannot be read",
    help: "The file does not exist or is not readable. Check the path or the policy glob in resgen.config.yaml.",
  },
  RG005: {
    severity: "error",
    exit: "findings",
    title: "Document is not a mapping",
    help: "A policy file holds one YAML mapping (`version: 1`, `dependency: …`, …). An empty file, a list or a scalar is not a policy.",
    example: "- version: 1\n- dependency: payments\n",
  },
  RG006: {
    severity: "error",
    exit: "findings",
    title: "Reserved key",
    help: "`__proto__` cannot be a key in a policy: JavaScript objects would turn it into a prototype instead of data, so it would be lost or, worse, change how other keys behave. Rename the key.",
    example:
      "version: 1\ndependency: payments\noperations:\n  get:\n    method: GET\n    path: /charges\n    response: { type: object, properties: { __proto__: { type: string } } }\n",
  },
  RG101: {
    severity: "error",
    exit: "findings",
    title: "Unknown key",
    help: "The key is not part of the policy language. It is usually a typo: the hint names the nearest valid key.",
    example:
      "version: 1\ndependency: payments\nretry:\n  maxAttemps: 3\noperations:\n  get: { method: GET, path: /charges }\n",
  },
  RG102: {
    severity: "error",
    exit: "findings",
    title: "Missing required key",
    help: "A required key is absent. The position is the mapping that should contain it.",
    example: "version: 1\ndependency: payments\noperations:\n  createCharge:\n    path: /charges\n",
  },
  RG103: {
    severity: "error",
    exit: "findings",
    title: "Wrong type",
    help: "The value has the wrong type (for example a list where a mapping is expected).",
    example:
      "version: 1\ndependency: payments\nessential: [yes]\noperations:\n  get: { method: GET, path: /charges }\n",
  },
  RG104: {
    severity: "error",
    exit: "findings",
    title: "Invalid duration",
    help: "Durations are a non-negative number with a unit: `250ms`, `1.5s`, `2m`, `1h`. A bare number is refused because `250` could mean milliseconds or seconds.",
    example:
      "version: 1\ndependency: payments\ntimeout: { attempt: 250 }\noperations:\n  get: { method: GET, path: /charges }\n",
  },
  RG105: {
    severity: "error",
    exit: "findings",
    title: "Invalid rate",
    help: "Rates are a fraction between 0 and 1 (`0.5`) or a percentage between 0% and 100% (`50%`).",
    example:
      "version: 1\ndependency: payments\nbreaker: { failureRate: 150% }\noperations:\n  get: { method: GET, path: /charges }\n",
  },
  RG106: {
    severity: "error",
    exit: "findings",
    title: "Value out of range",
    help: "A number is outside the range the setting accepts (for example `maxAttempts: 0`). The message gives the bound.",
    example:
      "version: 1\ndependency: payments\nretry: { maxAttempts: 0 }\noperations:\n  get: { method: GET, path: /charges }\n",
  },
  RG107: {
    severity: "error",
    exit: "findings",
    title: "Value not allowed",
    help: "The value is not one of the allowed choices (for example `jitter: random`). The message lists them.",
    example:
      "version: 1\ndependency: payments\nretry: { backoff: { jitter: random } }\noperations:\n  get: { method: GET, path: /charges }\n",
  },
  RG108: {
    severity: "error",
    exit: "findings",
    title: "Invalid name",
    help: "Dependency and operation names become TypeScript identifiers: start with a letter, then letters, digits, `-` or `_`.",
    example:
      "version: 1\ndependency: 2fa-codes\noperations:\n  get: { method: GET, path: /codes }\n",
  },
  RG109: {
    severity: "error",
    exit: "findings",
    title: "Invalid path template",
    help: "Operation paths start with `/` and write parameters as `{name}`. `:id` and unbalanced braces are refused.",
    example:
      'version: 1\ndependency: payments\noperations:\n  get: { method: GET, path: "/charges/:id" }\n',
  },
  RG110: {
    severity: "error",
    exit: "findings",
    title: "Unsupported policy version",
    help: "This resgen reads `version: 1`. Add it at the top of the file.",
    example:
      "version: 2\ndependency: payments\noperations:\n  get: { method: GET, path: /charges }\n",
  },
  RG111: {
    severity: "error",
    exit: "findings",
    title: "Invalid schema reference",
    help: "`$ref` must have the form `#/schemas/Name`.",
    example:
      "version: 1\ndependency: payments\noperations:\n  get: { method: GET, path: /charges, response: { $ref: Charge } }\n",
  },
  RG112: {
    severity: "error",
    exit: "findings",
    title: "Conflicting settings",
    help: "Two keys that exclude each other are both set (for example a breaker window with both `duration` and `calls`). Keep one.",
    example:
      "version: 1\ndependency: payments\nbreaker: { window: { duration: 10s, calls: 100 } }\noperations:\n  get: { method: GET, path: /charges }\n",
  },
  RG113: {
    severity: "error",
    exit: "findings",
    title: "Duplicate dependency",
    help: "Two policy files declare the same dependency; each dependency has exactly one policy. The first file (in path order) is kept; the other is reported.",
    example:
      "version: 1\ndependency: payments\ntimeout: { attempt: 500ms }\noperations:\n  refund: { method: POST, path: /refunds }\n",
    context: {
      "payments.yaml":
        'version: 1\ndependency: payments\ntimeout: { attempt: 500ms }\noperations:\n  getCharge: { method: GET, path: "/charges/{id}" }\n',
    },
  },
  RG114: {
    severity: "error",
    exit: "usage",
    title: "No policies found",
    help: "The paths or the policy glob matched no file. Check the arguments or `policies:` in resgen.config.yaml.",
  },
  RG115: {
    severity: "error",
    exit: "findings",
    title: "Input outside the project",
    help: "A policy glob, an OpenAPI document or a `$ref` names a file outside the project root (the folder that holds resgen.config.yaml, or the policy's own folder when there is none), directly or through a symbolic link. resgen neither reads nor shows such a file, so a policy or description cannot make it print secrets from elsewhere on the machine. Move the file into the project, or pass `--allow-outside-project` where reading it is intended.",
  },
  RG116: {
    severity: "error",
    exit: "findings",
    title: "Input is not a regular file",
    help: "The path names a directory, a FIFO, a socket or a device (`/dev/urandom`). resgen reads only regular files, and checks their size before reading a byte, so an input can neither hang a build nor exhaust its memory.",
  },
  RG117: {
    severity: "error",
    exit: "usage",
    title: "Command cannot work on these inputs",
    help: "The arguments were valid, but the command cannot do its work on what they name: `resgen explain` takes exactly one policy file, and its `--operation` must name one of that policy's operations. The message says what was found instead.",
  },
  RG118: {
    severity: "error",
    exit: "findings",
    title: "Credentials that cannot be sent",
    help: "`auth.use` or an operation's `auth` names a scheme that `auth.schemes` does not declare (usually a typo: the hint names the nearest), or `auth` is set on a policy whose transport is `function`, where your own function makes the request and the client has nothing to add credentials to. Declare the scheme, fix the name, or send the credentials from your function.",
    example:
      "version: 1\ndependency: payments\nauth:\n  schemes:\n    token: { type: bearer }\noperations:\n  getCharge: { method: GET, path: /charges, auth: [tokne] }\n",
  },
  RG119: {
    severity: "error",
    exit: "findings",
    title: "Invalid request rate",
    help: "A rate limit's `rate` (and `quota`) is a count, a slash and a period: `100/s`, `6000/min`, `1000/h`, `50000/d`. A bare number is refused because `100` could be per second or per minute; periods finer than a second are written per second (`1/ms` is `1000/s`).",
    example:
      "version: 1\ndependency: payments\nrateLimit: { rate: 100/ms }\noperations:\n  get: { method: GET, path: /charges }\n",
  },
  RG301: {
    severity: "error",
    exit: "findings",
    title: "Generated names collide",
    help: "Two dependencies, or two operations of one dependency, would become the same TypeScript name (for example `get-charge` and `getCharge` both become `getCharge()`), or a path parameter is called `query` or `body`, which the method's input already uses. Rename one.",
    example:
      "version: 1\ndependency: payments\noperations:\n  get-charge: { method: GET, path: /charges/a }\n  getCharge: { method: GET, path: /charges/b }\n",
  },
  RG302: {
    severity: "error",
    exit: "findings",
    title: "Refusing to overwrite a file resgen did not generate",
    help: "The output folder holds a file at a path resgen wants to write, and the file does not start with resgen's generated-file header, so it may be someone's work. Move it, or choose another `out` folder. Nothing is written while this is unresolved.",
  },
  RG303: {
    severity: "error",
    exit: "findings",
    title: "Output path outside the output folder",
    help: "resgen writes only inside its output folder. A path that would resolve outside it is refused.",
  },
  RG304: {
    severity: "error",
    exit: "findings",
    title: "Output folder not allowed",
    help: "The output folder is the project root, one of its ancestors, or outside the project. A build owns its output folder, so such a folder would mix generated files with everything else (or with another package's). Choose a folder of its own inside the project, such as src/generated, or pass `--allow-outside-project` where an outside folder is intended.",
  },
  RG305: {
    severity: "error",
    exit: "findings",
    title: "Output path goes through a symbolic link",
    help: "A folder or file inside the output folder is a symbolic link. Writing through it would put generated files wherever the link points, so resgen never does: remove the link.",
  },
  RG306: {
    severity: "error",
    exit: "findings",
    title: "Generated file edited by hand",
    help: "A generated file differs from what the last build wrote (its record is the output folder's `.resgen-manifest.json`). Writing over it, or removing it, would lose the edit. Move the change into the policy, or undo it; `resgen build --force` overwrites it.",
  },
  RG307: {
    severity: "error",
    exit: "usage",
    title: "Output folder cannot be written",
    help: "Writing the output folder failed (permission denied, a file where a folder should be, a full disk). The build stops with exit code 2 and leaves the folder as it was: files are staged beside their final names and swapped in only once every one is written.",
  },
  RG308: {
    severity: "error",
    exit: "findings",
    title: "Runtime package on platform: web",
    help: "`runtime: package` imports the runtime resgen ships compiled, which keeps ambient deadlines in AsyncLocalStorage; `platform: web` is for hosts without it. Under `platform: web` the runtime is written into the output folder, built without AsyncLocalStorage (docs/platforms.md).",
    fix: "Remove `runtime: package` (the runtime is then vendored), or use `platform: node` where the host has AsyncLocalStorage.",
  },
  RG309: {
    severity: "error",
    exit: "findings",
    title: "Service policy on platform: web",
    help: "A service policy becomes inbound middleware that runs each request's handler inside the request's deadline and abort signal, so that the calls it makes inherit them. That needs AsyncLocalStorage, which `platform: web` does not use; the service's policy is not built (docs/platforms.md).",
    fix: "Build the service's policies in a project with `platform: node` (the default), or move the service policy to such a project.",
  },
  RG201: {
    severity: "error",
    exit: "findings",
    title: "Retry or hedge on a non-idempotent operation",
    help: "A POST or PATCH (or a call marked `idempotent: false`) that times out may still have succeeded on the server. Retrying it without an idempotency key repeats the side effect: with `maxAttempts: 3` a charge whose answer is lost can be taken three times. resgen attempts such an operation once whatever its policy says, so the setting is both dangerous and a lie about what runs.",
    fix: "Configure `idempotency: { header: Idempotency-Key }` so the server deduplicates the attempts of one call, assert `idempotent: true` if repeating is genuinely harmless, or remove the retry/hedge from the operation.",
    example:
      "version: 1\ndependency: payments\noperations:\n  createCharge:\n    method: POST\n    path: /charges\n    retry: { maxAttempts: 3 }\n",
  },
  RG202: {
    severity: "warning",
    exit: "findings",
    title: "Inherited retry or hedge ignored on a non-idempotent operation",
    help: "The retry (or hedge) comes from the dependency's section or the project defaults, and this operation is not safe to repeat, so it will be attempted exactly once (invariant I6). Nothing dangerous runs, but whoever reads the policy expects 3 attempts where there is 1.",
    fix: "Give the operation an idempotency key to make it retry-safe, or write `retry: false` (or `hedge: false`) on it so the policy says what runs.",
    example:
      'version: 1\ndependency: payments\nretry: { maxAttempts: 3, budget: {} }\noperations:\n  getCharge: { method: GET, path: "/charges/{id}" }\n  createCharge: { method: POST, path: /charges }\n',
  },
  RG203: {
    severity: "error",
    exit: "findings",
    title: "Retry and hedge on the same operation",
    help: "Hedging replaces retries: extra copies are launched while the first is still running. Stacking both multiplies attempts (3 retries × 2 hedged copies = 6 requests for one call) and makes the worst case impossible to reason about.",
    fix: "Keep one layer per operation: `retry: false` on a read you hedge, or `hedge: false` on one you retry.",
    example:
      "version: 1\ndependency: search\nretry: { maxAttempts: 3, budget: {} }\noperations:\n  query:\n    method: GET\n    path: /search\n    hedge: { delay: 50ms }\n",
  },
  RG204: {
    severity: "error",
    exit: "findings",
    title: "Hedging a non-idempotent operation",
    help: "An idempotency key makes sequential retries safe: the server sees the second attempt after the first and returns the stored result. Hedged copies run concurrently, and servers that deduplicate by key reject a request whose key is still in flight (409 Conflict) or serialise them, so with 2 copies up to half the hedged calls fail or wait for nothing.",
    fix: "Hedge idempotent reads only. Set `hedge: false` on the operation and let it retry.",
    example:
      "version: 1\ndependency: payments\noperations:\n  createCharge:\n    method: POST\n    path: /charges\n    idempotency: { header: Idempotency-Key }\n    hedge: { delay: 200ms }\n",
  },
  RG205: {
    severity: "error",
    exit: "findings",
    title: "Attempt timeout not below the total timeout",
    help: "The total timeout bounds the whole call. An attempt allowed 2s inside a 1s deadline is cut by the deadline, never by its own timeout, and a single slow attempt consumes the time every retry needed: `maxAttempts: 3` then means 1.",
    fix: "Set `timeout.attempt` well below `timeout.total` (1.5 × p999 is the derived default) or raise the total.",
    example:
      'version: 1\ndependency: payments\ntimeout: { attempt: 2s, total: 1s }\nretry: { maxAttempts: 3, budget: {} }\noperations:\n  getCharge: { method: GET, path: "/charges/{id}" }\n',
  },
  RG206: {
    severity: "error",
    exit: "findings",
    title: "Retry without jitter",
    help: 'Calls that fail together (a blip, a deploy, a dropped connection pool) retry together. Without jitter, 200 clients retry within the same millisecond 50ms later, and again at 100ms: each retry wave is a spike that can knock the recovering dependency over again. Full jitter spreads the same 200 retries over the 0–50ms window, about 4 per millisecond (AWS Architecture Blog, "Exponential Backoff And Jitter").',
    fix: "Use `jitter: full` (the default), `equal` or `decorrelated`.",
    example:
      'version: 1\ndependency: payments\nretry: { maxAttempts: 3, backoff: { jitter: none }, budget: {} }\noperations:\n  getCharge: { method: GET, path: "/charges/{id}" }\n',
  },
  RG207: {
    severity: "warning",
    exit: "findings",
    title: "Worst case of the retry plan over the total timeout",
    help: "When every attempt times out, 3 attempts of 500ms plus backoff of 50ms and 100ms take 1.65s. Under a 1s total only the first attempt runs to its timeout; the plan promises retries the deadline never lets happen.",
    fix: "Raise `timeout.total` to the worst case, lower `timeout.attempt`, or lower `maxAttempts` to what fits.",
    example:
      'version: 1\ndependency: payments\ntimeout: { attempt: 500ms, total: 1s }\nretry: { maxAttempts: 3, budget: {} }\noperations:\n  getCharge: { method: GET, path: "/charges/{id}" }\n',
  },
  RG208: {
    severity: "warning",
    exit: "findings",
    title: "Attempt timeout under p99",
    help: "An attempt timeout below the measured p99 cuts off more than 1% of healthy calls: at 200 rps that is over 2 healthy calls a second turned into failures, retried into extra load exactly when the dependency is slowest.",
    fix: "Set `timeout.attempt` above p99; 1.5 × p999 is the derived default.",
    example:
      'version: 1\ndependency: payments\nlatency: { p99: 300ms, p999: 600ms }\ntimeout: { attempt: 200ms }\noperations:\n  getCharge: { method: GET, path: "/charges/{id}" }\n',
  },
  RG209: {
    severity: "warning",
    exit: "findings",
    title: "Attempt timeout over 5 × p999",
    help: "A healthy call takes at most p999. An attempt timeout 25 × p999 holds a stuck call, its caller and its bulkhead slot 25 times longer than any healthy call, so a hung dependency fills the service's pools long before the timeout helps.",
    fix: "Set `timeout.attempt` near 1.5 × p999.",
    example:
      'version: 1\ndependency: payments\nlatency: { p99: 80ms, p999: 200ms }\ntimeout: { attempt: 5s }\noperations:\n  getCharge: { method: GET, path: "/charges/{id}" }\n',
  },
  RG210: {
    severity: "warning",
    exit: "findings",
    title: "Retries without a budget",
    help: "In a total outage every call fails and every call retries: with `maxAttempts: 3`, 50 rps becomes 150 rps against a dependency that is already down. A retry budget (gRPC A6 throttling) stops retries once failures drain half the tokens: N failing calls then make at most N + maxTokens/2 + 1 attempts, about 1× the load.",
    fix: "Add `budget: { maxTokens: 100, tokenRatio: 0.1 }` under `retry:` (or in the project defaults). Write `budget: false` to say no budget on purpose.",
    example:
      'version: 1\ndependency: payments\nlatency: { rps: 50 }\nretry: { maxAttempts: 3 }\noperations:\n  getCharge: { method: GET, path: "/charges/{id}" }\n',
  },
  RG211: {
    severity: "warning",
    exit: "findings",
    title: "Breaker minimum calls too small",
    help: "Below 5 calls a failure rate is noise: with `minCalls: 2` and a 50% threshold, one failed call out of two opens the breaker and cuts the dependency off for the whole open period (30s by default).",
    fix: "Set `minCalls` to 20 or more (5 at the very least).",
    example:
      'version: 1\ndependency: payments\nbreaker: { minCalls: 2 }\noperations:\n  getCharge: { method: GET, path: "/charges/{id}" }\n',
  },
  RG212: {
    severity: "warning",
    exit: "findings",
    title: "Breaker window cannot hold its minimum calls",
    help: "The breaker judges the calls in its time window and only once there are `minCalls` of them. At 5 rps a 2s window holds 10 calls, so with `minCalls: 20` the threshold is never reached and the breaker never opens, even in a total outage.",
    fix: "Lengthen `window.duration` to at least minCalls / rps, or lower `minCalls`.",
    example:
      'version: 1\ndependency: payments\nlatency: { p99: 50ms, rps: 5 }\nbreaker: { window: { duration: 2s }, minCalls: 20 }\noperations:\n  getCharge: { method: GET, path: "/charges/{id}" }\n',
  },
  RG213: {
    severity: "warning",
    exit: "findings",
    title: "Breaker window shorter than twice the attempt timeout",
    help: "A call is recorded when it ends. With a 2s attempt timeout and a 3s window, calls that hang until their timeout arrive in a window that has mostly rotated past their start, so slow failures never accumulate and the slow-call rate stays low while every call is stuck.",
    fix: "Make `window.duration` at least twice the attempt timeout (10s is typical).",
    example:
      'version: 1\ndependency: payments\ntimeout: { attempt: 2s }\nbreaker: { window: { duration: 3s } }\noperations:\n  getCharge: { method: GET, path: "/charges/{id}" }\n',
  },
  RG214: {
    severity: "warning",
    exit: "findings",
    title: "Bulkhead far from Little's law",
    help: "Little's law: calls in flight = arrival rate × time in system. At 200 rps and a 250ms p99 about 50 calls are in flight when healthy, so `maxConcurrent: 10` rejects healthy traffic at peak. Above rps × attempt timeout × 2 the bulkhead never fills even when every call hangs, so it protects nothing.",
    fix: "Size `maxConcurrent` near rps × p99 × 2 (the derived default when it is omitted).",
    example:
      'version: 1\ndependency: payments\nlatency: { p99: 250ms, rps: 200 }\nbulkhead: { maxConcurrent: 10 }\noperations:\n  getCharge: { method: GET, path: "/charges/{id}" }\n',
  },
  RG215: {
    severity: "warning",
    exit: "findings",
    title: "Non-essential dependency without a fallback",
    help: "`essential: false` says the service works without this dependency, but an operation with no fallback still throws to its caller: a recommendations outage then fails 100% of checkouts instead of showing none.",
    fix: "Add a fallback (`kind: stale`, `kind: value` or `kind: provided`) to the operation or the policy, or `fallback: { kind: none }` to say the caller handles the failure.",
    example:
      "version: 1\ndependency: recommendations\nessential: false\noperations:\n  getRecommendations:\n    method: GET\n    path: /recommendations\n    response: { type: array, items: { type: string } }\n",
  },
  RG216: {
    severity: "error",
    exit: "findings",
    title: "Fallback value does not match the response schema",
    help: "A constant fallback is served in place of a response and typed as one. A value missing a required property passes every type check and crashes the caller at run time, at the worst moment: during an outage.",
    fix: "Serve a value of the response's shape, or use `kind: stale`.",
    example:
      'version: 1\ndependency: recommendations\noperations:\n  getRecommendations:\n    method: GET\n    path: /recommendations\n    response: { type: array, items: { $ref: "#/schemas/Item" } }\n    fallback: { kind: value, value: [{ score: 1 }] }\nschemas:\n  Item: { type: object, properties: { id: { type: string }, score: { type: number } }, required: [id] }\n',
  },
  RG217: {
    severity: "warning",
    exit: "findings",
    title: "Retry-After cap beyond the total deadline",
    help: "Retry-After is never honoured past the deadline, so a cap of 10s under a 2s total accepts waits that can never happen: a server asking for 5s gets a retry that is abandoned, where a cap under 2s would have given up at once and left the time to a fallback.",
    fix: "Set `retryAfter: { max }` at or below `timeout.total`, or use `retryAfter: honor`.",
    example:
      'version: 1\ndependency: payments\ntimeout: { attempt: 300ms, total: 2s }\nretry: { maxAttempts: 3, retryAfter: { max: 10s }, budget: {} }\noperations:\n  getCharge: { method: GET, path: "/charges/{id}" }\n',
  },
  RG218: {
    severity: "error",
    exit: "findings",
    title: "Reference to a missing schema",
    help: "`$ref` names a schema that `schemas:` does not declare, so no type can be generated for the body or response (1 missing name breaks the whole client).",
    fix: "Declare the schema under `schemas:` or correct the name.",
    example:
      'version: 1\ndependency: payments\noperations:\n  getCharge: { method: GET, path: "/charges/{id}", response: { $ref: "#/schemas/Charg" } }\nschemas:\n  Charge: { type: object, properties: { id: { type: string } } }\n',
  },
  RG219: {
    severity: "error",
    exit: "findings",
    title: "Path parameters and params: disagree",
    help: "An operation that declares `params:` types its path parameters, so every `{name}` of the path must be declared and every declared name must appear in the path; otherwise the generated method takes an argument that goes nowhere, or sends a literal `{chargeId}`. Operations without `params:` keep untyped string parameters.",
    fix: "Declare each path parameter under `params:` and remove names the path does not contain.",
    example:
      "version: 1\ndependency: payments\noperations:\n  getCharge:\n    method: GET\n    path: /customers/{customerId}/charges/{chargeId}\n    params: { customerId: { type: string } }\n",
  },
  RG220: {
    severity: "warning",
    exit: "findings",
    title: "Retries multiplied across layers",
    help: 'When each layer of a call chain retries, attempts multiply: gateway → orders → payments with 3 attempts each turns one user action into 3 × 3 × 3 = 27 calls at payments during an outage, exactly when payments can least take them. resgen multiplies maxAttempts along `calls:` across the policies of one check and reports chains above 10, with the product in the message. Retry at one layer only, the one closest to the failing dependency (Google SRE book, "Handling Overload"; AWS Builders\' Library, "Timeouts, retries and backoff with jitter"): there the failure is known first, and the outer layers pass it on instead of multiplying it.',
    fix: "Keep the retries on the calls to the dependency at the bottom of the chain (the one closest to the failure) and set `retry: { maxAttempts: 1 }` in the policies of the outer hops: 1 × 1 × 3 = 3 calls instead of 27. Keep a budget where the retries are.",
    example:
      'version: 1\ndependency: gateway\ncalls: [orders]\ntimeout: { attempt: 2s }\nretry: { maxAttempts: 3, budget: {} }\noperations:\n  placeOrder: { method: PUT, path: "/orders/{id}" }\n',
    context: {
      "orders.yaml":
        'version: 1\ndependency: orders\ncalls: [payments]\ntimeout: { attempt: 500ms }\nretry: { maxAttempts: 3, budget: {} }\noperations:\n  create: { method: PUT, path: "/orders/{id}" }\n',
      "payments.yaml":
        'version: 1\ndependency: payments\ntimeout: { attempt: 100ms }\nretry: { maxAttempts: 3, budget: {} }\noperations:\n  charge: { method: PUT, path: "/charges/{id}" }\n',
    },
  },
  RG221: {
    severity: "warning",
    exit: "findings",
    title: "calls names an unknown dependency",
    help: "`calls:` names a dependency that no policy in this check declares, so retries through it cannot be multiplied (RG220) and a typo goes unnoticed.",
    fix: "Check the called dependency's policy in the same run, correct the name, or remove it.",
    example:
      'version: 1\ndependency: orders\ncalls: [ledger]\noperations:\n  create: { method: PUT, path: "/orders/{id}" }\n',
  },
  RG222: {
    severity: "error",
    exit: "findings",
    title: "Stale fallback on an operation that is not a retry-safe read",
    help: "A stale fallback answers a failed call with an earlier response. That is only sound for a read that is safe to repeat: for a POST, a keyed write or any operation that is not retry-safe, the earlier response belongs to another request (another user's redemption), so serving it would be a lie or a leak. Give the operation another fallback, or turn the inherited one off with `fallback: { kind: none }`.",
    example:
      'version: 1\ndependency: loyalty\nbulkhead: { maxConcurrent: 10 }\nfallback: { kind: stale }\noperations:\n  getBalance: { method: GET, path: "/balances/{userId}", response: { type: object } }\n  redeem:\n    method: POST\n    path: /redemptions\n    idempotency: { header: Idempotency-Key }\n',
  },
  RG223: {
    severity: "warning",
    exit: "findings",
    title: "Optional dependency whose only fallback is stale",
    help: "A stale fallback has nothing to serve until a call has succeeded: the first outage after a deploy fails the call anyway. Declare what a miss does, e.g. `fallback: { kind: stale, maxAge: 5m, otherwise: { kind: value, value: [] } }`.",
    example:
      "version: 1\ndependency: recommendations\nessential: false\nbulkhead: { maxConcurrent: 10 }\nfallback: { kind: stale, maxAge: 5m }\noperations:\n  getRecommendations:\n    method: GET\n    path: /recommendations\n    response: { type: array, items: { type: string } }\n",
  },
  RG224: {
    severity: "warning",
    exit: "findings",
    title: "Neither latency nor a bulkhead",
    help: "Without `latency` resgen cannot derive a bulkhead by Little's law, and without `bulkhead` nothing bounds the calls in flight: a slow dependency can then take every socket and every request of the service. Declare the measured `latency` (with `rps`), or a `bulkhead`.",
    example:
      'version: 1\ndependency: payments\noperations:\n  getCharge: { method: GET, path: "/charges/{id}" }\n',
  },
  RG225: {
    severity: "error",
    exit: "findings",
    title: "Retry on a 4xx that describes the request",
    help: "400, 401, 403, 404, 405, 409, 410 and 422 say the request itself is wrong: sending it again gives the same answer, costs the dependency a request and the caller its deadline. Such responses are never retried and never count against the breaker or the budget, whatever `retry.on` says. 408, 425 and 429 describe the server's state and may be retried.",
    fix: "Remove the status from `retry.on`, and handle it in the caller: fix the request, or treat the answer (a 404, a 409) as a result. The default list, `[timeout, network, 408, 425, 429, 500, 502, 503, 504]`, holds the outcomes worth retrying.",
    example:
      'version: 1\ndependency: payments\nretry: { on: [timeout, 404, 503], budget: {} }\noperations:\n  getCharge: { method: GET, path: "/charges/{id}" }\n',
  },
  RG226: {
    severity: "warning",
    exit: "findings",
    title: "Timeout nobody measured",
    help: "The timeout comes from resgen's built-in default (2s), not from a measurement (`latency`) or an explicit value. A default is a guess: too short for a slow dependency, far too long for a fast one. Declare the measured `latency: { p99 }` (the attempt timeout is then derived) or a `timeout`. The check can be turned off for a project with `checks: { unmeasuredTimeouts: false }` in resgen.config.yaml. It is reported once for the policy when every operation uses the default, else at each operation that does.",
    fix: "Declare the measured `latency: { p99: 120ms }` (the attempt timeout becomes 3 × p99, or 1.5 × p999), or set `timeout: { attempt: … }`.",
    example:
      'version: 1\ndependency: payments\noperations:\n  getCharge: { method: GET, path: "/charges/{id}" }\n',
  },
  RG227: {
    severity: "warning",
    exit: "findings",
    title: "Inner hop not shorter than its caller",
    help: "Along a `calls:` chain, each inner hop's total timeout must be shorter than the attempt timeout of the hop that calls it: otherwise the caller gives up while the inner hop is still working (and retrying), and that work is wasted. resgen compares the callee's longest total timeout (all its attempts and backoff, the deadline margin included) with the caller's longest attempt timeout, for every `calls:` entry of one check, and the message shows the arithmetic.",
    fix: "Lower the inner hop's `timeout.total` (or its attempt timeout or maxAttempts) below the caller's attempt timeout, or raise the caller's `timeout.attempt` above it.",
    example:
      'version: 1\ndependency: orders\ncalls: [payments]\ntimeout: { attempt: 1s }\noperations:\n  create: { method: PUT, path: "/orders/{id}" }\n',
    context: {
      "payments.yaml":
        'version: 1\ndependency: payments\ntimeout: { attempt: 800ms }\nretry: { maxAttempts: 2, budget: {} }\noperations:\n  charge: { method: PUT, path: "/charges/{id}" }\n',
    },
  },
  RG228: {
    severity: "error",
    exit: "findings",
    title: "Coalescing on an operation that is not a retry-safe read",
    help: '`coalesce: true` hands one response to every identical call in flight at once. That is right only for a read: a POST, PATCH, a keyed write or an operation marked `idempotent: false` asks the dependency to do something once per call, and coalescing would do it once for all of them. Only GET and HEAD operations that are retry-safe may coalesce (docs/runtime.md, "Coalescing").',
    fix: "Remove `coalesce` from the operation (or set `coalesce: false` to turn the policy's off), or declare the read it really is as GET or HEAD.",
    example:
      "version: 1\ndependency: payments\nbulkhead: { maxConcurrent: 10 }\noperations:\n  charge:\n    method: POST\n    path: /charges\n    coalesce: true\n",
  },
  RG229: {
    severity: "error",
    exit: "findings",
    title: "Coalescing where calls cannot be told apart or answered together",
    help: "Coalescing needs the runtime to know which calls are identical and to give all of them one answer. With `transport: function` the caller makes the request itself, so the runtime cannot see its method, URL or credentials, and two users' calls could share an answer; with a fallback the caller provides (`kind: provided`, or a stale fallback's `otherwise: { kind: provided }`), each caller's own function would be replaced by the first caller's.",
    fix: "Remove `coalesce` from the operation, or, for a provided fallback, use a value or stale fallback.",
    example:
      "version: 1\ndependency: geocoder\ntransport: function\nbulkhead: { maxConcurrent: 10 }\noperations:\n  geocode:\n    idempotent: true\n    coalesce: true\n",
  },
  RG230: {
    severity: "warning",
    exit: "findings",
    title: "Rate limit over the quota",
    help: "Every attempt takes a permit of the client's rate limit, retries and hedged copies included (docs/runtime.md, \"Rate limit\"). resgen compares what can reach the server with the quota it protects (`rateLimit.quota`, else the rate itself): a rate over its quota; operations' own limits, which add to the dependency's; and the worst-case demand, `latency.rps` × the attempts a call may make (`latency.rps` is one replica's rate: against a limit kept in Redis, which every replica shares, it is multiplied by `rateLimit.replicas` too), which, over the quota, means retries take the permits first attempts need and calls fail as `rate-limited`. The message shows the arithmetic.",
    fix: "Keep the limits within the quota, make fewer attempts (or add a retry budget), or declare the server's real quota as `rateLimit.quota`.",
    example:
      "version: 1\ndependency: geocoder\nlatency: { rps: 80 }\nrateLimit: { rate: 100/s, burst: 20 }\nretry: { maxAttempts: 3, budget: {} }\nbulkhead: false\noperations:\n  lookup: { method: GET, path: /geocode }\n",
  },
  RG231: {
    severity: "warning",
    exit: "findings",
    title: "An endpoint's breaker cannot fill its window",
    help: "With several endpoints each has its own breaker (docs/runtime.md, \"Endpoints\"), and each sees only its share of the calls. resgen divides `latency.rps` × the breaker's time window by `endpoints.max`: below `breaker.minCalls`, an endpoint's window never holds enough calls for its breaker to judge, so a replica that fails every call keeps receiving its share. The message shows the arithmetic.",
    fix: "Declare `endpoints.max` as the number of replicas you run, lower `breaker.minCalls`, or lengthen `breaker.window`.",
    example:
      "version: 1\ndependency: search\nlatency: { rps: 10 }\ntimeout: { attempt: 300ms }\nbreaker: { window: { duration: 10s }, minCalls: 20 }\nendpoints: { max: 8 }\nbulkhead: false\noperations:\n  find: { method: GET, path: /find }\n",
  },
  RG232: {
    severity: "error",
    exit: "findings",
    title: "Endpoints with a function transport",
    help: "`endpoints:` lets the generated client send each attempt to one of several base URLs, with a breaker per endpoint and retries to another one. With `transport: function` the caller's function makes the request, and the runtime cannot choose where it goes.",
    fix: "Remove `endpoints` (a hand-made dependency given `endpoints` tells a function its endpoint in `ctx.endpoint`), or use `transport: http`.",
    example:
      "version: 1\ndependency: geocoder\ntransport: function\ntimeout: { attempt: 300ms }\nendpoints: {}\nbulkhead: false\noperations:\n  geocode: { idempotent: true }\n",
  },
  RG233: {
    severity: "error",
    exit: "findings",
    title: "Hedging under a rate limit kept in Redis",
    help: 'A hedged copy goes at its delay only if a permit is free at that instant: it never waits for one (docs/runtime.md, "Hedging"). A rate limit with `store: redis` hands out permits one round trip to Redis at a time (docs/store.md, "Global rate limit"), so a hedge could only learn whether it may go after that round trip, and the runtime never sends hedges under such a limit. An operation that hedges under one would silently not hedge.',
    fix: "Give the hedged operation its own rate limit in memory (`rateLimit: { rate: …, store: memory }`, a share of the quota), or `rateLimit: false`, or retry instead of hedging.",
    example:
      "version: 1\ndependency: search\nlatency: { p50: 20ms, p99: 200ms }\nrateLimit: { rate: 100/s, store: redis, replicas: 4 }\nbulkhead: false\noperations:\n  find: { method: GET, path: /find, hedge: { delay: 50ms } }\n",
  },
  RG234: {
    severity: "warning",
    exit: "findings",
    title: "Adaptive concurrency bounds against Little's law",
    help: 'An adaptive bulkhead (docs/runtime.md, "Adaptive concurrency") starts at `maxConcurrent` and moves between `adaptive.minLimit` and `adaptive.maxLimit` as latency changes. resgen compares the bounds, on their effective values, with Little\'s law (in flight = rps × time in system): a start outside the interval is clamped at once (the two were set in different layers); a `maxLimit` below `latency.rps` × p99 rejects healthy traffic at peak however fast the dependency answers; a `minLimit` above rps × attempt timeout × 2 keeps the limit where it never fills, so adapting changes nothing. The message shows the arithmetic.',
    fix: "Size maxLimit at about rps × p99 × 2 or more, keep minLimit low (1, the default), and maxConcurrent between the two.",
    example:
      "version: 1\ndependency: inventory\nlatency: { p99: 100ms, rps: 500 }\nbulkhead: { maxConcurrent: 40, adaptive: { maxLimit: 40 } }\noperations:\n  reserve: { method: GET, path: /stock }\n",
  },
  RG235: {
    severity: "warning",
    exit: "findings",
    title: "Stale fallback on an operation that declares no response",
    help: "A stale fallback serves the data of the last good response to the same request. A generated client reads a response body only when the operation declares its `response:` schema; without one, a success returns no data, so there is nothing to keep (in memory or in a shared store) and the fallback has nothing to serve when the dependency fails.",
    fix: "Declare the operation's `response:` schema, or give it a value or provided fallback instead.",
    example:
      'version: 1\ndependency: profiles\nbulkhead: { maxConcurrent: 10 }\nfallback: { kind: stale, maxAge: 10m }\noperations:\n  getProfile: { method: GET, path: "/profiles/{id}" }\n',
  },
  RG299: {
    severity: "warning",
    exit: "findings",
    title: "An analyzer check failed",
    help: "One family of checks failed on this policy; the others ran and their findings are reported. This is a bug in resgen: please report it with the policy.",
  },
  RG501: {
    severity: "error",
    exit: "findings",
    title: "Maximum deadline below the edge deadline",
    help: "A service policy's `deadline.max` clamps the budget a caller may ask for, and `deadline.edge` is the budget a request without one receives. A maximum below the edge deadline would give requests that say nothing more time than any caller is allowed to ask for: one of the two is a mistake.",
    fix: "Raise `deadline.max` to at least the edge deadline, or shorten `deadline.edge`.",
    example:
      "version: 1\nkind: service\nservice: checkout\ndeadline: { edge: 5s, max: 2s }\nadmission: { maxConcurrent: 64 }\n",
  },
  RG502: {
    severity: "warning",
    exit: "findings",
    title: "Edge deadline shorter than the essential dependencies need",
    help: "A request that arrives without a deadline gets the edge deadline, and every call the service makes for it inherits that budget. When it is shorter than one attempt at each essential dependency (the sum of their shortest attempt timeouts), a request that must call them all in turn cannot succeed even when they are healthy and slow only within their timeouts: the edge deadline cuts the last call short.",
    fix: "Give `deadline.edge` at least the sum shown, or shorten the attempt timeouts of the essential dependencies.",
    example:
      "version: 1\nkind: service\nservice: checkout\ndeadline: { edge: 300ms }\nadmission: { maxConcurrent: 64 }\n",
    context: {
      "inventory.yaml":
        'version: 1\ndependency: inventory\ntimeout: { attempt: 200ms, total: 1s }\noperations:\n  getStock: { method: GET, path: "/items/{sku}" }\n',
      "payments.yaml":
        'version: 1\ndependency: payments\ntimeout: { attempt: 250ms, total: 1s }\noperations:\n  charge: { method: PUT, path: "/charges/{id}" }\n',
    },
  },
  RG503: {
    severity: "warning",
    exit: "findings",
    title: "A service's calls names an unknown dependency",
    help: "`calls:` in a service policy lists the dependencies the service calls, so its edge deadline can be checked against them (RG502). A name no dependency policy in the same check declares is left out of that check, and a typo goes unnoticed.",
    fix: "Check the dependency's policy in the same run, correct the name, or remove it.",
    example:
      "version: 1\nkind: service\nservice: checkout\ncalls: [ledger]\nadmission: { maxConcurrent: 64 }\n",
  },
  RG504: {
    severity: "warning",
    exit: "findings",
    title: "Service without admission",
    help: "A service policy without `admission` takes on every request that arrives: under overload nothing is shed, queues grow without bound and every request slows down together. Declare `admission: { maxConcurrent, maxQueue, queueTimeout }`.",
    example: "version: 1\nkind: service\nservice: checkout\ndeadline: { edge: 2s }\n",
  },
  RG505: {
    severity: "warning",
    exit: "findings",
    title: "Idempotency keys expire before the callers stop retrying",
    help: "An idempotent route keeps a completed response for `idempotency.ttl`. A caller may retry the same logical request for as long as its deadline allows, at most the service's `deadline.max`. A key that expires sooner lets a late retry run the handler a second time: the duplicate the route exists to prevent.",
    fix: "Give `idempotency.ttl` at least `deadline.max`; 24h, the default, covers clients that retry later by hand or from a queue.",
    example:
      'version: 1\nkind: service\nservice: checkout\ndeadline: { max: 30s }\nadmission: { maxConcurrent: 64 }\nroutes:\n  - route: "POST /orders"\n    idempotency: { ttl: 10s }\n',
  },
  RG506: {
    severity: "warning",
    exit: "findings",
    title: "Idempotency on a safe method",
    help: "GET, HEAD, OPTIONS and TRACE are safe (RFC 9110, section 9.2.1): repeating them changes nothing, so there is no duplicate to prevent, and replaying a stored answer serves a read that may be stale. A route without a method leaves these methods out; one that names them deduplicates them as told.",
    fix: "Name the unsafe method (`POST /orders`), or remove `idempotency` from the route.",
    example:
      'version: 1\nkind: service\nservice: checkout\nadmission: { maxConcurrent: 64 }\nroutes:\n  - route: "GET /orders"\n    idempotency: {}\n',
  },
  RG507: {
    severity: "warning",
    exit: "findings",
    title: "Idempotency keys shared between callers",
    help: "`idempotency.scope` lists the request headers that identify the caller (by default Authorization and Cookie); keys are kept apart per value. With no header, every caller shares one key space: a caller who reuses or guesses another's key receives that caller's stored response, with its data.",
    fix: "Leave `scope` at its default, or list the headers that carry the caller's identity.",
    example:
      'version: 1\nkind: service\nservice: checkout\nadmission: { maxConcurrent: 64 }\nroutes:\n  - route: "POST /orders"\n    idempotency: { scope: [] }\n',
  },
  RG508: {
    severity: "warning",
    exit: "findings",
    title: "Priority raised by a header any caller can send",
    help: "A priority rule with a `header` gives its priority to every request carrying that header. When that priority is above what the request would get otherwise (`priorities.default`, or a rule after it such as `/sync/*` → `low`), any caller can claim it by sending the header: under overload the callers who send it are served and the others are shed. Header rules that lower priority are not reported.",
    fix: "Have a proxy in front of the service set the header (and remove it from what callers send), and say so with `trusted: proxy` on the rule's header; or match the route instead of a header.",
    example:
      "version: 1\nkind: service\nservice: checkout\nadmission: { maxConcurrent: 64 }\npriorities:\n  rules:\n    - { header: { name: x-priority, value: critical }, priority: critical }\n",
  },
  RG601: {
    severity: "error",
    exit: "findings",
    title: "OpenAPI document cannot be read",
    help: "`openapi:` names a document that does not exist or cannot be read. The path is relative to the policy file.",
    example: "version: 1\ndependency: payments\nopenapi: ./payments.openapi.yaml\n",
  },
  RG602: {
    severity: "error",
    exit: "findings",
    title: "Not an OpenAPI 3.0 or 3.1 document",
    help: "The document `openapi:` names must be an OpenAPI 3.0.x or 3.1.x description (YAML or JSON) with `paths`: Swagger 2.0, another version, or a document with no operation to import is refused.",
  },
  RG603: {
    severity: "error",
    exit: "findings",
    title: "OpenAPI $ref cannot be resolved",
    help: "A `$ref` in the OpenAPI description points at nothing (a typo or a removed schema), at a file that cannot be read (the path is relative to the file the `$ref` is in), at a remote URL (resgen never reads the network: bundle such a description first), or at itself. The position is the `$ref`, in whichever file of the description it is.",
    example: "version: 1\ndependency: payments\nopenapi: ./api.yaml\n",
    context: {
      "api.yaml":
        'openapi: 3.0.3\ninfo: { title: Payments, version: 1.0.0 }\npaths:\n  /charges/{chargeId}:\n    get:\n      operationId: getCharge\n      responses:\n        "200":\n          description: The charge.\n          content:\n            application/json:\n              schema: { $ref: "#/components/schemas/Charges" }\ncomponents:\n  schemas:\n    Charge: { type: object, properties: { id: { type: string } } }\n',
    },
  },
  RG604: {
    severity: "error",
    exit: "findings",
    title: "Unknown operationId",
    help: "With `openapi:`, each key under `operations:` selects an operation of the document by its operationId (to import only those, or to override their timeout, retry, hedge, fallback or idempotency). This one names no operation of the document.",
    example:
      "version: 1\ndependency: payments\nopenapi: ./api.yaml\noperations:\n  getCharges: { retry: false }\n",
    context: {
      "api.yaml":
        'openapi: 3.1.0\ninfo: { title: Payments, version: 1.0.0 }\npaths:\n  /charges/{chargeId}:\n    get:\n      operationId: getCharge\n      parameters:\n        - { name: chargeId, in: path, required: true, schema: { type: string } }\n      responses:\n        "200":\n          description: The charge.\n          content:\n            application/json:\n              schema: { $ref: "#/components/schemas/Charge" }\ncomponents:\n  schemas:\n    Charge:\n      type: object\n      properties: { id: { type: string }, amountCents: { type: integer } }\n      required: [id, amountCents]\n',
    },
  },
  RG605: {
    severity: "warning",
    exit: "findings",
    title: "OpenAPI operation without operationId",
    help: "Imported operations are named by their operationId, which becomes the client's method name. An operation without one is not imported; add an operationId to import it.",
    example: "version: 1\ndependency: payments\nopenapi: ./api.yaml\n",
    context: {
      "api.yaml":
        'openapi: 3.1.0\ninfo: { title: Payments, version: 1.0.0 }\npaths:\n  /charges:\n    get:\n      responses: { "200": { description: Charges. } }\n  /status:\n    get:\n      operationId: getStatus\n      responses: { "204": { description: Up. } }\n',
    },
  },
  RG606: {
    severity: "warning",
    exit: "findings",
    title: "OpenAPI schema feature not expressible as a type",
    help: 'The generated types follow the document\'s schemas: `$ref` becomes a named type (recursive schemas included), `allOf` an intersection, `oneOf`/`anyOf` a union (narrowed by a `discriminator`), `const` and `enum` literal types, `nullable` and `type: [T, "null"]` a union with null. What a TypeScript type cannot say (`not`, `if`/`then`/`else`, `patternProperties`, tuples, a discriminator without alternatives, object-valued parameters, required header parameters) is reported here, naming the schema, and the generated type is wider than the schema.',
    example: "version: 1\ndependency: payments\nopenapi: ./api.yaml\n",
    context: {
      "api.yaml":
        'openapi: 3.1.0\ninfo: { title: Payments, version: 1.0.0 }\npaths:\n  /charges:\n    post:\n      operationId: createCharge\n      requestBody:\n        content:\n          application/json:\n            schema: { $ref: "#/components/schemas/ChargeRequest" }\n      responses: { "201": { description: Created. } }\ncomponents:\n  schemas:\n    ChargeRequest:\n      type: object\n      properties:\n        amountCents: { type: integer }\n        currency: { type: string, not: { const: XXX } }\n',
    },
  },
  RG607: {
    severity: "warning",
    exit: "findings",
    title: "OpenAPI operation not imported",
    help: "An operation of the document cannot become a client method and is left out: its request body or success response is not JSON (generated clients send and read JSON), its method is TRACE, its path template is malformed, or its operationId is not a valid method name. List the operations you need under `operations:` to import only those.",
  },
  RG608: {
    severity: "error",
    exit: "findings",
    title: "Listed OpenAPI operation cannot be imported",
    help: "An operation named under `operations:` exists in the document but cannot become a client method, for one of the reasons of RG607. Remove it from the policy, or change the document.",
  },
  RG609: {
    severity: "error",
    exit: "findings",
    title: "Set by the OpenAPI document",
    help: "With `openapi:`, the document says what an operation is: `method`, `path`, `params`, `query`, `body`, `response` and the `schemas:` they use come from it and cannot be set in the policy. The policy says how to call it: timeout, retry, hedge, fallback, idempotency.",
    example:
      "version: 1\ndependency: payments\nopenapi: ./api.yaml\noperations:\n  getCharge: { method: POST }\n",
    context: {
      "api.yaml":
        'openapi: 3.1.0\ninfo: { title: Payments, version: 1.0.0 }\npaths:\n  /charges/{chargeId}:\n    get:\n      operationId: getCharge\n      parameters:\n        - { name: chargeId, in: path, required: true, schema: { type: string } }\n      responses:\n        "200":\n          description: The charge.\n          content:\n            application/json:\n              schema: { $ref: "#/components/schemas/Charge" }\ncomponents:\n  schemas:\n    Charge:\n      type: object\n      properties: { id: { type: string }, amountCents: { type: integer } }\n      required: [id, amountCents]\n',
    },
  },
  RG610: {
    severity: "error",
    exit: "findings",
    title: "Duplicate operationId",
    help: "Two operations of the document share an operationId, so they would become one method. OpenAPI requires operationIds to be unique: rename one.",
  },
  RG611: {
    severity: "warning",
    exit: "findings",
    title: "OpenAPI security scheme not mapped",
    help: "The document's security schemes become the client's typed `auth` option: HTTP `bearer` and `basic`, and `apiKey` in a header or the query. A scheme the client cannot send by itself (`oauth2` flows, `openIdConnect`, `mutualTLS`, another HTTP scheme such as `digest`, or an `apiKey` in a cookie) is reported at the scheme and left out, as is a requirement naming a scheme the document does not declare; the operations that accept another scheme still use it. Send such credentials with the client's `headers` option, which may be a function called once per attempt (a token your OAuth library refreshes).",
    example: "version: 1\ndependency: pets\nopenapi: ./api.yaml\n",
    context: {
      "api.yaml":
        'openapi: 3.0.3\ninfo: { title: Pets, version: 1.0.0 }\npaths:\n  /pets:\n    get:\n      operationId: listPets\n      security: [{ petsAuth: [read] }, { apiKey: [] }]\n      responses: { "204": { description: None. } }\ncomponents:\n  securitySchemes:\n    petsAuth:\n      type: oauth2\n      flows: { clientCredentials: { tokenUrl: https://auth.example/token, scopes: { read: read pets } } }\n    apiKey: { type: apiKey, in: header, name: X-API-Key }\n',
    },
  },
  RG401: {
    severity: "warning",
    exit: "findings",
    title: "Operation not addressable by the target",
    help: "`resgen build --target istio|linkerd` routes an operation by its HTTP method and path, or by its gRPC method (`grpc:`), and `--target grpc` configures only operations that name a gRPC method. An operation with neither is left out of that target's output: all of its settings stay in the application's client.",
    fix: "Give the operation `method:` and `path:`, or `grpc: { service, method }`, or keep it in the generated TypeScript client only.",
  },
  RG402: {
    severity: "warning",
    exit: "findings",
    title: "Circuit breaker approximated or not expressible",
    help: "A resgen breaker opens for the whole dependency when the failure rate over a window reaches its threshold, then sends trial calls. Istio has no such breaker: the nearest is outlier detection, which ejects one host at a time after consecutive 5xx errors (`consecutive5xxErrors` = failureRate × minCalls, `baseEjectionTime` = openFor, `interval` = the window). Linkerd service profiles and gRPC service configs have no breaker at all. The breaker stays in the application's client.",
    fix: "Keep the generated client's breaker, or accept per-host ejection as a different protection.",
  },
  RG403: {
    severity: "warning",
    exit: "findings",
    title: "Slow-call threshold not expressible",
    help: "`breaker.slowCall` opens the breaker on slow successes. No target counts slow calls as failures, so this part of the breaker exists only in the application's client.",
  },
  RG404: {
    severity: "warning",
    exit: "findings",
    title: "Bulkhead changes meaning or is not expressible",
    help: "Istio limits requests with the connection pool: `http2MaxRequests` = maxConcurrent and `http1MaxPendingRequests` = maxQueue, but a queue of 0 cannot be said (Istio reads 0 as unlimited, so 1 is emitted), the pending queue is per connection pool rather than a queue for permits, and `queueTimeout` and `overflow: drop-oldest` have no field. Linkerd and gRPC have no client-side concurrency limit: the bulkhead stays in the application.",
  },
  RG405: {
    severity: "warning",
    exit: "findings",
    title: "Fallback stays in the application",
    help: "A fallback (a constant, the last good response, or a caller's function) is computed by the application. A mesh or a gRPC channel only returns the failure, so the fallback exists only in the generated TypeScript client.",
  },
  RG406: {
    severity: "warning",
    exit: "findings",
    title: "Hedging not expressible",
    help: "Istio's VirtualService and Linkerd's ServiceProfile cannot hedge requests: a hedged operation is emitted without retries and the hedge stays in the application. gRPC hedges (`hedgingPolicy`) but has no hedge budget: only `retryThrottling` limits hedged copies.",
  },
  RG407: {
    severity: "warning",
    exit: "findings",
    title: "Attempt count changed by the target",
    help: "gRPC caps `maxAttempts` of retries and hedging at 5 (gRPC A6): a larger count is lowered to 5. Linkerd has no attempt count at all: a retryable route is retried as long as the retry budget and the route's timeout allow.",
  },
  RG408: {
    severity: "warning",
    exit: "findings",
    title: "Backoff changes meaning",
    help: "Envoy (Istio) waits a fully jittered exponential backoff from `retries.backoff` (the base) with a fixed multiplier of 2 and a cap of 10 × base; Linkerd's service-profile retries have no backoff setting; gRPC draws full jitter between `initialBackoff` and `maxBackoff`. A jitter kind other than full, another multiplier or another cap cannot be said.",
  },
  RG409: {
    severity: "warning",
    exit: "findings",
    title: "Retry condition mapped differently or not expressible",
    help: "Each target names retryable outcomes its own way. Istio: `network` becomes connect-failure, refused-stream and reset; `timeout` becomes reset (Envoy treats a per-try timeout as a reset), so asking for one of the two also retries the other; status codes are listed as numbers (HTTP) or gRPC code names. Linkerd retries responses classified as failures, which always include every 5xx, and cannot retry after a timeout or a connection error it reports itself. gRPC has status codes only: `network` and 502–504 map to UNAVAILABLE, 429 to RESOURCE_EXHAUSTED, 500 to UNKNOWN; a timeout or another status has no code.",
  },
  RG410: {
    severity: "warning",
    exit: "findings",
    title: "Retry-After not honoured",
    help: "`retryAfter: honor` or `{ max }` lets the server choose the next delay. Istio's VirtualService and Linkerd cannot read Retry-After, and gRPC honours only its own pushback trailer (grpc-retry-pushback-ms): the target keeps to its backoff schedule.",
  },
  RG411: {
    severity: "warning",
    exit: "findings",
    title: "Retry budget changes meaning",
    help: "The policy's budget is a token bucket with gRPC retry-throttling semantics. gRPC takes it as `retryThrottling` (maxTokens capped at 1000, tokenRatio rounded to 3 decimals). Istio's `retryBudget.percent` limits concurrent retries to tokenRatio × 100 % of active requests, with no bucket. Linkerd's `retryBudget` allows retryRatio = tokenRatio retries per request over a 10s ttl, plus maxTokens / 2 retries per ttl as a floor.",
  },
  RG412: {
    severity: "warning",
    exit: "findings",
    title: "Attempt timeout not expressible",
    help: "Linkerd's route timeout and gRPC's method timeout bound the whole call, retries included; neither has a per-attempt timeout, so a hung attempt uses up the whole call's time. The attempt timeout stays in the application.",
  },
  RG413: {
    severity: "warning",
    exit: "findings",
    title: "Idempotency key must come from the application",
    help: "An idempotency key makes retries of a non-idempotent operation safe only when every attempt carries the same key. A mesh or a gRPC channel repeats the request as sent, so the application must create the key (header or metadata) once per logical call; the target cannot create it.",
  },
  RG414: {
    severity: "warning",
    exit: "findings",
    title: "Deadline propagation stays in the application",
    help: "`deadline.propagate` sends the remaining time to the dependency. Istio and Linkerd enforce a fixed route timeout and do not forward a shrinking deadline in the policy's header; gRPC propagates its own deadline (grpc-timeout), without the margin. The policy's header and margin stay with the application.",
  },
  RG415: {
    severity: "error",
    exit: "findings",
    title: "Two operations name the same gRPC method",
    help: "A gRPC service config configures each method once; gRPC rejects a config that names a method twice, so the channel would start without any of it. `resgen build --target grpc` writes the first operation's settings only and stops the build.",
    fix: "Give each operation its own `grpc: { service, method }`, or merge the operations.",
  },
  RG416: {
    severity: "warning",
    exit: "findings",
    title: "Retries in both the client and the engine",
    help: "The same policy drives every target. Built for `ts` and for a mesh or gRPC target, an operation is retried by the generated client and again by the engine below it, so attempts multiply: 3 in the client × 3 in Envoy is 9 requests per call, at the moment the dependency is failing.",
    fix: "Decide per dependency which engine enforces the policy and build the policy for that target only.",
  },
  RG418: {
    severity: "warning",
    exit: "findings",
    title: "Coalescing stays in the application",
    help: "`coalesce: true` lets identical calls in flight share one request. Neither Istio (Envoy's routes and connection pools), Linkerd (ServiceProfiles) nor gRPC's service config has a field that merges requests: every caller's request reaches the dependency through them, so coalescing exists only in the generated TypeScript client, per process.",
  },
  RG419: {
    severity: "warning",
    exit: "findings",
    title: "Rate limit stays in the application",
    help: "No target expresses the client's rate limit as the client runs it (a permit per attempt, a wait bounded by maxWait and the deadline, a pause on Retry-After and the RateLimit header fields). Istio's local rate limit (Envoy's `local_ratelimit` filter, an EnvoyFilter) is a token bucket per proxy that answers 429 at once and is usually installed on the server's inbound side: rate and burst would map to its fill interval and max tokens, but every replica of the caller gets its own bucket. Linkerd's HTTPLocalRateLimitPolicy limits a server's inbound traffic; a gRPC service config has only `retryThrottling`, a token ratio over failures. Nothing is emitted: the generated client keeps the limit.",
  },
  RG420: {
    severity: "warning",
    exit: "findings",
    title: "Endpoints stay in the application",
    help: "With `endpoints:` the generated client takes a list of base URLs, gives each its own breaker and sends a retry or hedge to an endpoint the call has not tried (docs/runtime.md, \"Endpoints\"). In a mesh the endpoints are the Service's pods, balanced by the proxy: Istio's DestinationRule outlierDetection (emitted from the breaker) ejects one pod at a time, and Istio's retries carry Envoy's previous_hosts predicate, so a retry goes to another pod. Linkerd balances with EWMA power-of-two choices and failure accrual (an annotation on the Service), but a retry may reach the endpoint that failed; gRPC's balancer (round_robin, outlier_detection from gRFC A50) picks anew for every retry or hedge (gRFC A6) without excluding the one that failed. Nothing is emitted for the list: the generated client keeps it.",
  },
  RG421: {
    severity: "warning",
    exit: "findings",
    title: "Adaptive concurrency stays in the application",
    help: "An adaptive bulkhead (docs/runtime.md, \"Adaptive concurrency\") moves its limit with the latency its own calls see. No target expresses that: Istio's DestinationRule has only a fixed connection pool (it gets maxConcurrent, the limit the client starts from); Envoy has an adaptive concurrency HTTP filter, reachable from Istio only through an EnvoyFilter, which follows a minimum latency it re-measures by cutting concurrency to a few requests for a while (the others get 503 meanwhile) and is usually installed on the server's side; Linkerd and gRPC's service config have no concurrency limit that follows latency. Nothing is emitted for it: the generated client keeps the adaptive limit.",
  },
  RG417: {
    severity: "error",
    exit: "internal",
    title: "A target emitter failed",
    help: "Generating one target's output failed on these policies. This is a bug in resgen: please report it with the policies. The other targets ran and their findings are reported, but nothing is written, since the failed target's files would be missing from the output folder (and previously generated ones removed).",
  },
} as const satisfies Record<string, CodeInfo>;

export type Code = keyof typeof CODES;
