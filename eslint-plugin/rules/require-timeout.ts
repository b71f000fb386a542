import { AST_NODE_TYPES, TSESLint, type TSESTree } from "@typescript-eslint/utils";
import {
  calleeName,
  contains,
  isFunction,
  memberName,
  outerParent,
  skipWrappers,
  type Node,
} from "../utils/ast.js";
import { classifyOutbound, configArgument, type Outbound } from "../utils/clients.js";
import { createRule } from "../utils/create-rule.js";
import { optionFix } from "../utils/fixes.js";
import { exactKey, meansNoTimeout, readKey, type KeyLookup } from "../utils/objects.js";
import { isModule, resolverFor, type Resolver } from "../utils/resolve.js";

export type Options = [
  {
    /** Report calls whose options the rule cannot see into (a parameter, an imported object). */
    reportUnresolved?: boolean;
    /** Functions that already bound whatever is passed to them (`withTimeout(fetch(u), 5000)`). */
    wrappers?: string[];
    /** Extra names that behave like `fetch(url, init)` (a global or an import). */
    fetchFunctions?: string[];
  },
];

export type MessageIds =
  | "fetchWithoutSignal"
  | "missingTimeout"
  | "disabledTimeout"
  | "timeoutNotEnforced"
  | "unresolvedOptions"
  | "addSignal"
  | "addTimeout";

type Fixer = TSESLint.RuleFixer;
type Fix = TSESLint.RuleFix;

/** A problem found by one of the pure checks below; `create` only reports it. */
interface Problem {
  readonly node: Node;
  readonly messageId: Exclude<MessageIds, "addSignal" | "addTimeout">;
  readonly data: Record<string, string>;
  readonly fix?: {
    readonly messageId: "addSignal" | "addTimeout";
    readonly fix: (fixer: Fixer) => Fix;
  } | null;
}

const SUGGESTED_MS = "10_000";
const SIGNAL_TEXT = `AbortSignal.timeout(${SUGGESTED_MS})`;

interface Context {
  readonly resolver: Resolver;
  readonly reportUnresolved: boolean;
  /** Last `X.defaults.timeout = value` per axios client: the module (`null`) or a creating call. */
  readonly axiosDefaults: ReadonlyMap<TSESTree.CallExpression | null, Node>;
}

function unresolved(ctx: Context, outbound: Outbound, at: Node): Problem | null {
  if (!ctx.reportUnresolved) return null;
  return { node: at, messageId: "unresolvedOptions", data: { client: outbound.label } };
}

/** `fetch(url, init)`: bounded only by an abort signal (undici's fetch may also get a dispatcher). */
export function checkFetch(ctx: Context, outbound: Outbound): Problem | null {
  const { call } = outbound;
  const init: Node | undefined = configArgument(outbound);
  const first = call.arguments[0];
  if (init === undefined && first !== undefined && first.type !== AST_NODE_TYPES.SpreadElement) {
    // fetch(new Request(url, init)) carries its init on the request.
    const request = ctx.resolver.valueOf(first);
    if (request.type === AST_NODE_TYPES.NewExpression) {
      const ctor = skipWrappers(request.callee);
      if (
        ctor.type === AST_NODE_TYPES.Identifier &&
        ctor.name === "Request" &&
        ctx.resolver.isGlobal(ctor)
      ) {
        const requestInit = request.arguments[1];
        if (requestInit === undefined) return missingSignal(outbound, null);
        if (requestInit.type === AST_NODE_TYPES.SpreadElement) return null;
        return signalOf(ctx, outbound, requestInit, false);
      }
    }
  }
  if (call.arguments.some((arg) => arg.type === AST_NODE_TYPES.SpreadElement)) return null;
  if (init === undefined) return missingSignal(outbound, null);
  return signalOf(ctx, outbound, init, true);
}

function signalOf(ctx: Context, outbound: Outbound, init: Node, inCall: boolean): Problem | null {
  const signal = readKey(ctx.resolver, init, exactKey("signal"));
  if (signal.kind === "unknown") return unresolved(ctx, outbound, init);
  if (signal.kind === "value" && !meansNoTimeout(ctx.resolver, signal.node)) return null;
  if (
    outbound.label === "undici fetch" &&
    readKey(ctx.resolver, init, exactKey("dispatcher")).kind !== "absent"
  )
    return null;
  return missingSignal(
    outbound,
    inCall ? (signal.kind === "value" ? signal.node : null) : undefined,
  );
}

/** `existing`: the value to replace, null to add a property, undefined for no suggestion. */
function missingSignal(outbound: Outbound, existing: Node | null | undefined): Problem {
  const fix =
    existing === undefined ? null : optionFix(outbound.call, 1, "signal", SIGNAL_TEXT, existing);
  return {
    node: outbound.call,
    messageId: "fetchWithoutSignal",
    data: { client: outbound.label },
    fix: fix && { messageId: "addSignal", fix },
  };
}

/** A timeout read from the call's own options: null when the call does not decide it. */
function ownTimeout(
  ctx: Context,
  outbound: Outbound,
  keys: { timeout: string; alsoBounding: readonly string[] },
  suggestValue: string,
): { verdict: "bounded" | "decided-none" | "unknown" | "absent"; problem: Problem | null } {
  const config = configArgument(outbound);
  if (config === undefined) return { verdict: "absent", problem: null };
  const timeout = readKey(ctx.resolver, config, exactKey(keys.timeout));
  if (timeout.kind === "value") {
    if (!meansNoTimeout(ctx.resolver, timeout.node)) return { verdict: "bounded", problem: null };
    return {
      verdict: "decided-none",
      problem: disabled(outbound, timeout.node, keys.timeout, suggestValue),
    };
  }
  if (timeout.kind === "unknown")
    return { verdict: "unknown", problem: unresolved(ctx, outbound, config) };
  for (const key of keys.alsoBounding) {
    const other = readKey(ctx.resolver, config, exactKey(key));
    if (other.kind === "unknown")
      return { verdict: "unknown", problem: unresolved(ctx, outbound, config) };
    if (other.kind === "value" && !meansNoTimeout(ctx.resolver, other.node))
      return { verdict: "bounded", problem: null };
  }
  return { verdict: "absent", problem: null };
}

function disabled(outbound: Outbound, value: Node, key: string, suggestValue: string): Problem {
  const fix = optionFix(outbound.call, outbound.configIndex, key, suggestValue, value);
  return {
    node: outbound.call,
    messageId: "disabledTimeout",
    data: { client: outbound.label, key },
    fix: fix && { messageId: "addTimeout", fix },
  };
}

function missing(outbound: Outbound, key: string, suggestValue: string): Problem {
  const fix = optionFix(outbound.call, outbound.configIndex, key, suggestValue, null);
  return {
    node: outbound.call,
    messageId: "missingTimeout",
    data: { client: outbound.label, key },
    fix: fix && { messageId: "addTimeout", fix },
  };
}

/** The answer of an instance-level or module-level default timeout. */
function defaultVerdict(
  ctx: Context,
  lookup: KeyLookup,
): "bounded" | "none" | "unknown" | "absent" {
  if (lookup.kind === "value")
    return meansNoTimeout(ctx.resolver, lookup.node) ? "none" : "bounded";
  return lookup.kind;
}

/** axios and axios instances: request config, then `instance.defaults`, `create()` config, `axios.defaults`. */
export function checkAxios(ctx: Context, outbound: Outbound): Problem | null {
  const own = ownTimeout(
    ctx,
    outbound,
    { timeout: "timeout", alsoBounding: ["signal"] },
    SUGGESTED_MS,
  );
  if (own.verdict !== "absent") return own.problem;
  const layers: KeyLookup[] = [];
  for (const created of outbound.instance) {
    const write = ctx.axiosDefaults.get(created);
    layers.push(write ? { kind: "value", node: write, via: "timeout" } : { kind: "absent" });
    const config = created.arguments[0];
    layers.push(
      config === undefined
        ? { kind: "absent" }
        : readKey(ctx.resolver, config, exactKey("timeout")),
    );
  }
  const globalWrite = ctx.axiosDefaults.get(null);
  layers.push(
    globalWrite ? { kind: "value", node: globalWrite, via: "timeout" } : { kind: "absent" },
  );
  for (const layer of layers) {
    const verdict = defaultVerdict(ctx, layer);
    if (verdict === "bounded") return null;
    if (verdict === "unknown") return unresolved(ctx, outbound, outbound.call);
    if (verdict === "none")
      return {
        node: outbound.call,
        messageId: "disabledTimeout",
        data: { client: outbound.label, key: "timeout" },
        fix: null,
      };
  }
  return missing(outbound, "timeout", SUGGESTED_MS);
}

/** got and `got.extend()` instances. */
export function checkGot(ctx: Context, outbound: Outbound): Problem | null {
  const suggestion = `{ request: ${SUGGESTED_MS} }`;
  const own = ownTimeout(
    ctx,
    outbound,
    { timeout: "timeout", alsoBounding: ["signal"] },
    suggestion,
  );
  if (own.verdict !== "absent") return own.problem;
  for (const created of outbound.instance) {
    const config = created.arguments[0];
    if (config === undefined) continue;
    const verdict = defaultVerdict(ctx, readKey(ctx.resolver, config, exactKey("timeout")));
    if (verdict === "bounded") return null;
    if (verdict === "unknown") return unresolved(ctx, outbound, outbound.call);
    if (verdict === "none")
      return {
        node: outbound.call,
        messageId: "disabledTimeout",
        data: { client: outbound.label, key: "timeout" },
        fix: null,
      };
  }
  return missing(outbound, "timeout", suggestion);
}

/** undici `request()`: bounded by `signal` or a non-zero `headersTimeout`; a dispatcher may carry its own. */
export function checkUndici(ctx: Context, outbound: Outbound): Problem | null {
  const own = ownTimeout(
    ctx,
    outbound,
    { timeout: "headersTimeout", alsoBounding: ["signal", "dispatcher"] },
    SUGGESTED_MS,
  );
  if (own.verdict !== "absent") return own.problem;
  return missing(outbound, "headersTimeout", SUGGESTED_MS);
}

/**
 * `http.request` / `http.get`: the `timeout` option and `req.setTimeout()` only make Node emit
 * a `timeout` event; the request goes on until a handler destroys it.
 */
export function checkHttp(ctx: Context, outbound: Outbound): Problem | null {
  let options = configArgument(outbound);
  if (options !== undefined && isFunction(skipWrappers(options))) options = undefined;
  let hasTimeout = false;
  if (options !== undefined) {
    const own = ownTimeout(ctx, outbound, { timeout: "timeout", alsoBounding: [] }, SUGGESTED_MS);
    if (own.verdict === "unknown" || own.verdict === "decided-none") return own.problem;
    const signal = readKey(ctx.resolver, options, exactKey("signal"));
    if (signal.kind === "unknown") return unresolved(ctx, outbound, options);
    if (signal.kind === "value" && !meansNoTimeout(ctx.resolver, signal.node)) return null;
    hasTimeout = own.verdict === "bounded";
  }
  const handlers = timeoutHandlers(ctx.resolver, outbound.call);
  if (handlers === "escapes") return null;
  if (handlers.enforced) return null;
  if (hasTimeout || handlers.setTimeout) {
    return {
      node: outbound.call,
      messageId: "timeoutNotEnforced",
      data: { client: outbound.label },
      fix: null,
    };
  }
  return {
    node: outbound.call,
    messageId: "missingTimeout",
    data: { client: outbound.label, key: "timeout" },
    fix: null,
  };
}

const LISTENER_METHODS = new Set([
  "on",
  "once",
  "addListener",
  "prependListener",
  "prependOnceListener",
]);

/** The `timeout` listeners attached to the request object a call returns, if they can be seen. */
function timeoutHandlers(
  resolver: Resolver,
  call: TSESTree.CallExpression,
): { setTimeout: boolean; enforced: boolean } | "escapes" {
  const result = { setTimeout: false, enforced: false };
  const inspect = (
    member: string | null,
    args: readonly TSESTree.CallExpressionArgument[],
  ): void => {
    if (member === "setTimeout") {
      result.setTimeout = true;
      if (args[1] !== undefined && destroysRequest(resolver, args[1])) result.enforced = true;
    } else if (
      member !== null &&
      LISTENER_METHODS.has(member) &&
      args[0] !== undefined &&
      resolver.valueOf(args[0]).type === AST_NODE_TYPES.Literal
    ) {
      const event = resolver.valueOf(args[0]);
      if (
        event.type === AST_NODE_TYPES.Literal &&
        event.value === "timeout" &&
        args[1] !== undefined &&
        destroysRequest(resolver, args[1])
      ) {
        result.enforced = true;
      }
    }
  };
  // Chained listeners: http.get(url).on("timeout", ...).on("error", ...)
  let current: Node = call;
  for (;;) {
    const { parent, child } = outerParent(current);
    if (
      parent?.type === AST_NODE_TYPES.MemberExpression &&
      parent.object === child &&
      parent.parent.type === AST_NODE_TYPES.CallExpression &&
      parent.parent.callee === parent
    ) {
      inspect(memberName(parent), parent.parent.arguments);
      current = parent.parent;
      continue;
    }
    if (parent?.type === AST_NODE_TYPES.ExpressionStatement) return result;
    if (
      parent?.type === AST_NODE_TYPES.VariableDeclarator &&
      parent.init === child &&
      parent.id.type === AST_NODE_TYPES.Identifier
    ) {
      const variable = resolver.variableOf(parent.id);
      if (!variable) return "escapes";
      for (const ref of variable.references) {
        const use = ref.identifier;
        if (use === parent.id) continue;
        const { parent: up, child: wrapped } = outerParent(use);
        if (up?.type === AST_NODE_TYPES.MemberExpression && up.object === wrapped) {
          if (up.parent.type === AST_NODE_TYPES.CallExpression && up.parent.callee === up)
            inspect(memberName(up), up.parent.arguments);
          continue;
        }
        // Handed to other code, which may attach its own handlers.
        return "escapes";
      }
      return result;
    }
    return "escapes";
  }
}

const DESTROYS = /\.(destroy|abort)\s*\(/;

function destroysRequest(resolver: Resolver, handler: TSESTree.CallExpressionArgument): boolean {
  if (handler.type === AST_NODE_TYPES.SpreadElement) return true;
  const value = resolver.valueOf(handler);
  if (isFunction(value)) return DESTROYS.test(resolver.sourceCode.getText(value));
  if (value.type === AST_NODE_TYPES.Identifier) {
    const variable = resolver.variableOf(value);
    const def = variable?.defs[0];
    if (def?.type === TSESLint.Scope.DefinitionType.FunctionName)
      return DESTROYS.test(resolver.sourceCode.getText(def.node));
  }
  // A handler defined elsewhere: assume it does its job.
  return true;
}

/** ky bounds every request at 10 s unless told otherwise: only `timeout: false` (or 0, Infinity) removes it. */
export function checkKy(ctx: Context, outbound: Outbound): Problem | null {
  const configs = [
    configArgument(outbound),
    ...outbound.instance.map((created) => created.arguments[0]),
  ];
  for (const config of configs) {
    if (config === undefined) continue;
    const timeout = readKey(ctx.resolver, config, exactKey("timeout"));
    if (timeout.kind === "unknown") return null;
    if (timeout.kind !== "value") continue;
    const value = ctx.resolver.valueOf(timeout.node);
    const none =
      (value.type === AST_NODE_TYPES.Literal && value.value === false) ||
      meansNoTimeout(ctx.resolver, timeout.node);
    if (!none) return null;
    const own = config === configArgument(outbound);
    return own
      ? disabled(outbound, timeout.node, "timeout", SUGGESTED_MS)
      : {
          node: outbound.call,
          messageId: "disabledTimeout",
          data: { client: outbound.label, key: "timeout" },
          fix: null,
        };
  }
  return null;
}

/** Whether the call sits inside the arguments of a function the project declared as bounding. */
function insideWrapper(node: Node, wrappers: ReadonlySet<string>): boolean {
  if (wrappers.size === 0) return false;
  for (let current = node.parent; current; current = current.parent) {
    if (
      current.type === AST_NODE_TYPES.CallExpression ||
      current.type === AST_NODE_TYPES.NewExpression
    ) {
      const name = calleeName(current);
      if (
        name !== null &&
        wrappers.has(name) &&
        current.arguments.some((arg) => contains(arg, node))
      )
        return true;
    }
  }
  return false;
}

export function checkOutbound(ctx: Context, outbound: Outbound): Problem | null {
  // f(...args) may carry the options anywhere.
  if (
    outbound.call.arguments.some(
      (arg, i) => i <= outbound.configIndex && arg.type === AST_NODE_TYPES.SpreadElement,
    )
  ) {
    return unresolved(ctx, outbound, outbound.call);
  }
  switch (outbound.library) {
    case "fetch":
      return checkFetch(ctx, outbound);
    case "axios":
      return checkAxios(ctx, outbound);
    case "got":
      return checkGot(ctx, outbound);
    case "undici":
      return checkUndici(ctx, outbound);
    case "http":
      return checkHttp(ctx, outbound);
    case "ky":
      return checkKy(ctx, outbound);
  }
}

/** How the call reads in the source (`api.get`), or the client's name when that is long. */
function displayName(text: string, fallback: string): string {
  const compact = text.replace(/\s+/g, "");
  return compact.length <= 40 ? compact : fallback;
}

export default createRule<Options, MessageIds>({
  name: "require-timeout",
  meta: {
    type: "problem",
    docs: {
      description: "Require a timeout or abort signal on outbound HTTP calls",
      recommended: true,
      requiresTypeChecking: false,
    },
    hasSuggestions: true,
    messages: {
      fetchWithoutSignal:
        "{{client}}() has no abort signal, so it can wait forever on a stalled server. Pass `signal: AbortSignal.timeout(ms)` (or AbortSignal.any with the caller's signal).",
      missingTimeout:
        "{{client}}() sets no `{{key}}`, so it can wait forever on a stalled server. Set `{{key}}` on the call or on the client's defaults.",
      disabledTimeout:
        "{{client}}() sets `{{key}}` to a value that means no timeout (0, Infinity, null, undefined, or false for ky). Use a finite number of milliseconds.",
      timeoutNotEnforced:
        "{{client}}() only gets a `timeout` event: Node does not stop the request. Destroy it in the handler (`req.on('timeout', () => req.destroy())`) or pass `signal: AbortSignal.timeout(ms)`.",
      unresolvedOptions:
        "{{client}}() gets options this rule cannot see into, so it cannot tell whether a timeout is set. Make the timeout visible at the call.",
      addSignal: "Add `signal: AbortSignal.timeout(10_000)`.",
      addTimeout: "Set a 10 s timeout.",
    },
    schema: [
      {
        type: "object",
        additionalProperties: false,
        properties: {
          reportUnresolved: {
            type: "boolean",
            description:
              "Report calls whose options come from somewhere the rule cannot follow (a parameter, an import). Off by default: the rule stays silent when it cannot tell.",
          },
          wrappers: {
            type: "array",
            items: { type: "string" },
            uniqueItems: true,
            description:
              "Names of project functions that already bound whatever is passed to them, e.g. `withTimeout` in `withTimeout(fetch(url), 5000)`. Calls inside their arguments are not reported.",
          },
          fetchFunctions: {
            type: "array",
            items: { type: "string" },
            uniqueItems: true,
            description:
              "Extra global or imported names that behave like `fetch(url, init)` and need a `signal`.",
          },
        },
      },
    ],
    defaultOptions: [{ reportUnresolved: false, wrappers: [], fetchFunctions: [] }],
  },
  create(context, [options]) {
    const resolver = resolverFor(context.sourceCode);
    const wrappers = new Set(options.wrappers ?? []);
    const fetchFunctions = options.fetchFunctions ?? [];
    const candidates: Outbound[] = [];
    const defaultWrites: { target: Node; value: Node }[] = [];
    return {
      CallExpression(node) {
        const outbound = classifyOutbound(resolver, node, fetchFunctions);
        if (outbound) candidates.push(outbound);
      },
      AssignmentExpression(node) {
        // X.defaults.timeout = value
        const left = node.left;
        if (
          node.operator !== "=" ||
          left.type !== AST_NODE_TYPES.MemberExpression ||
          memberName(left) !== "timeout"
        )
          return;
        const defaults = skipWrappers(left.object);
        if (
          defaults.type !== AST_NODE_TYPES.MemberExpression ||
          memberName(defaults) !== "defaults"
        )
          return;
        defaultWrites.push({ target: defaults.object, value: node.right });
      },
      "Program:exit"() {
        if (candidates.length === 0) return;
        const axiosDefaults = new Map<TSESTree.CallExpression | null, Node>();
        for (const write of defaultWrites) {
          const origin = resolver.origin(write.target);
          if (isModule(origin, "axios")) axiosDefaults.set(null, write.value);
          else if (
            origin.kind === "result" &&
            origin.path.length === 0 &&
            origin.call.type === AST_NODE_TYPES.CallExpression
          ) {
            axiosDefaults.set(origin.call, write.value);
          }
        }
        const ctx: Context = {
          resolver,
          reportUnresolved: options.reportUnresolved === true,
          axiosDefaults,
        };
        for (const outbound of candidates) {
          const problem = checkOutbound(ctx, outbound);
          if (!problem || insideWrapper(outbound.call, wrappers)) continue;
          context.report({
            node: problem.node,
            messageId: problem.messageId,
            data: {
              ...problem.data,
              client: displayName(context.sourceCode.getText(outbound.call.callee), outbound.label),
            },
            ...(problem.fix
              ? { suggest: [{ messageId: problem.fix.messageId, fix: problem.fix.fix }] }
              : {}),
          });
        }
      },
    };
  },
});
