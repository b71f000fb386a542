// Structured logging of runtime events.
import type { Observer } from "./events.js";

/**
 * Fields of a structured log line: flat values with bounded cardinality (names, states, counts).
 */
export type LogFields = Readonly<Record<string, string | number | boolean>>;

/** Where log lines go. Adapt your logger (pino, winston, console) with two one-line functions. */
export interface Logger {
  /** Something on-call should look at: a breaker opened, the retry budget ran out. */
  warn(message: string, fields: LogFields): void;
  /** A return towards normal: a breaker half-open or closed again. */
  info(message: string, fields: LogFields): void;
}

/** Writes one JSON object per line to `console.warn` / `console.info`. */
export const consoleLogger: Logger = {
  warn: (message, fields) => {
    console.warn(JSON.stringify({ level: "warn", msg: message, ...fields }));
  },
  info: (message, fields) => {
    console.info(JSON.stringify({ level: "info", msg: message, ...fields }));
  },
};

/** Drops every line (for tests). */
export const silentLogger: Logger = {
  warn: () => undefined,
  info: () => undefined,
};

/**
 * An observer that logs breaker transitions and retry-budget exhaustion. Exhaustion is logged
 * once per episode and dependency: the next line comes only after a retry or hedge was allowed
 * again, so an outage does not turn into one line per call.
 *
 * A `classify` hook that throws is logged once per operation (`resilience.classify.failed`).
 * Every reconfiguration is logged, an applied one as info and a refused one as a warning: a
 * change of settings at run time is what an operator looks for first when behaviour changes.
 *
 * Fields: `event` (`resilience.breaker.transition`, `resilience.retry_budget.exhausted`,
 * `resilience.classify.failed`, `resilience.reconfigured` or `resilience.reconfigure.refused`),
 * `dependency`, and `from`, `to`, `calls`, `failures`, `slowCalls` for transitions,
 * `operation`, `tokens` for exhaustion, `operation`, `verdict` for a hook that threw, or
 * `source` and `changed` (the paths, comma-separated) or `problems` (their count) for a
 * reconfiguration. A shared stale cache whose Redis stops taking its writes is a warning
 * (`resilience.stale_store.refused`, with `operation`, `reason` and `policy`).
 */
export function logEvents(logger: Logger): Observer {
  const exhausted = new Set<string>();
  const hookFailed = new Set<string>();
  return (event) => {
    switch (event.type) {
      case "breaker-transition": {
        const { dependency, from, to, window, endpoint } = event;
        const fields = {
          event: "resilience.breaker.transition",
          dependency,
          ...(endpoint === undefined ? {} : { endpoint }),
          from,
          to,
          ...window,
        };
        // with several endpoints each has its own breaker: the line names which
        const at = endpoint === undefined ? "" : ` (endpoint ${endpoint})`;
        const message = `${dependency}: circuit breaker${at} ${from} -> ${to}`;
        if (to === "open" || to === "isolated") logger.warn(message, fields);
        else logger.info(message, fields);
        return;
      }
      case "budget-exhausted": {
        if (exhausted.has(event.dependency)) return;
        exhausted.add(event.dependency);
        const { dependency, operation, tokens } = event;
        logger.warn(`${dependency}: retry budget exhausted, retries refused until it refills`, {
          event: "resilience.retry_budget.exhausted",
          dependency,
          operation,
          tokens,
        });
        return;
      }
      case "classify-failed": {
        // a hook that throws throws on every attempt: one line per operation is enough
        const key = `${event.dependency}.${event.operation}`;
        if (hookFailed.has(key)) return;
        hookFailed.add(key);
        const { dependency, operation, verdict } = event;
        const reason = event.error instanceof Error ? event.error.message : String(event.error);
        logger.warn(`${key}: the classify hook threw (${reason}); built-in verdicts apply`, {
          event: "resilience.classify.failed",
          dependency,
          operation,
          verdict,
        });
        return;
      }
      case "retry-scheduled":
      case "hedge-launched":
        exhausted.delete(event.dependency);
        return;
      case "reconfigured": {
        const { dependency, source, changed } = event;
        logger.info(`${dependency}: reconfigured ${changed.join(", ") || "(no value changed)"}`, {
          event: "resilience.reconfigured",
          dependency,
          source,
          changed: changed.join(","),
        });
        return;
      }
      case "reconfigure-refused": {
        const { dependency, source, problems } = event;
        logger.warn(
          `${dependency}: reconfiguration refused, nothing applied: ${problems.join("; ")}`,
          {
            event: "resilience.reconfigure.refused",
            dependency,
            source,
            problems: problems.length,
          },
        );
        return;
      }
      case "stale-store-refused": {
        // reported once until the store takes a write again (docs/store.md)
        const { dependency, operation, reason } = event;
        const { usedBytes, maxBytes, policy } = event;
        const why =
          reason === "memory"
            ? `it uses ${String(usedBytes)} of its maxmemory of ${String(maxBytes)} bytes`
            : `its maxmemory-policy ${policy ?? ""} may evict other keys to make room`;
        logger.warn(
          `${dependency}.${operation}: stale responses are not written to Redis: ${why}`,
          {
            event: "resilience.stale_store.refused",
            dependency,
            operation,
            reason,
            ...(policy === undefined ? {} : { policy }),
          },
        );
        return;
      }
      default:
        return;
    }
  };
}
