import rule, {
  type MessageIds,
  type Options,
} from "../../eslint-plugin/rules/retry-inside-breaker.js";
import { runUnderBothParsers, type Invalid, type Valid } from "./rule-tester.js";

// Breakers and retries written in the shapes real code uses: opossum's factory without `new`,
// cockatiel's older Policy chain API and raw breakers, handlers arriving through defaults,
// self-calls around fire(), and breakers built per request in middleware, exports and factories.

const O = 'import CircuitBreaker from "opossum";\n';
const OLD = 'import { Policy, ConsecutiveBreaker } from "cockatiel";\n';
const C =
  'import { wrap, retry, circuitBreaker, handleAll, handleWhen, isBrokenCircuitError, ConsecutiveBreaker, CircuitBreakerPolicy } from "cockatiel";\n';
const CB =
  "const breaker = circuitBreaker(handleAll, { halfOpenAfter: 1000, breaker: new ConsecutiveBreaker(3) });\n";
const PER_CALL = {
  messageId: "breakerPerCall" as const,
  data: { where: "inside a request handler" },
};

const valid: Valid<Options>[] = [
  // the older chain API with the breaker outermost, or a retry that excludes the rejection
  `${OLD}const r = Policy.handleAll().retry().attempts(3);\nconst b = Policy.handleAll().circuitBreaker(1000, new ConsecutiveBreaker(5));\nexport const p = Policy.wrap(b, r);`,
  `${OLD}const r = Policy.handleWhen((e) => !isBrokenCircuitError(e)).retry().attempts(3);\nconst b = Policy.handleAll().circuitBreaker(1000, new ConsecutiveBreaker(5));\nexport const p = Policy.wrap(r, b);`,
  // a wrap() that is not cockatiel's, in a file without a breaker library
  'import _ from "lodash";\nconst p = _.wrap(retry, breaker);',
  // a handler default that excludes the rejection
  `${C}${CB}export function policy({ handler = handleWhen((e) => !isBrokenCircuitError(e)) } = {}) {\n  return wrap(retry(handler, { maxAttempts: 3 }), breaker);\n}`,
  // a test of the open-circuit error that leaves the retry: return, break, or throw in a branch
  `${O}const breaker = new CircuitBreaker(send);\nexport async function run() {\n  for (let i = 0; i < 5; i++) {\n    try { return await breaker.fire(); }\n    catch (e) { if (breaker.opened) break; await sleep(100); }\n  }\n}`,
  `${O}const breaker = new CircuitBreaker(send);\nasync function call(x) {\n  try { return await breaker.fire(x); }\n  catch (e) {\n    if (e.code !== "EOPENBREAKER") { await sleep(50); return call(x); }\n    return fallback(x);\n  }\n}`,
  `${O}const breaker = new CircuitBreaker(send);\nexport const go = () => pRetry(() => breaker.fire(), { shouldRetry: (e) => e.code !== "EOPENBREAKER" });`,
  // a self-call that stops on the open circuit, and recursion that is not a retry
  `${O}const breaker = new CircuitBreaker(send);\nasync function tryIt(n) {\n  try { return await breaker.fire(); }\n  catch (e) { if (e.code === "EOPENBREAKER") throw e; return tryIt(n + 1); }\n}`,
  `${O}const breaker = new CircuitBreaker(send);\nasync function drain(queue) {\n  if (queue.length === 0) return;\n  await breaker.fire(queue.shift());\n  return drain(queue);\n}`,
  // breakers made once: at module scope by the factory, in middleware setup, in a factory called once
  `${O}const breaker = CircuitBreaker(send, { timeout: 1000 });\napp.use(async (ctx, next) => { ctx.body = await breaker.fire(ctx.request.body); await next(); });`,
  `${O}function makeBreaker(fn) { return new CircuitBreaker(fn); }\nconst breaker = makeBreaker(send);\nexports.handler = async (event) => breaker.fire(event);`,
  `${O}const make = (fn) => new CircuitBreaker(fn);\nexport function setup(app) { const b = make(send); app.use((req, res, next) => b.fire().then(next)); }`,
];

const invalid: Invalid<MessageIds, Options>[] = [
  // cockatiel's older Policy API, wrap on any receiver, raw breakers
  {
    code: `${OLD}const retry = Policy.handleAll().retry().exponential({ maxAttempts: 20 });\nconst circuitBreaker = Policy.handleAll().circuitBreaker(10000, new ConsecutiveBreaker(5));\nexport const retryWithBreaker = Policy.wrap(retry, circuitBreaker);`,
    errors: [{ messageId: "retryWrapsBreaker", line: 4, column: 45 }],
  },
  {
    code: `${OLD}export const p = Policy.wrap(Policy.handleAll().retry().attempts(3), Policy.handleAll().circuitBreaker(1000, new ConsecutiveBreaker(2)));`,
    errors: [{ messageId: "retryWrapsBreaker", line: 2, column: 30 }],
  },
  {
    code: `${C}export function make(config) {\n  const breaker = new ConsecutiveBreaker({ threshold: 5 });\n  const retryPolicy = retry(handleAll, { maxAttempts: config.retries || 3 });\n  return CircuitBreakerPolicy.wrap(retryPolicy, breaker);\n}`,
    errors: [{ messageId: "retryWrapsBreaker", line: 5, column: 36 }],
  },
  // handleAll arriving through a destructured default
  {
    code: `${C}${CB}export function policy({ handler = handleAll, attempts = 3 } = {}) {\n  return wrap(retry(handler, { maxAttempts: attempts }), breaker);\n}`,
    errors: [{ messageId: "retryWrapsBreaker", line: 4, column: 15 }],
  },
  {
    code: `${C}${CB}export const policy = (handler = handleAll) => wrap(retry(handler, { maxAttempts: 3 }), breaker);`,
    errors: [{ messageId: "retryWrapsBreaker", line: 3, column: 53 }],
  },
  {
    code: `${C}${CB}export function policy(options) {\n  const { handler = handleAll } = options;\n  return wrap(retry(handler, { maxAttempts: 2 }), breaker);\n}`,
    errors: [{ messageId: "retryWrapsBreaker", line: 5, column: 15 }],
  },
  // a function that calls itself around fire()
  {
    code: `${O}export class RetryBreaker {\n  constructor(action) { this.breaker = new CircuitBreaker(action); }\n  async tryAction(limit) {\n    try { await this.breaker.fire(); }\n    catch (error) { await delay(100); await this.tryAction(limit); }\n  }\n}`,
    errors: [
      {
        messageId: "retryAroundOpenBreaker",
        line: 5,
        column: 17,
        data: {
          retrier: "tryAction() calling itself again",
          breaker: "opossum",
          hint: "stop when `error.code === 'EOPENBREAKER'` (p-retry: throw an AbortError or use shouldRetry; async-retry: call bail)",
        },
      },
    ],
  },
  {
    code: `${O}const breaker = new CircuitBreaker(send);\nfunction call(x, attempt = 0) {\n  return breaker.fire(x).catch(() => setTimeout(() => call(x, attempt + 1), 100));\n}`,
    errors: [{ messageId: "retryAroundOpenBreaker", line: 4, column: 10 }],
  },
  {
    code: `${O}const breaker = CircuitBreaker(send);\nasync function call(x, retries = 3) {\n  const res = await breaker.fire(x);\n  if (!res.ok && retries > 0) return call(x, retries - 1);\n  return res;\n}`,
    errors: [{ messageId: "retryAroundOpenBreaker", line: 4, column: 21 }],
  },
  // the open-circuit error is told apart, but only to skip the counter or the backoff
  {
    code: `${O}export class RetryBreaker {\n  constructor(action) { this.breaker = new CircuitBreaker(action); }\n  async tryAction() {\n    try { return await this.breaker.fire(); }\n    catch (error) {\n      if (error.code != "EOPENBREAKER") this.count++;\n      await delay(this.wait);\n      return this.tryAction();\n    }\n  }\n}`,
    errors: [{ messageId: "retryAroundOpenBreaker", line: 5, column: 24 }],
  },
  {
    code: `${O}const breaker = new CircuitBreaker(send);\nasync function call(x, n = 0) {\n  try { return await breaker.fire(x); }\n  catch (e) {\n    if (e.code === "EOPENBREAKER") { log.warn("open"); } else { n++; }\n    return call(x, n);\n  }\n}`,
    errors: [{ messageId: "retryAroundOpenBreaker", line: 4, column: 22 }],
  },
  {
    code: `${O}const breaker = new CircuitBreaker(send);\nexport async function run() {\n  for (let i = 0; i < 5; i++) {\n    try { return await breaker.fire(); }\n    catch (e) { if (breaker.opened) metrics.open++; await sleep(100); }\n  }\n}`,
    errors: [{ messageId: "retryAroundOpenBreaker", line: 5, column: 24 }],
  },
  // opossum's factory without `new`, built per request
  {
    code: `${O}app.post("/pay", async (req, res) => {\n  const b = CircuitBreaker(charge, { timeout: 3000 });\n  res.json(await b.fire(req.body));\n});`,
    errors: [{ ...PER_CALL, line: 3, column: 13 }],
  },
  {
    code: 'const circuitBreaker = require("opossum");\nmodule.exports.handler = async (event) => {\n  const b = circuitBreaker(send);\n  return b.fire(event);\n};',
    errors: [{ ...PER_CALL, line: 3, column: 13 }],
  },
  {
    code: `${O}exports.handler = async function (event) { return new CircuitBreaker(send).fire(event); };`,
    errors: [{ ...PER_CALL, line: 2, column: 51 }],
  },
  // per-request functions not named like handlers: Koa middleware, app.use(fn), router.get(fn)
  {
    code: `${O}export default async (ctx, next) => {\n  const b = new CircuitBreaker(send);\n  ctx.body = await b.fire(ctx.request.body);\n  await next();\n};`,
    errors: [{ ...PER_CALL, line: 3, column: 13 }],
  },
  {
    code: `${O}app.use(function (incoming, outgoing, next) { const b = new CircuitBreaker(send); b.fire().then(next); });`,
    errors: [{ ...PER_CALL, line: 2, column: 57 }],
  },
  {
    code: `${O}router.get(requireAuth, (r, s) => { const b = new CircuitBreaker(send); return b.fire(r.query); });`,
    errors: [{ ...PER_CALL, line: 2, column: 47 }],
  },
  // a project factory around new CircuitBreaker, called per request
  {
    code: `${O}function makeBreaker(fn) { return new CircuitBreaker(fn, { timeout: 3000 }); }\napp.post("/orders", async (req, res) => {\n  const b = makeBreaker(send);\n  res.json(await b.fire(req.body));\n});`,
    errors: [{ ...PER_CALL, line: 4, column: 13 }],
  },
  {
    code: `${O}const breakerFor = (fn) => new CircuitBreaker(fn);\nexport const handler = async (event) => breakerFor(send).fire(event);`,
    errors: [{ ...PER_CALL, line: 3, column: 41 }],
  },
  {
    code: `${C}function policyFor() { return circuitBreaker(handleAll, { halfOpenAfter: 1000, breaker: new ConsecutiveBreaker(3) }); }\nkoaRouter.post("/x", async (ctx, next) => { await policyFor().execute(() => work(ctx)); await next(); });`,
    errors: [{ ...PER_CALL, line: 3, column: 51 }],
  },
];

runUnderBothParsers("retry-inside-breaker: real-code shapes", rule, { valid, invalid });
