/**
 * The front door's refusals are RFC 9457 problem details on every adapter: content type, a stable
 * `type`, a title, the status and the retry hint, with nothing of the request in them; HEAD
 * requests get the headers and no body.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PROBLEM_TITLES, PROBLEM_TYPE_BASE } from "../../templates/runtime/index.js";
import { ADAPTERS, send, sendRaw, startShop, type RawAnswer, type Shop } from "./adapters.js";
import { repoRoot, within } from "./helpers.js";

const shops: Shop[] = [];
afterEach(async () => {
  for (const shop of shops.splice(0)) await shop.close();
});

const MARK = "reflected-b6a1f0";

function expectProblem(
  answer: RawAnswer,
  status: number,
  kind: keyof typeof PROBLEM_TITLES,
  retryAfter?: number,
) {
  expect(answer.status).toBe(status);
  expect(answer.headers["content-type"]).toBe("application/problem+json");
  expect(Number(answer.headers["content-length"])).toBe(Buffer.byteLength(answer.body));
  const body = JSON.parse(answer.body) as Record<string, unknown>;
  expect(body).toEqual({
    type: `${PROBLEM_TYPE_BASE}${kind}`,
    title: PROBLEM_TITLES[kind],
    status,
    ...(retryAfter === undefined ? {} : { retryAfter }),
  });
  if (retryAfter === undefined) expect(answer.headers["retry-after"]).toBeUndefined();
  else expect(answer.headers["retry-after"]).toBe(String(retryAfter));
  expect(answer.body).not.toContain(MARK);
}

async function until(condition: () => boolean) {
  await within(
    (async () => {
      while (!condition()) await new Promise((r) => setTimeout(r, 5));
    })(),
    3_000,
  );
}

describe.each(ADAPTERS)("problem details on %s", (adapter) => {
  it("answers 400, 409, 422, 503 and 504 with application/problem+json, echoing nothing", async () => {
    const shop = await startShop(adapter);
    shops.push(shop);
    const { port } = shop;
    const hostile = { authorization: MARK, "x-note": MARK };

    expectProblem(
      await send(port, "POST", `/orders?${MARK}`, hostile, MARK),
      400,
      "idempotency-key-missing",
    );
    expectProblem(
      await send(port, "POST", "/orders", {
        ...hostile,
        "idempotency-key": `${MARK} ${"x".repeat(300)}`,
      }),
      400,
      "idempotency-key-invalid",
    );

    // the first request with the key holds; a repeat meanwhile is told to come back later
    const key = { authorization: "a", "idempotency-key": `k-${MARK}` };
    const first = send(port, "POST", "/orders", { ...key, "x-hold": "1" }, "one");
    await until(() => shop.held === 1);
    const busy = await send(port, "POST", "/orders", key, "one");
    const wait = Number(busy.headers["retry-after"]);
    expect(wait).toBeGreaterThanOrEqual(1);
    expectProblem(busy, 409, "idempotency-key-in-use", wait);

    // both slots busy: the next request is shed
    const second = send(
      port,
      "POST",
      "/orders",
      { ...key, "idempotency-key": "k2", "x-hold": "1" },
      "two",
    );
    await until(() => shop.held === 2);
    expectProblem(await send(port, "GET", `/sync/${MARK}`, hostile), 503, "overloaded", 2);
    shop.release();
    expect((await first).status).toBe(201);
    expect((await second).status).toBe(201);

    expectProblem(
      await send(port, "POST", "/orders", key, "another body"),
      422,
      "idempotency-key-reused",
    );
    expectProblem(
      await send(port, "POST", `/orders/${MARK}`, { ...hostile, "x-request-timeout-ms": "0" }),
      504,
      "deadline-exceeded",
    );
    expect(shop.orders).toBe(2);
  });

  it("answers a HEAD request with the problem's headers and no body", async () => {
    const shop = await startShop(adapter);
    shops.push(shop);
    const raw = await sendRaw(
      shop.port,
      "HEAD /sync/a HTTP/1.1\r\nhost: 127.0.0.1\r\nx-request-timeout-ms: 0\r\nconnection: close\r\n\r\n",
    );
    const [head, rest] = raw.split("\r\n\r\n");
    expect(head).toMatch(/^HTTP\/1\.1 504 /);
    expect(head!.toLowerCase()).toContain("content-type: application/problem+json");
    expect(rest).toBe("");
  });
});

describe("problem types", () => {
  it("each names a heading of docs/services.md", () => {
    const doc = readFileSync(join(repoRoot, "docs/services.md"), "utf8");
    const anchors = new Set(
      [...doc.matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
        m[1]!
          .trim()
          .toLowerCase()
          .replace(/[^\p{L}\p{N} _-]/gu, "")
          .replace(/ /g, "-"),
      ),
    );
    expect(PROBLEM_TYPE_BASE).toBe(
      "https://github.com/resgen-dev/resgen/blob/main/docs/services.md#problem-",
    );
    for (const kind of Object.keys(PROBLEM_TITLES))
      expect(anchors, kind).toContain(`problem-${kind}`);
  });
});
