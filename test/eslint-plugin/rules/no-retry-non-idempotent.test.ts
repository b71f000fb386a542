import rule, {
  type MessageIds,
  type Options,
} from "../../../eslint-plugin/rules/no-retry-non-idempotent.js";
import { runUnderBothParsers, type Invalid, type Valid } from "../rule-tester.js";

const P = 'import pRetry from "p-retry";\n';
const AR = 'import retry from "async-retry";\n';
const AXIOS = 'import axios from "axios";\n';
const COCKATIEL = 'import { retry, handleAll, ExponentialBackoff } from "cockatiel";\n';
const AXR = 'import axios from "axios";\nimport axiosRetry from "axios-retry";\n';

const valid: Valid<Options>[] = [
  // idempotent methods may be retried
  `${P}await pRetry(() => fetch(url));`,
  `${P}await pRetry(() => fetch(url, { method: "GET" }));`,
  `${P}await pRetry(() => fetch(url, { method: "PUT", body }));`,
  `${P}await pRetry(() => fetch(url, { method: "DELETE" }));`,
  `${P}${AXIOS}await pRetry(() => axios.get(u));`,
  `${P}${AXIOS}await pRetry(() => axios.head(u));`,
  `${P}${AXIOS}await pRetry(() => axios.options(u));`,
  `${P}${AXIOS}await pRetry(() => axios.put(u, d));`,
  `${P}${AXIOS}await pRetry(() => axios.delete(u));`,
  // a POST that is not retried
  `${AXIOS}await axios.post(u, d);`,
  'fetch(url, { method: "POST", body });',
  // a key made once, outside the retried function
  `${P}const key = crypto.randomUUID();\nawait pRetry(() => fetch(url, { method: "POST", body, headers: { "Idempotency-Key": key } }));`,
  `${P}import { v4 as uuidv4 } from "uuid";\nconst key = uuidv4();\nawait pRetry(() => fetch(url, { method: "POST", headers: { "idempotency-key": key } }));`,
  `${P}${AXIOS}async function pay(order) {\n  const key = order.id;\n  return pRetry(() => axios.post(u, order, { headers: { "X-Idempotency-Key": key } }));\n}`,
  // header names configurable, matched case-insensitively
  {
    code: `${P}await pRetry(() => fetch(url, { method: "POST", headers: { "x-request-id": requestId } }));`,
    options: [{ idempotencyHeaders: ["X-Request-ID"] }],
  },
  // keys set through new Headers, headers.set, or a spread
  `${P}await pRetry(() => fetch(url, { method: "POST", headers: new Headers({ "Idempotency-Key": key }) }));`,
  `${P}const headers = new Headers();\nheaders.set("Idempotency-Key", key);\nawait pRetry(() => fetch(url, { method: "POST", headers }));`,
  `${P}await pRetry(() => fetch(url, { method: "POST", headers: { ...baseHeaders } }));`,
  `${P}await pRetry(() => fetch(url, { method: "POST", ...init }));`,
  // SDK calls with an idempotencyKey option
  `${P}await pRetry(() => stripe.paymentIntents.create(params, { idempotencyKey: key }));`,
  `${P}await pRetry(() => client.post("/charges", body, { idempotencyKey: key }));`,
  // a retry condition limited to "the request was never processed"
  `${P}await pRetry(() => fetch(url, { method: "POST", body }), { shouldRetry: (e) => e.code === "ECONNREFUSED" || e.code === "ENOTFOUND" });`,
  `${AXR}axiosRetry(axios, { retryCondition: (e) => e.code === "ECONNREFUSED" });\naxios.post(u, d);`,
  `${AXR}axiosRetry(axios, { retryCondition: axiosRetry.isIdempotentRequestError });\naxios.post(u, d);`,
  `${AXR}axiosRetry(axios, { retryCondition: (e) => e.config.method === "get" });\naxios.post(u, d);`,
  // POST used for reads
  {
    code: `${P}await pRetry(() => fetch("/graphql", { method: "POST", body: query }));`,
    options: [{ ignoreUrls: ["/graphql$"] }],
  },
  {
    code: `${P}${AXIOS}await pRetry(() => axios.post(\`\${base}/search\`, q));`,
    options: [{ ignoreUrls: ["/search$"] }],
  },
  // no second attempt
  `${P}await pRetry(() => fetch(url, { method: "POST" }), { retries: 0 });`,
  `${AR}await retry(async () => fetch(url, { method: "POST" }), { retries: 0 });`,
  'import got from "got";\nawait got.post(url, { json, retry: { limit: 0, methods: ["POST"] } });',
  // cockatiel's maxAttempts counts retries: 0 never runs the function twice
  `${COCKATIEL}const policy = retry(handleAll, { maxAttempts: 0 });\nawait policy.execute(() => fetch(url, { method: "POST" }));`,
  `${AXR}axiosRetry(axios, { retries: 0 });\naxios.post(u, d);`,
  'import { backOff } from "exponential-backoff";\nawait backOff(() => fetch(url, { method: "POST" }), { numOfAttempts: 1 });',
  // axios-retry on another client than the one sending the POST
  `${AXR}const api = axios.create({ timeout: 1000 });\naxiosRetry(api);\naxios.post(u, d);`,
  {
    code: `${AXR}axiosRetry(axios);\naxios.post(u, d);`,
    options: [{ axiosRetryDefaultCondition: "ignore" }],
  },
  // got and ky retry idempotent methods by default
  'import got from "got";\nawait got.post(url, { json, retry: { limit: 2 } });',
  'import ky from "ky";\nawait ky.post(url, { json, retry: { methods: ["get", "put"] } });',
  'import got from "got";\nconst client = got.extend({ headers: { "idempotency-key": key }, retry: { methods: ["POST"] } });',
  // not a retry: a loop over items, a loop that always rethrows
  `${AXIOS}for (const item of items) { try { await axios.post(u, item); } catch (e) { log(e); } }`,
  `${AXIOS}async function f() { for (let i = 0; i < 3; i++) { try { return await axios.post(u, d); } catch (e) { throw e; } } }`,
  // a loop that never leaves on success sends a new request each round: not a retry
  'while (true) {\n  try { await fetch(url, { method: "POST", body: beat() }); } catch (e) { log(e); }\n  await sleep(5000);\n}',
  // a key made once before the loop
  'async function f() {\nconst key = crypto.randomUUID();\nfor (let i = 0; i < 3; i++) {\n  try { return await fetch(url, { method: "POST", headers: { "Idempotency-Key": key } }); } catch {}\n}\n}',
  // look-alikes: a local retry() that is not a library
  'function retry(fn) { return fn(); }\nretry(() => fetch(url, { method: "POST" }));',
  // a key built from values fixed for the whole logical call
  `${AR}async function pay(orderId) {\n  await retry(async (bail) => fetch(url, { method: "POST", headers: { "Idempotency-Key": \`pay-\${orderId}\` } }));\n}`,
  // a helper called directly, or given a key made once by its caller
  `async function createOrder(order) { return fetch("/orders", { method: "POST", body: JSON.stringify(order) }); }\nawait createOrder(order);`,
  `${P}async function send(order, key) { return fetch("/orders", { method: "POST", headers: { "Idempotency-Key": key } }); }\nconst key = crypto.randomUUID();\nawait pRetry(() => send(order, key));`,
  // a method the file cannot see
  `${P}await pRetry(() => fetch(url, { method }));`,
  { code: `${P}${AXIOS}await pRetry(() => (axios as AxiosStatic).get(u));`, tsOnly: true },
];

const invalid: Invalid<MessageIds, Options>[] = [
  {
    code: `${P}await pRetry(() => fetch(url, { method: "POST", body }));`,
    errors: [
      {
        messageId: "retriedWithoutKey",
        line: 2,
        column: 20,
        data: { method: "POST", retrier: "p-retry" },
      },
    ],
  },
  {
    code: `${P}await pRetry(() => fetch(url, { method: "post", body }));`,
    errors: [{ messageId: "retriedWithoutKey", line: 2, column: 20 }],
  },
  {
    code: `${P}const M = "PATCH";\nawait pRetry(() => fetch(url, { method: M, body }));`,
    errors: [
      {
        messageId: "retriedWithoutKey",
        line: 3,
        column: 20,
        data: { method: "PATCH", retrier: "p-retry" },
      },
    ],
  },
  {
    code: `${P}${AXIOS}await pRetry(() => axios.post(u, d));`,
    errors: [{ messageId: "retriedWithoutKey", line: 3, column: 20 }],
  },
  {
    code: `${P}${AXIOS}await pRetry(async () => { const res = await axios.post(u, d); return res.data; });`,
    errors: [{ messageId: "retriedWithoutKey", line: 3, column: 46 }],
  },
  {
    code: `${AR}await retry(async (bail) => client.patch(u, d));`,
    errors: [
      {
        messageId: "retriedWithoutKey",
        line: 2,
        column: 29,
        data: { method: "PATCH", retrier: "async-retry" },
      },
    ],
  },
  {
    // maxAttempts: 1 is one retry after the first attempt
    code: `${COCKATIEL}const policy = retry(handleAll, { maxAttempts: 1 });\nawait policy.execute(() => fetch(url, { method: "POST" }));`,
    errors: [
      { messageId: "retriedWithoutKey", line: 3, data: { method: "POST", retrier: "cockatiel" } },
    ],
  },
  {
    code: `${COCKATIEL}const retryPolicy = retry(handleAll, { maxAttempts: 3, backoff: new ExponentialBackoff() });\nawait retryPolicy.execute(() => api.post(u, d));`,
    errors: [
      {
        messageId: "retriedWithoutKey",
        line: 3,
        column: 33,
        data: { method: "POST", retrier: "cockatiel" },
      },
    ],
  },
  {
    code: 'import promiseRetry from "promise-retry";\npromiseRetry((retry) => fetch(url, { method: "POST" }).catch(retry));',
    errors: [
      {
        messageId: "retriedWithoutKey",
        line: 2,
        column: 25,
        data: { method: "POST", retrier: "promise-retry" },
      },
    ],
  },
  {
    // the retried function passed by name
    code: `${P}const send = () => fetch(url, { method: "POST", body });\nawait pRetry(send, { retries: 5 });`,
    errors: [{ messageId: "retriedWithoutKey", line: 2, column: 20 }],
  },
  {
    code: `${P}async function send() { return fetch(url, { method: "POST", body }); }\nawait pRetry(send);`,
    errors: [{ messageId: "retriedWithoutKey", line: 2, column: 32 }],
  },
  {
    // a project wrapper named in the options
    code: 'await withRetry(() => fetch(url, { method: "POST" }));',
    options: [{ retryWrappers: ["withRetry"] }],
    errors: [
      {
        messageId: "retriedWithoutKey",
        line: 1,
        column: 23,
        data: { method: "POST", retrier: "withRetry" },
      },
    ],
  },
  {
    // the method set is an option
    code: `${P}${AXIOS}await pRetry(() => axios.delete(u));`,
    options: [{ nonIdempotentMethods: ["POST", "PATCH", "DELETE"] }],
    errors: [
      {
        messageId: "retriedWithoutKey",
        line: 3,
        column: 20,
        data: { method: "DELETE", retrier: "p-retry" },
      },
    ],
  },
  {
    // ignoreUrls only spares matching URLs
    code: `${P}await pRetry(() => fetch("/orders", { method: "POST", body }));`,
    options: [{ ignoreUrls: ["/graphql$"] }],
    errors: [{ messageId: "retriedWithoutKey", line: 2, column: 20 }],
  },
  {
    // a condition that also retries after the server may have acted
    code: `${P}await pRetry(() => fetch(url, { method: "POST", body }), { shouldRetry: (e) => e.code === "ECONNREFUSED" || e.code === "ECONNRESET" });`,
    errors: [{ messageId: "retriedWithoutKey", line: 2, column: 20 }],
  },
  {
    code: `${P}await pRetry(() => fetch(url, { method: "POST", headers: { "Content-Type": "application/json" } }));`,
    errors: [{ messageId: "retriedWithoutKey", line: 2, column: 20 }],
  },
  // axios-retry
  {
    code: `${AXR}const api = axios.create({ baseURL, timeout: 1000 });\naxiosRetry(api, { retries: 3, retryCondition: () => true });\nawait api.post("/orders", order);`,
    errors: [{ messageId: "axiosRetryEveryMethod", line: 5, column: 7, data: { method: "POST" } }],
  },
  {
    code: `${AXR}axiosRetry(axios, { retries: 3 });\naxios.patch(u, d);`,
    errors: [
      { messageId: "axiosRetryDefaultCondition", line: 4, column: 1, data: { method: "PATCH" } },
    ],
  },
  {
    code: `${AXR}axiosRetry(axios, { retryCondition: axiosRetry.isNetworkError });\naxios.post(u, d);`,
    errors: [{ messageId: "axiosRetryEveryMethod", line: 4, column: 1 }],
  },
  {
    // a custom condition that never looks at the method, on a client other files send through
    code: `${AXR}export const api = axios.create({ timeout: 1000 });\naxiosRetry(api, { retryCondition: (e) => !e.response || e.response.status >= 500 });`,
    errors: [{ messageId: "axiosRetryExportedClient", line: 4, column: 1 }],
  },
  {
    // a response interceptor that re-sends the failed config
    code: `${AXIOS}const api = axios.create({ timeout: 1000 });\napi.interceptors.response.use(undefined, (error) => api.request(error.config));\nawait api.post("/orders", order);`,
    errors: [
      {
        messageId: "interceptorResendsWrites",
        line: 3,
        column: 53,
        data: { client: "api", method: "POST" },
      },
    ],
  },
  // got / ky with POST in retry.methods
  {
    code: 'import got from "got";\nconst client = got.extend({ retry: { limit: 3, methods: ["GET", "POST"] } });',
    errors: [{ messageId: "unsafeRetryMethods", line: 2, column: 65, data: { method: "POST" } }],
  },
  {
    code: 'import ky from "ky";\nawait ky.post(url, { json, retry: { limit: 2, methods: ["post"] } });',
    errors: [{ messageId: "unsafeRetryMethods", line: 2, column: 57, data: { method: "POST" } }],
  },
  // hand-written loops
  {
    code: `${AXIOS}async function send(d) {\n  for (let i = 0; i < 3; i++) {\n    try { return await axios.post(u, d); } catch {}\n  }\n}`,
    errors: [
      {
        messageId: "retriedWithoutKey",
        line: 4,
        column: 24,
        data: { method: "POST", retrier: "a retry loop" },
      },
    ],
  },
  {
    code: 'while (true) {\n  try {\n    await fetch(url, { method: "POST", body });\n    break;\n  } catch (e) {\n    await sleep(500);\n  }\n}',
    errors: [{ messageId: "retriedWithoutKey", line: 3, column: 11 }],
  },
  {
    code: 'async function f() {\nlet attempt = 0;\ndo {\n  try { return await fetch(url, { method: "POST" }); } catch (e) { attempt++; }\n} while (attempt < 3);\n}',
    errors: [{ messageId: "retriedWithoutKey", line: 4, column: 22 }],
  },
  // a key generated per attempt
  {
    code: `${P}await pRetry(() => fetch(url, { method: "POST", headers: { "Idempotency-Key": crypto.randomUUID() } }));`,
    errors: [{ messageId: "keyPerAttempt", line: 2, column: 79, data: { retrier: "p-retry" } }],
  },
  {
    code: `${P}import { v4 as uuidv4 } from "uuid";\nawait pRetry(() => fetch(url, { method: "POST", headers: { "Idempotency-Key": uuidv4() } }));`,
    errors: [{ messageId: "keyPerAttempt", line: 3, column: 79 }],
  },
  {
    code: `${P}import { nanoid } from "nanoid";\nawait pRetry(async () => {\n  const key = nanoid();\n  return fetch(url, { method: "POST", headers: { "Idempotency-Key": key } });\n});`,
    errors: [{ messageId: "keyPerAttempt", line: 5, column: 69 }],
  },
  {
    code: `${P}await pRetry(() => fetch(url, { method: "POST", headers: { "Idempotency-Key": \`order-\${Date.now()}\` } }));`,
    errors: [{ messageId: "keyPerAttempt", line: 2, column: 79 }],
  },
  {
    code: `${P}await pRetry(() => fetch(url, { method: "POST", headers: { "Idempotency-Key": String(Math.random()) } }));`,
    errors: [{ messageId: "keyPerAttempt", line: 2, column: 79 }],
  },
  {
    code: `${P}import { randomBytes } from "node:crypto";\nawait pRetry(() => fetch(url, { method: "POST", headers: { "Idempotency-Key": randomBytes(16).toString("hex") } }));`,
    errors: [{ messageId: "keyPerAttempt", line: 3, column: 79 }],
  },
  {
    code: `${AXIOS}async function f() {\nfor (let i = 0; i < 3; i++) {\n  try {\n    return await axios.post(u, d, { headers: { "Idempotency-Key": crypto.randomUUID() } });\n  } catch {}\n}\n}`,
    errors: [
      { messageId: "keyPerAttempt", line: 5, column: 67, data: { retrier: "a retry loop" } },
    ],
  },
  {
    code: `${P}const headers = new Headers();\nawait pRetry(() => {\n  headers.set("Idempotency-Key", crypto.randomUUID());\n  return fetch(url, { method: "POST", headers });\n});`,
    errors: [{ messageId: "keyPerAttempt", line: 4, column: 34 }],
  },
  // a key derived from what changes per attempt
  {
    code: `${AR}await retry(async (bail, attempt) => fetch(url, { method: "POST", headers: { "Idempotency-Key": \`\${orderId}-\${attempt}\` } }));`,
    errors: [{ messageId: "keyPerAttempt", line: 2, column: 97, data: { retrier: "async-retry" } }],
  },
  {
    code: `async function f() {\n  for (let attempt = 0; attempt < 3; attempt++) {\n    try { return await fetch(url, { method: "POST", headers: { "Idempotency-Key": orderId + ":" + attempt } }); } catch {}\n  }\n}`,
    errors: [
      { messageId: "keyPerAttempt", line: 3, column: 83, data: { retrier: "a retry loop" } },
    ],
  },
  {
    code: 'import { backOff } from "exponential-backoff";\nawait backOff(() => fetch(url, { method: "POST", body }), { numOfAttempts: 5 });',
    errors: [
      {
        messageId: "retriedWithoutKey",
        line: 2,
        column: 21,
        data: { method: "POST", retrier: "exponential-backoff" },
      },
    ],
  },
  // local helpers the retried function calls are followed
  {
    code: `${P}async function createOrder(order) {\n  return fetch("/orders", { method: "POST", body: JSON.stringify(order) });\n}\nawait pRetry(() => createOrder(order));`,
    errors: [
      {
        messageId: "retriedWithoutKey",
        line: 3,
        column: 10,
        data: { method: "POST", retrier: "p-retry through createOrder()" },
      },
    ],
  },
  {
    code: `${P}const post = (body) => fetch("/orders", { method: "POST", body, headers: { "Idempotency-Key": crypto.randomUUID() } });\nconst createOrder = (order) => post(JSON.stringify(order));\nawait pRetry(() => createOrder(order));`,
    errors: [
      {
        messageId: "keyPerAttempt",
        line: 2,
        column: 95,
        data: { retrier: "p-retry through post() and createOrder()" },
      },
    ],
  },
  // wrappers that do not change the call
  {
    code: `${P}${AXIOS}const api = axios.create({ timeout: 1000 });\nawait pRetry(() => (api as AxiosInstance)!.post(u, d));`,
    tsOnly: true,
    errors: [{ messageId: "retriedWithoutKey", line: 4, column: 20 }],
  },
  {
    code: `${P}await pRetry(() => void globalThis.fetch?.(url, { method: "POST" }));`,
    errors: [{ messageId: "retriedWithoutKey", line: 2, column: 25 }],
  },
  {
    code: `${P}await pRetry(() => fetch(url, { method: "POST" }).then((r) => r.json()));`,
    errors: [{ messageId: "retriedWithoutKey", line: 2, column: 20 }],
  },
];

runUnderBothParsers("no-retry-non-idempotent", rule, { valid, invalid });
