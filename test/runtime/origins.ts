// Servers on 127.0.0.1 that record every request they receive, for the tests of redirects: two of
// them, on two ports, are two origins.
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}
export interface Answer {
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly body?: string;
}

/** A server on 127.0.0.1 that records every request and answers with `answer`. */
export interface Origin {
  url: string;
  readonly received: Received[];
  answer: (request: Received) => Answer;
  close(): Promise<void>;
}

/** Starts one {@link Origin}; `close` ends its connections and stops it. */
export async function startOrigin(): Promise<Origin> {
  const origin: Origin = {
    url: "",
    received: [],
    answer: () => ({ status: 200, body: '{"from":"origin"}' }),
    close: () => Promise.resolve(),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const request: Received = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      origin.received.push(request);
      const { status, headers = {}, body = "" } = origin.answer(request);
      res.writeHead(status, { "content-type": "application/json", ...headers }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin.url = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
  origin.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return origin;
}
