// The store of ambient scopes under `platform: web` (docs/platforms.md, "platform: web"): browsers
// have no AsyncLocalStorage, and a scope kept only until the first await would be lost silently,
// so there are no ambient scopes at all. Each call takes its `deadline` and `signal` explicitly.

/** Where the scope of the running code is kept: the part of AsyncLocalStorage the runtime uses. */
export interface ScopeStore<S> {
  /** The scope the running code is in: always `undefined` here. */
  getStore(): S | undefined;
  /** Refused: there is no scope to run `fn` in. */
  run<T>(scope: S, fn: () => T): T;
}

/** A store that never holds a scope: every call sees none, and setting one is refused. */
export function sharedStore<S>(): ScopeStore<S> {
  return {
    getStore: () => undefined,
    run() {
      throw new Error(
        "resgen: ambient deadlines need AsyncLocalStorage, which platform: web does not use; " +
          "pass { deadline } or { signal } to each call instead (docs/platforms.md)",
      );
    },
  };
}
