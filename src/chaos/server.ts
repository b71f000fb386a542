/**
 * The drill's fault server: node:http on 127.0.0.1, on a port the system picks. It never sleeps.
 * A request that arrives is given its behaviour at once (from the drill, by call, attempt and
 * the virtual time) and parked: the driver releases parked responses one at a time, in order of
 * due time, then call, then attempt, so real socket timing never decides what the client sees.
 * A hung request stays parked until the client gives up on it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** What the dependency does with one request. */
export type Behaviour =
  | {
      readonly kind: "answer";
      readonly status: number;
      /** Virtual milliseconds before the response is sent. */
      readonly latencyMs: number;
      readonly body: string;
      /** Seconds, sent as `Retry-After`. */
      readonly retryAfterS?: number;
    }
  /** The connection is closed without a response (the dependency is down). */
  | { readonly kind: "reset" }
  /** Nothing is ever sent: only the client's own timeout ends the request. */
  | { readonly kind: "hang" };

/** Headers the drill's fetch tags every request with. */
export const REQUEST_HEADER = "x-drill-request";
export const CALL_HEADER = "x-drill-call";
export const ATTEMPT_HEADER = "x-drill-attempt";

/** What the server knows of a request when it arrives. */
export interface Arrival {
  /** The drill's call number, from 0. */
  readonly call: number;
  /** The attempt within the call, from 1 (hedged copies included). */
  readonly attempt: number;
  /** Virtual milliseconds since the drill began. */
  readonly at: number;
}

interface ParkedRequest {
  readonly id: number;
  readonly call: number;
  readonly attempt: number;
  /** Virtual time it is released at; Infinity for a hang. */
  readonly due: number;
  readonly behaviour: Behaviour;
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
}

export interface DrillServer {
  readonly url: string;
  /** Requests that reached the server: the load the dependency saw. */
  readonly received: number;
  /** The due time of the next response to release; Infinity when none is parked. */
  nextDue(): number;
  /** Sends the next response due (earliest due, then lowest call, then attempt); its request id. */
  releaseNext(): number | undefined;
  close(): Promise<void>;
}

export interface ServerHooks {
  /** The drill's virtual time. */
  readonly now: () => number;
  readonly decide: (arrival: Arrival) => Behaviour;
  /** A request arrived and is parked. */
  readonly parked: (id: number) => void;
}

function before(a: ParkedRequest, b: ParkedRequest): boolean {
  if (a.due !== b.due) return a.due < b.due;
  if (a.call !== b.call) return a.call < b.call;
  return a.attempt < b.attempt;
}

/** Starts a drill server on 127.0.0.1; loopback only, whatever the host's interfaces. */
export async function startDrillServer(hooks: ServerHooks): Promise<DrillServer> {
  const parked: ParkedRequest[] = [];
  let received = 0;
  const server = createServer((request, response) => {
    const id = Number(request.headers[REQUEST_HEADER]);
    const call = Number(request.headers[CALL_HEADER]);
    const attempt = Number(request.headers[ATTEMPT_HEADER]);
    // the body is not needed: read it so the connection can be reused
    request.resume();
    if (!Number.isInteger(id) || !Number.isInteger(call) || !Number.isInteger(attempt)) {
      response.writeHead(400).end();
      return;
    }
    received++;
    const now = hooks.now();
    const behaviour = hooks.decide({ call, attempt, at: now });
    const due =
      behaviour.kind === "hang"
        ? Infinity
        : behaviour.kind === "answer"
          ? now + behaviour.latencyMs
          : now;
    const entry: ParkedRequest = { id, call, attempt, due, behaviour, request, response };
    parked.push(entry);
    // a hang ends when the client gives up: nothing is left to release
    response.once("close", () => {
      if (entry.due === Infinity) {
        const at = parked.indexOf(entry);
        if (at >= 0) parked.splice(at, 1);
      }
    });
    hooks.parked(id);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  const next = (): number => {
    let best = -1;
    for (let i = 0; i < parked.length; i++) {
      const entry = parked[i]!;
      if (entry.due === Infinity) continue;
      if (best < 0 || before(entry, parked[best]!)) best = i;
    }
    return best;
  };

  return {
    url: `http://127.0.0.1:${String(port)}`,
    get received() {
      return received;
    },
    nextDue: () => {
      const i = next();
      return i < 0 ? Infinity : parked[i]!.due;
    },
    releaseNext: () => {
      const i = next();
      if (i < 0) return undefined;
      const [entry] = parked.splice(i, 1);
      if (entry === undefined) return undefined;
      send(entry);
      return entry.id;
    },
    close: () =>
      new Promise<void>((resolve) => {
        parked.length = 0;
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function send(entry: ParkedRequest): void {
  const { behaviour, response } = entry;
  if (response.destroyed || response.writableEnded) return;
  if (behaviour.kind === "reset") {
    entry.request.socket.destroy();
    return;
  }
  if (behaviour.kind !== "answer") return;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(behaviour.body)),
  };
  if (behaviour.retryAfterS !== undefined) headers["retry-after"] = String(behaviour.retryAfterS);
  response.writeHead(behaviour.status, headers).end(behaviour.body);
}
