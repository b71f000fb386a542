// Following an AbortSignal: one listener on the signal for any number of waiters.
/**
 * A request's signal is followed by every call its handler makes, by each call's queue wait and
 * backoff sleep: with one `abort` listener each, a handler that fans out to a dozen calls puts
 * more than ten on the signal, and Node prints a `MaxListenersExceededWarning` for every request
 * although nothing leaks. So the runtime adds one listener to a signal, the first time something
 * follows it, and keeps its waiters in a set; the listener is removed when the last waiter lets
 * go, and added again when another comes. Raising the limit instead (`events.setMaxListeners`)
 * would hide real leaks, and is Node's alone (docs/runtime.md, "Deadlines").
 */

/** The waiters of one signal, and the one listener that calls them. */
interface Followers {
  readonly waiters: Set<() => void>;
  readonly listener: () => void;
}

const followed = new WeakMap<AbortSignal, Followers>();

/**
 * Calls `onAbort` once when `signal` aborts, until the returned function is called (idempotent;
 * call it once the waiter no longer cares). Waiters run in the order they began following, and
 * read the reason from the signal; one released while the signal is aborting is not called. A
 * function follows a signal once: following again with the same function changes nothing. A
 * signal that has already aborted never calls `onAbort`, as `addEventListener` would not: check
 * `aborted` first. A waiter that throws does not keep the others from running; its error is
 * thrown after them, from a microtask, as an `abort` listener's would be reported.
 */
export function followAbort(signal: AbortSignal, onAbort: () => void): () => void {
  if (signal.aborted) return noRelease;
  // a signal's followers outlive their waiters (the map holds them no longer than the signal), so
  // a call that follows a signal alone costs one listener added and removed, as it would without
  // this module, and no allocation
  let followers = followed.get(signal);
  if (followers === undefined) {
    followers = followersOf();
    followed.set(signal, followers);
  }
  const { waiters, listener } = followers;
  if (waiters.size === 0) signal.addEventListener("abort", listener, { once: true });
  waiters.add(onAbort);
  return () => {
    // the last waiter let go: the signal keeps no listener of the runtime
    if (waiters.delete(onAbort) && waiters.size === 0)
      signal.removeEventListener("abort", listener);
  };
}

// A signal's waiters and its one listener, which calls them when it aborts.
function followersOf(): Followers {
  const waiters = new Set<() => void>();
  const listener = (): void => {
    let failure: { error: unknown } | undefined;
    for (const waiter of waiters) {
      waiters.delete(waiter);
      try {
        waiter();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure !== undefined) {
      const { error } = failure;
      queueMicrotask(() => {
        throw error;
      });
    }
  };
  return { waiters, listener };
}

function noRelease(): void {}
