// Following an AbortSignal (templates/runtime/abort.ts): one listener on the signal for any
// number of waiters, removed when the last one lets go.
import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { followAbort } from "../../templates/runtime/abort.js";

const listeners = (signal: AbortSignal): number => getEventListeners(signal, "abort").length;

describe("followAbort", () => {
  it("puts one listener on the signal for 50 waiters, and calls each once, in order", () => {
    const controller = new AbortController();
    const calls: string[] = [];
    for (let i = 0; i < 50; i++)
      followAbort(controller.signal, () =>
        calls.push(`${String(i)}:${String(controller.signal.reason)}`),
      );
    expect(listeners(controller.signal)).toBe(1);
    controller.abort("gone");
    expect(calls).toEqual(Array.from({ length: 50 }, (_, i) => `${String(i)}:gone`));
    expect(listeners(controller.signal)).toBe(0);
  });

  it("removes the listener when the last waiter lets go, and not before", () => {
    const controller = new AbortController();
    const called: number[] = [];
    const releases = [1, 2, 3].map((n) => followAbort(controller.signal, () => called.push(n)));
    releases[0]!();
    releases[0]!();
    releases[2]!();
    expect(listeners(controller.signal)).toBe(1);
    releases[1]!();
    expect(listeners(controller.signal)).toBe(0);
    // following again after everything let go adds the one listener again
    const again = followAbort(controller.signal, () => called.push(4));
    expect(listeners(controller.signal)).toBe(1);
    controller.abort();
    expect(called).toEqual([4]);
    again();
    expect(listeners(controller.signal)).toBe(0);
  });

  it("follows a signal again after every waiter let go: one listener, and the new waiter is called", () => {
    const controller = new AbortController();
    const called: string[] = [];
    for (let round = 0; round < 3; round++) {
      const release = followAbort(controller.signal, () => called.push(`early ${String(round)}`));
      expect(listeners(controller.signal)).toBe(1);
      release();
      expect(listeners(controller.signal)).toBe(0);
    }
    followAbort(controller.signal, () => called.push("late"));
    followAbort(controller.signal, () => called.push("later"));
    expect(listeners(controller.signal)).toBe(1);
    controller.abort();
    expect(called).toEqual(["late", "later"]);
    expect(listeners(controller.signal)).toBe(0);
  });

  it("does not call a waiter another one released while the signal aborts", () => {
    const controller = new AbortController();
    const called: string[] = [];
    let releaseSecond = (): void => undefined;
    followAbort(controller.signal, () => {
      called.push("first");
      releaseSecond();
    });
    releaseSecond = followAbort(controller.signal, () => called.push("second"));
    followAbort(controller.signal, () => called.push("third"));
    controller.abort();
    expect(called).toEqual(["first", "third"]);
  });

  it("never calls a waiter of a signal that had already aborted", () => {
    const signal = AbortSignal.abort("before");
    let called = false;
    const release = followAbort(signal, () => {
      called = true;
    });
    release();
    expect(called).toBe(false);
    expect(listeners(signal)).toBe(0);
  });
});
