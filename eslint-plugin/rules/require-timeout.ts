import { AST_NODE_TYPES, type TSESTree } from "@typescript-eslint/types";
import type { TSESLint } from "@typescript-eslint/utils";
import { DefinitionType } from "../utils/scope.js";
import {
  calleeName,
  contains,
  isFunction,
  memberName,
  outerParent,
  propertyKey,
  skipWrappers,
  type Node,
} from "../utils/ast.js";
import {
  callArgumentIndex,
  classifyOutbound,
  clientArguments,
  configArgument,
  type Library,
  type Outbound,
} from "../utils/clients.js";
import { createRule } from "../utils/create-rule.js";
import { optionFix } from "../utils/fixes.js";
import { exactKey, meansNoTimeout, readKey, type KeyLookup } from "../utils/objects.js";
import {
  defaultsToNoTimeout,
  fromParameter,
  keyWrites,
  reachOutbound,
  signalVerdict,
} from "../utils/reach.js";
import { escapes, instanceOf, instanceTimeout, type Instance } from "../utils/instances.js";
import { resolverOf } from "../utils/project.js";
import { isModule, type Resolver } from "../utils/resolve.js";

export type Options = [
  {
    /** Report calls whose options the rule cannot see into (a parameter, an imported object). */
    reportUnresolved?: boolean;
    /** Functions that already bound whatever is passed to them (`withTimeout(fetch(u), 5000)`). */
    wrappers?: string[];
    /** Extra names that behave like `fetch(url, init)` (a global or an import). */
    fetchFunctions?: string[];
    /** Report clients created without a timeout whose calls are out of sight (exported, returned). */
    checkInstances?: boolean;
    /** Ask the type checker about callees, options and helpers the file cannot show. */
    useTypeInformation?: boolean;
  },
];

export type MessageIds =
  | "fetchWithoutSignal"
  | "missingTimeout"
  | "disabledTimeout"
  | "timeoutNotEnforced"
  | "unresolvedOptions"
  | "untimedSignal"
  | "optInTimeout"
  | "noTimeoutByDefault"
  | "instanceWithoutTimeout"
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
  /** The verdict turns on what the caller passes: the calls in this file may settle it. */
  readonly callerDecides?: true;
}

const SUGGESTED_MS = "10_000";
const UNKNOWN_KEY: KeyLookup = { kind: "unknown" };
const SIGNAL_TEXT = `AbortSignal.timeout(${SUGGESTED_MS})`;

interface Context {
  readonly resolver: Resolver;
  readonly reportUnresolved: boolean;
  /** Last `X.defaults.timeout = value` per axios client: the module (`null`) or a creating call. */
  readonly axiosDefaults: ReadonlyMap<TSESTree.CallExpression | null, Node>;
  /** Creating calls already reported where they are: calls through them are not reported again. */
  readonly reportedInstances: ReadonlySet<TSESTree.CallExpression>;
}

/**
 * What one key of a call's options says, with two corrections to `readKey`: an assignment
 * `cfg.key = v` counts only when it surely runs before the call (not inside an `if`), and a
 * signal that can never fire on its own (an optional signal from the caller, a controller no
 * timer aborts) is told apart.
 */
function optionAt(ctx: Context, config: Node, key: string, call: Node): OptionLookup {
  const found = syntacticOption(ctx, config, key, call);
  return found.kind === "unknown" ? (typedOption(ctx, config, key) ?? found) : found;
}

/**
 * What a key's lookup becomes when the file cannot see it: `caller` is a `signal` that only a
 * caller may supply (the options come from a parameter whose type has an optional `signal`).
 */
type OptionLookup = KeyLookup | { readonly kind: "caller" };

/**
 * With type information, an options object the file cannot see into is judged by its type: a
 * type without the key means it is absent; an optional `signal` on a parameter's type is the
 * caller's signal, which nothing here arms. Other optional keys stay unknown.
 */
function typedOption(ctx: Context, config: Node, key: string): OptionLookup | null {
  const project = ctx.resolver.project;
  if (!project) return null;
  const inner = skipWrappers(config);
  if (inner.type === AST_NODE_TYPES.ObjectExpression) {
    // `{ ...init, headers }`: the key can only come from a spread; ask about each spread.
    let caller = false;
    for (const prop of inner.properties) {
      if (prop.type !== AST_NODE_TYPES.SpreadElement) continue;
      const part = syntacticOption(ctx, prop.argument, key, config);
      if (part.kind === "value") return null;
      if (part.kind === "absent") continue;
      const typed = typedOption(ctx, prop.argument, key);
      if (typed === null || typed.kind === "unknown" || typed.kind === "value") return null;
      if (typed.kind === "caller") caller = true;
    }
    return caller ? { kind: "caller" } : { kind: "absent" };
  }
  const presence = project.keyOfType(inner, key);
  if (presence === "absent") return { kind: "absent" };
  if (presence === "optional" && key === "signal" && fromParameter(ctx.resolver, inner))
    return { kind: "caller" };
  return null;
}

function syntacticOption(ctx: Context, config: Node, key: string, call: Node): KeyLookup {
  const inner = skipWrappers(config);
  if (inner.type === AST_NODE_TYPES.Identifier) {
    const binding = ctx.resolver.constantBinding(inner);
    if (binding && binding.keys.length === 0) {
      const writes = keyWrites(ctx.resolver, inner, key, call);
      if (writes.length > 0) {
        const sure = writes.filter((write) => write.sure);
        const last = sure[sure.length - 1];
        if (last) return { kind: "value", node: last.value, via: key };
        const init = readKey(ctx.resolver, binding.init, exactKey(key));
        if (init.kind !== "unknown") return init;
      }
    }
  }
  if (inner.type === AST_NODE_TYPES.ObjectExpression) return literalOption(ctx, inner, key);
  return readKey(ctx.resolver, config, exactKey(key));
}

/**
 * An object literal's key, reading spreads of `cond && { ... }` and `cond ? { ... } : { ... }`
 * (a falsy spread adds nothing) that `readKey` leaves unknown.
 */
function literalOption(ctx: Context, object: TSESTree.ObjectExpression, key: string): KeyLookup {
  for (let i = object.properties.length - 1; i >= 0; i--) {
    const prop = object.properties[i]!;
    if (prop.type !== AST_NODE_TYPES.SpreadElement) {
      const name = propertyKey(prop);
      // A computed key: let readKey resolve it or give up.
      if (name === null) return readKey(ctx.resolver, object, exactKey(key));
      if (name !== key) continue;
      return prop.kind === "init" ? { kind: "value", node: prop.value, via: key } : UNKNOWN_KEY;
    }
    const spread = skipWrappers(prop.argument);
    const branches =
      spread.type === AST_NODE_TYPES.LogicalExpression && spread.operator === "&&"
        ? [spread.right]
        : spread.type === AST_NODE_TYPES.ConditionalExpression
          ? [spread.consequent, spread.alternate]
          : [spread];
    const found = branches.map((branch) => readKey(ctx.resolver, branch, exactKey(key)));
    const hit = found.find((lookup) => lookup.kind !== "absent");
    if (hit) return hit;
  }
  return { kind: "absent" };
}

/** Whether a value set for `key` really bounds the request. */
function bounds(ctx: Context, key: string, node: Node): boolean {
  if (meansNoTimeout(ctx.resolver, node) || defaultsToNoTimeout(ctx.resolver, node)) return false;
  return key !== "signal" || signalVerdict(ctx.resolver, node).kind !== "never";
}

function untimed(outbound: Outbound, signal: Node, ctx: Context): Problem | null {
  const verdict = signalVerdict(ctx.resolver, signal);
  if (verdict.kind !== "never") return null;
  if (verdict.reason === "opt-in")
    return {
      // where the conditional timer is handed over: the reader sees the condition there
      node: signal,
      messageId: "optInTimeout",
      data: {
        client: outbound.label,
        when: verdict.when,
        unset:
          verdict.unset === "zero"
            ? "its setting defaults to a value that means none"
            : "nothing gives its setting a default",
      },
      fix: null,
    };
  return {
    node: outbound.call,
    messageId: "untimedSignal",
    data: {
      client: outbound.label,
      reason:
        verdict.reason === "optional"
          ? "is the caller's optional signal, absent unless the caller passes one"
          : "comes from an AbortController that no timer aborts",
    },
    fix: null,
  };
}

/** The request is bounded only if a caller passes a signal (typed options from a parameter). */
function callerSignal(outbound: Outbound): Problem {
  return {
    node: outbound.call,
    messageId: "untimedSignal",
    data: {
      client: outbound.label,
      reason: "can only come from the caller's options, which need not carry one",
    },
    fix: null,
    callerDecides: true,
  };
}

function unresolved(ctx: Context, outbound: Outbound, at: Node): Problem | null {
  if (!ctx.reportUnresolved) return null;
  return {
    node: at,
    messageId: "unresolvedOptions",
    data: { client: outbound.label },
    callerDecides: true,
  };
}

/** `fetch(url, init)`: bounded only by an abort signal (undici's fetch may also get a dispatcher). */
export function checkFetch(ctx: Context, outbound: Outbound): Problem | null {
  const args = clientArguments(outbound);
  if (args === null) return null;
  const init: Node | undefined = configArgument(outbound);
  const first = args[0];
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
  if (args.some((arg) => arg.type === AST_NODE_TYPES.SpreadElement)) return null;
  if (init === undefined) return missingSignal(outbound, null);
  return signalOf(ctx, outbound, init, true);
}

function signalOf(ctx: Context, outbound: Outbound, init: Node, inCall: boolean): Problem | null {
  const signal = optionAt(ctx, init, "signal", outbound.call);
  if (signal.kind === "unknown") return unresolved(ctx, outbound, init);
  if (signal.kind === "caller") return callerSignal(outbound);
  if (signal.kind === "value" && !meansNoTimeout(ctx.resolver, signal.node)) {
    const problem = untimed(outbound, signal.node, ctx);
    if (problem === null) return null;
    if (
      outbound.label === "undici fetch" &&
      readKey(ctx.resolver, init, exactKey("dispatcher")).kind !== "absent"
    )
      return null;
    return problem;
  }
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
    existing === undefined ? null : optionFixAt(outbound, "signal", SIGNAL_TEXT, existing);
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
  const timeout = optionAt(ctx, config, keys.timeout, outbound.call);
  if (timeout.kind === "value") {
    if (defaultsToNoTimeout(ctx.resolver, timeout.node))
      return {
        verdict: "decided-none",
        problem: {
          node: outbound.call,
          messageId: "noTimeoutByDefault",
          data: { client: outbound.label, key: keys.timeout },
          fix: null,
        },
      };
    if (!meansNoTimeout(ctx.resolver, timeout.node)) return { verdict: "bounded", problem: null };
    return {
      verdict: "decided-none",
      problem: disabled(outbound, timeout.node, keys.timeout, suggestValue),
    };
  }
  if (timeout.kind === "unknown" || timeout.kind === "caller")
    return { verdict: "unknown", problem: unresolved(ctx, outbound, config) };
  for (const key of keys.alsoBounding) {
    const other = optionAt(ctx, config, key, outbound.call);
    if (other.kind === "unknown")
      return { verdict: "unknown", problem: unresolved(ctx, outbound, config) };
    if (other.kind === "value" && bounds(ctx, key, other.node))
      return { verdict: "bounded", problem: null };
  }
  return { verdict: "absent", problem: null };
}

/** `optionFix` at the options argument, which `.call` shifts by one and `.apply` puts in a list. */
function optionFixAt(
  outbound: Outbound,
  key: string,
  value: string,
  existing: Node | null,
): ReturnType<typeof optionFix> {
  const index = callArgumentIndex(outbound, outbound.configIndex);
  return index === null ? null : optionFix(outbound.call, index, key, value, existing);
}

function disabled(outbound: Outbound, value: Node, key: string, suggestValue: string): Problem {
  const fix = optionFixAt(outbound, key, suggestValue, value);
  return {
    node: outbound.call,
    messageId: "disabledTimeout",
    data: { client: outbound.label, key },
    fix: fix && { messageId: "addTimeout", fix },
  };
}

/** The call goes through an instance whose default timeout is set to none (0). */
function disabledDefault(outbound: Outbound): Problem {
  return {
    node: outbound.call,
    messageId: "disabledTimeout",
    data: { client: outbound.label, key: "timeout" },
    fix: null,
  };
}

function missing(outbound: Outbound, key: string, suggestValue: string): Problem {
  const fix = optionFixAt(outbound, key, suggestValue, null);
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
    return meansNoTimeout(ctx.resolver, lookup.node) ||
      defaultsToNoTimeout(ctx.resolver, lookup.node)
      ? "none"
      : "bounded";
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
  if (outbound.instance.some((created) => ctx.reportedInstances.has(created))) return null;
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
    if (verdict === "none") return disabledDefault(outbound);
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
  if (outbound.instance.some((created) => ctx.reportedInstances.has(created))) return null;
  for (const created of outbound.instance) {
    const config = created.arguments[0];
    if (config === undefined) continue;
    const verdict = defaultVerdict(ctx, readKey(ctx.resolver, config, exactKey("timeout")));
    if (verdict === "bounded") return null;
    if (verdict === "unknown") return unresolved(ctx, outbound, outbound.call);
    if (verdict === "none") return disabledDefault(outbound);
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
    const signal = optionAt(ctx, options, "signal", outbound.call);
    if (signal.kind === "unknown") return unresolved(ctx, outbound, options);
    if (signal.kind === "value" && bounds(ctx, "signal", signal.node)) return null;
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
        // Piped into (`body.pipe(req)`, `pipeline(body, req, cb)`): streams attach no timers.
        if (use.type === AST_NODE_TYPES.Identifier && pipedInto(use)) continue;
        // Handed to other code, which may attach its own handlers.
        return "escapes";
      }
      return result;
    }
    return "escapes";
  }
}

const PIPES = new Set(["pipeline", "finished"]);

/** Whether a request is only the destination of a stream: `src.pipe(req)`, `pipeline(src, req)`. */
function pipedInto(use: TSESTree.Identifier): boolean {
  const up = use.parent;
  if (up.type !== AST_NODE_TYPES.CallExpression || !up.arguments.includes(use)) return false;
  const callee = skipWrappers(up.callee);
  if (callee.type === AST_NODE_TYPES.MemberExpression)
    return (
      (memberName(callee) === "pipe" && up.arguments[0] === use) ||
      PIPES.has(memberName(callee) ?? "")
    );
  return callee.type === AST_NODE_TYPES.Identifier && PIPES.has(callee.name);
}

const DESTROYS = /\.(destroy|abort)\s*\(/;

function destroysRequest(resolver: Resolver, handler: TSESTree.CallExpressionArgument): boolean {
  if (handler.type === AST_NODE_TYPES.SpreadElement) return true;
  const value = resolver.valueOf(handler);
  if (isFunction(value)) return DESTROYS.test(resolver.sourceCode.getText(value));
  if (value.type === AST_NODE_TYPES.Identifier) {
    const variable = resolver.variableOf(value);
    const def = variable?.defs[0];
    if (def?.type === DefinitionType.FunctionName)
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
      : disabledDefault(outbound);
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
  // f(...args), or f.apply(self, args), may carry the options anywhere.
  const args = clientArguments(outbound);
  if (
    args === null ||
    args.some((arg, i) => i <= outbound.configIndex && arg.type === AST_NODE_TYPES.SpreadElement)
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

/** What each client does when nothing bounds a request. */
const DEFAULTS: Record<Library, string> = {
  fetch:
    "on Node, fetch waits up to about 300 s for response headers (undici's headersTimeout) and has no limit on the whole exchange; browsers set none",
  axios: "axios's default timeout is 0, which means none",
  got: "got sets no timeout by default",
  ky: "ky's default is 10 s",
  http: "Node's http and https set no timeout by default",
  undici: "undici waits up to about 300 s for headers and between body chunks by default",
};

/** A created instance reported where it is made: a default that means none, or no timeout with its calls out of sight. */
function checkInstance(
  resolver: Resolver,
  instance: Instance,
  axiosDefaults: ReadonlyMap<TSESTree.CallExpression | null, Node>,
): {
  messageId: "noTimeoutByDefault" | "disabledTimeout" | "instanceWithoutTimeout";
  data: Record<string, string>;
} | null {
  const client = instance.library === "axios" ? "axios" : "got";
  if (instance.library === "axios" && (axiosDefaults.has(instance.call) || axiosDefaults.has(null)))
    return null;
  const timeout = instanceTimeout(resolver, instance);
  if (timeout.kind === "unknown") return null;
  if (timeout.kind === "value") {
    if (defaultsToNoTimeout(resolver, timeout.node))
      return {
        messageId: "noTimeoutByDefault",
        data: { client: `${client} instance`, key: "timeout" },
      };
    if (!meansNoTimeout(resolver, timeout.node)) return null;
    if (!escapes(resolver, instance.call)) return null;
    return { messageId: "disabledTimeout", data: { client: `${client} instance`, key: "timeout" } };
  }
  if (!escapes(resolver, instance.call)) return null;
  return { messageId: "instanceWithoutTimeout", data: { client } };
}

/** How deep `f(init) → g(init) → fetch(url, init)` is followed back to the calls that build init. */
const MAX_FORWARDS = 3;

/**
 * A call whose options are a parameter of the function around it, as each call of that function
 * in this file sees it: the options replaced by what that call passes (`request(url, init)` →
 * `fetch(url, init)`), through at most `MAX_FORWARDS` such functions. Null when the options are
 * not a bare parameter, when the function changes them, or when the file does not show every use
 * of the function.
 */
function forwardedFrom(
  resolver: Resolver,
  outbound: Outbound,
  depth = 0,
): { readonly site: TSESTree.CallExpression; readonly outbound: Outbound }[] | null {
  if (depth >= MAX_FORWARDS) return null;
  const config = configArgument(outbound);
  const args = clientArguments(outbound);
  if (config === undefined || args === null) return null;
  const inner = skipWrappers(config);
  if (inner.type !== AST_NODE_TYPES.Identifier) return null;
  const variable = resolver.variableOf(inner);
  if (!variable || variable.references.some((ref) => ref.isWrite() && !ref.init)) return null;
  // `init.signal = ...` or `Object.assign(init, ...)` before the call: the function decides.
  for (const ref of variable.references) {
    const up = ref.identifier.parent;
    if (
      up.type === AST_NODE_TYPES.MemberExpression &&
      up.object === ref.identifier &&
      up.parent.type === AST_NODE_TYPES.AssignmentExpression &&
      up.parent.left === up
    )
      return null;
    if (up.type === AST_NODE_TYPES.CallExpression && calleeName(up) === "assign") return null;
  }
  const sites = resolver.callerArguments(inner);
  if (sites === null) return null;
  const result: { site: TSESTree.CallExpression; outbound: Outbound }[] = [];
  for (const site of sites) {
    // a recursive call handing the same options on (a retry) adds no call of its own
    const passed = site.value && skipWrappers(site.value);
    if (passed?.type === AST_NODE_TYPES.Identifier && resolver.variableOf(passed) === variable)
      continue;
    const replaced = args.slice(0, outbound.configIndex);
    if (site.value !== null) replaced.push(site.value as TSESTree.Expression);
    const seen: Outbound = { ...outbound, through: { kind: "apply", args: replaced } };
    const further = forwardedFrom(resolver, seen, depth + 1);
    if (further)
      for (const next of further) result.push({ site: next.site, outbound: next.outbound });
    else result.push({ site: site.call, outbound: seen });
  }
  return result.length > 0 ? result : null;
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
        "{{client}}() has no abort signal: {{why}}. Pass `signal: AbortSignal.timeout(ms)` (or AbortSignal.any with the caller's signal).",
      missingTimeout:
        "{{client}}() sets no `{{key}}`: {{why}}. Set `{{key}}` on the call or on the client's defaults.",
      disabledTimeout:
        "{{client}}() sets `{{key}}` to a value that means no timeout (0, Infinity, null, undefined, or false for ky). Use a finite number of milliseconds.",
      timeoutNotEnforced:
        "{{client}}() only gets a `timeout` event: Node does not stop the request. Destroy it in the handler (`req.on('timeout', () => req.destroy())`) or pass `signal: AbortSignal.timeout(ms)`.",
      untimedSignal:
        "{{client}}() is bounded only by a signal that {{reason}}, so nothing ends a stalled request. Combine it with a timer: `AbortSignal.any([signal, AbortSignal.timeout(ms)])`.",
      optInTimeout:
        "{{client}}() gets a timer only when `{{when}}`, and {{unset}}, so by default {{why}}. Give the setting a finite default.",
      noTimeoutByDefault:
        "{{client}}() takes `{{key}}` from a parameter whose default means no timeout (0, Infinity, null, undefined), so callers that leave it out get none. Give it a finite default.",
      instanceWithoutTimeout:
        "This {{client}} instance has no `timeout` ({{why}}) and is used outside this file, where its calls cannot be checked. Set `timeout` here.",
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
          checkInstances: {
            type: "boolean",
            description:
              "Report `axios.create()` / `got.extend()` instances made without a timeout where they are created, when they are exported or returned so their calls are out of sight. On by default.",
          },
          useTypeInformation: {
            type: "boolean",
            description:
              "Use the type checker (when the parser has `parserOptions.projectService` or `project`) to recognise fetch functions and clients by their types, and to read the keys of typed options objects. Without type information the option does nothing.",
          },
        },
      },
    ],
    defaultOptions: [
      {
        reportUnresolved: false,
        wrappers: [],
        fetchFunctions: [],
        checkInstances: true,
        useTypeInformation: false,
      },
    ],
  },
  create(context, [options]) {
    const resolver = resolverOf(context, options.useTypeInformation);
    const wrappers = new Set(options.wrappers ?? []);
    const fetchFunctions = options.fetchFunctions ?? [];
    const candidates: Outbound[] = [];
    const instances: Instance[] = [];
    const defaultWrites: { target: Node; value: Node }[] = [];
    return {
      CallExpression(node) {
        const outbound =
          classifyOutbound(resolver, node, fetchFunctions) ?? reachOutbound(resolver, node);
        if (outbound) candidates.push(outbound);
        else if (options.checkInstances !== false) {
          const instance = instanceOf(resolver, node);
          if (instance) instances.push(instance);
        }
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
        if (candidates.length === 0 && instances.length === 0) return;
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
        const reportedInstances = new Set<TSESTree.CallExpression>();
        for (const instance of instances) {
          const problem = checkInstance(resolver, instance, axiosDefaults);
          if (!problem) continue;
          reportedInstances.add(instance.call);
          context.report({
            node: instance.call,
            messageId: problem.messageId,
            data: { ...problem.data, why: DEFAULTS[instance.library] },
          });
        }
        const ctx: Context = {
          resolver,
          reportUnresolved: options.reportUnresolved === true,
          axiosDefaults,
          reportedInstances,
        };
        const report = (problem: Problem, outbound: Outbound, via: string): void => {
          const client = displayName(
            context.sourceCode.getText(outbound.call.callee),
            outbound.label,
          );
          context.report({
            node: problem.node,
            messageId: problem.messageId,
            data: {
              why: DEFAULTS[outbound.library],
              ...problem.data,
              client: via + client,
            },
            ...(problem.fix
              ? { suggest: [{ messageId: problem.fix.messageId, fix: problem.fix.fix }] }
              : {}),
          });
        };
        for (const outbound of candidates) {
          if (insideWrapper(outbound.call, wrappers)) continue;
          const problem = checkOutbound(ctx, outbound);
          if (problem && !problem.callerDecides) {
            report(problem, outbound, "");
            continue;
          }
          // The options are the function's parameter: judge what each call here passes, and
          // report at that call (the signal it passes, when that is the problem).
          const sites = forwardedFrom(resolver, outbound);
          if (sites === null) {
            if (problem) report(problem, outbound, "");
            continue;
          }
          let passedOn = false;
          for (const { site, outbound: seen } of sites) {
            if (insideWrapper(site, wrappers)) continue;
            const found = checkOutbound(ctx, seen);
            if (found?.callerDecides) passedOn = true;
            if (!found || found.callerDecides) continue;
            const at = found.node === outbound.call ? site : found.node;
            const via = `${displayName(context.sourceCode.getText(site.callee), "the call")}() → `;
            report({ ...found, node: at, fix: null }, outbound, via);
          }
          // Some call hands on options it got from its own caller: the verdict stays open there.
          if (passedOn && problem) report(problem, outbound, "");
        }
      },
    };
  },
});
