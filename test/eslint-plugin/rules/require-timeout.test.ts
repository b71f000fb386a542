import rule, {
  type MessageIds,
  type Options,
} from "../../../eslint-plugin/rules/require-timeout.js";
import { runUnderBothParsers, type Invalid, type Valid } from "../rule-tester.js";

const AXIOS = 'import axios from "axios";\n';
const GOT = 'import got from "got";\n';

const valid: Valid<Options>[] = [
  // fetch with a real signal
  "fetch(url, { signal: AbortSignal.timeout(5000) });",
  "fetch(url, { signal: AbortSignal.any([user, AbortSignal.timeout(5000)]) });",
  "fetch(url, { ...init, signal });",
  "const init = { signal: AbortSignal.timeout(1e3) }; fetch(u, init);",
  "const init = { method: 'POST', signal: AbortSignal.timeout(1e3) }; const again = { ...init, body }; fetch(u, again);",
  "fetch(new Request(url, { signal: AbortSignal.timeout(5000) }));",
  `${AXIOS}axios.get(u, Object.assign({}, base, { timeout: 5000 }));`,
  "let init = { signal: AbortSignal.timeout(1000) };\nfetch(u, init);",
  // options the rule cannot see into
  "let init = {};\ninit = makeInit();\nfetch(u, init);",
  'import { request } from "undici";\nawait request(url, { dispatcher: agent });',
  "function get(u, opts) { return fetch(u, opts); }",
  "fetch(u, { ...init });",
  // axios with the config in the right position
  `${AXIOS}axios.post(u, data, { timeout: 5000 });`,
  `${AXIOS}axios.get(u, { timeout: 5000 });`,
  `${AXIOS}axios.delete(u, { timeout: 5000 });`,
  `${AXIOS}axios.put(u, data, { signal: AbortSignal.timeout(5000) });`,
  `${AXIOS}axios({ url, timeout });`,
  `${AXIOS}axios(url, { timeout: 5000 });`,
  `${AXIOS}axios.request({ url, signal });`,
  `${AXIOS}const DEFAULTS = { timeout: 5000 }; axios.get(u, { ...DEFAULTS });`,
  // instance and module defaults
  `${AXIOS}const api = axios.create({ timeout: 5000 }); api.get("/x");`,
  `${AXIOS}const api = axios.create({ baseURL }); api.defaults.timeout = 5000; api.post("/x", body);`,
  `${AXIOS}axios.defaults.timeout = 5000; axios.get(u);`,
  `${AXIOS}axios.get(u); axios.defaults.timeout = 5000;`,
  `${AXIOS}axios.defaults.timeout = 5000; const api = axios.create({ baseURL }); api.get("/x");`,
  `${AXIOS}class Repo { constructor() { this.http = axios.create({ timeout: 3000 }); } load() { return this.http.get("/x"); } }`,
  `${AXIOS}class Repo { http = axios.create({ timeout: 3000 }); load() { return this.http.get("/x"); } }`,
  // axios members that send nothing
  `${AXIOS}axios.isAxiosError(e);`,
  `${AXIOS}axios.isCancel(e);`,
  `${AXIOS}const api = axios.create({ baseURL });`,
  `${AXIOS}axios.interceptors.request.use(fn);`,
  `${AXIOS}axios.getUri(cfg);`,
  `${AXIOS}axios.all([a, b]);`,
  `${AXIOS}axios.spread(fn);`,
  // look-alikes and shadowing
  "function run(fetch) { return fetch(x); }",
  "const fetch = makeFetch(); fetch(url);",
  'import fetch from "./fetch-with-timeout.js"; fetch(url);',
  "store.fetch(id);",
  "queryClient.fetchQuery();",
  "class A { load(id) { return this.requests.get(id); } }",
  "cache.get(k);",
  "map.get(k);",
  'import axios from "./axios.js"; axios.get(u);',
  'const axios = require("./axios"); axios.get(u);',
  'import { get } from "lodash"; get(obj, "a");',
  "function load(axios) { return axios.get(u); }",
  // keys written differently
  `${AXIOS}axios.get(u, { "timeout": 5000 });`,
  `${AXIOS}axios.get(u, { ["timeout"]: 5000 });`,
  `import { TIMEOUT_MS } from "./config.js";\n${AXIOS}axios.get(u, { timeout: TIMEOUT_MS });`,
  `${AXIOS}axios.get(u, { timeout: cfg.httpTimeout });`,
  `${AXIOS}const KEY = "timeout"; axios.get(u, { [KEY]: 5000 });`,
  // wrappers that already bound the call
  { code: "withTimeout(fetch(url), 5000);", options: [{ wrappers: ["withTimeout"] }] },
  { code: "withTimeout(() => fetch(url), 5000);", options: [{ wrappers: ["withTimeout"] }] },
  "fetchWithTimeout(url);",
  // calls through a resgen-generated client
  'import { createPaymentsClient } from "./generated/index.js"; const payments = createPaymentsClient({ baseUrl }); await payments.charge({ body });',
  // got with a timeout
  `${GOT}got(url, { timeout: { request: 5000 } });`,
  `${GOT}got.post(url, { json, timeout: { request: 5000 } });`,
  `${GOT}const client = got.extend({ prefixUrl, timeout: { request: 5000 } }); client.get("x");`,
  `${GOT}const base = got.extend({ timeout: { request: 5000 } }); const client = base.extend({ prefixUrl }); client.get("x");`,
  // http(s) whose timeout is enforced
  'import http from "node:http";\nconst req = http.request(url, { timeout: 5000 }); req.on("timeout", () => req.destroy()); req.end();',
  'import https from "https";\nhttps.get(url, { timeout: 5000 }).on("timeout", function () { this.destroy(); });',
  'const http = require("http");\nconst req = http.get(url); req.setTimeout(5000, () => { req.destroy(new Error("timeout")); });',
  'import http from "http";\nhttp.request(url, { signal: AbortSignal.timeout(5000) }).end();',
  'import http from "http";\nconst req = http.request(url, { timeout: 5000 }); attachTimeout(req);',
  // undici with its timeouts
  'import { request } from "undici";\nawait request(url, { headersTimeout: 5000, bodyTimeout: 5000 });',
  'import { request } from "undici";\nawait request(url, { signal: AbortSignal.timeout(5000) });',
  'import { fetch, Agent } from "undici";\nawait fetch(url, { dispatcher: new Agent({ headersTimeout: 5000 }) });',
  // ky bounds requests by default
  'import ky from "ky";\nky.get(url);',
  'import ky from "ky";\nky.post(url, { json, timeout: 3000 });',
  'import ky from "ky";\nconst api = ky.create({ prefixUrl, timeout: 3000 });\napi.get("x");',
  // TypeScript wrappers around a bounded call
  {
    code: `${AXIOS}const api = axios.create({ timeout: 5000 }); (api as AxiosInstance).get("/x");`,
    tsOnly: true,
  },
  {
    code: "fetch(url, { signal: AbortSignal.timeout(5000) } satisfies RequestInit);",
    tsOnly: true,
  },
  { code: "fetch(url, init!);", tsOnly: true },
];

const invalid: Invalid<MessageIds, Options>[] = [
  // a signal nothing fires, a zero default, an opt-in timer, an exported instance (more in
  // ../require-timeout-reach.test.ts and ../require-timeout-forwarded.test.ts)
  {
    code: "function send(url, opts) {\n  return fetch(url, { signal: opts?.signal });\n}",
    errors: [{ messageId: "untimedSignal", line: 2, column: 10 }],
  },
  {
    code: `${AXIOS}function get(u, timeout = 0) {\n  return axios.get(u, { timeout });\n}`,
    errors: [{ messageId: "noTimeoutByDefault", line: 3, column: 10 }],
  },
  {
    code: "function send(url, { timeout = 0 } = {}) {\n  return fetch(url, { signal: timeout > 0 ? AbortSignal.timeout(timeout) : undefined });\n}",
    errors: [{ messageId: "optInTimeout", line: 2, column: 31 }],
  },
  {
    code: `${AXIOS}export const api = axios.create({ baseURL });`,
    errors: [{ messageId: "instanceWithoutTimeout", line: 2, column: 20 }],
  },
  // fetch without a signal
  {
    code: "fetch(url);",
    errors: [
      {
        messageId: "fetchWithoutSignal",
        line: 1,
        column: 1,
        suggestions: [
          {
            messageId: "addSignal",
            output: "fetch(url, { signal: AbortSignal.timeout(10_000) });",
          },
        ],
      },
    ],
  },
  {
    code: "globalThis.fetch(url);",
    errors: [
      {
        messageId: "fetchWithoutSignal",
        line: 1,
        column: 1,
        suggestions: [
          {
            messageId: "addSignal",
            output: "globalThis.fetch(url, { signal: AbortSignal.timeout(10_000) });",
          },
        ],
      },
    ],
  },
  {
    code: "await window.fetch(url);",
    errors: [
      {
        messageId: "fetchWithoutSignal",
        line: 1,
        column: 7,
        suggestions: [
          {
            messageId: "addSignal",
            output: "await window.fetch(url, { signal: AbortSignal.timeout(10_000) });",
          },
        ],
      },
    ],
  },
  {
    code: "const f = fetch;\nf(url);",
    errors: [
      {
        messageId: "fetchWithoutSignal",
        line: 2,
        column: 1,
        suggestions: [
          {
            messageId: "addSignal",
            output: "const f = fetch;\nf(url, { signal: AbortSignal.timeout(10_000) });",
          },
        ],
      },
    ],
  },
  {
    code: "fetch(url, {});",
    errors: [
      {
        messageId: "fetchWithoutSignal",
        line: 1,
        column: 1,
        suggestions: [
          {
            messageId: "addSignal",
            output: "fetch(url, { signal: AbortSignal.timeout(10_000) });",
          },
        ],
      },
    ],
  },
  {
    code: 'fetch(url, { method: "POST", body });',
    errors: [
      {
        messageId: "fetchWithoutSignal",
        line: 1,
        column: 1,
        suggestions: [
          {
            messageId: "addSignal",
            output: 'fetch(url, { method: "POST", body, signal: AbortSignal.timeout(10_000) });',
          },
        ],
      },
    ],
  },
  {
    code: "fetch(url, { signal: undefined });",
    errors: [
      {
        messageId: "fetchWithoutSignal",
        line: 1,
        column: 1,
        suggestions: [
          {
            messageId: "addSignal",
            output: "fetch(url, { signal: AbortSignal.timeout(10_000) });",
          },
        ],
      },
    ],
  },
  {
    code: "fetch(url, { signal: null });",
    errors: [
      {
        messageId: "fetchWithoutSignal",
        line: 1,
        column: 1,
        suggestions: [
          {
            messageId: "addSignal",
            output: "fetch(url, { signal: AbortSignal.timeout(10_000) });",
          },
        ],
      },
    ],
  },
  {
    code: "const init = { method: 'PUT' };\nfetch(url, init);",
    errors: [{ messageId: "fetchWithoutSignal", line: 2, column: 1 }],
  },
  {
    code: "fetch(new Request(url));",
    errors: [
      {
        messageId: "fetchWithoutSignal",
        line: 1,
        column: 1,
        suggestions: [
          {
            messageId: "addSignal",
            output: "fetch(new Request(url), { signal: AbortSignal.timeout(10_000) });",
          },
        ],
      },
    ],
  },
  {
    code: 'fetch(u, Object.assign({}, { method: "POST" }));',
    errors: [{ messageId: "fetchWithoutSignal", line: 1, column: 1 }],
  },
  {
    code: 'import fetch from "node-fetch";\nawait fetch(url);',
    errors: [
      {
        messageId: "fetchWithoutSignal",
        line: 2,
        column: 7,
        suggestions: [
          {
            messageId: "addSignal",
            output:
              'import fetch from "node-fetch";\nawait fetch(url, { signal: AbortSignal.timeout(10_000) });',
          },
        ],
      },
    ],
  },
  // optional chaining, parentheses, await, return, then, void
  {
    code: "async function load() { return (await (fetch)(url)).json(); }",
    errors: [
      {
        messageId: "fetchWithoutSignal",
        line: 1,
        column: 39,
        suggestions: [
          {
            messageId: "addSignal",
            output:
              "async function load() { return (await (fetch)(url, { signal: AbortSignal.timeout(10_000) })).json(); }",
          },
        ],
      },
    ],
  },
  {
    code: "void fetch(url).then((r) => r.json());",
    errors: [
      {
        messageId: "fetchWithoutSignal",
        line: 1,
        column: 6,
        suggestions: [
          {
            messageId: "addSignal",
            output:
              "void fetch(url, { signal: AbortSignal.timeout(10_000) }).then((r) => r.json());",
          },
        ],
      },
    ],
  },
  {
    code: "globalThis.fetch?.(url);",
    errors: [
      {
        messageId: "fetchWithoutSignal",
        line: 1,
        column: 1,
        suggestions: [
          {
            messageId: "addSignal",
            output: "globalThis.fetch?.(url, { signal: AbortSignal.timeout(10_000) });",
          },
        ],
      },
    ],
  },
  // axios: the config position
  {
    code: `${AXIOS}axios.get(url);`,
    errors: [
      {
        messageId: "missingTimeout",
        line: 2,
        column: 1,
        suggestions: [
          { messageId: "addTimeout", output: `${AXIOS}axios.get(url, { timeout: 10_000 });` },
        ],
      },
    ],
  },
  {
    code: `${AXIOS}axios.post(url, data);`,
    errors: [
      {
        messageId: "missingTimeout",
        line: 2,
        column: 1,
        suggestions: [
          {
            messageId: "addTimeout",
            output: `${AXIOS}axios.post(url, data, { timeout: 10_000 });`,
          },
        ],
      },
    ],
  },
  {
    code: `${AXIOS}axios.post(url, data, { headers });`,
    errors: [
      {
        messageId: "missingTimeout",
        line: 2,
        column: 1,
        suggestions: [
          {
            messageId: "addTimeout",
            output: `${AXIOS}axios.post(url, data, { headers, timeout: 10_000 });`,
          },
        ],
      },
    ],
  },
  {
    // the data argument of post is not its config
    code: `${AXIOS}axios.post(url, { timeout: 5000 });`,
    errors: [
      {
        messageId: "missingTimeout",
        line: 2,
        column: 1,
        suggestions: [
          {
            messageId: "addTimeout",
            output: `${AXIOS}axios.post(url, { timeout: 5000 }, { timeout: 10_000 });`,
          },
        ],
      },
    ],
  },
  {
    code: `${AXIOS}axios.head(url, { headers });`,
    errors: [
      {
        messageId: "missingTimeout",
        line: 2,
        column: 1,
        suggestions: [
          {
            messageId: "addTimeout",
            output: `${AXIOS}axios.head(url, { headers, timeout: 10_000 });`,
          },
        ],
      },
    ],
  },
  {
    code: `${AXIOS}axios(url);`,
    errors: [
      {
        messageId: "missingTimeout",
        line: 2,
        column: 1,
        suggestions: [
          { messageId: "addTimeout", output: `${AXIOS}axios(url, { timeout: 10_000 });` },
        ],
      },
    ],
  },
  {
    code: `${AXIOS}axios({ url });`,
    errors: [
      {
        messageId: "missingTimeout",
        line: 2,
        column: 1,
        suggestions: [
          { messageId: "addTimeout", output: `${AXIOS}axios({ url, timeout: 10_000 });` },
        ],
      },
    ],
  },
  {
    code: `${AXIOS}axios.request({ url });`,
    errors: [
      {
        messageId: "missingTimeout",
        line: 2,
        column: 1,
        suggestions: [
          { messageId: "addTimeout", output: `${AXIOS}axios.request({ url, timeout: 10_000 });` },
        ],
      },
    ],
  },
  // instances without a timeout
  {
    code: `${AXIOS}const api = axios.create({ baseURL });\napi.get("/x");`,
    errors: [
      {
        messageId: "missingTimeout",
        line: 3,
        column: 1,
        data: {
          client: "api.get",
          key: "timeout",
          why: "axios's default timeout is 0, which means none",
        },
        suggestions: [
          {
            messageId: "addTimeout",
            output: `${AXIOS}const api = axios.create({ baseURL });\napi.get("/x", { timeout: 10_000 });`,
          },
        ],
      },
    ],
  },
  {
    code: `${AXIOS}const api = axios.create({ baseURL });\napi?.get("/x");`,
    errors: [
      {
        messageId: "missingTimeout",
        line: 3,
        column: 1,
        suggestions: [
          {
            messageId: "addTimeout",
            output: `${AXIOS}const api = axios.create({ baseURL });\napi?.get("/x", { timeout: 10_000 });`,
          },
        ],
      },
    ],
  },
  {
    code: `${AXIOS}const api = axios.create({ baseURL });\n(api as AxiosInstance).get("/x");`,
    tsOnly: true,
    errors: [
      {
        messageId: "missingTimeout",
        line: 3,
        column: 1,
        suggestions: [
          {
            messageId: "addTimeout",
            output: `${AXIOS}const api = axios.create({ baseURL });\n(api as AxiosInstance).get("/x", { timeout: 10_000 });`,
          },
        ],
      },
    ],
  },
  {
    code: `${AXIOS}const api = axios.create({ baseURL });\napi!.get("/x");`,
    tsOnly: true,
    errors: [
      {
        messageId: "missingTimeout",
        line: 3,
        column: 1,
        suggestions: [
          {
            messageId: "addTimeout",
            output: `${AXIOS}const api = axios.create({ baseURL });\napi!.get("/x", { timeout: 10_000 });`,
          },
        ],
      },
    ],
  },
  {
    code: `${AXIOS}const api = axios.create({ baseURL });\nconst { get } = api;\nget("/x");`,
    errors: [
      {
        messageId: "missingTimeout",
        line: 4,
        column: 1,
        suggestions: [
          {
            messageId: "addTimeout",
            output: `${AXIOS}const api = axios.create({ baseURL });\nconst { get } = api;\nget("/x", { timeout: 10_000 });`,
          },
        ],
      },
    ],
  },
  {
    code: `${AXIOS}class Repo {\n  constructor() { this.http = axios.create({ baseURL }); }\n  load() { return this.http.get("/x"); }\n}`,
    errors: [
      {
        messageId: "missingTimeout",
        line: 4,
        column: 19,
        suggestions: [
          {
            messageId: "addTimeout",
            output: `${AXIOS}class Repo {\n  constructor() { this.http = axios.create({ baseURL }); }\n  load() { return this.http.get("/x", { timeout: 10_000 }); }\n}`,
          },
        ],
      },
    ],
  },
  // timeouts that mean none
  {
    code: `${AXIOS}axios.get(url, { timeout: 0 });`,
    errors: [
      {
        messageId: "disabledTimeout",
        line: 2,
        column: 1,
        suggestions: [
          { messageId: "addTimeout", output: `${AXIOS}axios.get(url, { timeout: 10_000 });` },
        ],
      },
    ],
  },
  {
    code: `${AXIOS}axios.get(url, { timeout: Infinity });`,
    errors: [
      {
        messageId: "disabledTimeout",
        line: 2,
        column: 1,
        suggestions: [
          { messageId: "addTimeout", output: `${AXIOS}axios.get(url, { timeout: 10_000 });` },
        ],
      },
    ],
  },
  {
    code: `${AXIOS}axios.get(url, { timeout: null });`,
    errors: [
      {
        messageId: "disabledTimeout",
        line: 2,
        column: 1,
        suggestions: [
          { messageId: "addTimeout", output: `${AXIOS}axios.get(url, { timeout: 10_000 });` },
        ],
      },
    ],
  },
  {
    code: `${AXIOS}axios.get(url, { timeout: undefined });`,
    errors: [
      {
        messageId: "disabledTimeout",
        line: 2,
        column: 1,
        suggestions: [
          { messageId: "addTimeout", output: `${AXIOS}axios.get(url, { timeout: 10_000 });` },
        ],
      },
    ],
  },
  {
    code: `${AXIOS}const NO_LIMIT = 0;\naxios.get(url, { timeout: NO_LIMIT });`,
    errors: [
      {
        messageId: "disabledTimeout",
        line: 3,
        column: 1,
        suggestions: [
          {
            messageId: "addTimeout",
            output: `${AXIOS}const NO_LIMIT = 0;\naxios.get(url, { timeout: 10_000 });`,
          },
        ],
      },
    ],
  },
  {
    code: `${AXIOS}const api = axios.create({ timeout: 0 });\napi.get("/x");`,
    errors: [{ messageId: "disabledTimeout", line: 3, column: 1 }],
  },
  {
    code: `${AXIOS}const api = axios.create({ timeout: 5000 });\napi.defaults.timeout = 0;\napi.get("/x");`,
    errors: [{ messageId: "disabledTimeout", line: 4, column: 1 }],
  },
  // module forms
  {
    code: 'const axios = require("axios");\naxios.get(url);',
    errors: [
      {
        messageId: "missingTimeout",
        line: 2,
        column: 1,
        suggestions: [
          {
            messageId: "addTimeout",
            output: 'const axios = require("axios");\naxios.get(url, { timeout: 10_000 });',
          },
        ],
      },
    ],
  },
  {
    code: 'const axios = require("axios").default;\naxios.get(url);',
    errors: [
      {
        messageId: "missingTimeout",
        line: 2,
        column: 1,
        suggestions: [
          {
            messageId: "addTimeout",
            output: 'const axios = require("axios").default;\naxios.get(url, { timeout: 10_000 });',
          },
        ],
      },
    ],
  },
  {
    code: 'import * as ax from "axios";\nax.default.get(url);\nax.get(url);',
    errors: [
      {
        messageId: "missingTimeout",
        line: 2,
        column: 1,
        suggestions: [
          {
            messageId: "addTimeout",
            output:
              'import * as ax from "axios";\nax.default.get(url, { timeout: 10_000 });\nax.get(url);',
          },
        ],
      },
      {
        messageId: "missingTimeout",
        line: 3,
        column: 1,
        suggestions: [
          {
            messageId: "addTimeout",
            output:
              'import * as ax from "axios";\nax.default.get(url);\nax.get(url, { timeout: 10_000 });',
          },
        ],
      },
    ],
  },
  // got without a timeout
  {
    code: `${GOT}got(url);`,
    errors: [
      {
        messageId: "missingTimeout",
        line: 2,
        column: 1,
        suggestions: [
          { messageId: "addTimeout", output: `${GOT}got(url, { timeout: { request: 10_000 } });` },
        ],
      },
    ],
  },
  {
    code: `${GOT}await got.post(url, { json });`,
    errors: [
      {
        messageId: "missingTimeout",
        line: 2,
        column: 7,
        suggestions: [
          {
            messageId: "addTimeout",
            output: `${GOT}await got.post(url, { json, timeout: { request: 10_000 } });`,
          },
        ],
      },
    ],
  },
  {
    code: `${GOT}const client = got.extend({ prefixUrl });\nclient.get("x");`,
    errors: [
      {
        messageId: "missingTimeout",
        line: 3,
        column: 1,
        suggestions: [
          {
            messageId: "addTimeout",
            output: `${GOT}const client = got.extend({ prefixUrl });\nclient.get("x", { timeout: { request: 10_000 } });`,
          },
        ],
      },
    ],
  },
  // http(s)
  {
    code: 'import http from "http";\nhttp.get(url);',
    errors: [{ messageId: "missingTimeout", line: 2, column: 1 }],
  },
  {
    code: 'import https from "https";\nhttps.request(opts).end();',
    errors: [{ messageId: "missingTimeout", line: 2, column: 1 }],
  },
  {
    code: 'const https = require("node:https");\nhttps.get(url, (res) => res.resume());',
    errors: [{ messageId: "missingTimeout", line: 2, column: 1 }],
  },
  {
    code: 'import { request } from "node:http";\nconst req = request(url, { timeout: 5000 });\nreq.on("timeout", () => log("slow"));\nreq.end();',
    errors: [{ messageId: "timeoutNotEnforced", line: 2, column: 13 }],
  },
  {
    code: 'import http from "http";\nhttp.request(url, { timeout: 5000 }).end();',
    errors: [{ messageId: "timeoutNotEnforced", line: 2, column: 1 }],
  },
  {
    code: 'import http from "http";\nconst req = http.get(url);\nreq.setTimeout(5000);',
    errors: [{ messageId: "timeoutNotEnforced", line: 2, column: 13 }],
  },
  // undici
  {
    code: 'import { request } from "undici";\nawait request(url);',
    errors: [
      {
        messageId: "missingTimeout",
        line: 2,
        column: 7,
        suggestions: [
          {
            messageId: "addTimeout",
            output:
              'import { request } from "undici";\nawait request(url, { headersTimeout: 10_000 });',
          },
        ],
      },
    ],
  },
  {
    code: 'import { request } from "undici";\nawait request(url, { headersTimeout: 0 });',
    errors: [
      {
        messageId: "disabledTimeout",
        line: 2,
        column: 7,
        suggestions: [
          {
            messageId: "addTimeout",
            output:
              'import { request } from "undici";\nawait request(url, { headersTimeout: 10_000 });',
          },
        ],
      },
    ],
  },
  {
    code: 'import { fetch } from "undici";\nawait fetch(url);',
    errors: [
      {
        messageId: "fetchWithoutSignal",
        line: 2,
        column: 7,
        suggestions: [
          {
            messageId: "addSignal",
            output:
              'import { fetch } from "undici";\nawait fetch(url, { signal: AbortSignal.timeout(10_000) });',
          },
        ],
      },
    ],
  },
  // ky's own default removed
  {
    code: 'import ky from "ky";\nawait ky.get(url, { timeout: false });',
    errors: [
      {
        messageId: "disabledTimeout",
        line: 2,
        column: 7,
        suggestions: [
          {
            messageId: "addTimeout",
            output: 'import ky from "ky";\nawait ky.get(url, { timeout: 10_000 });',
          },
        ],
      },
    ],
  },
  {
    code: 'import ky from "ky";\nconst api = ky.create({ prefixUrl, timeout: false });\napi.post("orders", { json });',
    errors: [{ messageId: "disabledTimeout", line: 3, column: 1 }],
  },
  // the last word removes the timeout
  {
    code: `${AXIOS}const cfg = { timeout: 5000 };\ncfg.timeout = 0;\naxios.get(url, cfg);`,
    errors: [{ messageId: "disabledTimeout", line: 4, column: 1 }],
  },
  {
    code: `${AXIOS}const base = { timeout: 5000 };\naxios.get(url, { ...base, timeout: undefined });`,
    errors: [
      {
        messageId: "disabledTimeout",
        line: 3,
        column: 1,
        suggestions: [
          {
            messageId: "addTimeout",
            output: `${AXIOS}const base = { timeout: 5000 };\naxios.get(url, { ...base, timeout: 10_000 });`,
          },
        ],
      },
    ],
  },
  {
    code: "const base = { signal: AbortSignal.timeout(5000) };\nfetch(url, { ...base, signal: undefined });",
    errors: [
      {
        messageId: "fetchWithoutSignal",
        line: 2,
        column: 1,
        suggestions: [
          {
            messageId: "addSignal",
            output:
              "const base = { signal: AbortSignal.timeout(5000) };\nfetch(url, { ...base, signal: AbortSignal.timeout(10_000) });",
          },
        ],
      },
    ],
  },
  {
    code: `${AXIOS}const cfg = { timeout: 5000 };\ndelete cfg.timeout;\naxios.get(url, cfg);`,
    errors: [{ messageId: "missingTimeout", line: 4, column: 1 }],
  },
  {
    code: `${AXIOS}axios.defaults.timeout = 5000;\naxios.defaults.timeout = 0;\naxios.get(url);`,
    errors: [{ messageId: "disabledTimeout", line: 4, column: 1 }],
  },
  // options
  {
    code: "function get(u, opts) { return fetch(u, opts); }",
    options: [{ reportUnresolved: true }],
    errors: [{ messageId: "unresolvedOptions", line: 1, column: 41 }],
  },
  {
    code: 'import ofetch from "ofetch";\nofetch(url);',
    options: [{ fetchFunctions: ["ofetch"] }],
    errors: [
      {
        messageId: "fetchWithoutSignal",
        line: 2,
        column: 1,
        data: {
          client: "ofetch",
          why: "on Node, fetch waits up to about 300 s for response headers (undici's headersTimeout) and has no limit on the whole exchange; browsers set none",
        },
        suggestions: [
          {
            messageId: "addSignal",
            output:
              'import ofetch from "ofetch";\nofetch(url, { signal: AbortSignal.timeout(10_000) });',
          },
        ],
      },
    ],
  },
  {
    code: "$fetch(url);",
    options: [{ fetchFunctions: ["$fetch"] }],
    errors: [
      {
        messageId: "fetchWithoutSignal",
        line: 1,
        column: 1,
        suggestions: [
          {
            messageId: "addSignal",
            output: "$fetch(url, { signal: AbortSignal.timeout(10_000) });",
          },
        ],
      },
    ],
  },
  {
    // a wrapper only covers what is passed to it
    code: "withTimeout(fetch(a), 5000);\nfetch(b);",
    options: [{ wrappers: ["withTimeout"] }],
    errors: [
      {
        messageId: "fetchWithoutSignal",
        line: 2,
        column: 1,
        suggestions: [
          {
            messageId: "addSignal",
            output:
              "withTimeout(fetch(a), 5000);\nfetch(b, { signal: AbortSignal.timeout(10_000) });",
          },
        ],
      },
    ],
  },
  {
    code: "withTimeout(fetch(url), 5000);",
    errors: [
      {
        messageId: "fetchWithoutSignal",
        line: 1,
        column: 13,
        suggestions: [
          {
            messageId: "addSignal",
            output: "withTimeout(fetch(url, { signal: AbortSignal.timeout(10_000) }), 5000);",
          },
        ],
      },
    ],
  },
];

runUnderBothParsers("require-timeout", rule, { valid, invalid });
