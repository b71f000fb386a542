import { AST_NODE_TYPES, type TSESTree } from "@typescript-eslint/types";
import type { TSESLint } from "@typescript-eslint/utils";
import { DefinitionType } from "./scope.js";
import {
  calleeName,
  contains,
  isFunction,
  keyName,
  memberName,
  outerParent,
  skipWrappers,
  walk,
  type Node,
} from "./ast.js";
import { classifyCallee, invocationThrough, type Outbound } from "./clients.js";
import { meansNoTimeout } from "./objects.js";
import { enclosingClass, isModule, type Origin, type Resolver } from "./resolve.js";

/**
 * What a file says about calls the client classifier cannot name on its own: fetch reached through
 * fallbacks, reassigned locals and class fields, `(secure ? https : http).request(...)`, and
 * instance calls through members that are not verb-named (`this.axios(config)`).
 */

const MAX_DEPTH = 8;
const FETCH_MODULES = ["node-fetch", "cross-fetch", "isomorphic-fetch", "make-fetch-happen"];
const GLOBAL_NAMES = new Set(["globalThis", "window", "self", "global"]);
/** Functions whose name says they return the fetch to use: `getFetch`, `getDefaultFetch`. */
const FETCH_GETTER = /^get(?:Default|Global|Native|Platform)?Fetch(?:Impl|Implementation|Fn)?$/;

type Variable = TSESLint.Scope.Variable;

function fetchOrigin(origin: Origin): boolean {
  if (origin.kind === "global") return origin.path.length === 1 && origin.path[0] === "fetch";
  if (origin.kind === "module")
    return (
      (FETCH_MODULES.includes(origin.module) && origin.path.length === 0) ||
      isModule(origin, "undici", "fetch")
    );
  return false;
}

/**
 * A local that stands for the global object: `const global = getGlobalObject()`, or a value cast
 * to `Window` / `typeof globalThis`.
 */
function isGlobalObjectAlias(resolver: Resolver, node: Node, depth: number): boolean {
  if (depth > MAX_DEPTH) return false;
  if (node.type === AST_NODE_TYPES.TSAsExpression || node.type === AST_NODE_TYPES.TSTypeAssertion) {
    const type = node.typeAnnotation;
    if (
      type.type === AST_NODE_TYPES.TSTypeReference &&
      type.typeName.type === AST_NODE_TYPES.Identifier &&
      type.typeName.name === "Window"
    )
      return true;
    if (
      type.type === AST_NODE_TYPES.TSTypeQuery &&
      type.exprName.type === AST_NODE_TYPES.Identifier &&
      GLOBAL_NAMES.has(type.exprName.name)
    )
      return true;
  }
  const inner = skipWrappers(node);
  if (inner.type === AST_NODE_TYPES.CallExpression) {
    const name = calleeName(inner);
    return name !== null && /^getGlobal/i.test(name);
  }
  if (inner.type === AST_NODE_TYPES.Identifier) {
    const binding = resolver.constantBinding(inner);
    if (binding && binding.keys.length === 0)
      return isGlobalObjectAlias(resolver, binding.init, depth + 1);
  }
  return false;
}

/** The values written to a variable: its initialiser and every later `x = value`. */
function writtenValues(variable: Variable): Node[] | null {
  const values: Node[] = [];
  for (const def of variable.defs) {
    if (def.type === DefinitionType.Variable) {
      if (def.node.id.type === AST_NODE_TYPES.Identifier && def.node.init)
        values.push(def.node.init);
    } else if (def.type === DefinitionType.Parameter) {
      const parent = def.name.parent;
      if (parent.type === AST_NODE_TYPES.AssignmentPattern && parent.left === def.name)
        values.push(parent.right);
    } else {
      return null;
    }
  }
  for (const ref of variable.references) {
    if (!ref.isWrite() || ref.init) continue;
    const parent = ref.identifier.parent;
    if (parent.type === AST_NODE_TYPES.AssignmentExpression && parent.left === ref.identifier) {
      if (parent.operator === "=" || parent.operator === "||=" || parent.operator === "??=")
        values.push(parent.right);
    }
  }
  return values;
}

/**
 * Whether an expression can only be, or falls back to, a fetch function: `fetch`,
 * `globalThis.fetch`, `opts.fetch || globalThis.fetch`, a local reassigned from fetch.
 */
export function isFetchValue(resolver: Resolver, node: Node, depth = 0): boolean {
  if (depth > MAX_DEPTH) return false;
  const inner = skipWrappers(node);
  switch (inner.type) {
    case AST_NODE_TYPES.LogicalExpression:
      return (
        inner.operator !== "&&" &&
        (isFetchValue(resolver, inner.right, depth + 1) ||
          isFetchValue(resolver, inner.left, depth + 1))
      );
    case AST_NODE_TYPES.ConditionalExpression:
      return (
        isFetchValue(resolver, inner.consequent, depth + 1) ||
        isFetchValue(resolver, inner.alternate, depth + 1)
      );
    case AST_NODE_TYPES.CallExpression: {
      // a getter named for what it returns: getFetch(), Shims.getDefaultFetch()
      const name = calleeName(inner);
      if (name !== null && FETCH_GETTER.test(name)) return true;
      // fetch.bind(globalThis)
      const callee = skipWrappers(inner.callee);
      return (
        callee.type === AST_NODE_TYPES.MemberExpression &&
        memberName(callee) === "bind" &&
        isFetchValue(resolver, callee.object, depth + 1)
      );
    }
    case AST_NODE_TYPES.MemberExpression: {
      if (fetchOrigin(resolver.origin(inner))) return true;
      const object = skipWrappers(inner.object);
      return (
        memberName(inner) === "fetch" &&
        object.type === AST_NODE_TYPES.Identifier &&
        isGlobalObjectAlias(resolver, object, depth + 1)
      );
    }
    case AST_NODE_TYPES.Identifier: {
      if (fetchOrigin(resolver.origin(inner))) return true;
      const variable = resolver.variableOf(inner);
      if (!variable || variable.defs.length === 0) return false;
      const values = writtenValues(variable);
      if (values === null) return false;
      if (
        values.some((value) => !contains(value, inner) && isFetchValue(resolver, value, depth + 1))
      )
        return true;
      // `function send(fetchImpl, ...)` called here with `fetch` or a fallback to it.
      const sites = isParameterLike(variable) ? resolver.callerArguments(inner) : null;
      return (
        sites !== null &&
        sites.some((site) => site.value !== null && isFetchValue(resolver, site.value, depth + 1))
      );
    }
    default:
      return false;
  }
}

/** Every value given to `this.<name>` (or `this.#name`) in a class: field initialisers and assignments in any method. */
export function classFieldValues(body: TSESTree.ClassBody, name: string): Node[] {
  let fields = fieldCache.get(body);
  if (!fields) {
    fields = new Map();
    fieldCache.set(body, fields);
  }
  let values = fields.get(name);
  if (!values) {
    values = collectFieldValues(body, name);
    fields.set(name, values);
  }
  return values;
}

const fieldCache = new WeakMap<TSESTree.ClassBody, Map<string, Node[]>>();

function collectFieldValues(body: TSESTree.ClassBody, name: string): Node[] {
  const values: Node[] = [];
  const visit = (node: Node): void => {
    if (
      node.type === AST_NODE_TYPES.AssignmentExpression &&
      node.left.type === AST_NODE_TYPES.MemberExpression &&
      node.left.object.type === AST_NODE_TYPES.ThisExpression &&
      !node.left.computed &&
      keyName(node.left.property) === name
    )
      values.push(node.right);
  };
  for (const member of body.body) {
    if (
      member.type === AST_NODE_TYPES.PropertyDefinition &&
      !member.static &&
      !member.computed &&
      keyName(member.key) === name &&
      member.value
    )
      values.push(member.value);
    if (member.type === AST_NODE_TYPES.MethodDefinition && member.value.body)
      walkShallow(member.value.body, visit);
  }
  return values;
}

/** Visits a subtree, entering arrow functions (same `this`) but not other functions or classes. */
function walkShallow(root: Node, visit: (node: Node) => void): void {
  walk(root, (node) => {
    if (
      node !== root &&
      (node.type === AST_NODE_TYPES.FunctionExpression ||
        node.type === AST_NODE_TYPES.FunctionDeclaration ||
        node.type === AST_NODE_TYPES.ClassBody)
    )
      return false;
    visit(node);
    return true;
  });
}

function fetchOutbound(call: TSESTree.CallExpression, label: string): Outbound {
  return { library: "fetch", call, configIndex: 1, verb: null, instance: [], label };
}

function httpModule(resolver: Resolver, node: Node, depth: number): string | null {
  if (depth > MAX_DEPTH) return null;
  const inner = skipWrappers(node);
  if (inner.type === AST_NODE_TYPES.ConditionalExpression) {
    const a = httpModule(resolver, inner.consequent, depth + 1);
    const b = httpModule(resolver, inner.alternate, depth + 1);
    return a !== null && b !== null ? (a === b ? a : "http") : null;
  }
  if (inner.type === AST_NODE_TYPES.LogicalExpression && inner.operator !== "&&") {
    // `options.httpModule ?? http`: the module used unless a caller supplies another.
    const a = httpModule(resolver, inner.left, depth + 1);
    const b = httpModule(resolver, inner.right, depth + 1);
    return a !== null && b !== null ? (a === b ? a : "http") : (a ?? b);
  }
  const origin = resolver.origin(inner);
  if (isModule(origin, ["http", "https"])) return origin.kind === "module" ? origin.module : null;
  if (inner.type === AST_NODE_TYPES.Identifier) {
    const binding = resolver.constantBinding(inner);
    if (binding && binding.keys.length === 0) return httpModule(resolver, binding.init, depth + 1);
    // `function send(httpModule, ...)` called here with `isHttps ? https : http`.
    const sites = resolver.callerArguments(inner);
    if (sites === null) return null;
    let found: string | null = null;
    for (const site of sites) {
      const module = site.value === null ? null : httpModule(resolver, site.value, depth + 1);
      if (module === null) return null;
      found = found === null || found === module ? module : "http";
    }
    return found;
  }
  return null;
}

/** A function in this file whose every `return` hands back a fetch function (`getTelemetryFetch()`). */
function returnsFetch(resolver: Resolver, call: TSESTree.CallExpression): boolean {
  const name = calleeName(call);
  if (name !== null && FETCH_GETTER.test(name)) return true;
  const callee = skipWrappers(call.callee);
  if (callee.type !== AST_NODE_TYPES.Identifier) return false;
  const variable = resolver.variableOf(callee);
  const def = variable?.defs.length === 1 ? variable.defs[0] : undefined;
  let fn: Node | undefined;
  if (def?.type === DefinitionType.FunctionName) fn = def.node;
  else if (def?.type === DefinitionType.Variable && def.node.init) fn = skipWrappers(def.node.init);
  if (!fn || !isFunction(fn)) return false;
  if (fn.body.type !== AST_NODE_TYPES.BlockStatement) return isFetchValue(resolver, fn.body);
  const returns: Node[] = [];
  walkShallow(fn.body, (node) => {
    if (node.type === AST_NODE_TYPES.ReturnStatement && node.argument) returns.push(node.argument);
  });
  return returns.length > 0 && returns.every((value) => isFetchValue(resolver, value));
}

/**
 * The label of a value that is a fetch function as this file shows it: a local or fallback
 * (`opts.fetch || fetch`), a class field given fetch, or a local getter that returns it.
 */
function fetchTarget(resolver: Resolver, node: Node): string | null {
  if (
    node.type === AST_NODE_TYPES.MemberExpression &&
    node.object.type === AST_NODE_TYPES.ThisExpression
  ) {
    const key = node.computed ? null : keyName(node.property);
    const body = key === null ? null : enclosingClass(node);
    if (key === null || body === null) return null;
    return classFieldValues(body, key).some((value) => isFetchValue(resolver, value))
      ? `this.${key}`
      : null;
  }
  if (node.type === AST_NODE_TYPES.CallExpression && returnsFetch(resolver, node)) return "fetch";
  return isFetchValue(resolver, node) ? "fetch" : null;
}

/**
 * Classifies calls `classifyOutbound` leaves out. Cheap shapes are tested first; only calls
 * whose callee is a local, a `this` member, a call or a member of a conditional are resolved.
 */
export function reachOutbound(resolver: Resolver, call: TSESTree.CallExpression): Outbound | null {
  const callee = skipWrappers(call.callee);
  switch (callee.type) {
    case AST_NODE_TYPES.Identifier:
      return isFetchValue(resolver, callee) ? fetchOutbound(call, "fetch") : null;
    case AST_NODE_TYPES.CallExpression:
      return returnsFetch(resolver, callee) ? fetchOutbound(call, "fetch") : null;
    case AST_NODE_TYPES.MemberExpression: {
      const object = skipWrappers(callee.object);
      // fetchImpl.call(self, url, init), this.fetch.apply(self, [url, init])
      const through = invocationThrough(call);
      if (through) {
        const label = fetchTarget(resolver, object);
        if (label !== null) return { ...fetchOutbound(call, label), through };
      }
      if (object.type === AST_NODE_TYPES.ThisExpression && !callee.computed) {
        const key = keyName(callee.property);
        const body = key === null ? null : enclosingClass(callee);
        if (key === null || body === null) return null;
        const values = classFieldValues(body, key);
        if (values.some((value) => isFetchValue(resolver, value)))
          return fetchOutbound(call, `this.${key}`);
        // this.axios(config) on an instance the class created.
        return key.startsWith("#") ? null : classifyCallee(resolver, call);
      }
      const name = memberName(callee);
      if (name === "fetch" && isFetchValue(resolver, callee)) return fetchOutbound(call, "fetch");
      if (
        (name === "request" || name === "get") &&
        (object.type === AST_NODE_TYPES.ConditionalExpression ||
          object.type === AST_NODE_TYPES.LogicalExpression ||
          object.type === AST_NODE_TYPES.Identifier)
      ) {
        const module = httpModule(resolver, object, 0);
        if (module === null) return null;
        const first = call.arguments[0];
        const optionsFirst =
          first !== undefined &&
          first.type !== AST_NODE_TYPES.SpreadElement &&
          resolver.valueOf(first).type === AST_NODE_TYPES.ObjectExpression;
        return {
          library: "http",
          call,
          configIndex: first === undefined || optionsFirst ? 0 : 1,
          verb: name === "get" ? "get" : null,
          instance: [],
          label: `${module}.${name}`,
        };
      }
      return null;
    }
    default:
      return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Signals

/** Whether a signal can end the request on a timer, can never fire on its own, or is out of sight. */
export type SignalVerdict =
  | { readonly kind: "bounded" }
  | { readonly kind: "unknown" }
  | { readonly kind: "never"; readonly reason: "optional" | "untimed" }
  | {
      readonly kind: "never";
      readonly reason: "opt-in";
      /** The condition that arms the timer, as written (`this.timeout > 0`). */
      readonly when: string;
      /** What leaves it unarmed: a default that means none, or no default at all. */
      readonly unset: "zero" | "missing";
    };

const BOUNDED: SignalVerdict = { kind: "bounded" };
const UNKNOWN_SIGNAL: SignalVerdict = { kind: "unknown" };

const TIMERS = new Set(["setTimeout", "setInterval"]);

/** Whether `node` runs inside a callback given to `setTimeout` / `setInterval` (or is that callback). */
function insideTimer(node: Node): boolean {
  for (let current: Node | undefined = node; current; current = current.parent) {
    const parent: Node | undefined = current.parent;
    if (
      parent?.type === AST_NODE_TYPES.CallExpression &&
      parent.arguments.includes(current as TSESTree.CallExpressionArgument)
    ) {
      const name = calleeName(parent);
      if (name !== null && TIMERS.has(name)) return true;
    }
  }
  return false;
}

/** `new AbortController()`'s signal: bounded when some `abort` runs on a timer. */
function controllerVerdict(resolver: Resolver, controller: TSESTree.Identifier): SignalVerdict {
  const variable = resolver.variableOf(controller);
  if (!variable) return UNKNOWN_SIGNAL;
  const values = writtenValues(variable);
  if (
    values === null ||
    values.length === 0 ||
    !values.every((value) => {
      const inner = skipWrappers(value);
      return (
        inner.type === AST_NODE_TYPES.NewExpression &&
        inner.callee.type === AST_NODE_TYPES.Identifier &&
        inner.callee.name === "AbortController" &&
        resolver.isGlobal(inner.callee)
      );
    })
  )
    return UNKNOWN_SIGNAL;
  for (const ref of variable.references) {
    const use = ref.identifier;
    if (ref.isWrite()) continue;
    const parent = use.parent;
    if (parent.type === AST_NODE_TYPES.MemberExpression && parent.object === use) {
      const name = memberName(parent);
      if (name === "abort" && insideTimer(parent)) return BOUNDED;
      continue;
    }
    // Handed to other code (`timeout(controller, ms)`), which may abort it on a timer.
    return UNKNOWN_SIGNAL;
  }
  // Aborted only by other events (unsubscribe, cleanup), or never.
  return { kind: "never", reason: "untimed" };
}

function isParameterLike(variable: Variable): boolean {
  return variable.defs.some((def) => def.type === DefinitionType.Parameter);
}

/** Whether a value is a parameter of its function, or a member of one (`init.signal`). */
export function fromParameter(resolver: Resolver, node: Node): boolean {
  const { root } = memberRoot(node);
  if (root.type !== AST_NODE_TYPES.Identifier) return false;
  const variable = resolver.variableOf(root);
  return variable !== null && isParameterLike(variable);
}

/** A parameter the caller may leave out: `signal?: AbortSignal`, or `signal = undefined`. */
function optionalParameter(id: TSESTree.Identifier): boolean {
  if (id.optional) return true;
  const parent = id.parent;
  return (
    parent.type === AST_NODE_TYPES.AssignmentPattern &&
    parent.left === id &&
    skipWrappers(parent.right).type === AST_NODE_TYPES.Identifier &&
    (skipWrappers(parent.right) as TSESTree.Identifier).name === "undefined"
  );
}

/** The root identifier of `a.b?.c` and whether any link on the way is optional. */
function memberRoot(node: Node): { root: Node; optional: boolean } {
  let optional = false;
  let current = skipWrappers(node);
  while (current.type === AST_NODE_TYPES.MemberExpression) {
    if (current.optional) optional = true;
    current = skipWrappers(current.object);
  }
  return { root: current, optional };
}

function isAbortSignalCall(resolver: Resolver, node: Node, member: string): boolean {
  if (node.type !== AST_NODE_TYPES.CallExpression) return false;
  const callee = skipWrappers(node.callee);
  return (
    callee.type === AST_NODE_TYPES.MemberExpression &&
    memberName(callee) === member &&
    callee.object.type === AST_NODE_TYPES.Identifier &&
    callee.object.name === "AbortSignal" &&
    resolver.isGlobal(callee.object)
  );
}

/** What a `signal` option's value does, as far as the file shows. */
export function signalVerdict(resolver: Resolver, node: Node, depth = 0): SignalVerdict {
  if (depth > MAX_DEPTH) return UNKNOWN_SIGNAL;
  const inner = skipWrappers(node);
  if (meansNoTimeout(resolver, inner)) return { kind: "never", reason: "optional" };
  if (isAbortSignalCall(resolver, inner, "timeout")) return BOUNDED;
  if (isAbortSignalCall(resolver, inner, "any")) {
    const list = (inner as TSESTree.CallExpression).arguments[0];
    if (list === undefined || list.type !== AST_NODE_TYPES.ArrayExpression) return UNKNOWN_SIGNAL;
    const parts = list.elements.map((element) =>
      element === null || element.type === AST_NODE_TYPES.SpreadElement
        ? UNKNOWN_SIGNAL
        : signalVerdict(resolver, element, depth + 1),
    );
    if (parts.some((part) => part.kind === "bounded")) return BOUNDED;
    if (parts.length > 0 && parts.every((part) => part.kind === "never")) return parts[0]!;
    return UNKNOWN_SIGNAL;
  }
  if (
    inner.type === AST_NODE_TYPES.ConditionalExpression ||
    (inner.type === AST_NODE_TYPES.LogicalExpression && inner.operator === "&&")
  )
    return conditionalSignal(resolver, inner, depth);
  if (inner.type === AST_NODE_TYPES.MemberExpression) {
    const object = skipWrappers(inner.object);
    if (memberName(inner) === "signal" && object.type === AST_NODE_TYPES.Identifier) {
      const verdict = controllerVerdict(resolver, object);
      if (verdict.kind !== "unknown") return verdict;
    }
    if (memberRoot(inner).optional && fromParameter(resolver, inner))
      return { kind: "never", reason: "optional" };
    return UNKNOWN_SIGNAL;
  }
  if (inner.type === AST_NODE_TYPES.Identifier) {
    const variable = resolver.variableOf(inner);
    if (!variable || variable.defs.length !== 1) return UNKNOWN_SIGNAL;
    const def = variable.defs[0]!;
    const values = writtenValues(variable);
    if (values === null) return UNKNOWN_SIGNAL;
    const verdicts = values.map((value) => signalVerdict(resolver, value, depth + 1));
    // `if (!signal) signal = AbortSignal.timeout(5000)`: our own timer whenever the caller gives none.
    if (verdicts.some((verdict) => verdict.kind === "bounded")) return BOUNDED;
    if (def.type === DefinitionType.Parameter) {
      if (
        def.name.type === AST_NODE_TYPES.Identifier &&
        optionalParameter(def.name) &&
        verdicts.every((verdict) => verdict.kind !== "unknown")
      )
        return { kind: "never", reason: "optional" };
      return UNKNOWN_SIGNAL;
    }
    if (verdicts.length > 0 && verdicts.every((verdict) => verdict.kind === "never"))
      return verdicts[0]!;
    return UNKNOWN_SIGNAL;
  }
  return UNKNOWN_SIGNAL;
}

/**
 * `t > 0 ? AbortSignal.timeout(t) : undefined`, `t && AbortSignal.timeout(t)`: a timer armed
 * only when a setting is given. Bounded when the setting surely has a finite value; an opt-in
 * timer (never, reason `opt-in`) when its default means none (`?? 0`, `= 0`) or when nothing
 * gives it one (an optional parameter or key); unknown otherwise.
 */
function conditionalSignal(
  resolver: Resolver,
  node: TSESTree.ConditionalExpression | TSESTree.LogicalExpression,
  depth: number,
): SignalVerdict {
  const [test, whenSet, whenUnset] =
    node.type === AST_NODE_TYPES.LogicalExpression
      ? [node.left, node.right, null]
      : [node.test, node.consequent, node.alternate];
  const tested = testedSetting(test);
  if (tested === null) {
    if (node.type === AST_NODE_TYPES.LogicalExpression) return UNKNOWN_SIGNAL;
    const a = signalVerdict(resolver, whenSet, depth + 1);
    const b = signalVerdict(resolver, whenUnset!, depth + 1);
    if (a.kind === "bounded" && b.kind === "bounded") return BOUNDED;
    return a.kind === "never" && b.kind === "never" ? a : UNKNOWN_SIGNAL;
  }
  const [armed, unarmed] = tested.setWhenTrue ? [whenSet, whenUnset] : [whenUnset, whenSet];
  if (armed === null || signalVerdict(resolver, armed, depth + 1).kind !== "bounded")
    return UNKNOWN_SIGNAL;
  if (unarmed !== null && !meansNoTimeout(resolver, unarmed)) {
    const other = signalVerdict(resolver, unarmed, depth + 1);
    if (other.kind === "bounded") return BOUNDED;
    if (other.kind !== "never") return UNKNOWN_SIGNAL;
  }
  const setting = settingDefault(resolver, tested.value, depth + 1);
  if (setting === "set") return BOUNDED;
  if (setting === "unknown") return UNKNOWN_SIGNAL;
  return {
    kind: "never",
    reason: "opt-in",
    when: resolver.sourceCode.getText(test),
    unset: setting,
  };
}

const SET_WHEN_TRUE = new Set(["!==", "!=", ">", ">="]);
const SET_WHEN_FALSE = new Set(["===", "==", "<", "<="]);

/**
 * The setting a condition tests for presence, and whether "true" means it is set: `t`, `!t`,
 * `t > 0`, `t !== undefined`, `t != null`, `typeof t === "number"`, with either operand first.
 */
function testedSetting(test: Node): { value: Node; setWhenTrue: boolean } | null {
  const inner = skipWrappers(test);
  if (inner.type === AST_NODE_TYPES.UnaryExpression && inner.operator === "!") {
    const negated = testedSetting(inner.argument);
    return negated && { value: negated.value, setWhenTrue: !negated.setWhenTrue };
  }
  if (inner.type === AST_NODE_TYPES.Identifier || inner.type === AST_NODE_TYPES.MemberExpression)
    return { value: inner, setWhenTrue: true };
  if (inner.type !== AST_NODE_TYPES.BinaryExpression) return null;
  const left = skipWrappers(inner.left);
  const right = skipWrappers(inner.right);
  if (left.type === AST_NODE_TYPES.UnaryExpression && left.operator === "typeof") {
    if (right.type !== AST_NODE_TYPES.Literal || right.value !== "number") return null;
    if (inner.operator === "===" || inner.operator === "==")
      return { value: left.argument, setWhenTrue: true };
    if (inner.operator === "!==" || inner.operator === "!=")
      return { value: left.argument, setWhenTrue: false };
    return null;
  }
  const constant = (node: Node): boolean =>
    (node.type === AST_NODE_TYPES.Literal && (node.value === null || node.value === 0)) ||
    (node.type === AST_NODE_TYPES.Identifier && node.name === "undefined");
  const flipped: Record<string, string> = { ">": "<", ">=": "<=", "<": ">", "<=": ">=" };
  let value: Node;
  let operator: string = inner.operator;
  if (constant(right)) value = left;
  else if (constant(left)) {
    value = right;
    operator = flipped[operator] ?? operator;
  } else return null;
  if (SET_WHEN_TRUE.has(operator)) return { value, setWhenTrue: true };
  if (SET_WHEN_FALSE.has(operator)) return { value, setWhenTrue: false };
  return null;
}

/**
 * Whether a setting read at a call always has a finite value (`set`), may be left at a value
 * meaning none (`zero`: `opts.timeout ?? 0`, `{ timeout = 0 }`), may be missing (`missing`: an
 * optional parameter, or with types an optional key), or cannot be told (`unknown`).
 */
export function settingDefault(
  resolver: Resolver,
  node: Node,
  depth = 0,
): "set" | "zero" | "missing" | "unknown" {
  if (depth > MAX_DEPTH) return "unknown";
  const inner = skipWrappers(node);
  if (meansNoTimeout(resolver, inner)) return "zero";
  if (inner.type === AST_NODE_TYPES.Literal)
    return typeof inner.value === "number" && inner.value > 0 ? "set" : "unknown";
  if (
    inner.type === AST_NODE_TYPES.LogicalExpression &&
    (inner.operator === "??" || inner.operator === "||")
  ) {
    const fallback = settingDefault(resolver, inner.right, depth + 1);
    return fallback === "set" || fallback === "zero" ? fallback : "unknown";
  }
  if (inner.type === AST_NODE_TYPES.Identifier) {
    const variable = resolver.variableOf(inner);
    if (!variable || variable.defs.length !== 1) return "unknown";
    const def = variable.defs[0]!;
    const parent = def.name.parent;
    if (parent.type === AST_NODE_TYPES.AssignmentPattern && parent.left === def.name) {
      // `{ timeout = 0 }` or `timeout = 5000`: the default, when nothing reassigns it.
      if (variable.references.some((ref) => ref.isWrite() && !ref.init)) return "unknown";
      return settingDefault(resolver, parent.right, depth + 1);
    }
    if (def.type === DefinitionType.Parameter)
      return def.name.type === AST_NODE_TYPES.Identifier && optionalParameter(def.name)
        ? "missing"
        : "unknown";
    const binding = resolver.constantBinding(inner);
    return binding && binding.keys.length === 0
      ? settingDefault(resolver, binding.init, depth + 1)
      : "unknown";
  }
  if (inner.type === AST_NODE_TYPES.MemberExpression) {
    const object = skipWrappers(inner.object);
    const key = inner.computed ? null : keyName(inner.property);
    if (key === null) return "unknown";
    if (object.type === AST_NODE_TYPES.ThisExpression) {
      const body = enclosingClass(inner);
      const values = body ? classFieldValues(body, key) : [];
      if (values.length === 0) return "unknown";
      const each = values.map((value) => settingDefault(resolver, value, depth + 1));
      if (each.every((one) => one === "set")) return "set";
      return each.find((one) => one === "zero" || one === "missing") ?? "unknown";
    }
    // With types: an optional key the caller may leave out (`ctx.timeout` of `timeout?: number`).
    if (resolver.project?.keyOfType(object, key) === "optional") return "missing";
  }
  return "unknown";
}

// ---------------------------------------------------------------------------------------------
// Timeout values

/**
 * A timeout read from a parameter (or a destructured parameter) whose default means none and
 * that nothing reassigns: `constructor({ timeout = 0 } = {})` then `{ timeout }`.
 */
export function defaultsToNoTimeout(resolver: Resolver, node: Node): boolean {
  const inner = skipWrappers(node);
  if (inner.type !== AST_NODE_TYPES.Identifier) return false;
  const variable = resolver.variableOf(inner);
  if (!variable || variable.defs.length !== 1) return false;
  const def = variable.defs[0]!;
  if (def.type !== DefinitionType.Parameter) return false;
  if (variable.references.some((ref) => ref.isWrite() && !ref.init)) return false;
  const parent = def.name.parent;
  return (
    parent.type === AST_NODE_TYPES.AssignmentPattern &&
    parent.left === def.name &&
    meansNoTimeout(resolver, parent.right)
  );
}

const BRANCHING = new Set<string>([
  AST_NODE_TYPES.IfStatement,
  AST_NODE_TYPES.ConditionalExpression,
  AST_NODE_TYPES.LogicalExpression,
  AST_NODE_TYPES.SwitchCase,
  AST_NODE_TYPES.ForStatement,
  AST_NODE_TYPES.ForInStatement,
  AST_NODE_TYPES.ForOfStatement,
  AST_NODE_TYPES.WhileStatement,
  AST_NODE_TYPES.DoWhileStatement,
  AST_NODE_TYPES.CatchClause,
  AST_NODE_TYPES.ArrowFunctionExpression,
  AST_NODE_TYPES.FunctionExpression,
  AST_NODE_TYPES.FunctionDeclaration,
]);

/** Whether `node` runs every time `at` runs: it comes first and nothing between them branches. */
export function runsBefore(node: Node, at: Node): boolean {
  if (node.range[1] > at.range[0]) return false;
  for (let current: Node | undefined = node.parent; current; current = current.parent) {
    if (contains(current, at)) return true;
    if (BRANCHING.has(current.type)) return false;
  }
  return false;
}

/**
 * Assignments `cfg.<key> = value` to the object a variable holds, each with whether it surely
 * runs before `at`. Writes through a cast (`(cfg as any).key = v`) count too.
 */
export function keyWrites(
  resolver: Resolver,
  id: TSESTree.Identifier,
  key: string,
  at: Node,
): { value: Node; sure: boolean }[] {
  const variable = resolver.variableOf(id);
  if (!variable) return [];
  const writes: { value: Node; sure: boolean }[] = [];
  for (const ref of variable.references) {
    const { parent: member, child: use } = outerParent(ref.identifier);
    if (member?.type !== AST_NODE_TYPES.MemberExpression || member.object !== use) continue;
    if (memberName(member) !== key) continue;
    const assignment = member.parent;
    if (
      assignment.type !== AST_NODE_TYPES.AssignmentExpression ||
      assignment.left !== member ||
      assignment.operator !== "="
    )
      continue;
    if (assignment.range[0] > at.range[0]) continue;
    writes.push({ value: assignment.right, sure: runsBefore(assignment, at) });
  }
  return writes;
}
