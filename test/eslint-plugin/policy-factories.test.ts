import noRetry, {
  type MessageIds as NoRetryIds,
  type Options as NoRetryOptions,
} from "../../eslint-plugin/rules/no-retry-non-idempotent.js";
import retryInsideBreaker, {
  type MessageIds as BreakerIds,
  type Options as BreakerOptions,
} from "../../eslint-plugin/rules/retry-inside-breaker.js";
import { runUnderBothParsers } from "./rule-tester.js";

// Cockatiel policies made by a function of the file (a factory) rather than in place: the
// factory's returns are read, with its parameters bound to what each call passes, and a
// breaker made and used for one call is reported wherever it is. Another file's factories are
// followed with type information (typed-reach.test.ts).

const C =
  'import { wrap, retry, circuitBreaker, handleAll, handleWhen, isBrokenCircuitError, ConsecutiveBreaker } from "cockatiel";\n';
const O = 'import CircuitBreaker from "opossum";\n';
const BREAKER =
  "circuitBreaker(handleAll, { halfOpenAfter: 1000, breaker: new ConsecutiveBreaker(3) })";
/** A factory whose retry handles every error and retries 3 times unless told otherwise. */
const FACTORY = `${C}function createPolicy(options = {}) {\n  const { filter = handleAll, maxRetries = 3 } = options;\n  const policy = wrap(${BREAKER}, retry(filter, { maxAttempts: maxRetries }));\n  return { ...policy, reset() {} };\n}\n`;
const POST = 'fetch("/orders", { method: "POST", body })';

const retriedPost = { messageId: "retriedWithoutKey" as const, line: 7 };

runUnderBothParsers<NoRetryIds, NoRetryOptions>(
  "no-retry-non-idempotent: policy factories",
  noRetry,
  {
    valid: [
      // the call turns the retries off, or passes a filter that admits only "never sent"
      `${FACTORY}await createPolicy({ maxRetries: 0 }).execute(() => ${POST});`,
      `${FACTORY}const policy = createPolicy({ filter: handleWhen((e) => e.code === "ECONNREFUSED") });\nawait policy.execute(() => ${POST});`,
      // a read through the same policy, and a key made once for every attempt
      `${FACTORY}await createPolicy().execute(() => fetch("/orders"));`,
      `${FACTORY}const key = crypto.randomUUID();\nawait createPolicy().execute(() => fetch("/orders", { method: "POST", headers: { "Idempotency-Key": key } }));`,
      // a factory that makes only a breaker: nothing retries
      `${C}const makeBreaker = () => ${BREAKER};\nconst breaker = makeBreaker();\nawait breaker.execute(() => ${POST});`,
    ],
    invalid: [
      // the default filter handles every error: through the call, a const, a field, a fallback
      { code: `${FACTORY}await createPolicy().execute(() => ${POST});`, errors: [retriedPost] },
      {
        code: `${FACTORY}const policy = createPolicy({ maxRetries: 2 });\nawait policy.execute(() => ${POST});`,
        errors: [{ ...retriedPost, line: 8 }],
      },
      {
        code: `${FACTORY}class Orders {\n  #policy;\n  constructor(options) { this.#policy = createPolicy(options); }\n  pay(body, options) {\n    const policy = options.policy ?? this.#policy;\n    return policy.execute(() => ${POST});\n  }\n}`,
        errors: [{ ...retriedPost, line: 12 }],
      },
      // a filter the call passes that still retries every error
      {
        code: `${FACTORY}await createPolicy({ filter: handleAll }).execute(() => ${POST});`,
        errors: [retriedPost],
      },
      // an arrow factory returning the policy itself, and one built by another factory
      {
        code: `${C}const make = (attempts) => retry(handleAll, { maxAttempts: attempts });\nawait make(2).execute(() => ${POST});`,
        errors: [{ ...retriedPost, line: 3 }],
      },
      {
        code: `${C}function inner(n) { return retry(handleAll, { maxAttempts: n }); }\nfunction outer() { return wrap(${BREAKER}, inner(3)); }\nawait outer().execute(() => ${POST});`,
        errors: [{ ...retriedPost, line: 4 }],
      },
    ],
  },
);

const once = {
  messageId: "breakerPerCall" as const,
  data: { where: "for a single call and never kept" },
};

runUnderBothParsers<BreakerIds, BreakerOptions>(
  "retry-inside-breaker: breakers used once",
  retryInsideBreaker,
  {
    valid: [
      // made once and kept, at module scope or in a constructor
      `${FACTORY}const shared = createPolicy();\nexport const send = (fn) => shared.execute(fn);`,
      `${O}class Api {\n  constructor(fn) { this.breaker = new CircuitBreaker(fn); }\n  call() { return this.breaker.fire(); }\n}`,
      // used once at startup, outside any function
      `${O}await new CircuitBreaker(load).fire();`,
      // a factory that returns something other than a breaker
      `${C}const makeRetry = () => retry(handleWhen((e) => !isBrokenCircuitError(e)), { maxAttempts: 2 });\nexport const send = (fn) => makeRetry().execute(fn);`,
    ],
    invalid: [
      {
        code: `${FACTORY}export const send = (fn) => createPolicy().execute(fn);`,
        errors: [{ ...once, line: 7 }],
      },
      {
        code: `${O}export async function send(fn) {\n  return new CircuitBreaker(fn, { timeout: 1000 }).fire();\n}`,
        errors: [{ ...once, line: 3 }],
      },
      {
        code: `${C}export async function send(fn) {\n  return ${BREAKER}.execute(fn);\n}`,
        errors: [{ ...once, line: 3 }],
      },
      {
        code: `${O}const make = (fn) => new CircuitBreaker(fn);\nexport class Jobs {\n  run(fn) { return make(fn).fire(); }\n}`,
        errors: [{ ...once, line: 4 }],
      },
    ],
  },
);

/** A factory whose retry sits outside the breaker and, by default, stops on the open circuit. */
const OUTER = `${C}function createPolicy(options = {}) {\n  const { filter = handleWhen((e) => !isBrokenCircuitError(e)), maxRetries = 3 } = options;\n  return wrap(retry(filter, { maxAttempts: maxRetries }), ${BREAKER});\n}\n`;
/** A predicate that answers true for every error but one class's. */
const RETRYABLE =
  "class HttpError extends Error {}\nfunction isRetryable(error) {\n  if (error instanceof HttpError) return error.status >= 500;\n  return true;\n}\n";
const wraps = { messageId: "retryWrapsBreaker" as const };

runUnderBothParsers<BreakerIds, BreakerOptions>(
  "retry-inside-breaker: a wrap configured by its caller",
  retryInsideBreaker,
  {
    valid: [
      // the factory's own default, a filter that stops on the open circuit, no retries at all
      `${OUTER}export const policy = createPolicy();`,
      `${OUTER}export const policy = createPolicy({ filter: handleWhen((e) => !isBrokenCircuitError(e) && e.retryable) });`,
      `${OUTER}export const policy = createPolicy({ filter: handleAll, maxRetries: 0 });`,
      // a predicate that falls through to false, or whose test Error itself passes
      `${OUTER}class NetworkError extends Error {}\nexport const policy = createPolicy({ filter: handleWhen((e) => { if (e instanceof NetworkError) return true; return false; }) });`,
      `${OUTER}function isRetryable(error) {\n  if (error instanceof Error) return false;\n  return true;\n}\nexport const policy = createPolicy({ filter: handleWhen(isRetryable) });`,
      // options a subclass only forwards: what its caller passes is not known here
      `${OUTER}class Base {\n  constructor({ policyOptions }) { this.policy = createPolicy(policyOptions); }\n}\nexport class Orders extends Base {\n  constructor(options) { super({ policyOptions: options }); }\n}`,
    ],
    invalid: [
      // a handler the call passes that retries every error
      {
        code: `${OUTER}export const policy = createPolicy({ filter: handleAll });`,
        errors: [{ ...wraps, line: 6 }],
      },
      // passed up through super(...) in a constant of defaults that the subclass's options spread over
      {
        code: `${OUTER}const DEFAULTS = { filter: handleAll };\nclass Base {\n  constructor({ policyOptions }) { this.policy = createPolicy(policyOptions); }\n}\nexport class Orders extends Base {\n  constructor(options = {}) { super({ policyOptions: { ...DEFAULTS, ...options } }); }\n}`,
        errors: [{ ...wraps, line: 11 }],
      },
      // a predicate that answers true for every error but HttpError: BrokenCircuitError too
      {
        code: `${OUTER}${RETRYABLE}export const policy = createPolicy({ filter: handleWhen(isRetryable) });`,
        errors: [{ ...wraps, line: 11 }],
      },
      {
        code: `${C}${RETRYABLE}export const policy = wrap(retry(handleWhen(isRetryable), { maxAttempts: 3 }), ${BREAKER});`,
        errors: [{ ...wraps, line: 7 }],
      },
      // a default that retries every error is reported once, at the factory's wrap
      {
        code: `${C}function createPolicy({ filter = handleAll } = {}) {\n  return wrap(retry(filter, { maxAttempts: 3 }), ${BREAKER});\n}\nexport const policy = createPolicy();`,
        errors: [{ ...wraps, line: 3 }],
      },
    ],
  },
);
