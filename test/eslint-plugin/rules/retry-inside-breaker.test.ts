import rule, {
  type MessageIds,
  type Options,
} from "../../../eslint-plugin/rules/retry-inside-breaker.js";
import { runUnderBothParsers, type Invalid, type Valid } from "../rule-tester.js";

const C =
  'import { wrap, retry, circuitBreaker, handleAll, handleType, handleWhen, isBrokenCircuitError, BrokenCircuitError, ConsecutiveBreaker, ExponentialBackoff } from "cockatiel";\n';
const BREAKER =
  "const breaker = circuitBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(5) });\n";
const O = 'import CircuitBreaker from "opossum";\nimport pRetry from "p-retry";\n';
const OB = "const breaker = new CircuitBreaker(callInventory, { timeout: 3000 });\n";
const GEN =
  'import { createInventoryClient } from "./generated/index.js";\nconst inventory = createInventoryClient({ baseUrl });\n';

const valid: Valid<Options>[] = [
  // the retry provably excludes the open-circuit rejection
  `${C}${BREAKER}const policy = wrap(retry(handleWhen((e) => !isBrokenCircuitError(e)), { maxAttempts: 3 }), breaker);`,
  `${C}${BREAKER}class NetworkError extends Error {}\nconst policy = wrap(retry(handleType(NetworkError), { maxAttempts: 3 }), breaker);`,
  `${C}${BREAKER}const policy = wrap(retry(handleAll.orWhen((e) => e instanceof BrokenCircuitError), { maxAttempts: 0 }), breaker);`,
  // breaker outside the retry: the breaker sees the whole retried call
  `${C}${BREAKER}const policy = wrap(breaker, retry(handleAll, { maxAttempts: 3 }));`,
  // a retry whose handler the rule cannot see into stays silent
  `${C}${BREAKER}const policy = wrap(retry(retryable, { maxAttempts: 3 }), breaker);`,
  // p-retry that stops on opossum's open-breaker error
  `${O}${OB}await pRetry(() => breaker.fire(x), { shouldRetry: (e) => e.code !== "EOPENBREAKER" });`,
  `${O}${OB}await pRetry(async () => {\n  try { return await breaker.fire(x); }\n  catch (e) { if (e.code === "EOPENBREAKER") throw new pRetry.AbortError(e); throw e; }\n});`,
  'import retry from "async-retry";\nimport CircuitBreaker from "opossum";\nconst breaker = new CircuitBreaker(fn);\nawait retry(async (bail) => { if (breaker.opened) return bail(new Error("open")); return breaker.fire(); });',
  // no retry at all, or retries turned off
  `${O}${OB}await breaker.fire(x);`,
  `${O}${OB}await pRetry(() => breaker.fire(x), { retries: 0 });`,
  // a loop that stops on the rejection
  `${O}${OB}async function f() {\n  for (let i = 0; i < 3; i++) {\n    try { return await breaker.fire(x); }\n    catch (e) { if (e.code === "EOPENBREAKER") throw e; }\n  }\n}`,
  // a cockatiel retry outside a breaker call whose handler excludes the rejection
  `${C}${BREAKER}const r = retry(handleWhen((e) => !isBrokenCircuitError(e)), { maxAttempts: 3 });\nawait r.execute(() => breaker.execute(fn));`,
  // look-alikes: a project "breaker" and a fire() that is not opossum
  'import pRetry from "p-retry";\nimport { CircuitBreaker } from "./breaker.js";\nconst breaker = new CircuitBreaker();\nawait pRetry(() => breaker.fire(x));',
  'import pRetry from "p-retry";\nawait pRetry(() => cannon.fire(x));',
  // generated clients called once, or health() which sends nothing
  `${GEN}await inventory.reserve({ body });`,
  `import pRetry from "p-retry";\n${GEN}await pRetry(() => inventory.health());`,
  // a create…Client from a module that is not generated
  'import pRetry from "p-retry";\nimport { createRedisClient } from "./redis.js";\nconst redis = createRedisClient();\nawait pRetry(() => redis.get("k"));',
  // breakers built once
  `${O}${OB}app.post("/orders", async (req, res) => { res.json(await breaker.fire(req.body)); });`,
  'import CircuitBreaker from "opossum";\nclass Inventory { constructor() { this.breaker = new CircuitBreaker(call); } }',
  'import CircuitBreaker from "opossum";\nfunction makeBreaker(fn) { return new CircuitBreaker(fn, { timeout: 3000 }); }',
  'import CircuitBreaker from "opossum";\nfunction makeBreaker(fn) { return new CircuitBreaker(fn, { timeout: 3000 }); }\nexport const breaker = makeBreaker(send);',
  `${O}${OB}function reserve(sku) { return breaker.fire(sku); }\nawait reserve(sku);`,
  {
    code: `${O}${OB}await pRetry(() => (breaker as CircuitBreaker).fire(x), { shouldRetry: (e: any) => e.code !== "EOPENBREAKER" });`,
    tsOnly: true,
  },
];

const invalid: Invalid<MessageIds, Options>[] = [
  {
    code: `${C}${BREAKER}const policy = wrap(retry(handleAll, { maxAttempts: 3, backoff: new ExponentialBackoff() }), breaker);`,
    errors: [{ messageId: "retryWrapsBreaker", line: 3, column: 21 }],
  },
  {
    code: `${C}${BREAKER}const retryPolicy = retry(handleAll, { maxAttempts: 3 });\nconst policy = wrap(retryPolicy, breaker);`,
    errors: [{ messageId: "retryWrapsBreaker", line: 4, column: 21 }],
  },
  {
    code: `${C}${BREAKER}const policy = wrap(retry(handleType(Error), { maxAttempts: 3 }), timeoutPolicy, breaker);`,
    errors: [{ messageId: "retryWrapsBreaker", line: 3, column: 21 }],
  },
  {
    code: `${C}${BREAKER}const policy = wrap(retry(handleType(BrokenCircuitError), { maxAttempts: 3 }), breaker);`,
    errors: [{ messageId: "retryWrapsBreaker", line: 3, column: 21 }],
  },
  {
    code: `${C}${BREAKER}const policy = wrap(retry(handleWhen(() => true), { maxAttempts: 3 }), breaker);`,
    errors: [{ messageId: "retryWrapsBreaker", line: 3, column: 21 }],
  },
  {
    code: `${C}${BREAKER}const policy = wrap(retry(handleAll.orWhenResult((r) => r.status >= 500), { maxAttempts: 3 }), breaker);`,
    errors: [{ messageId: "retryWrapsBreaker", line: 3, column: 21 }],
  },
  {
    code: 'import * as cockatiel from "cockatiel";\nconst b = cockatiel.circuitBreaker(cockatiel.handleAll, { halfOpenAfter: 1000, breaker: new cockatiel.ConsecutiveBreaker(3) });\nconst p = cockatiel.wrap(cockatiel.retry(cockatiel.handleAll, { maxAttempts: 2 }), b);',
    errors: [{ messageId: "retryWrapsBreaker", line: 3, column: 26 }],
  },
  {
    code: `${C}${BREAKER}const r = retry(handleAll, { maxAttempts: 3 });\nawait r.execute(() => breaker.execute(fn));`,
    errors: [
      {
        messageId: "retryAroundOpenBreaker",
        line: 4,
        column: 23,
        data: {
          retrier: "cockatiel",
          breaker: "cockatiel",
          hint: "stop on `isBrokenCircuitError(error)` (cockatiel: handleWhen(e => !isBrokenCircuitError(e)))",
        },
      },
    ],
  },
  {
    code: `${O}${OB}await pRetry(() => breaker.fire(x));`,
    errors: [{ messageId: "retryAroundOpenBreaker", line: 4, column: 20 }],
  },
  {
    code: `${O}${OB}await pRetry(() => breaker.fire(x), { retries: 5, onFailedAttempt: (e) => log(e) });`,
    errors: [{ messageId: "retryAroundOpenBreaker", line: 4, column: 20 }],
  },
  {
    code: 'import retry from "async-retry";\nimport CircuitBreaker from "opossum";\nconst breaker = new CircuitBreaker(fn);\nawait retry(() => breaker.fire(order));',
    errors: [{ messageId: "retryAroundOpenBreaker", line: 4, column: 19 }],
  },
  {
    code: `${O}class Inventory {\n  constructor() { this.breaker = new CircuitBreaker(call); }\n  reserve(x) { return pRetry(() => this.breaker.fire(x)); }\n}`,
    errors: [{ messageId: "retryAroundOpenBreaker", line: 5, column: 36 }],
  },
  {
    code: `${O}${OB}async function f() {\n  for (let i = 0; i < 3; i++) {\n    try { return await breaker.fire(x); } catch (e) { await sleep(100); }\n  }\n}`,
    errors: [{ messageId: "retryAroundOpenBreaker", line: 6, column: 24 }],
  },
  // generated clients
  {
    code: `import pRetry from "p-retry";\n${GEN}await pRetry(() => inventory.reserve({ body }));`,
    errors: [
      {
        messageId: "retryAroundGeneratedClient",
        line: 4,
        column: 20,
        data: { retrier: "p-retry", factory: "createInventoryClient" },
      },
    ],
  },
  {
    code: `${GEN}async function f() {\n  for (;;) {\n    try { return await inventory.getStock({ sku }); } catch { await sleep(50); }\n  }\n}`,
    errors: [
      {
        messageId: "retryAroundGeneratedClient",
        line: 5,
        column: 24,
        data: { retrier: "a retry loop", factory: "createInventoryClient" },
      },
    ],
  },
  {
    code: 'import { createPaymentsClient } from "../clients/payments.js";\nimport pRetry from "p-retry";\nconst payments = createPaymentsClient({ baseUrl });\nawait pRetry(() => payments.charge({ body }));',
    options: [{ generatedClientModules: ["/clients/"] }],
    errors: [{ messageId: "retryAroundGeneratedClient", line: 4, column: 20 }],
  },
  {
    code: `import { retry, handleAll } from "cockatiel";\n${GEN}await retry(handleAll, { maxAttempts: 3 }).execute(() => inventory.reserve({ body }));`,
    errors: [
      {
        messageId: "retryAroundGeneratedClient",
        line: 4,
        column: 58,
        data: { retrier: "cockatiel", factory: "createInventoryClient" },
      },
    ],
  },
  // breakers built per call
  {
    code: 'import CircuitBreaker from "opossum";\napp.post("/orders", async (req, res) => {\n  const breaker = new CircuitBreaker(callPayments);\n  res.json(await breaker.fire(req.body));\n});',
    errors: [
      {
        messageId: "breakerPerCall",
        line: 3,
        column: 19,
        data: { where: "inside a request handler" },
      },
    ],
  },
  {
    code: 'import { circuitBreaker, handleAll, ConsecutiveBreaker } from "cockatiel";\nexport async function handler(req, res) {\n  const b = circuitBreaker(handleAll, { halfOpenAfter: 1000, breaker: new ConsecutiveBreaker(3) });\n  return b.execute(() => work(req));\n}',
    errors: [
      {
        messageId: "breakerPerCall",
        line: 3,
        column: 13,
        data: { where: "inside a request handler" },
      },
    ],
  },
  {
    code: 'import CircuitBreaker from "opossum";\nimport pRetry from "p-retry";\nawait pRetry(() => new CircuitBreaker(send).fire(order), { shouldRetry: (e) => e.code !== "EOPENBREAKER" });',
    errors: [
      {
        messageId: "breakerPerCall",
        line: 3,
        column: 20,
        data: { where: "inside the code p-retry runs on every attempt" },
      },
    ],
  },
  {
    code: 'import { createServer } from "node:http";\nimport CircuitBreaker from "opossum";\ncreateServer((incoming, outgoing) => { const b = new CircuitBreaker(fn); b.fire().then(() => outgoing.end()); });',
    errors: [{ messageId: "breakerPerCall", line: 3, column: 50 }],
  },
  // local helpers the retried function calls are followed
  {
    code: `${O}${OB}function reserve(sku) {\n  return breaker.fire(sku);\n}\nawait pRetry(() => reserve(sku));`,
    errors: [
      {
        messageId: "retryAroundOpenBreaker",
        line: 5,
        column: 10,
        data: {
          retrier: "p-retry through reserve()",
          breaker: "opossum",
          hint: "stop when `error.code === 'EOPENBREAKER'` (p-retry: throw an AbortError or use shouldRetry; async-retry: call bail)",
        },
      },
    ],
  },
  {
    code: `${O}const makeBreaker = () => new CircuitBreaker(send, { timeout: 1000 });\nawait pRetry(() => makeBreaker().fire(x), { shouldRetry: (e) => e.code !== "EOPENBREAKER" });`,
    errors: [
      {
        messageId: "breakerPerCall",
        line: 3,
        column: 27,
        data: { where: "inside the code p-retry through makeBreaker() runs on every attempt" },
      },
    ],
  },
  // wrappers around the call
  {
    code: `${O}${OB}await pRetry(() => void (breaker as CircuitBreaker<[number], string>)!.fire(1));`,
    tsOnly: true,
    errors: [{ messageId: "retryAroundOpenBreaker", line: 4, column: 25 }],
  },
  {
    code: `${O}${OB}await pRetry(() => breaker?.fire(x).then((r) => r.body));`,
    errors: [{ messageId: "retryAroundOpenBreaker", line: 4, column: 20 }],
  },
  {
    code: `${O}${OB}await withRetry(() => breaker.fire(x));`,
    options: [{ retryWrappers: ["withRetry"] }],
    errors: [
      {
        messageId: "retryAroundOpenBreaker",
        line: 4,
        column: 23,
        data: {
          retrier: "withRetry",
          breaker: "opossum",
          hint: "stop when `error.code === 'EOPENBREAKER'` (p-retry: throw an AbortError or use shouldRetry; async-retry: call bail)",
        },
      },
    ],
  },
];

runUnderBothParsers("retry-inside-breaker", rule, { valid, invalid });
