import rule, {
  type MessageIds,
  type Options,
} from "../../eslint-plugin/rules/no-retry-non-idempotent.js";
import { runUnderBothParsers, type Invalid, type Valid } from "./rule-tester.js";

// Retries written without a loop or a known wrapper call: self-calls, fetch-retry, axios
// interceptors that re-send, vendored and callback-style libraries, and project retry helpers.

const AXIOS = 'import axios from "axios";\n';
const FR = 'import fetchRetry from "fetch-retry";\nconst retryingFetch = fetchRetry(fetch);\n';

const valid: Valid<Options>[] = [
  // fetch-retry given only reads by the calls of its function, or a key with the write
  `${FR}function send(url, method) {\n  return retryingFetch(url, { method, retryOn: [503] });\n}\nsend("/a", "GET");\nsend("/b", "HEAD");`,
  `${FR}function send(url, method, key) {\n  return retryingFetch(url, { method, headers: { "Idempotency-Key": key }, retryOn: [503] });\n}\nsend("/orders", "POST", crypto.randomUUID());`,
  // a method that runs its callback once is no retry; a retried write that carries a key
  'class Client {\n  timed(op) { return op(); }\n  send(url) { return this.timed(() => fetch(url, { method: "POST" })); }\n}',
  'class Client {\n  async send(url, key) {\n    return this.retryableRequest(() => fetch(url, { method: "POST", headers: { "Idempotency-Key": key } }));\n  }\n  async retryableRequest(op) {\n    for (let i = 0; i < 3; i++) { try { return await op(); } catch {} }\n  }\n}',
  // a condition method that looks at the method
  `${AXIOS}import axiosRetry from "axios-retry";\nclass Dispatcher {\n  constructor(options) {\n    this.client = options.client || axios.create({ timeout: 1000 });\n    axiosRetry(this.client, { retryCondition: this.retryable });\n  }\n  retryable(error) {\n    return error.config.method === "get" && !error.response;\n  }\n  flush(batch) { return this.client.post("/batch", batch); }\n}`,
  // self-calls that are not retries: walking pages, a GET retried by calling itself
  'async function sendAll(items, i = 0) {\n  if (i >= items.length) return;\n  await fetch(url, { method: "POST", body: items[i] });\n  return sendAll(items, i + 1);\n}',
  "async function load(url, retries = 3) {\n  try { return await fetch(url); }\n  catch (e) { if (retries > 0) return load(url, retries - 1); throw e; }\n}",
  // a key made once by the caller and passed to every attempt
  'async function pay(order, key, retries = 3) {\n  try { return await fetch("/pay", { method: "POST", headers: { "Idempotency-Key": key } }); }\n  catch (e) { return pay(order, key, retries - 1); }\n}',
  // a self-call whose condition only admits "never sent"
  'async function send(body, n = 0) {\n  try { return await fetch(url, { method: "POST", body }); }\n  catch (e) { if (e.code === "ECONNREFUSED") return send(body, n + 1); throw e; }\n}',
  // fetch-retry: GET, retries off, a key, a condition on the method
  `${FR}await retryingFetch(url, { retries: 3 });`,
  `${FR}await retryingFetch(url, { method: "POST", body, retries: 0 });`,
  `${FR}await retryingFetch(url, { method: "POST", headers: { "Idempotency-Key": key } });`,
  'import fetchRetry from "fetch-retry";\nconst f = fetchRetry(fetch, { retries: 0 });\nawait f(url, { method: "POST", body });',
  `${FR}await retryingFetch(url, { method: "POST", retryOn: (attempt, error, res) => init.method === "GET" && attempt < 3 });`,
  // interceptors: re-sending only idempotent methods, no writes and not exported, or a key set
  `${AXIOS}const api = axios.create();\napi.interceptors.response.use((r) => r, (error) => {\n  if (error.config.method !== "get") return Promise.reject(error);\n  return api.request(error.config);\n});\napi.post("/orders", order);`,
  `${AXIOS}const api = axios.create();\napi.interceptors.response.use((r) => r, (error) => api.request(error.config));\napi.get("/orders");`,
  `${AXIOS}const api = axios.create();\napi.interceptors.request.use((c) => { c.headers["Idempotency-Key"] ??= crypto.randomUUID(); return c; });\napi.interceptors.response.use((r) => r, (error) => api(error.config));\napi.post("/orders", order);`,
  `${AXIOS}const api = axios.create();\napi.interceptors.response.use((r) => r, (error) => { log(error.config); return Promise.reject(error); });\napi.post("/orders", order);`,
  // vendored and callback-style retries of a GET, or with retries off
  'import retry from "next/dist/compiled/async-retry";\nawait retry(() => fetch(url), { retries: 2 });',
  'import retry from "retry";\nconst op = retry.operation({ retries: 0 });\nop.attempt(() => fetch(url, { method: "POST" }));',
  'import retry from "@zkochan/retry";\nconst op = retry.operation({ retries: 3 });\nop.attempt(() => fetch(url, { method: opts.method }));',
  // project helpers: a local function that runs its callback once, a GET, a retry-named callback registrar
  "function withRetry(fn) { return fn(); }\nwithRetry(() => client.postJson(url, body));",
  'import { retryTypedResponse } from "./requestUtils";\nawait retryTypedResponse("get", async () => httpClient.getJson(url));',
  'import { onRetry } from "./events";\nonRetry(() => client.postJson(url, body));',
  'import { retryTypedResponse } from "./requestUtils";\nawait retryTypedResponse("reserve", async () => httpClient.postJson(url, body, { "Idempotency-Key": key }));',
];

const invalid: Invalid<MessageIds, Options>[] = [
  // fetch-retry sending the verb its function is given: reported at the call that passes a write
  {
    code: `${FR}class Client {\n  doReq(url, method, body) {\n    return retryingFetch(url, { method, body, retryOn: [503] });\n  }\n  post(u, b) { return this.doReq(u, "POST", b); }\n  get(u) { return this.doReq(u, "GET"); }\n}`,
    errors: [{ messageId: "retriedWithoutKey", line: 7, column: 23 }],
  },
  {
    code: `${FR}function send(url, method, body) {\n  return retryingFetch(url, { method, body, retries: 2 });\n}\nexport const create = (order) => send("/orders", "PATCH", order);`,
    errors: [{ messageId: "retriedWithoutKey", line: 6, column: 34 }],
  },
  {
    code: 'import fetchRetry from "fetch-retry";\nconst request = (url, verb) => fetchRetry(fetch)(url, { method: verb, retryOn: [500] });\nrequest("/a", "GET");\nrequest("/b", "post");',
    errors: [{ messageId: "retriedWithoutKey", line: 4, column: 1 }],
  },
  // a retry helper that is a method of the class: its body runs the callback in a loop or catch
  {
    code: 'class Client {\n  async send(url, body) {\n    return this.retryableRequest(async () => fetch(url, { method: "POST", body }));\n  }\n  async retryableRequest(operation) {\n    let attempt = 0;\n    while (attempt < 3) {\n      try { return await operation(); } catch (e) { attempt++; }\n    }\n  }\n}',
    errors: [{ messageId: "retriedWithoutKey", line: 3, column: 46 }],
  },
  {
    code: 'class Client {\n  #attempt(op, left = 2) {\n    return op().catch((e) => (left > 0 ? this.#attempt(op, left - 1) : Promise.reject(e)));\n  }\n  create(order) {\n    return this.#attempt(() => fetch("/orders", { method: "POST", body: order }));\n  }\n}',
    errors: [{ messageId: "retriedWithoutKey", line: 6, column: 32 }],
  },
  {
    code: 'class Client {\n  run = async (op) => {\n    for (let i = 0; i < 3; i++) {\n      try { return await op(); } catch {}\n    }\n  };\n  charge(c) {\n    return this.run(() => fetch("/charges", { method: "PATCH", body: c }));\n  }\n}',
    errors: [{ messageId: "retriedWithoutKey", line: 8, column: 27 }],
  },
  // axios-retry on a client made here unless the caller supplies one, with a method as condition
  {
    code: `${AXIOS}import axiosRetry from "axios-retry";\nclass Dispatcher {\n  constructor(options) {\n    let client = options.client;\n    if (!client) client = axios.create({ timeout: 1000 });\n    this.client = client;\n    axiosRetry(this.client, { retries: 3, retryCondition: this.retryable });\n  }\n  retryable(error) {\n    return !error.response || error.response.status >= 500;\n  }\n  flush(batch) {\n    return this.client.post("/batch", batch);\n  }\n}`,
    errors: [{ messageId: "axiosRetryEveryMethod", line: 14, column: 12 }],
  },
  {
    code: `${AXIOS}import axiosRetry from "axios-retry";\nexport function make(opts) {\n  const api = opts.client || axios.create({ timeout: 1000 });\n  axiosRetry(api, { retryCondition: () => true });\n  return { send: (order) => api.post("/orders", order) };\n}`,
    errors: [{ messageId: "axiosRetryEveryMethod", line: 6, column: 29 }],
  },
  {
    code: `${AXIOS}import axiosRetry from "axios-retry";\nclass Queue {\n  constructor(opts) {\n    this.http = opts.http ?? axios.create({ timeout: 1000 });\n    axiosRetry(this.http, { retryCondition: this.shouldRetry.bind(this) });\n  }\n  shouldRetry(err) { return err.code === "ECONNRESET"; }\n  push(job) { return this.http.patch("/jobs", job); }\n}`,
    errors: [{ messageId: "axiosRetryEveryMethod", line: 9, column: 22 }],
  },
  // self-calls in a catch, after a failed status, and deferred through setTimeout
  {
    code: 'async function createOrder(order, retries = 3) {\n  try {\n    return await fetch("/orders", { method: "POST", body: JSON.stringify(order) });\n  } catch (e) {\n    if (retries > 0) return createOrder(order, retries - 1);\n    throw e;\n  }\n}',
    errors: [
      {
        messageId: "retriedWithoutKey",
        line: 3,
        column: 18,
        data: { method: "POST", retrier: "createOrder() calling itself again" },
      },
    ],
  },
  {
    code: `${AXIOS}const send = async (body, attempt = 0) => {\n  const res = await axios.post("/charges", body, { validateStatus: () => true });\n  if (res.status >= 500 && attempt < 3) return send(body, attempt + 1);\n  return res;\n};`,
    errors: [{ messageId: "retriedWithoutKey", line: 3, column: 21 }],
  },
  {
    code: 'function post(body, n) {\n  fetch(url, { method: "PATCH", body }).catch(() => setTimeout(() => post(body, n + 1), 1000 * n));\n}',
    errors: [
      {
        messageId: "retriedWithoutKey",
        line: 2,
        column: 3,
        data: { method: "PATCH", retrier: "post() calling itself again" },
      },
    ],
  },
  {
    code: 'class Client {\n  async send(body, retry = 0) {\n    try { return await this.http.post("/orders", body); }\n    catch (e) { await sleep(100); return this.send(body, retry + 1); }\n  }\n}',
    errors: [
      {
        messageId: "retriedWithoutKey",
        line: 3,
        column: 24,
        data: { method: "POST", retrier: "send() calling itself again" },
      },
    ],
  },
  {
    code: 'function post(body, n) {\n  return fetch(url, { method: "POST", body }).catch(() => new Promise((r) => setTimeout(post, 100, body, n + 1)));\n}',
    errors: [{ messageId: "retriedWithoutKey", line: 2, column: 10 }],
  },
  {
    // a key made inside the function that calls itself is new on every attempt
    code: 'async function pay(order, retries = 3) {\n  try { return await fetch("/pay", { method: "POST", headers: { "Idempotency-Key": crypto.randomUUID() } }); }\n  catch (e) { return pay(order, retries - 1); }\n}',
    errors: [
      {
        messageId: "keyPerAttempt",
        line: 2,
        column: 84,
        data: { retrier: "pay() calling itself again" },
      },
    ],
  },
  // fetch-retry
  {
    code: `${FR}await retryingFetch(url, { method: "POST", body, retries: 3, retryDelay: 500 });`,
    errors: [
      {
        messageId: "retriedWithoutKey",
        line: 3,
        column: 7,
        data: { method: "POST", retrier: "fetch-retry" },
      },
    ],
  },
  {
    code: `${FR}await retryingFetch(url, { method: "post", body, retryOn: [503, 504] });`,
    errors: [{ messageId: "retriedWithoutKey", line: 3, column: 7 }],
  },
  {
    code: 'const fetchRetry = require("fetch-retry");\nconst f = fetchRetry(globalThis.fetch, { retries: 5 });\nexport const send = (body) => f("/events", { method: "PATCH", body, headers: { "content-type": "application/json" } });',
    errors: [
      {
        messageId: "retriedWithoutKey",
        line: 3,
        column: 31,
        data: { method: "PATCH", retrier: "fetch-retry" },
      },
    ],
  },
  {
    code: `${FR}await retryingFetch(url, { method: "POST", headers: { "Idempotency-Key": key }, retries: 3 }).then(() => retryingFetch(u2, { method: "POST" }));`,
    errors: [{ messageId: "retriedWithoutKey", line: 3, column: 106 }],
  },
  // axios interceptors that re-send the failed config
  {
    code: `${AXIOS}const api = axios.create({ timeout: 1000 });\napi.interceptors.response.use((r) => r, async (error) => {\n  await sleep(500);\n  return api.request(error.config);\n});\nawait api.post("/orders", order);`,
    errors: [
      {
        messageId: "interceptorResendsWrites",
        line: 5,
        column: 10,
        data: { client: "api", method: "POST" },
      },
    ],
  },
  {
    code: `${AXIOS}axios.interceptors.response.use(undefined, (err) => {\n  const config = err.config;\n  return new Promise((resolve) => setTimeout(() => resolve(axios(config)), 1000));\n});\naxios.patch("/orders/1", d);`,
    errors: [
      {
        messageId: "interceptorResendsWrites",
        line: 4,
        column: 60,
        data: { client: "axios", method: "PATCH" },
      },
    ],
  },
  {
    // the response-handler variant that re-sends on 429, on an exported instance
    code: `${AXIOS}export const client = axios.create();\nclient.interceptors.response.use((res) => (res.status === 429 ? client(res.config) : res));`,
    errors: [
      {
        messageId: "interceptorResendsWrites",
        line: 3,
        column: 65,
        data: { client: "client", method: "POST" },
      },
    ],
  },
  {
    // a handler made by a local factory that receives the instance
    code: `${AXIOS}function backoff(instance) {\n  return (error) => new Promise((resolve) => setTimeout(() => resolve(instance(error.config)), 100));\n}\nexport default class RequestClient {\n  constructor() {\n    this.axios = axios.create();\n    this.axios.interceptors.response.use(undefined, backoff(this.axios));\n  }\n}`,
    errors: [{ messageId: "interceptorResendsWrites", line: 3, column: 71 }],
  },
  {
    // a TypeScript `export =` class whose constructor installs the interceptor
    code: `${AXIOS}class RequestClient {\n  constructor() {\n    this.axios = axios.create();\n    this.axios.interceptors.response.use((res) => (res.status === 429 ? this.axios(res.config) : res));\n  }\n}\nexport = RequestClient;`,
    tsOnly: true,
    errors: [
      {
        messageId: "interceptorResendsWrites",
        line: 5,
        column: 73,
        data: { client: "this.axios", method: "POST" },
      },
    ],
  },
  // vendored async-retry, p-retry under another path, callback-style retry
  {
    code: 'import retry from "next/dist/compiled/async-retry";\nawait retry(() => fetch(url, { method: "POST", body }), { retries: 1 });',
    errors: [
      {
        messageId: "retriedWithoutKey",
        line: 2,
        column: 19,
        data: { method: "POST", retrier: "async-retry" },
      },
    ],
  },
  {
    code: 'import retry from "async-retry";\nawait retry(async (bail) => { const r = await getFetch()(url, { method: "POST", body }); if (r.status === 400) bail(new Error("bad")); return r; });',
    errors: [{ messageId: "retriedWithoutKey", line: 2, column: 47 }],
  },
  {
    code: 'import pRetry from "./vendor/p-retry";\nawait pRetry(() => fetch(url, { method: "PATCH" }));',
    errors: [
      {
        messageId: "retriedWithoutKey",
        line: 2,
        column: 20,
        data: { method: "PATCH", retrier: "p-retry" },
      },
    ],
  },
  {
    code: 'import retry from "retry";\nconst operation = retry.operation({ retries: 5 });\noperation.attempt(async (n) => {\n  try { await fetch(url, { method: "POST", body }); }\n  catch (e) { operation.retry(e); }\n});',
    errors: [
      {
        messageId: "retriedWithoutKey",
        line: 4,
        column: 15,
        data: { method: "POST", retrier: "retry" },
      },
    ],
  },
  {
    code: 'import * as retry from "@zkochan/retry";\nconst op = retry.operation();\nop.attempt(() => client.post("/orders", order).catch((e) => op.retry(e)));',
    errors: [
      {
        messageId: "retriedWithoutKey",
        line: 3,
        column: 18,
        data: { method: "POST", retrier: "@zkochan/retry" },
      },
    ],
  },
  {
    code: 'import retry from "retry";\nconst op = retry.operation({ retries: 3 });\nop.attempt(() => fetch(url, { method: "POST", headers: { "Idempotency-Key": crypto.randomUUID() } }));',
    errors: [{ messageId: "keyPerAttempt", line: 3, column: 77 }],
  },
  // project retry helpers: imported by name, or declared here and read
  {
    code: 'import { retryTypedResponse } from "./requestUtils";\nawait retryTypedResponse("reserveCache", async () => httpClient.postJson(url, body));',
    errors: [
      {
        messageId: "retriedWithoutKey",
        line: 2,
        column: 54,
        data: { method: "POST", retrier: "retryTypedResponse()" },
      },
    ],
  },
  {
    code: 'import { withRetry } from "../lib/retry";\nawait withRetry(() => http.sendStream("PATCH", url, stream, { "Content-Range": range }));',
    errors: [
      {
        messageId: "retriedWithoutKey",
        line: 2,
        column: 23,
        data: { method: "PATCH", retrier: "withRetry()" },
      },
    ],
  },
  {
    code: 'async function attempt(fn, times = 3) {\n  for (let i = 0; i < times; i++) {\n    try { return await fn(); } catch (e) { await sleep(100); }\n  }\n}\nawait attempt(() => api.post("/orders", order));',
    errors: [
      {
        messageId: "retriedWithoutKey",
        line: 6,
        column: 21,
        data: { method: "POST", retrier: "attempt()" },
      },
    ],
  },
  {
    code: 'import { retry } from "./requestUtils";\nfunction retryResponse(name, method) { return retry(name, method, (r) => r.statusCode); }\nawait retryResponse("commit", () => client.request("POST", url, body, {}));',
    errors: [
      {
        messageId: "retriedWithoutKey",
        line: 3,
        column: 37,
        data: { method: "POST", retrier: "retryResponse()" },
      },
    ],
  },
  {
    code: 'import utils from "./utils";\nawait utils.withRetries(() => client.postJson(url, body, { "Idempotency-Key": `${Date.now()}` }));',
    errors: [{ messageId: "keyPerAttempt", line: 2, column: 79 }],
  },
];

runUnderBothParsers("no-retry-non-idempotent: retries without a loop", rule, { valid, invalid });
