/**
 * Breaker windows that cannot mean anything: a minimum so small that two unlucky calls open the
 * breaker, a time window that never holds the minimum at the declared rate, and a window shorter
 * than the calls it is meant to judge.
 */
import { formatMs } from "../language/durations.js";
import type { ResolvedPolicy } from "../model/resolved.js";
import {
  finding,
  inherited,
  num,
  sectionRef,
  setAt,
  type AnalyzeContext,
  type Finding,
  type Place,
} from "./context.js";

export const MIN_MEANINGFUL_CALLS = 5;

export function checkBreaker(policy: ResolvedPolicy, ctx: AnalyzeContext): Finding[] {
  const b = policy.breaker;
  if (!b) return [];
  const out: Finding[] = [];
  const section: Place = { ref: sectionRef(policy, "breaker"), key: true };
  const minCallsAt: Place[] = [{ ref: setAt(policy.provenance["breaker.minCalls"]) }, section];
  const windowAt: Place[] = [{ ref: setAt(policy.provenance["breaker.window.duration"]) }, section];
  const from = inherited(ctx, "breaker", policy.provenance["breaker"]);

  // a count window never holds more calls than its size: a larger minimum is never reached
  if (b.window.kind === "count" && b.minCalls > b.window.calls) {
    const calls = b.window.calls;
    const minCallsSet = setAt(policy.provenance["breaker.minCalls"]);
    out.push(
      finding(
        ctx,
        policy,
        "RG106",
        minCallsSet
          ? [{ ref: minCallsSet }]
          : [{ ref: setAt(policy.provenance["breaker.window.calls"]) }, section],
        `breaker.minCalls ${b.minCalls}${minCallsSet ? "" : " (the default)"} must be at most window.calls ${calls}: a count window of ${calls} calls never holds ${b.minCalls}, so the breaker can never open`,
        `lower minCalls to ${calls} or less, or raise window.calls to ${b.minCalls} or more`,
      ),
    );
  }

  // the runtime's buckets are at least 1ms long: a shorter window silently becomes `buckets` ms
  if (b.window.kind === "time" && b.window.durationMs < b.window.buckets) {
    out.push(
      finding(
        ctx,
        policy,
        "RG106",
        [...windowAt],
        `breaker.window.duration ${formatMs(b.window.durationMs)} must be at least 1ms per bucket (${b.window.buckets} buckets: ${formatMs(b.window.buckets)}): shorter buckets are rounded up, so the window would really last ${formatMs(b.window.buckets)}`,
        `lengthen window.duration to ${formatMs(b.window.buckets)} or more (10s is typical), or use fewer buckets`,
      ),
    );
  }

  // open-duration backoff: the cap bounds every open period, so one below the base would cut
  // even the first short
  const backoff = b.openBackoff;
  if (backoff !== undefined && backoff.capMs < b.openForMs) {
    out.push(
      finding(
        ctx,
        policy,
        "RG106",
        [{ ref: setAt(policy.provenance["breaker.openFor.cap"]) }, section],
        `breaker.openFor.cap ${formatMs(backoff.capMs)} must be at least openFor.base ${formatMs(b.openForMs)}: the cap bounds every open period, so the breaker would never stay open for its base`,
        `raise cap to ${formatMs(b.openForMs)} or more (a few minutes is typical), or lower base`,
      ),
    );
  }

  if (b.minCalls < MIN_MEANINGFUL_CALLS) {
    const failures = Math.max(1, Math.ceil(b.failureRate * b.minCalls));
    out.push(
      finding(
        ctx,
        policy,
        "RG211",
        minCallsAt,
        `breaker.minCalls ${b.minCalls} is too few for a rate to mean anything: ${failures} failed call${failures === 1 ? "" : "s"} out of ${b.minCalls} reach${failures === 1 ? "es" : ""} the ${num(b.failureRate * 100)}% threshold and open${failures === 1 ? "s" : ""} the breaker for ${formatMs(b.openForMs)}${from}`,
        "raise minCalls to 20 or more (at least 5), so one unlucky burst cannot cut the dependency off",
      ),
    );
  }

  if (b.window.kind === "time") {
    const rps = policy.latency.rps;
    const windowS = b.window.durationMs / 1000;
    if (rps !== undefined && rps * windowS < b.minCalls) {
      const held = Math.floor(rps * windowS);
      out.push(
        finding(
          ctx,
          policy,
          "RG212",
          windowAt,
          `breaker window ${formatMs(b.window.durationMs)} holds at most ${num(rps)} rps × ${num(windowS)} s = ${held} calls at peak, fewer than minCalls ${b.minCalls}: the breaker can never open${from}`,
          `lengthen window.duration to at least ${formatMs(Math.ceil((b.minCalls / rps) * 1000))}, or lower minCalls to ${Math.max(1, held)}`,
        ),
      );
    }
    const slowest = policy.operations.reduce((m, op) => Math.max(m, op.timeout.attemptMs), 0);
    if (slowest > 0 && b.window.durationMs < 2 * slowest) {
      out.push(
        finding(
          ctx,
          policy,
          "RG213",
          windowAt,
          `breaker window ${formatMs(b.window.durationMs)} is shorter than twice the attempt timeout (2 × ${formatMs(slowest)} = ${formatMs(2 * slowest)}): a call that times out is recorded after the window it started in has rotated out, so slow failures never add up${from}`,
          `lengthen window.duration to at least ${formatMs(2 * slowest)} (10s is typical)`,
        ),
      );
    }
  }
  return out;
}
