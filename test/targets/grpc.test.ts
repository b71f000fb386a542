/**
 * The emitted gRPC service config, loaded by @grpc/grpc-js against a real server on 127.0.0.1:
 * the channel retries as the policy says, does not retry a status the policy does not name, and
 * hedges with the configured number of copies. The server counts the attempts it sees.
 */
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkTexts } from "../../src/program/check.js";
import { emitGrpc } from "../../src/targets/grpc.js";

const identity = (b: Buffer) => b;
const method = (name: string) => ({
  path: `/test.v1.Echo/${name}`,
  requestStream: false,
  responseStream: false,
  requestSerialize: identity,
  requestDeserialize: identity,
  responseSerialize: identity,
  responseDeserialize: identity,
});
const SERVICE = { Flaky: method("Flaky"), Refuse: method("Refuse"), Slow: method("Slow") } as const;

const POLICY = `version: 1
dependency: echo
transport: function
timeout: { attempt: 1s, total: 10s }
retry:
  maxAttempts: 4
  backoff: { base: 10ms, cap: 20ms, multiplier: 2, jitter: full }
  on: [network, 503]
  retryAfter: ignore
operations:
  flaky:
    idempotent: true
    grpc: { service: test.v1.Echo, method: Flaky }
  refuse:
    idempotent: true
    grpc: { service: test.v1.Echo, method: Refuse }
  slow:
    idempotent: true
    grpc: { service: test.v1.Echo, method: Slow }
    retry: false
    hedge: { delay: 20ms, maxAttempts: 3 }
`;

/** The service config resgen emits for POLICY. */
function serviceConfig(): string {
  const { policies, diagnostics } = checkTexts([{ file: "echo.yaml", text: POLICY }]);
  expect(diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  const out = emitGrpc(policies, {
    locate: { locate: () => undefined, locateKey: () => undefined },
    sourcePath: () => "echo.yaml",
  });
  return out.files.get("grpc/echo.json")!;
}

describe("the grpc target's service config in @grpc/grpc-js", () => {
  const seen = { Flaky: 0, Refuse: 0, Slow: 0 };
  const pending: (() => void)[] = [];
  let server: grpc.Server;
  type EchoClient = grpc.Client &
    Record<
      string,
      (
        req: Buffer,
        cb: (err: grpc.ServiceError | null, res?: Buffer) => void,
      ) => grpc.ClientUnaryCall
    >;
  // undefined until beforeAll has bound the server (and after a bind that failed)
  let client: EchoClient | undefined;

  beforeAll(async () => {
    server = new grpc.Server();
    server.addService(SERVICE, {
      // fails the first two attempts with UNAVAILABLE, then answers
      Flaky: (_call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => {
        seen.Flaky++;
        if (seen.Flaky <= 2) cb({ code: grpc.status.UNAVAILABLE, details: "not yet" });
        else cb(null, Buffer.from("ok"));
      },
      // a status the policy does not retry
      Refuse: (_call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => {
        seen.Refuse++;
        cb({ code: grpc.status.INVALID_ARGUMENT, details: "no" });
      },
      // the first copy never answers by itself; the last copy answers, and the test releases the rest
      Slow: (_call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => {
        seen.Slow++;
        if (seen.Slow < 3) pending.push(() => cb(null, Buffer.from("late")));
        else cb(null, Buffer.from(`copy ${seen.Slow}`));
      },
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
    const Client = grpc.makeGenericClientConstructor(SERVICE, "Echo");
    client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
      "grpc.service_config": serviceConfig(),
      "grpc.enable_retries": 1,
    }) as EchoClient;
  });

  afterAll(async () => {
    for (const release of pending.splice(0)) release();
    client?.close();
    await new Promise<void>((resolve) => {
      server.tryShutdown(() => resolve());
    });
  });

  const call = (name: keyof typeof SERVICE) =>
    new Promise<{ err: grpc.ServiceError | null; res?: Buffer }>((resolve) => {
      client![name]!(Buffer.from("hi"), (err, res) =>
        resolve(res === undefined ? { err } : { err, res }),
      );
    });

  it("retries UNAVAILABLE (the policy's 503 and network) until the server answers", async () => {
    const { err, res } = await call("Flaky");
    expect(err).toBeNull();
    expect(res?.toString()).toBe("ok");
    expect(seen.Flaky).toBe(3);
  });

  it("does not retry a status the policy does not name", async () => {
    const { err } = await call("Refuse");
    expect(err?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(seen.Refuse).toBe(1);
  });

  it("hedges: launches the configured copies and takes the first answer", async () => {
    const { err, res } = await call("Slow");
    expect(err).toBeNull();
    expect(res?.toString()).toBe("copy 3");
    expect(seen.Slow).toBe(3);
  });
});
