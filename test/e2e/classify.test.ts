/**
 * A 200 that says "pending", over a real socket: retry.on's body condition retries it and the
 * call returns the real answer; a classify hook given to the generated client sees each
 * response (docs/runtime.md, "Classifying outcomes"). Bounded in time; nothing sleeps.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildAndImport, settlesWithin } from "./helpers.js";

interface Job {
  status: string;
  total?: number;
}
interface Generated {
  createJobsClient(config: {
    baseUrl: string;
    classify?: (
      result: { type: string; status?: number; body?: unknown },
      context: { builtIn: string },
    ) => string | undefined;
    observer?: (event: { type: string; verdict?: string }) => void;
  }): { getJob(input: { id: string }): Promise<Job> };
}

let server: Server;
let baseUrl: string;
const served = new Map<string, number>();

beforeAll(async () => {
  server = createServer((req, res) => {
    const n = (served.get(req.url ?? "") ?? 0) + 1;
    served.set(req.url ?? "", n);
    res.setHeader("content-type", "application/json");
    // two pending answers, then the job
    res.end(JSON.stringify(n <= 2 ? { status: "pending" } : { status: "done", total: 42 }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("classifying responses over HTTP", () => {
  it("retries a 200 that says pending, then returns the real answer", async () => {
    const gen = await buildAndImport<Generated>("classify", ["test/e2e/fixtures/jobs.yaml"]);
    const verdicts: (string | undefined)[] = [];
    const client = gen.createJobsClient({
      baseUrl,
      observer: (e) => {
        if (e.type === "attempt-end") verdicts.push(e.verdict);
      },
    });
    const job = await settlesWithin(client.getJob({ id: "j1" }), 5_000);
    expect(job).toEqual({ status: "done", total: 42 });
    expect(served.get("/jobs/j1")).toBe(3);
    expect(verdicts).toEqual(["transient", "transient", "success"]);
  });

  it("hands each response to the client's classify hook, which may accept a pending answer", async () => {
    const gen = await buildAndImport<Generated>("classify", ["test/e2e/fixtures/jobs.yaml"]);
    const seen: [number | undefined, unknown, string][] = [];
    const client = gen.createJobsClient({
      baseUrl,
      classify: (result, context) => {
        seen.push([result.status, result.body, context.builtIn]);
        return "success";
      },
    });
    const job = await settlesWithin(client.getJob({ id: "j2" }), 5_000);
    expect(job).toEqual({ status: "pending" });
    expect(seen).toEqual([[200, { status: "pending" }, "transient"]]);
    expect(served.get("/jobs/j2")).toBe(1);
  });
});
