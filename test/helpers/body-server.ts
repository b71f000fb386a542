/**
 * An HTTP server on 127.0.0.1 that answers every request with one JSON string of `size` bytes,
 * written in 64 KiB chunks as the client takes them (it waits for `drain`), and stops writing
 * as soon as the client goes away. It counts requests and the bytes it managed to write, so a
 * test can tell that a client cut a body short instead of reading it all.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface BodyServer {
  readonly url: string;
  /** Requests received. */
  readonly requests: number;
  /** Bytes of bodies handed to the socket, over all requests. */
  readonly written: number;
  /** Resolves once every response has ended or been abandoned by its client. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

export interface BodyServerOptions {
  /** Size of the body in bytes, quotes included. */
  readonly size: number;
  /** HTTP status (default 200). */
  readonly status?: number;
  /** Whether to send `content-length` (default false: chunked). */
  readonly declareLength?: boolean;
}

const CHUNK = 64 * 1024;

export async function startBodyServer(options: BodyServerOptions): Promise<BodyServer> {
  let requests = 0;
  let written = 0;
  let open = 0;
  let waiters: Array<() => void> = [];
  const filler = Buffer.alloc(CHUNK, "a");
  const server: Server = createServer((req, res) => {
    requests++;
    open++;
    let gone = false;
    const done = () => {
      if (gone) return;
      gone = true;
      open--;
      if (open === 0) for (const w of waiters.splice(0)) w();
    };
    res.on("close", done);
    req.resume();
    res.writeHead(options.status ?? 200, {
      "content-type": "application/json",
      ...(options.declareLength === true ? { "content-length": String(options.size) } : {}),
    });
    let left = options.size;
    const next = (): void => {
      while (left > 0 && !gone) {
        const n = Math.min(CHUNK, left);
        const chunk = Buffer.from(filler.subarray(0, n));
        if (left === options.size) chunk[0] = 0x22; // opening quote
        if (left === n) chunk[n - 1] = 0x22; // closing quote
        left -= n;
        written += n;
        if (!res.write(chunk)) {
          res.once("drain", next);
          return;
        }
      }
      if (!gone) res.end();
    };
    next();
  });
  server.listen(0, "127.0.0.1");
  await new Promise<void>((ready) => server.once("listening", () => ready()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return requests;
    },
    get written() {
      return written;
    },
    idle: () =>
      open === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve)),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        waiters = [];
      }),
  };
}
