/**
 * One body of code for a synchronous and an asynchronous run. The check pipeline is written as
 * generators that `yield*` {@link wait} wherever a host may answer later; {@link runSync} drives
 * such a task over a host that answers at once (the in-memory host: `checkTexts`, the docs
 * generator, the tests), {@link runAsync} over one that answers with promises (the file system).
 * Babel's gensync library takes the same approach to keep one implementation for both.
 */

/** A value now, or a promise of it. */
export type Maybe<T> = T | PromiseLike<T>;

/** A computation that may wait on hosts: run it with {@link runSync} or {@link runAsync}. */
export type Task<T> = Generator<unknown, T, unknown>;

/** The value of `value`, once it has settled. */
export function* wait<T>(value: Maybe<T>): Task<T> {
  return (yield value) as T;
}

/** Runs `task` to its end without waiting; a host that answers with a promise is a programming error. */
export function runSync<T>(task: Task<T>): T {
  let step = task.next();
  while (!step.done) {
    if (isPromiseLike(step.value))
      throw new Error("a synchronous run reached a host that answers asynchronously");
    step = task.next(step.value);
  }
  return step.value;
}

/** Runs `task` to its end, waiting on every promise it yields; a rejection is thrown into the task. */
export async function runAsync<T>(task: Task<T>): Promise<T> {
  let step = task.next();
  while (!step.done) {
    let value: unknown;
    try {
      value = await step.value;
    } catch (error) {
      step = task.throw(error);
      continue;
    }
    step = task.next(value);
  }
  return step.value;
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { then?: unknown }).then === "function"
  );
}
