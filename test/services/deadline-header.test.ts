/**
 * Reading the caller's deadline: with several values the smallest readable one wins; a negative
 * value or one under 1 ms is a spent budget (504); an unreadable one gets the edge deadline and
 * is reported as an event and a log line. The repeated header is sent on a real socket, where
 * Node joins the values with ", ".
 */
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  createInboundMiddleware,
  currentDeadline,
  inboundBudget,
  type InboundDeadlineSettings,
  type InboundEvent,
  type ServiceSettings,
} from "../../templates/runtime/index.js";
import { recordingLogger } from "../telemetry/sdk.js";
import { listen, within, type Running } from "./helpers.js";

const deadline: InboundDeadlineSettings = {
  edgeMs: 2_000,
  maxMs: 5_000,
  header: "x-request-timeout-ms",
  format: "ms",
  grpcTimeout: true,
  expiredStatus: 504,
};
const settings: ServiceSettings = {
  name: "edge",
  deadline,
  admission: null,
  rejection: { status: 503, retryAfterS: 1 },
  defaultPriority: "normal",
  priorities: [],
};

describe("inboundBudget with several, spent or unreadable values", () => {
  it("takes the smallest readable value of a repeated or comma-joined header", () => {
    expect(inboundBudget(deadline, { "x-request-timeout-ms": "100, 4000" })).toBe(100);
    expect(inboundBudget(deadline, { "x-request-timeout-ms": "4000,100" })).toBe(100);
    expect(inboundBudget(deadline, { "x-request-timeout-ms": ["4000", "100"] })).toBe(100);
    expect(inboundBudget(deadline, { "x-request-timeout-ms": "soon, 300" })).toBe(300);
    expect(inboundBudget(deadline, { "grpc-timeout": "2S, 150m" })).toBe(150);
  });

  it("reads a negative value or one under 1 ms as a spent budget", () => {
    expect(inboundBudget(deadline, { "x-request-timeout-ms": "-5" })).toBe(0);
    expect(inboundBudget(deadline, { "x-request-timeout-ms": "0.0000001" })).toBe(0);
    expect(inboundBudget(deadline, { "x-request-timeout-ms": "0.5" })).toBe(0);
    expect(inboundBudget(deadline, { "x-request-timeout-ms": "1" })).toBe(1);
    expect(inboundBudget(deadline, { "grpc-timeout": "1n" })).toBe(0);
    expect(inboundBudget(deadline, { "grpc-timeout": "999u" })).toBe(0);
    expect(inboundBudget(deadline, { "grpc-timeout": "1000u" })).toBe(1);
    expect(inboundBudget(deadline, { "x-request-timeout-ms": "100, -5" })).toBe(0);
  });

  it("gives an unreadable value the edge deadline", () => {
    expect(inboundBudget(deadline, { "x-request-timeout-ms": "soon" })).toBe(2_000);
    expect(inboundBudget(deadline, { "x-request-timeout-ms": "" })).toBe(2_000);
    expect(inboundBudget(deadline, { "x-request-timeout-ms": "1e3" })).toBe(2_000);
    expect(
      inboundBudget(deadline, { "x-request-timeout-ms": "soon", "grpc-timeout": "300m" }),
    ).toBe(300);
  });
});

let server: Running | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Sends a raw request with the given header lines and returns the status line and body. */
function raw(
  url: string,
  headerLines: readonly string[],
): Promise<{ status: number; body: string }> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1");
    let text = "";
    socket.on("data", (chunk) => (text += chunk.toString("latin1")));
    socket.on("error", reject);
    socket.on("end", () =>
      resolve({
        status: Number(text.split(" ")[1]),
        body: text.slice(text.indexOf("\r\n\r\n") + 4),
      }),
    );
    socket.write(
      ["GET / HTTP/1.1", "host: 127.0.0.1", "connection: close", ...headerLines, "", ""].join(
        "\r\n",
      ),
    );
  });
}

describe("the middleware on a real socket", () => {
  it("gives a header sent twice its smallest value, refuses spent budgets with 504, and reports unreadable ones", async () => {
    const events: InboundEvent[] = [];
    const logger = recordingLogger();
    const mw = createInboundMiddleware(settings, { observer: (e) => events.push(e), logger });
    server = await listen(
      mw.node((_req, res) => {
        const text = String(Math.round(currentDeadline()?.remaining() ?? -1));
        res.writeHead(200, { "content-length": String(text.length) }).end(text);
      }),
    );
    const twice = await within(
      raw(server.url, ["x-request-timeout-ms: 100", "x-request-timeout-ms: 4000"]),
      2_000,
    );
    expect(twice.status).toBe(200);
    expect(Number(twice.body)).toBeGreaterThan(50);
    expect(Number(twice.body)).toBeLessThanOrEqual(100);

    for (const header of [
      "x-request-timeout-ms: -5",
      "x-request-timeout-ms: 0.0000001",
      "grpc-timeout: 1n",
    ]) {
      expect((await within(raw(server.url, [header]), 2_000)).status, header).toBe(504);
    }
    expect(mw.health()).toMatchObject({ admitted: 1, expired: 3 });

    const unreadable = await within(raw(server.url, ["x-request-timeout-ms: soon"]), 2_000);
    expect(unreadable.status).toBe(200);
    expect(Number(unreadable.body)).toBeGreaterThan(1_900);
    await within(raw(server.url, ["grpc-timeout: later"]), 2_000);
    expect(events.filter((e) => e.type === "deadline-malformed")).toEqual([
      { type: "deadline-malformed", service: "edge", header: "x-request-timeout-ms" },
      { type: "deadline-malformed", service: "edge", header: "grpc-timeout" },
    ]);
    // one line a minute at most: the second is counted in the next line
    expect(logger.lines).toHaveLength(1);
    expect(logger.lines[0]).toMatchObject({
      level: "warn",
      fields: {
        event: "resilience.inbound.deadline_malformed",
        service: "edge",
        header: "x-request-timeout-ms",
        value: "soon",
        count: 1,
      },
    });
  });
});
