// require-timeout on timers armed only by a setting, options handed through a function of the
// file to the client, http modules passed as parameters, and requests fed by a pipe
// (docs/eslint-plugin.md, "require-timeout": "What it follows").
import rule, { type MessageIds, type Options } from "../../eslint-plugin/rules/require-timeout.js";
import { runUnderBothParsers, type Invalid, type Valid } from "./rule-tester.js";

const AXIOS = 'import axios from "axios";\n';
const HTTP = 'import http from "node:http";\nimport https from "node:https";\n';

function at(
  code: string,
  messageId: MessageIds,
  line: number,
  column: number,
): Invalid<MessageIds, Options> {
  return { code, errors: [{ messageId, line, column }] };
}

const SIGNAL = "signal: AbortSignal.timeout(10_000)";

/** A finding with the suggestion that turns `from` into `to`. */
function withFix(
  code: string,
  [messageId, suggestion]: [MessageIds, MessageIds],
  [line, column]: [number, number],
  from: string,
  to: string,
): Invalid<MessageIds, Options> {
  return {
    code,
    errors: [
      {
        messageId,
        line,
        column,
        suggestions: [{ messageId: suggestion, output: code.replace(from, to) }],
      },
    ],
  };
}

const valid: Valid<Options>[] = [
  // an opt-in timer whose setting always has a finite value
  "function send(url, { timeout = 5000 } = {}) {\n  return fetch(url, { signal: timeout > 0 ? AbortSignal.timeout(timeout) : undefined });\n}",
  "class Hook {\n  constructor(opts) { this.timeout = opts.timeout ?? 10_000; }\n  send(url) {\n    const signal = this.timeout ? AbortSignal.timeout(this.timeout) : undefined;\n    return fetch(url, { signal });\n  }\n}",
  "const ms = settings.timeoutMs || 3000;\nfetch(url, { signal: ms && AbortSignal.timeout(ms) });",
  // a setting the file cannot see into: silent, as for any option it cannot read
  "export function send(url, ctx) {\n  return fetch(url, { signal: ctx.timeout !== undefined ? AbortSignal.timeout(ctx.timeout) : undefined });\n}",
  // options handed through: every call here passes a real bound
  "function request(url, init) {\n  return fetch(url, init);\n}\nrequest(a, { signal: AbortSignal.timeout(1000) });\nrequest(b, { method: 'POST', signal: AbortSignal.timeout(2000) });",
  "const send = async (url, init, fetchImpl = fetch) => fetchImpl(url, init);\nexport const get = (url) => send(url, { signal: AbortSignal.timeout(5000) });",
  "class Client {\n  #call(url, init) { return fetch(url, init); }\n  get(url) { return this.#call(url, { signal: AbortSignal.timeout(5000) }); }\n}",
  // the function sets its own signal on what it is given: it decides, not its callers
  "function request(url, init) {\n  init.signal = AbortSignal.timeout(5000);\n  return fetch(url, init);\n}\nrequest(a, {});",
  // an http module passed in, its request bounded; a pipe into a bounded request
  `${HTTP}function send(mod, body) {\n  const req = mod.request({ hostname: "x", timeout: 500 });\n  req.on("timeout", () => req.destroy());\n  body.pipe(req);\n}\nsend(secure ? https : http, body);`,
  `${HTTP}const req = http.request({ hostname: "x", signal: AbortSignal.timeout(500) });\nsource.pipe(req);`,
  // a getter whose name only contains fetch returns something else
  "const rows = getFetchedRows();\nrows(url);",
  "const f = getFetch();\nf(url, { signal: AbortSignal.timeout(1000) });",
  // options built by a helper of the file: its returns, and the spreads its callers fill
  "function params(method) {\n  return { method, signal: AbortSignal.timeout(5000) };\n}\nfetch(url, { ...params('GET') });",
  "function params(method, extra) {\n  return { method, ...extra };\n}\nfetch(url, { ...params('GET', { signal: AbortSignal.timeout(1000) }) });",
  "export function params(method, extra) {\n  return { method, ...extra };\n}\nfetch(url, { ...params('GET', other) });",
  // a client made here unless the caller supplies one, with a timeout
  `${AXIOS}export function make(opts) {\n  const api = opts.client || axios.create({ timeout: 5000 });\n  return (id) => api.get(\`/orders/\${id}\`);\n}`,
  // a parameter some call gives something other than an http module: not known to be one
  `${HTTP}function send(mod) {\n  return mod.request({ hostname: "x" });\n}\nsend(http);\nsend(customTransport);`,
  // a request handed to other code, which may attach its own handlers
  `${HTTP}const req = http.request({ hostname: "x" });\nattachTimeout(req);`,
];

const invalid: Invalid<MessageIds, Options>[] = [
  // opt-in timers whose setting defaults to none, or has no default
  at(
    "class Hook {\n  constructor(url, defaults = {}) { this.timeout = defaults.timeout ?? 0; }\n  send(body) {\n    const signal = this.timeout > 0 ? AbortSignal.timeout(this.timeout) : undefined;\n    return fetch(this.url, { method: 'POST', body, signal });\n  }\n}",
    "optInTimeout",
    5,
    52,
  ),
  at(
    "function send(url, { timeout = 0 } = {}) {\n  return fetch(url, { signal: timeout ? AbortSignal.timeout(timeout) : undefined });\n}",
    "optInTimeout",
    2,
    31,
  ),
  at(
    "function send(url, timeoutMs = undefined) {\n  return fetch(url, { signal: timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs) });\n}",
    "optInTimeout",
    2,
    31,
  ),
  at(
    "const ms = config.timeout || 0;\nfetch(url, { signal: ms && AbortSignal.timeout(ms) });",
    "optInTimeout",
    2,
    22,
  ),
  at(
    "function send(url, timeout = null) {\n  return fetch(url, { signal: typeof timeout === 'number' ? AbortSignal.timeout(timeout) : undefined });\n}",
    "optInTimeout",
    2,
    31,
  ),
  // options handed through a function: reported at the call that passes them
  at(
    "function request(url, init) {\n  return fetch(url, init);\n}\nrequest(a, { signal: AbortSignal.timeout(1000) });\nrequest(b, { method: 'POST' });",
    "fetchWithoutSignal",
    5,
    1,
  ),
  at(
    "async function sendWithRetry(url, init, fetchImpl = fetch) {\n  return await fetchImpl(url, init);\n}\nexport async function send(url, timeout = undefined) {\n  return sendWithRetry(url, {\n    method: 'GET',\n    signal: timeout !== undefined ? AbortSignal.timeout(timeout) : undefined,\n  });\n}",
    "optInTimeout",
    7,
    13,
  ),
  at(
    "class Client {\n  #call(url, init) { return this.#raw(url, init); }\n  #raw(url, init) { return fetch(url, init); }\n  get(url) { return this.#call(url); }\n}",
    "fetchWithoutSignal",
    4,
    21,
  ),
  at(
    "const post = (url, init) => fetch(url, { ...init, method: 'POST' });\nfunction go(url, opts) { return fetch(url, opts); }\ngo(a, { headers });",
    "fetchWithoutSignal",
    3,
    1,
  ),
  // fetch from a getter named for it, kept in a field or called at once
  withFix(
    "class Auth {\n  constructor(fetch) { this.fetch = fetch ?? Shims.getDefaultFetch(); }\n  exchange(body) {\n    return this.fetch(this.url, { method: 'POST', body });\n  }\n}",
    ["fetchWithoutSignal", "addSignal"],
    [4, 12],
    "body }",
    `body, ${SIGNAL} }`,
  ),
  withFix(
    "const f = getFetch();\nf(url, { method: 'GET' });",
    ["fetchWithoutSignal", "addSignal"],
    [2, 1],
    "'GET' }",
    `'GET', ${SIGNAL} }`,
  ),
  withFix(
    "export const ping = () => platform.getGlobalFetch()(url);",
    ["fetchWithoutSignal", "addSignal"],
    [1, 27],
    "(url)",
    `(url, { ${SIGNAL} })`,
  ),
  // options built by a helper of the file, with no signal on any path
  withFix(
    "const build = (method, extra) => {\n  const p = { method };\n  if (method === 'GET') return p;\n  return { ...p, ...extra };\n};\nasync function handle(url, method, extra) {\n  const params = build(method, extra);\n  return fetch(url, { ...params });\n}\nexport const go = (u) => handle(u, 'POST', {});",
    ["fetchWithoutSignal", "addSignal"],
    [8, 10],
    "{ ...params }",
    `{ ...params, ${SIGNAL} }`,
  ),
  withFix(
    "function opts(headers) {\n  return { headers, method: 'PUT' };\n}\nfetch(url, { ...opts(h) });",
    ["fetchWithoutSignal", "addSignal"],
    [4, 1],
    "{ ...opts(h) }",
    `{ ...opts(h), ${SIGNAL} }`,
  ),
  at(
    "function params(extra) {\n  return { method: 'GET', ...extra };\n}\nconst r = params({ cache: 'no-store' });\nfetch(url, r);",
    "fetchWithoutSignal",
    5,
    1,
  ),
  // a client made here unless the caller supplies one, without a timeout
  withFix(
    `${AXIOS}class Dispatcher {\n  constructor(options) {\n    let client = options.client;\n    if (!client) client = axios.create();\n    this.client = client;\n  }\n  flush(batch) {\n    return this.client.post("/batch", batch, { headers: {} });\n  }\n}`,
    ["missingTimeout", "addTimeout"],
    [9, 12],
    "{ headers: {} }",
    "{ headers: {}, timeout: 10_000 }",
  ),
  withFix(
    `${AXIOS}export function make(opts) {\n  const api = opts.client ?? axios.create({ baseURL: opts.url });\n  return (id) => api.get(\`/orders/\${id}\`);\n}`,
    ["missingTimeout", "addTimeout"],
    [4, 18],
    "}`)",
    "}`, { timeout: 10_000 })",
  ),
  // an http module reaching the call through a parameter, and requests fed by a pipe
  at(
    `${HTTP}function createExecutor(options, httpModule) {\n  return (body) => {\n    const req = httpModule.request({ method: "POST", hostname: options.host });\n    req.on("error", () => {});\n    body.pipe(req);\n  };\n}\nexport const run = createExecutor(opts, opts.httpModule ?? (secure ? https : http));`,
    "missingTimeout",
    5,
    17,
  ),
  at(
    `${HTTP}function post(transport, body) {\n  const req = transport.request({ method: "POST", path: "/v1" });\n  req.end(body);\n}\npost(http, a);\npost(https, b);`,
    "missingTimeout",
    4,
    15,
  ),
  at(
    `${HTTP}class Sender {\n  #send(mod, path) {\n    const req = mod.get(path, (res) => res.resume());\n    req.on("error", () => {});\n  }\n  ping() { this.#send(https, "/ping"); }\n}`,
    "missingTimeout",
    5,
    17,
  ),
  at(
    `${HTTP}const req = https.request({ hostname: "x", method: "PUT" });\nreq.on("error", reject);\nfile.pipe(req);`,
    "missingTimeout",
    3,
    13,
  ),
  at(
    `${HTTP}import { pipeline } from "node:stream";\nconst req = http.request(url);\npipeline(source, req, done);`,
    "missingTimeout",
    4,
    13,
  ),
];

runUnderBothParsers("require-timeout (forwarded)", rule, { valid, invalid });
