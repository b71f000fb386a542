// The store of ambient scopes under `platform: web` (docs/platforms.md, "platform: web"): browsers
// have no AsyncLocalStorage, and a scope kept only until the first await would be lost silently,
// so there are no ambient scopes at all. Each call takes its `deadline` and `signal` explicitly.
import type { ScopeStore } from "./deadline.js";

/** No scope is ever set: every call sees none, and setting one is refused. */
export const ambient: ScopeStore = {
  getStore: () => undefined,
  run() {
    throw new Error(
      "resgen: ambient deadlines need AsyncLocalStorage, which `platform: web` does not use; " +
        "pass { deadline } or { signal } to each call instead (docs/platforms.md)",
    );
  },
};
