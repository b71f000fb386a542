import { AST_NODE_TYPES, type TSESTree } from "@typescript-eslint/types";
import { memberName, skipWrappers, type Node } from "./ast.js";
import type { HttpRequest } from "./http.js";
import { exactKey, readKey, stringValue } from "./objects.js";
import type { Resolver } from "./resolve.js";

/**
 * A request the shared classifier does not know, in a shape that names its method:
 * - `@actions/http-client`-style `postJson(url, body, headers)` / `patchJson` / `putJson` / `getJson`;
 * - a verb passed as a string: `sendStream("PATCH", url, stream, headers)`, `request("POST", url, body, headers)`;
 * - a fetch-shaped call through any callee, `getFetch()(url, { method: "POST" })`.
 * `headerArgs` are arguments that are header objects themselves, not options holding `headers`.
 */
export interface WriteCall extends HttpRequest {
  readonly headerArgs: readonly Node[];
}

const JSON_VERBS: Record<string, string> = {
  postJson: "POST",
  patchJson: "PATCH",
  putJson: "PUT",
  getJson: "GET",
  del: "DELETE",
};
const VERB_FIRST = new Set(["sendStream", "request", "sendRequest"]);
const HTTP_VERB = /^(GET|HEAD|OPTIONS|POST|PUT|PATCH|DELETE)$/i;

function plain(call: TSESTree.CallExpression): Node[] {
  return call.arguments.filter((arg) => arg.type !== AST_NODE_TYPES.SpreadElement);
}

/** Classifies a call as one of the shapes above, or null. */
export function writeCallOf(resolver: Resolver, call: TSESTree.CallExpression): WriteCall | null {
  const callee = skipWrappers(call.callee);
  const args = plain(call);
  if (args.length !== call.arguments.length) return null;
  if (callee.type === AST_NODE_TYPES.MemberExpression) {
    const name = memberName(callee);
    if (name !== null && name in JSON_VERBS && args.length >= 1) {
      const method = JSON_VERBS[name]!;
      const headers = method === "GET" || method === "DELETE" ? args[1] : args[2];
      return request(call, method, args[0], [], headers ? [headers] : []);
    }
    if (name !== null && VERB_FIRST.has(name) && args.length >= 2) {
      const verb = stringValue(resolver, args[0]!);
      if (verb !== null && HTTP_VERB.test(verb)) {
        const headers = args[3];
        return request(call, verb.toUpperCase(), args[1], [], headers ? [headers] : []);
      }
    }
  }
  // a fetch-shaped call: (url, { method: "POST", ... })
  if (args.length === 2) {
    const init = resolver.valueOf(args[1]!);
    if (init.type !== AST_NODE_TYPES.ObjectExpression) return null;
    const method = readKey(resolver, init, exactKey("method"));
    if (method.kind !== "value") return null;
    const verb = stringValue(resolver, method.node);
    if (verb === null || !HTTP_VERB.test(verb)) return null;
    return request(call, verb.toUpperCase(), args[0], [args[1]!], []);
  }
  return null;
}

function request(
  call: TSESTree.CallExpression,
  method: string,
  url: Node | undefined,
  optionArgs: Node[],
  headerArgs: Node[],
): WriteCall {
  return { call, method, url, optionArgs, outbound: null, headerArgs };
}
