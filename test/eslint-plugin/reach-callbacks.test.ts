import retryRule, {
  type MessageIds as RetryIds,
  type Options as RetryOptions,
} from "../../eslint-plugin/rules/no-retry-non-idempotent.js";
import timeoutRule, {
  type MessageIds as TimeoutIds,
  type Options as TimeoutOptions,
} from "../../eslint-plugin/rules/require-timeout.js";
import { runUnderBothParsers, type Invalid, type Valid } from "./rule-tester.js";

// What a retry repeats and what a timeout rule sees, through callbacks and indirect calls:
// callbacks the retried code hands to a call that runs them, callbacks kept for later,
// axios-retry set up in a factory that returns the client, fetch invoked through
// `.call`/`.apply`, and fetch-retry wrapping a local alias of fetch.

const P = 'import pRetry from "p-retry";\n';
const AR = 'import retry from "async-retry";\n';
const AXR = 'import axios from "axios";\nimport axiosRetry from "axios-retry";\n';
const FR = 'import fetchRetry from "fetch-retry";\n';
const POST = '{ method: "POST", body }';

function retried(
  code: string,
  line: number,
  column: number,
  retrier: string,
  method = "POST",
): Invalid<RetryIds, RetryOptions> {
  return {
    code,
    errors: [{ messageId: "retriedWithoutKey", line, column, data: { method, retrier } }],
  };
}

function exportedClient(
  code: string,
  line: number,
  column: number,
): Invalid<RetryIds, RetryOptions> {
  return { code, errors: [{ messageId: "axiosRetryExportedClient", line, column }] };
}

// ---------------------------------------------------------------------------------------------
// 1. Callbacks the retried code hands to another call

const callbackValid: Valid<RetryOptions>[] = [
  // kept for later: listeners, subscriptions, timers that repeat, handler properties
  `${P}await pRetry(async () => {\n  emitter.on("data", (chunk) => fetch(url, { method: "POST", body: chunk }));\n  return fetch(url);\n});`,
  `${P}await pRetry(async () => {\n  const onOnline = () => fetch(url, ${POST});\n  window.addEventListener("online", onOnline);\n  return fetch(url);\n});`,
  `${AR}await retry(async () => {\n  setInterval(() => fetch("/heartbeat", ${POST}), 1000);\n  return fetch(url);\n});`,
  `${P}await pRetry(async () => {\n  socket.onmessage = (event) => fetch("/events", { method: "POST", body: event.data });\n  return open(socket);\n});`,
  `${P}await pRetry(() => {\n  updates.subscribe((value) => fetch("/sync", { method: "PATCH", body: value }));\n  return fetch(url);\n});`,
  `${P}await pRetry(async () => {\n  client.onError((error) => fetch("/errors", { method: "POST", body: error.message }));\n  return client.connect();\n});`,
  // registered and taken back, never run by the retried code
  `${P}await pRetry(async () => {\n  function report() { return fetch("/report", ${POST}); }\n  process.once("exit", report);\n  await work();\n  process.off("exit", report);\n});`,
  // handed to a registry other files run
  `${P}export const hooks = [];\nawait pRetry(async () => {\n  hooks.push(() => fetch("/hook", ${POST}));\n  return fetch(url);\n});`,
  `${P}const registry = createRegistry();\nexport { registry };\nawait pRetry(async () => {\n  registry.register("audit", () => fetch("/audit", ${POST}));\n  return fetch(url);\n});`,
  // a listener inside a function that calls itself again on failure
  'async function connect(socket, attempt = 0) {\n  try {\n    socket.on("message", (m) => fetch("/inbox", { method: "POST", body: m }));\n    await socket.open();\n  } catch (e) {\n    return connect(socket, attempt + 1);\n  }\n}',
  // handed to a call that runs it, with the key made once before the retry
  `${P}const key = crypto.randomUUID();\nconst work = () => fetch(url, { method: "POST", headers: { "Idempotency-Key": key } });\nawait pRetry(() => queue.add(work));`,
  // handed to a call that runs it, but nothing retries that call
  'const work = () => fetch(url, { method: "POST" });\nawait queue.add(work);\nawait limiter.schedule(() => fetch(url, { method: "POST" }));',
  // run by the retried code, but a GET
  `${P}async function load() { return fetch(url); }\nawait pRetry(() => mutex.runExclusive(load));`,
];

const callbackInvalid: Invalid<RetryIds, RetryOptions>[] = [
  // the retried function returns a queue call whose callback sends the POST
  retried(
    `${P}class Client {\n  constructor(http, queue) {\n    this.http = http;\n    this.queue = queue;\n  }\n  send(url, body) {\n    const task = () =>\n      this.queue.add(async () => {\n        const res = await this.http.post(url, body);\n        return res.data;\n      });\n    return pRetry(task, { retries: 5 });\n  }\n}`,
    10,
    27,
    "p-retry",
  ),
  // written in place: a limiter, a promise executor, a `.then` callback
  retried(
    `${AR}await retry(() => limiter.schedule(() => fetch("/charges", ${POST})), { retries: 3 });`,
    2,
    42,
    "async-retry",
  ),
  retried(
    `${P}await pRetry(\n  () =>\n    new Promise((resolve, reject) => {\n      fetch("/orders", ${POST}).then(resolve, reject);\n    }),\n);`,
    5,
    7,
    "p-retry",
  ),
  retried(
    `${P}await pRetry(() => fetch("/cart").then((res) => fetch("/orders", { method: "POST", body: res.body })));`,
    2,
    49,
    "p-retry",
  ),
  // by name: a const handed to a queue, a declaration to a mutex, an executor, a `.then`
  retried(
    `${P}const work = async () => {\n  await fetch("/orders", ${POST});\n};\nawait pRetry(() => queue.add(work), { retries: 3 });`,
    3,
    9,
    "p-retry through work()",
  ),
  retried(
    `${AR}async function locked() {\n  return fetch("/stock", { method: "PATCH", body });\n}\nawait retry(async () => mutex.runExclusive(locked));`,
    3,
    10,
    "async-retry through locked()",
    "PATCH",
  ),
  retried(
    `${P}function send(resolve, reject) {\n  fetch("/orders", ${POST}).then(resolve, reject);\n}\nawait pRetry(() => new Promise(send));`,
    3,
    3,
    "p-retry through send()",
  ),
  retried(
    `${P}function place(cart) {\n  return fetch("/orders", { method: "POST", body: cart });\n}\nawait pRetry(() => loadCart().then(place));`,
    3,
    10,
    "p-retry through place()",
  ),
  // run for each item, and in a retry loop
  retried(
    `${P}const send = (item) => fetch("/items", { method: "POST", body: item });\nawait pRetry(() => Promise.all(items.map(send)));`,
    2,
    24,
    "p-retry through send()",
  ),
  retried(
    'for (let attempt = 0; attempt < 3; attempt++) {\n  try {\n    await queue.add(() => fetch("/orders", { method: "POST", body }));\n    break;\n  } catch (e) {\n    await sleep(100);\n  }\n}',
    3,
    27,
    "a retry loop",
  ),
  // a handler both registered and called by the retried code runs in the attempt
  retried(
    `${P}await pRetry(async () => {\n  const flush = () => fetch("/flush", ${POST});\n  emitter.on("drain", flush);\n  await flush();\n});`,
    3,
    23,
    "p-retry through flush()",
  ),
  // a key made inside the callback is new on every attempt
  {
    code: `${P}await pRetry(() =>\n  queue.add(() =>\n    fetch("/orders", { method: "POST", headers: { "Idempotency-Key": crypto.randomUUID() } }),\n  ),\n);`,
    errors: [{ messageId: "keyPerAttempt", line: 4, column: 70 }],
  },
];

// ---------------------------------------------------------------------------------------------
// 2. axios-retry set up in a factory that returns the client

const FACTORY_CONDITION =
  "const isRetryable = (error) =>\n  error.response?.status === 429 || axiosRetry.isNetworkError(error) || axiosRetry.isRetryableError(error);\n";

const factoryValid: Valid<RetryOptions>[] = [
  // conditions restricted to idempotent requests
  `${AXR}export function createClient(retry = {}) {\n  const client = axios.create();\n  axiosRetry(client, { retries: 3, retryCondition: axiosRetry.isIdempotentRequestError, ...retry });\n  return client;\n}`,
  `${AXR}export function createClient() {\n  const client = axios.create();\n  axiosRetry(client, { retryCondition: axiosRetry.isNetworkOrIdempotentRequestError });\n  return client;\n}`,
  `${AXR}export const createClient = () => {\n  const client = axios.create();\n  axiosRetry(client, { retryCondition: (error) => error.config?.method === "get" && axiosRetry.isNetworkError(error) });\n  return client;\n};`,
  // the default condition: reported for writes in this file only, as for an exported client
  `${AXR}export function createClient() {\n  const client = axios.create();\n  axiosRetry(client, { retries: 3 });\n  return client;\n}`,
  // no second attempt unless the caller asks for one
  `${AXR}export function createClient(retry = {}) {\n  const client = axios.create();\n  axiosRetry(client, { retries: 0, retryCondition: axiosRetry.isNetworkError, ...retry });\n  return client;\n}`,
  // the spread's default restricts the condition, or a later spread in the file does
  `${AXR}export function createClient(retry = { retryCondition: axiosRetry.isIdempotentRequestError }) {\n  const client = axios.create();\n  axiosRetry(client, { retryCondition: axiosRetry.isNetworkError, ...retry });\n  return client;\n}`,
  `${AXR}const SAFE = { retryCondition: (error) => error.config.method === "get" };\nexport function createClient() {\n  const client = axios.create();\n  axiosRetry(client, { retryCondition: axiosRetry.isRetryableError, ...SAFE });\n  return client;\n}`,
  // the instance stays inside the function, or the condition is out of sight
  `${AXR}export async function load() {\n  const client = axios.create();\n  axiosRetry(client, { retryCondition: axiosRetry.isNetworkError });\n  return (await client.get("/items")).data;\n}`,
  `${AXR}import { shouldRetry } from "./retry-policy";\nexport function createClient() {\n  const client = axios.create();\n  axiosRetry(client, { retryCondition: shouldRetry });\n  return client;\n}`,
];

const factoryInvalid: Invalid<RetryIds, RetryOptions>[] = [
  // the factory merges the caller's options last; callers that pass none get its condition
  exportedClient(
    `${AXR}${FACTORY_CONDITION}export function createClient(defaults = {}, retry = {}) {\n  const client = axios.create({ ...defaults, maxRedirects: 0 });\n  axiosRetry(client, { retries: 3, retryCondition: isRetryable, ...retry });\n  return client;\n}\nexport const request = createClient();`,
    7,
    3,
  ),
  // an arrow factory, a condition that never looks at the method, no export of the factory
  exportedClient(
    `${AXR}const make = (baseURL) => {\n  const api = axios.create({ baseURL });\n  axiosRetry(api, { retryCondition: (error) => !error.response || error.response.status >= 500 });\n  return api;\n};\nmake("/x").get("/y");`,
    5,
    3,
  ),
  // the condition comes from a parameter's default
  exportedClient(
    `${AXR}export function createClient(retryCondition = axiosRetry.isRetryableError) {\n  const client = axios.create();\n  axiosRetry(client, { retryCondition });\n  return client;\n}`,
    5,
    3,
  ),
  // a module-level instance handed out by a getter
  exportedClient(
    `${AXR}const client = axios.create({ baseURL });\naxiosRetry(client, { retries: 2, retryCondition: () => true });\nexport function getClient() {\n  return client;\n}`,
    4,
    1,
  ),
  // CommonJS, with the factory's options spread in from a const
  exportedClient(
    'const axios = require("axios");\nconst axiosRetry = require("axios-retry");\nconst RETRY = { retries: 3, retryDelay: axiosRetry.exponentialDelay };\nfunction createClient(options) {\n  const client = axios.create(options);\n  axiosRetry(client, { ...RETRY, retryCondition: axiosRetry.isNetworkError });\n  return client;\n}\nmodule.exports = { createClient };',
    6,
    3,
  ),
];

// ---------------------------------------------------------------------------------------------
// 4. fetch-retry over a local that holds fetch

const fetchRetryValid: Valid<RetryOptions>[] = [
  `${FR}const fetch = globalThis.fetch;\nconst f = fetchRetry(fetch, { retries: 0 });\nawait f(url, ${POST});`,
  `${FR}import nodeFetch from "node-fetch";\nconst f = fetchRetry(nodeFetch);\nawait f(url, { retries: 3 });`,
  `${FR}import { fetch } from "undici";\nconst f = fetchRetry(fetch);\nawait f(url, { method: "POST", body, retryOn: (attempt, error, res) => init.method === "GET" && attempt < 3 });`,
  `${FR}const fetch = globalThis.fetch.bind(globalThis);\nconst f = fetchRetry(fetch);\nawait f(url, { method: "POST", body, headers: { "Idempotency-Key": key } });`,
  // fetch invoked through .apply with a key
  `${P}await pRetry(() => fetch.apply(null, [url, { method: "POST", headers: { "Idempotency-Key": key } }]));`,
];

const fetchRetryInvalid: Invalid<RetryIds, RetryOptions>[] = [
  retried(
    `${FR}const fetch = globalThis.fetch;\nconst f = fetchRetry(fetch);\nawait f("/orders", ${POST});`,
    4,
    7,
    "fetch-retry",
  ),
  retried(
    `${FR}import nodeFetch from "node-fetch";\nconst f = fetchRetry(nodeFetch, { retries: 3 });\nawait f("/orders", ${POST});`,
    4,
    7,
    "fetch-retry",
  ),
  retried(
    `${FR}import { fetch as undiciFetch } from "undici";\nconst fetch = fetchRetry(undiciFetch);\nexport const pay = (body) => fetch("/pay", { method: "PATCH", body });`,
    4,
    30,
    "fetch-retry",
    "PATCH",
  ),
  retried(
    'const fetchRetry = require("fetch-retry");\nconst fetch = require("node-fetch");\nclass Api {\n  constructor() {\n    this.fetch = fetchRetry(fetch);\n  }\n  send(body) {\n    return this.fetch("/orders", { method: "POST", body });\n  }\n}',
    8,
    12,
    "fetch-retry",
  ),
  // fetch invoked through .call inside a retried function
  retried(`${P}await pRetry(() => fetch.call(globalThis, "/orders", ${POST}));`, 2, 20, "p-retry"),
];

runUnderBothParsers("no-retry-non-idempotent (callbacks, factories, fetch aliases)", retryRule, {
  valid: [...callbackValid, ...factoryValid, ...fetchRetryValid],
  invalid: [...callbackInvalid, ...factoryInvalid, ...fetchRetryInvalid],
});

// ---------------------------------------------------------------------------------------------
// 3. fetch invoked through Function.prototype.call and .apply

const SIGNAL = "signal: AbortSignal.timeout(10_000)";

function noSignal(
  code: string,
  line: number,
  column: number,
  output?: string,
): Invalid<TimeoutIds, TimeoutOptions> {
  return {
    code,
    errors: [
      {
        messageId: "fetchWithoutSignal",
        line,
        column,
        ...(output === undefined ? {} : { suggestions: [{ messageId: "addSignal", output }] }),
      },
    ],
  };
}

const throughValid: Valid<TimeoutOptions>[] = [
  "fetch.call(null, url, { signal: AbortSignal.timeout(5000) });",
  'globalThis.fetch.call(globalThis, url, { method: "POST", signal: AbortSignal.timeout(5000) });',
  "window.fetch.apply(window, [url, { signal: AbortSignal.timeout(5000) }]);",
  // options the rule cannot see: a parameter's signal, a list built elsewhere, spread arguments
  "function send(url, signal) {\n  return fetch.call(null, url, { signal });\n}",
  "window.fetch = function () {\n  return originalFetch.apply(this, arguments);\n};\nconst originalFetch = window.fetch;\nfetch.apply(window, args);",
  "fetch.call(null, ...args);",
  // the init carried by a Request
  "fetch.call(null, new Request(url, { signal: AbortSignal.timeout(5000) }));",
  // a project wrapper that bounds the call
  { code: "withTimeout(fetch.call(null, url), 5000);", options: [{ wrappers: ["withTimeout"] }] },
  // not fetch
  "loader.call(null, url);\nlist.push.apply(list, [url]);\nparse.call(this, fetchText);",
];

const throughInvalid: Invalid<TimeoutIds, TimeoutOptions>[] = [
  noSignal(
    'fetch.call(null, url, { method: "POST" });',
    1,
    1,
    `fetch.call(null, url, { method: "POST", ${SIGNAL} });`,
  ),
  noSignal("fetch.call(globalThis, url);", 1, 1, `fetch.call(globalThis, url, { ${SIGNAL} });`),
  noSignal(
    "globalThis.fetch.call(globalThis, url, { headers });",
    1,
    1,
    `globalThis.fetch.call(globalThis, url, { headers, ${SIGNAL} });`,
  ),
  // .apply: the options sit in the list, so no suggestion
  noSignal('fetch.apply(null, [url, { method: "POST" }]);', 1, 1),
  noSignal("window.fetch.apply(window, [url]);", 1, 1),
  // through an import, a local fallback and a class field
  noSignal(
    'import nodeFetch from "node-fetch";\nnodeFetch.call(null, url, {});',
    2,
    1,
    `import nodeFetch from "node-fetch";\nnodeFetch.call(null, url, { ${SIGNAL} });`,
  ),
  noSignal(
    "const f = options.fetch ?? fetch;\nf.call(undefined, url);",
    2,
    1,
    `const f = options.fetch ?? fetch;\nf.call(undefined, url, { ${SIGNAL} });`,
  ),
  noSignal(
    "class Api {\n  constructor(options) {\n    this.fetchImpl = options.fetch || fetch;\n  }\n  load() {\n    return this.fetchImpl.call(this, url);\n  }\n}",
    6,
    12,
    "class Api {\n  constructor(options) {\n    this.fetchImpl = options.fetch || fetch;\n  }\n  load() {\n    return this.fetchImpl.call(this, url, { signal: AbortSignal.timeout(10_000) });\n  }\n}",
  ),
  // a signal that never fires on its own
  {
    code: "const controller = new AbortController();\nfetch.call(null, url, { signal: controller.signal });",
    errors: [{ messageId: "untimedSignal", line: 2, column: 1 }],
  },
  // with reportUnresolved, a list the rule cannot read is reported as unresolved
  {
    code: "fetch.apply(null, args);",
    options: [{ reportUnresolved: true }],
    errors: [{ messageId: "unresolvedOptions", line: 1, column: 1 }],
  },
];

runUnderBothParsers("require-timeout (fetch through call and apply)", timeoutRule, {
  valid: throughValid,
  invalid: throughInvalid,
});
