import rule, { type MessageIds, type Options } from "../../eslint-plugin/rules/require-timeout.js";
import { runUnderBothParsers, type Invalid, type Valid } from "./rule-tester.js";

const AXIOS = 'import axios from "axios";\n';
const GOT = 'import got from "got";\n';
const HTTP = 'import http from "node:http";\nimport https from "node:https";\n';
const SIGNAL = "signal: AbortSignal.timeout(10_000)";

/** A fetch-like call reported with the suggestion that adds a signal to `after`. */
function fetchCase(
  code: string,
  line: number,
  column: number,
  output: string,
): Invalid<MessageIds, Options> {
  return {
    code,
    errors: [
      {
        messageId: "fetchWithoutSignal",
        line,
        column,
        suggestions: [{ messageId: "addSignal", output }],
      },
    ],
  };
}

function plain(
  code: string,
  messageId: MessageIds,
  line: number,
  column: number,
  extra: Partial<Invalid<MessageIds, Options>> = {},
): Invalid<MessageIds, Options> {
  return { code, errors: [{ messageId, line, column }], ...extra };
}

const valid: Valid<Options>[] = [
  // callees reached through aliases, with a real bound
  "const f = opts.fetch || globalThis.fetch;\nf(url, { signal: AbortSignal.timeout(5000) });",
  "class C {\n  fetch = options.fetch ?? fetch;\n  load() {\n    return this.fetch(url, { signal: AbortSignal.timeout(5000) });\n  }\n}",
  `${AXIOS}class C {\n  constructor() {\n    this.axios = axios.create();\n  }\n  send(opts) {\n    const options = { url: opts.url, timeout: opts.timeout || 30000 };\n    return this.axios(options);\n  }\n}`,
  `${AXIOS}const client = axios.create({ timeout: 5000 });\nclient({ url });`,
  // look-alikes stay silent
  "const f = opts.load || makeLoader();\nf(url);",
  "class C {\n  load(id) {\n    return this.fetch(id);\n  }\n  fetch(id) {\n    return id;\n  }\n}",
  "class C {\n  #fetch = makeFetch();\n  load() {\n    return this.#fetch(url);\n  }\n}",
  "const store = getStore();\nstore.fetch(id);",
  "const transport = useTls ? httpsLike : httpLike;\ntransport.get(url);",
  // (secure ? https : http) with the request destroyed on timeout
  `${HTTP}const req = (secure ? https : http).request(opts);\nreq.setTimeout(5000, () => req.destroy());\nreq.end();`,
  `${HTTP}const transport = secure ? https : http;\ntransport.get(url, { signal: AbortSignal.timeout(5000) });`,
  `${HTTP}(secure ? https : http).request(opts).on("timeout", function () { this.destroy(); });`,
  // signals that do end the request
  "const signal = AbortSignal.timeout(5000);\nfetch(url, { signal });",
  "function send(url, signal) {\n  if (!signal) signal = AbortSignal.timeout(5000);\n  return fetch(url, { signal });\n}",
  {
    code: "function send(url: string, signal?: AbortSignal) {\n  signal ??= AbortSignal.timeout(5000);\n  return fetch(url, { signal });\n}",
    tsOnly: true,
  },
  "const controller = new AbortController();\nconst timer = setTimeout(() => controller.abort(), 5000);\nfetch(url, { signal: controller.signal }).finally(() => clearTimeout(timer));",
  "const c = new AbortController();\nsetTimeout(c.abort.bind(c), ms);\nfetch(url, { signal: c.signal });",
  "const c = new AbortController();\nabortAfter(c, 5000);\nfetch(url, { signal: c.signal });",
  `${AXIOS}const c = new AbortController();\nsetTimeout(() => c.abort(), 5000);\naxios.get(u, { signal: c.signal });`,
  "function send(url, signal) {\n  return fetch(url, { signal });\n}",
  "function send(url, opts) {\n  return fetch(url, { signal: AbortSignal.any([opts?.signal, AbortSignal.timeout(5000)]) });\n}",
  // timeout values and where they are set
  `${AXIOS}function get(u, timeout = 5000) {\n  return axios.get(u, { timeout });\n}`,
  `${AXIOS}function get(u, timeout = 0) {\n  timeout = timeout || 5000;\n  return axios.get(u, { timeout });\n}`,
  `${AXIOS}const options = { url };\noptions.timeout = 5000;\naxios(options);`,
  'const init = { method: "POST" };\ninit.signal = AbortSignal.timeout(5000);\nfetch(url, init);',
  `${AXIOS}const config = { url, timeout: 5000 };\nif (slow) config.timeout = 30_000;\naxios(config);`,
  'fetch(url, { signal: AbortSignal.timeout(5000), ...(body && { duplex: "half" }) });',
  "fetch(url, { ...(bounded ? { signal: AbortSignal.timeout(5000) } : { signal: user }) });",
  // instances with a timeout, or whose calls stay in the file
  `${AXIOS}export const api = axios.create({ baseURL, timeout: 5000 });`,
  `${AXIOS}export const api = axios.create({ baseURL });\napi.defaults.timeout = 5000;`,
  `${AXIOS}axios.defaults.timeout = 5000;\nexport default axios.create({ baseURL });`,
  `${AXIOS}export function makeClient(defaults) {\n  return axios.create({ ...defaults });\n}`,
  `${AXIOS}export function makeClient(defaults = {}) {\n  return axios.create({ ...defaults });\n}`,
  `${AXIOS}const api = axios.create({ baseURL });\napi.get("/x", { timeout: 5000 });`,
  {
    code: `${AXIOS}export const api = axios.create({ baseURL });`,
    options: [{ checkInstances: false }],
  },
  `${GOT}export const client = got.extend({ timeout: { socket: 5000 } });`,
  'const { default: got } = await import("got");\nconst client = got.extend({ timeout: { request: 5000 } });\nclient(url);',
  `${GOT}got.stream(url, { timeout: { request: 5000 } }).pipe(out);`,
];

const invalid: Invalid<MessageIds, Options>[] = [
  // fetch through fallbacks, reassigned locals, global-object aliases, class fields, factories
  fetchCase(
    "const f = opts.fetch || globalThis.fetch;\nf(url);",
    2,
    1,
    `const f = opts.fetch || globalThis.fetch;\nf(url, { ${SIGNAL} });`,
  ),
  fetchCase(
    'function load(custom) {\n  const doFetch = custom ?? fetch;\n  return doFetch(url, { method: "GET" });\n}',
    3,
    10,
    `function load(custom) {\n  const doFetch = custom ?? fetch;\n  return doFetch(url, { method: "GET", ${SIGNAL} });\n}`,
  ),
  fetchCase(
    "let fetcher = options.fetch;\nif (!fetcher) fetcher = fetch;\nfetcher(url);",
    3,
    1,
    `let fetcher = options.fetch;\nif (!fetcher) fetcher = fetch;\nfetcher(url, { ${SIGNAL} });`,
  ),
  fetchCase(
    'const global = getGlobalObject();\nglobal.fetch(url, { method: "POST" });',
    2,
    1,
    `const global = getGlobalObject();\nglobal.fetch(url, { method: "POST", ${SIGNAL} });`,
  ),
  {
    ...fetchCase(
      "const root = globalThis as typeof globalThis;\nroot.fetch(url);",
      2,
      1,
      `const root = globalThis as typeof globalThis;\nroot.fetch(url, { ${SIGNAL} });`,
    ),
    tsOnly: true,
  },
  fetchCase(
    "class C {\n  fetch = options.fetch ?? fetch;\n  load() {\n    return this.fetch(url);\n  }\n}",
    4,
    12,
    `class C {\n  fetch = options.fetch ?? fetch;\n  load() {\n    return this.fetch(url, { ${SIGNAL} });\n  }\n}`,
  ),
  fetchCase(
    "class C {\n  #fetch;\n  constructor(f) {\n    this.#fetch = f || fetch;\n  }\n  load() {\n    return this.#fetch(url);\n  }\n}",
    7,
    12,
    `class C {\n  #fetch;\n  constructor(f) {\n    this.#fetch = f || fetch;\n  }\n  load() {\n    return this.#fetch(url, { ${SIGNAL} });\n  }\n}`,
  ),
  fetchCase(
    "const getFetch = () => globalThis.fetch;\ngetFetch()(url);",
    2,
    1,
    `const getFetch = () => globalThis.fetch;\ngetFetch()(url, { ${SIGNAL} });`,
  ),
  // (secure ? https : http).request(...)
  plain(`${HTTP}(secure ? https : http).request(opts).end();`, "missingTimeout", 3, 1),
  plain(
    `${HTTP}const transport = useTls ? https : http;\ntransport.get(url, (res) => res.resume());`,
    "missingTimeout",
    4,
    1,
  ),
  plain(
    `${HTTP}const req = (secure ? https : http).request(opts);\nreq.setTimeout(5000);\nreq.end();`,
    "timeoutNotEnforced",
    3,
    13,
  ),
  // instance calls through members that are not verb-named
  {
    code: `${AXIOS}class C {\n  constructor() {\n    this.axios = axios.create();\n  }\n  send() {\n    return this.axios({ url: "/x" });\n  }\n}`,
    errors: [
      {
        messageId: "missingTimeout",
        line: 7,
        column: 12,
        suggestions: [
          {
            messageId: "addTimeout",
            output: `${AXIOS}class C {\n  constructor() {\n    this.axios = axios.create();\n  }\n  send() {\n    return this.axios({ url: "/x", timeout: 10_000 });\n  }\n}`,
          },
        ],
      },
    ],
  },
  {
    code: `${AXIOS}const client = axios.create({ baseURL });\nclient({ url: "/x" });`,
    errors: [
      {
        messageId: "missingTimeout",
        line: 3,
        column: 1,
        suggestions: [
          {
            messageId: "addTimeout",
            output: `${AXIOS}const client = axios.create({ baseURL });\nclient({ url: "/x", timeout: 10_000 });`,
          },
        ],
      },
    ],
  },
  {
    code: 'const { default: got } = await import("got");\nconst client = got.extend({ prefixUrl });\nclient(url);',
    errors: [
      {
        messageId: "missingTimeout",
        line: 3,
        column: 1,
        suggestions: [
          {
            messageId: "addTimeout",
            output:
              'const { default: got } = await import("got");\nconst client = got.extend({ prefixUrl });\nclient(url, { timeout: { request: 10_000 } });',
          },
        ],
      },
    ],
  },
  {
    code: `${GOT}got.stream(url).pipe(out);`,
    errors: [
      {
        messageId: "missingTimeout",
        line: 2,
        column: 1,
        suggestions: [
          {
            messageId: "addTimeout",
            output: `${GOT}got.stream(url, { timeout: { request: 10_000 } }).pipe(out);`,
          },
        ],
      },
    ],
  },
  // signals that can never fire on their own
  plain(
    "function send(url, opts) {\n  return fetch(url, { signal: opts.request?.signal });\n}",
    "untimedSignal",
    2,
    10,
  ),
  {
    ...plain(
      "function send(url: string, signal?: AbortSignal) {\n  return fetch(url, { signal });\n}",
      "untimedSignal",
      2,
      10,
    ),
    tsOnly: true,
  },
  plain(
    "function send(url, signal = undefined) {\n  return fetch(url, { signal });\n}",
    "untimedSignal",
    2,
    10,
  ),
  plain(
    "const controller = new AbortController();\nsubscription.onClose(() => controller.abort());\nfetch(url, { signal: controller.signal });",
    "untimedSignal",
    3,
    1,
  ),
  plain(
    "const controller = new AbortController();\nfetch(url, { signal: AbortSignal.any([controller.signal]) });",
    "untimedSignal",
    2,
    1,
  ),
  {
    code: `${AXIOS}const c = new AbortController();\naxios.get(u, { signal: c.signal });`,
    errors: [
      {
        messageId: "missingTimeout",
        line: 3,
        column: 1,
        suggestions: [
          {
            messageId: "addTimeout",
            output: `${AXIOS}const c = new AbortController();\naxios.get(u, { signal: c.signal, timeout: 10_000 });`,
          },
        ],
      },
    ],
  },
  // a timeout parameter whose default means none
  plain(
    `${AXIOS}function get(u, timeout = 0) {\n  return axios.get(u, { timeout });\n}`,
    "noTimeoutByDefault",
    3,
    10,
  ),
  plain(
    `${AXIOS}class Client {\n  constructor({ timeout = 0 } = {}) {\n    this.http = axios.create({ timeout });\n  }\n  load() {\n    return this.http.get("/x");\n  }\n}`,
    "noTimeoutByDefault",
    4,
    17,
  ),
  plain(
    `${GOT}function make(timeout = undefined) {\n  return got.extend({ timeout });\n}`,
    "noTimeoutByDefault",
    3,
    10,
  ),
  // a timeout or signal assigned only inside an if
  plain(
    `${AXIOS}const config = { url };\nif (slow) config.timeout = 30_000;\naxios(config);`,
    "missingTimeout",
    4,
    1,
  ),
  plain(
    'const init = { method: "POST" };\nif (opts.bounded) init.signal = AbortSignal.timeout(5000);\nfetch(url, init);',
    "fetchWithoutSignal",
    3,
    1,
  ),
  plain(
    `${AXIOS}const config = { url };\nfor (const attempt of attempts) config.timeout = attempt.ms;\naxios.request(config);`,
    "missingTimeout",
    4,
    1,
  ),
  fetchCase(
    'fetch(url, { method, ...(body && { duplex: "half" }) });',
    1,
    1,
    `fetch(url, { method, ...(body && { duplex: "half" }), ${SIGNAL} });`,
  ),
  // instances without a timeout whose calls are out of sight
  plain(`${AXIOS}export const api = axios.create({ baseURL });`, "instanceWithoutTimeout", 2, 20),
  plain(`${AXIOS}export default axios.create();`, "instanceWithoutTimeout", 2, 16),
  plain(
    `${AXIOS}export function makeClient(defaults = {}) {\n  const client = axios.create({ ...defaults, maxRedirects: 0 });\n  return client;\n}\nexport const request = makeClient();`,
    "instanceWithoutTimeout",
    3,
    18,
  ),
  plain(`${GOT}module.exports = got.extend({ prefixUrl });`, "instanceWithoutTimeout", 2, 18),
  plain(
    `${AXIOS}const api = axios.create({ baseURL });\nexport { api };\napi.get("/x");`,
    "instanceWithoutTimeout",
    2,
    13,
  ),
  plain(`${AXIOS}const make = () => axios.create({ baseURL });`, "instanceWithoutTimeout", 2, 20),
  plain(`${AXIOS}export const api = axios.create({ timeout: 0 });`, "disabledTimeout", 2, 20),
];

runUnderBothParsers("require-timeout (reach)", rule, { valid, invalid });
