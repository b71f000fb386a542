/**
 * Who calls the checkout service, as the outside thread plays them: the shop's web server
 * (one checkout per call, with the time it will wait in `x-request-timeout-ms`), and the
 * catalogue sync job (price pages, as fast as they are taken, honouring `Retry-After`).
 */
import { Agent, request, type IncomingHttpHeaders } from "node:http";
import { setTimeout as delay } from "node:timers/promises";
import type { CheckoutPage } from "./checkout-service.js";
import type { ScenarioOptions } from "./scenario.js";

/** What one caller saw of its checkout. */
export interface CallerOutcome {
  readonly i: number;
  /** `performance.now()` when it sent the request, and when it stopped waiting. */
  readonly sentAt: number;
  readonly deadlineAt: number;
  /** Until the answer, or the whole budget when it gave up. */
  readonly ms: number;
  readonly result: "ok" | "failed" | "gave-up";
  /** Why a checkout failed: the service's word for it, or the status. */
  readonly error?: string;
  /** For a page that came back: whether its recommendations were a fallback, and why. */
  readonly fallback?: CheckoutPage["fallback"];
}

/** A response as the caller read it. */
interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

// node:http with keep-alive rather than fetch: the callers are the harness, and fetch's CPU cost
// per request (several times node:http's on a small machine) would be the outside's, not the
// service's
const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });

/** POSTs `body`; rejects with the signal's reason once `signal` aborts. */
function post(
  url: string,
  headers: Readonly<Record<string, string>>,
  body: string,
  signal: AbortSignal,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        agent,
        headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
        signal,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        res.on("error", () =>
          reject(signal.aborted ? (signal.reason as Error) : new Error("reset")),
        );
      },
    );
    req.on("error", (error) => reject(signal.aborted ? (signal.reason as Error) : error));
    req.end(body);
  });
}

/** One checkout as its caller sees it: answered within `budgetMs`, or given up on. */
export async function checkoutOnce(
  url: string,
  i: number,
  budgetMs: number,
): Promise<CallerOutcome> {
  const sentAt = performance.now();
  const deadlineAt = sentAt + budgetMs;
  try {
    const { status, text } = await post(
      `${url}/checkout`,
      { "content-type": "application/json", "x-request-timeout-ms": String(budgetMs) },
      JSON.stringify({ i }),
      // the caller's own patience: past it, it closes the connection and shows an error
      AbortSignal.timeout(budgetMs),
    );
    const ms = performance.now() - sentAt;
    if (status === 200) {
      const page = JSON.parse(text) as CheckoutPage;
      return { i, sentAt, deadlineAt, ms, result: "ok", fallback: page.fallback };
    }
    let error = `status ${status}`;
    if (text !== "") error = (JSON.parse(text) as { error?: string }).error ?? error;
    return { i, sentAt, deadlineAt, ms, result: "failed", error };
  } catch (error) {
    if (error instanceof DOMException && error.name === "TimeoutError")
      return { i, sentAt, deadlineAt, ms: budgetMs, result: "gave-up" };
    const message = error instanceof Error ? error.message : String(error);
    return {
      i,
      sentAt,
      deadlineAt,
      ms: performance.now() - sentAt,
      result: "failed",
      error: message,
    };
  }
}

/** The web server's checkouts: `ratePerSecond` for `durationMs` from `start`, each on time. */
export async function callers(
  url: string,
  options: ScenarioOptions,
  start: number,
): Promise<CallerOutcome[]> {
  const interval = 1_000 / options.ratePerSecond;
  const total = Math.round((options.durationMs / 1_000) * options.ratePerSecond);
  const outcomes: Promise<CallerOutcome>[] = [];
  for (let i = 0; i < total; i++) {
    const wait = start + i * interval - performance.now();
    if (wait > 0) await delay(wait);
    outcomes.push(checkoutOnce(url, i, options.callerBudgetMs));
  }
  return Promise.all(outcomes);
}

export interface SyncCounts {
  /** Pages the service took (204). */
  readonly served: number;
  /** Pages it turned away (503 or 429), each followed by the `Retry-After` wait. */
  readonly shed: number;
  /** Pages that failed otherwise, or were not answered within 5 s. */
  readonly failed: number;
}

const PAGE = JSON.stringify({
  prices: Array.from({ length: 20 }, (_, k) => ({ sku: `sku-${k}`, priceCents: 1_000 + k })),
});

/** The catalogue sync job: `workers` connections pushing pages until the burst ends. */
export async function syncJob(
  url: string,
  burst: ScenarioOptions["syncBurst"],
  start: number,
): Promise<SyncCounts> {
  const from = start + burst.fromMs;
  const to = start + burst.toMs;
  let served = 0;
  let shed = 0;
  let failed = 0;
  const worker = async () => {
    while (performance.now() < to) {
      try {
        const { status, headers } = await post(
          `${url}/sync/prices`,
          { "content-type": "application/json", "x-priority": "background" },
          PAGE,
          AbortSignal.timeout(5_000),
        );
        if (status === 204) served++;
        else if (status === 503 || status === 429) {
          shed++;
          // told to come back later: a well-behaved job does, or stops when its window closes
          const seconds = Number(headers["retry-after"] ?? "1");
          const wait = Math.min(seconds * 1_000, to - performance.now());
          if (wait > 0) await delay(wait);
        } else failed++;
      } catch {
        failed++;
      }
    }
  };
  // the job opens its connections over the first 200 ms
  await Promise.all(
    Array.from({ length: burst.workers }, async (_, k) => {
      const wait = from + (200 * k) / burst.workers - performance.now();
      if (wait > 0) await delay(wait);
      await worker();
    }),
  );
  return { served, shed, failed };
}
