/**
 * Shared by the service tests: build fixture policies into test/services/__out__/<name> and
 * import the generated barrel; start node:http servers on 127.0.0.1 that stop completely.
 */
import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "../../src/build/build.js";

export const repoRoot = resolve(fileURLToPath(new URL("../..", import.meta.url)));

/** Builds `paths` (relative to the repository root) into test/services/__out__/<name> and imports its index.ts. */
export async function buildAndImport<M>(name: string, paths: readonly string[]): Promise<M> {
  const out = join("test", "services", "__out__", name);
  const result = await build(paths, { cwd: repoRoot, out, allowOutsideProject: true });
  const problems = result.diagnostics;
  if (!result.written || problems.length > 0) {
    throw new Error(
      `build of ${paths.join(", ")} reported:\n${problems.map((d) => `${d.code} ${d.message}`).join("\n")}`,
    );
  }
  return (await import(pathToFileURL(join(repoRoot, out, "index.ts")).href)) as M;
}

export interface Running {
  readonly url: string;
  readonly server: Server;
  close(): Promise<void>;
}

/** Starts a node:http server on 127.0.0.1, port 0. `close` also ends idle and open connections. */
export async function listen(handler: RequestListener): Promise<Running> {
  const server = createServer(handler);
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}

/** A promise with its resolve function, for events a test waits on. */
export function signal<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolveIt!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolveIt = r));
  return { promise, resolve: resolveIt };
}

/** Resolves to what `promise` settles to, or rejects once `boundMs` has passed: a bug must not hang the suite. */
export async function within<T>(promise: Promise<T>, boundMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not happen within ${boundMs} ms`)), boundMs);
  });
  try {
    return await Promise.race([promise, bound]);
  } finally {
    clearTimeout(timer);
  }
}
