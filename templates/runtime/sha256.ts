// SHA-256 for what must not reach a store in clear: an idempotent route's request fingerprint
// and a shared stale cache's request identity (docs/store.md).

/** Node's synchronous SHA-256 (node:crypto, by `process.getBuiltinModule`), where it exists. */
const nodeSha256 = ((): ((data: Uint8Array) => string) | undefined => {
  type Hash = { update(data: Uint8Array): Hash; digest(encoding: "hex"): string };
  const host = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const crypto =
    typeof host?.getBuiltinModule === "function"
      ? (host.getBuiltinModule("node:crypto") as
          { createHash?: (name: string) => Hash } | undefined)
      : undefined;
  const createHash = crypto?.createHash;
  return createHash === undefined
    ? undefined
    : (data) => createHash("sha256").update(data).digest("hex");
})();

/**
 * SHA-256 of `data` (a string as UTF-8), 64 lowercase hex digits. Node's hash where there is one:
 * synchronous, a few microseconds; elsewhere (browsers, workerd, Deno) Web Crypto's, which is
 * asynchronous, so the answer is then a promise.
 */
export function sha256Hex(data: Uint8Array | string): string | Promise<string> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  if (nodeSha256 !== undefined) return nodeSha256(bytes);
  return globalThis.crypto.subtle
    .digest("SHA-256", bytes as Uint8Array<ArrayBuffer>)
    .then((digest) => hex(new Uint8Array(digest)));
}

function hex(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += b.toString(16).padStart(2, "0");
  return out;
}
