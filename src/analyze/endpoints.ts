/**
 * Several endpoints (docs/policy.md, "Endpoints"). Each endpoint has its own breaker, which sees
 * only its share of the calls: at `latency.rps` spread over `endpoints.max` endpoints, a time
 * window may never hold `breaker.minCalls` calls of one endpoint, and that endpoint's breaker can
 * then never open, however often it fails. And the runtime chooses endpoints only for requests it
 * sends itself: with `transport: function` the caller's function does.
 */
import type { ResolvedPolicy } from "../model/resolved.js";
import { finding, inPolicy, num, type AnalyzeContext, type Finding } from "./context.js";

export function checkEndpoints(policy: ResolvedPolicy, ctx: AnalyzeContext): Finding[] {
  const endpoints = policy.endpoints;
  if (endpoints === undefined) return [];
  if (policy.transport === "function")
    return [
      finding(
        ctx,
        policy,
        "RG232",
        [{ ref: inPolicy(policy, "endpoints"), key: true }, { ref: inPolicy(policy, "transport") }],
        "endpoints with transport: function: the runtime sends no request of its own, so it cannot send an attempt to one endpoint or another",
        "remove endpoints (and choose the replica in your function, from ctx.endpoint of a hand-made dependency), or use transport: http",
      ),
    ];
  const breaker = policy.breaker;
  const rps = policy.latency.rps;
  if (breaker === null || rps === undefined || breaker.window.kind !== "time") return [];
  const seconds = breaker.window.durationMs / 1000;
  const each = (rps * seconds) / endpoints.max;
  if (each >= breaker.minCalls) return [];
  const fits = Math.floor((rps * seconds) / breaker.minCalls);
  return [
    finding(
      ctx,
      policy,
      "RG231",
      [
        { ref: inPolicy(policy, "endpoints", "max") },
        { ref: inPolicy(policy, "endpoints"), key: true },
      ],
      `each endpoint's breaker sees its share of the calls: latency.rps ${num(rps)}/s × window ${num(seconds)}s / endpoints.max ${String(endpoints.max)} = ${num(each)} calls per endpoint per window, under breaker.minCalls ${String(breaker.minCalls)}: a failing endpoint's breaker never opens, and its share of the calls keeps failing`,
      fits >= 2
        ? `declare endpoints.max as the number of replicas you run (at most ${String(fits)} fill the window), lower breaker.minCalls to ${String(Math.max(1, Math.floor(each)))}, or lengthen breaker.window`
        : `lower breaker.minCalls to ${String(Math.max(1, Math.floor(each)))} or lengthen breaker.window: at ${num(rps)}/s even two endpoints do not fill it`,
    ),
  ];
}
