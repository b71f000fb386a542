// The store of ambient scopes: AsyncLocalStorage, which follows a call across awaits and timers.
import { AsyncLocalStorage } from "node:async_hooks";
import type { AmbientScope, ScopeStore } from "./deadline.js";

// One store per process, shared by every copy of this runtime (two output folders, or a package
// that ships its own generated clients): a deadline set by one copy's middleware must reach the
// calls made through another's clients.
const AMBIENT = Symbol.for("resgen.runtime.ambient");
const shared = globalThis as { [AMBIENT]?: AsyncLocalStorage<AmbientScope> };
const store: AsyncLocalStorage<AmbientScope> =
  shared[AMBIENT] ?? new AsyncLocalStorage<AmbientScope>();
shared[AMBIENT] = store;

/** The process's store of ambient scopes. */
export const ambient: ScopeStore = store;
