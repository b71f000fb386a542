/**
 * Checks of service policies against themselves and against the dependencies they call: a
 * maximum deadline below the edge deadline, an edge deadline too short for one attempt at each
 * essential dependency, `calls:` naming a dependency nobody declared, a service without
 * admission control, idempotent routes whose keys expire too soon, sit on a safe method or
 * are shared between callers, and priorities any caller can claim with a header.
 */
import { formatMs } from "../language/durations.js";
import type { ResolvedPolicy } from "../model/resolved.js";
import type { ResolvedService } from "../model/service.js";
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import type { Code } from "../diagnostics/codes.js";
import { toDiagnostic, type AnalyzeContext, type Finding } from "./context.js";
import { moduleName } from "../model/identifiers.js";
import { serviceNames } from "../model/names.js";

function at(
  ctx: AnalyzeContext,
  service: ResolvedService,
  paths: readonly (readonly (string | number)[])[],
  key = false,
): { file: string; span: { start: number; end: number } } {
  for (const path of paths) {
    const ref = { file: service.file, path };
    const span = key ? ctx.locateKey(ref) : ctx.locate(ref);
    if (span) return { file: service.file, span };
  }
  return {
    file: service.file,
    span: ctx.locateKey({ file: service.file, path: ["service"] }) ?? { start: 0, end: 1 },
  };
}

function finding(
  code: Code,
  where: { file: string; span: { start: number; end: number } },
  message: string,
  hint?: string,
): Finding {
  return { code, ...where, message, ...(hint === undefined ? {} : { hint }) };
}

/**
 * The analyzer's findings for every service policy, given the dependency policies checked with
 * them. `rejected` names dependencies whose policies were checked but not accepted: their own
 * errors are reported, and a service that calls them is not told the name is unknown (RG503).
 */
export function analyzeServices(
  services: readonly ResolvedService[],
  policies: readonly ResolvedPolicy[],
  ctx: AnalyzeContext,
  rejected: ReadonlySet<string> = new Set(),
): Diagnostic[] {
  const out: Finding[] = [];
  const byName = new Map(policies.map((p) => [p.dependency, p]));
  // generated file names of one output folder: a service module must not overwrite another module
  const modules = new Map<string, string>(
    policies.map((p) => [
      `${moduleName(p.dependency)}.ts`,
      `dependency "${p.dependency}" (${p.file})`,
    ]),
  );
  for (const service of services) {
    const file = `${serviceNames(service.service).module}.ts`;
    const taken = modules.get(file);
    if (taken !== undefined) {
      out.push(
        finding(
          "RG301",
          at(ctx, service, [["service"]]),
          `service "${service.service}" and ${taken} both become ${file}`,
          "rename one of them",
        ),
      );
      continue;
    }
    modules.set(file, `service "${service.service}" (${service.file})`);
    try {
      const { edgeMs, maxMs } = service.deadline;
      if (maxMs < edgeMs) {
        const place =
          service.provenance["deadline.max"]?.origin === "policy"
            ? ["deadline", "max"]
            : ["deadline", "edge"];
        out.push(
          finding(
            "RG501",
            at(ctx, service, [place]),
            `the maximum deadline (${formatMs(maxMs)}) is shorter than the edge deadline (${formatMs(edgeMs)}): requests without a deadline would get more time than any caller may ask for`,
            `raise deadline.max to at least ${formatMs(edgeMs)}, or shorten deadline.edge`,
          ),
        );
      }
      if (service.admission === null) {
        out.push(
          finding(
            "RG504",
            at(ctx, service, [["service"]], true),
            `service "${service.service}" has no admission: every request is admitted, so under overload nothing is shed and every request slows down together`,
            "add admission: { maxConcurrent: 100, maxQueue: 100, queueTimeout: 500ms } sized for the service",
          ),
        );
      }
      out.push(...routeFindings(ctx, service));
      out.push(...headerRuleFindings(ctx, service));
      const called: ResolvedPolicy[] = [];
      if (service.calls === null) called.push(...policies);
      else {
        service.calls.forEach((name, i) => {
          const policy = byName.get(name);
          if (policy) called.push(policy);
          else if (!rejected.has(name))
            out.push(
              finding(
                "RG503",
                at(ctx, service, [["calls", i]]),
                `calls names "${name}", but no dependency policy checked with this service declares it`,
                "check the dependency's policy in the same run, or correct the name",
              ),
            );
        });
      }
      const essential = called.filter((p) => p.essential && p.operations.length > 0);
      const parts = essential.map((p) => ({
        name: p.dependency,
        ms: Math.min(...p.operations.map((o) => o.timeout.attemptMs)),
      }));
      const sum = parts.reduce((n, p) => n + p.ms, 0);
      if (parts.length > 0 && edgeMs < sum) {
        out.push(
          finding(
            "RG502",
            at(
              ctx,
              service,
              [["deadline", "edge"], ["service"]],
              service.provenance["deadline.edge"]?.origin !== "policy",
            ),
            `the edge deadline (${formatMs(edgeMs)}) is shorter than one attempt at each essential dependency: ${parts.map((p) => `${p.name} ${formatMs(p.ms)}`).join(" + ")} = ${formatMs(sum)}`,
            `give deadline.edge at least ${formatMs(sum)}, or shorten those attempt timeouts`,
          ),
        );
      }
    } catch (error) {
      out.push(
        finding(
          "RG299",
          at(ctx, service, [["service"]]),
          `the service checks failed on this policy (${error instanceof Error ? error.message : String(error)})`,
          "this is a bug in resgen: please report it with the policy",
        ),
      );
    }
  }
  return out.map(toDiagnostic);
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS", "TRACE"]);

/** RG505, RG506 and RG507 for each idempotent route of a service. */
function routeFindings(ctx: AnalyzeContext, service: ResolvedService): Finding[] {
  const out: Finding[] = [];
  service.routes.forEach((route, i) => {
    const idem = route.idempotency;
    if (idem === null) return;
    const base = ["routes", i] as const;
    if (idem.ttlMs < service.deadline.maxMs)
      out.push(
        finding(
          "RG505",
          at(ctx, service, [
            [...base, "idempotency", "ttl"],
            [...base, "idempotency"],
          ]),
          `${route.route} keeps idempotency keys for ${formatMs(idem.ttlMs)}, less than the longest deadline a caller may have (deadline.max ${formatMs(service.deadline.maxMs)}): a retry after that runs the handler again`,
          `give idempotency.ttl at least ${formatMs(service.deadline.maxMs)}`,
        ),
      );
    if (route.method !== null && SAFE_METHODS.has(route.method))
      out.push(
        finding(
          "RG506",
          at(ctx, service, [[...base, "route"]]),
          `${route.route} is a safe method: repeating it changes nothing, and a replayed answer may be stale`,
          "name the unsafe method, or remove idempotency from the route",
        ),
      );
    if (idem.scope.length === 0)
      out.push(
        finding(
          "RG507",
          at(ctx, service, [[...base, "idempotency", "scope"]]),
          `${route.route} keeps one key space for every caller (scope: []): a caller who reuses another's key receives that caller's stored response`,
          "remove scope to keep keys apart per Authorization and Cookie, or list the headers that identify the caller",
        ),
      );
  });
  return out;
}

const RANK: Readonly<Record<string, number>> = { critical: 3, high: 2, normal: 1, low: 0 };

/**
 * RG508 for each priority rule that raises a request's priority on a header the caller sets:
 * above the default, or above a rule after it that the request would otherwise meet. A header a
 * trusted proxy sets (`trusted: proxy`) is left alone.
 */
function headerRuleFindings(ctx: AnalyzeContext, service: ResolvedService): Finding[] {
  const out: Finding[] = [];
  const rules = service.priorities;
  rules.forEach((rule, i) => {
    if (rule.header === null || rule.trusted) return;
    // the lowest priority the same request could get without the header
    let floor: string = service.defaultPriority;
    for (const later of rules.slice(i + 1))
      if ((RANK[later.priority] ?? 0) < (RANK[floor] ?? 0)) floor = later.priority;
    if ((RANK[rule.priority] ?? 0) <= (RANK[floor] ?? 0)) return;
    const sent = rule.value === null ? rule.header : `${rule.header}: ${rule.value}`;
    const base = ["priorities", "rules", i] as const;
    out.push(
      finding(
        "RG508",
        at(ctx, service, [[...base, "header"], base]),
        `any caller can send ${sent} and have its requests handled as ${rule.priority} instead of ${floor}: under overload it takes the place of every other caller`,
        "if a proxy in front of the service sets this header and removes it from what callers send, say so with trusted: proxy on the header; otherwise match the route instead",
      ),
    );
  });
  return out;
}
