// The store of ambient scopes: AsyncLocalStorage, which follows a call across awaits and timers.
import { AsyncLocalStorage } from "node:async_hooks";

/** Where the scope of the running code is kept: the part of AsyncLocalStorage the runtime uses. */
export interface ScopeStore<S> {
  /** The scope the running code is in, or `undefined` outside every scope. */
  getStore(): S | undefined;
  /** Runs `fn`, and everything it starts, in `scope`. */
  run<T>(scope: S, fn: () => T): T;
}

// One store per process, shared by every copy of this runtime (two output folders, or a package
// that ships its own generated clients): a deadline set by one copy's middleware must reach the
// calls made through another's clients.
const AMBIENT = Symbol.for("resgen.runtime.ambient");

/** The process's store of ambient scopes (deadline.ts asks for it once). */
export function sharedStore<S>(): ScopeStore<S> {
  const shared = globalThis as { [AMBIENT]?: AsyncLocalStorage<S> };
  const store = shared[AMBIENT] ?? new AsyncLocalStorage<S>();
  shared[AMBIENT] = store;
  return store;
}
