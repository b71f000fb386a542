/**
 * A tiny HTTP server on 127.0.0.1 that records every request (method, path, query, headers,
 * JSON body) and answers each route with a canned JSON response. Unknown routes get 404.
 */
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string | string[]>>;
  readonly headers: IncomingHttpHeaders;
  readonly body: unknown;
}

export interface Recorder {
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Answers `METHOD /path` with `status` and `body` (JSON; undefined sends no body). */
  reply(route: string, status: number, body: unknown): void;
  close(): Promise<void>;
}

export async function startRecorder(): Promise<Recorder> {
  const routes = new Map<string, { status: number; body: unknown }>();
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      const query: Record<string, string | string[]> = {};
      for (const key of new Set(url.searchParams.keys())) {
        const all = url.searchParams.getAll(key);
        query[key] = all.length === 1 ? all[0]! : all;
      }
      const text = Buffer.concat(chunks).toString("utf8");
      requests.push({
        method: req.method ?? "",
        path: url.pathname,
        query,
        headers: req.headers,
        body: text === "" ? undefined : (JSON.parse(text) as unknown),
      });
      const route = routes.get(`${req.method ?? ""} ${url.pathname}`);
      if (!route) {
        res
          .writeHead(404, { "content-type": "application/json" })
          .end(JSON.stringify({ title: "not found" }));
        return;
      }
      if (route.body === undefined) res.writeHead(route.status).end();
      else
        res
          .writeHead(route.status, { "content-type": "application/json" })
          .end(JSON.stringify(route.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    reply: (route, status, body) => void routes.set(route, { status, body }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
