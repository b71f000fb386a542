import timeoutRule, {
  type MessageIds as TimeoutIds,
  type Options as TimeoutOptions,
} from "../../eslint-plugin/rules/require-timeout.js";
import { runUnderBothParsers, type Invalid, type Valid } from "./rule-tester.js";

// What the timeout rule sees through indirect calls: fetch invoked through `.call`/`.apply`.

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
