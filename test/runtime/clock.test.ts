import { describe, expect, it } from "vitest";
import { sleep, systemClock } from "../../templates/runtime/index.js";

// The system clock's timers are real; these waits are a few milliseconds and assert order and
// cancellation only, never durations.
describe("systemClock timers", () => {
  it("fires timers of one delay in the order they were set, and never a cleared one", async () => {
    const fired: string[] = [];
    systemClock.setTimer(() => fired.push("a"), 5);
    const b = systemClock.setTimer(() => fired.push("b"), 5);
    systemClock.setTimer(() => fired.push("c"), 5);
    systemClock.clearTimer(b);
    await sleep(systemClock, 30);
    expect(fired).toEqual(["a", "c"]);
  });

  it("fires timers set while the shared timer is idle or firing", async () => {
    const fired: string[] = [];
    const first = systemClock.setTimer(() => fired.push("cleared"), 7);
    systemClock.clearTimer(first);
    systemClock.setTimer(() => {
      fired.push("1");
      systemClock.setTimer(() => fired.push("3"), 7);
    }, 7);
    systemClock.setTimer(() => fired.push("2"), 7);
    await sleep(systemClock, 60);
    expect(fired).toEqual(["1", "2", "3"]);
  });

  it("keeps firing the other timers when one throws", async () => {
    const fired: string[] = [];
    const errors: unknown[] = [];
    const onError = (error: unknown): void => void errors.push(error);
    process.prependListener("uncaughtException", onError);
    try {
      systemClock.setTimer(() => {
        throw new Error("observer bug");
      }, 3);
      systemClock.setTimer(() => fired.push("after"), 3);
      await sleep(systemClock, 30);
    } finally {
      process.removeListener("uncaughtException", onError);
    }
    expect(fired).toEqual(["after"]);
    expect(errors).toHaveLength(1);
  });

  it("treats fractional and zero delays like setTimeout", async () => {
    const fired: string[] = [];
    systemClock.setTimer(() => fired.push("fraction"), 2.5);
    systemClock.setTimer(() => fired.push("zero"), 0);
    const cleared = systemClock.setTimer(() => fired.push("cleared"), 1.5);
    systemClock.clearTimer(cleared);
    await sleep(systemClock, 20);
    expect(fired.sort()).toEqual(["fraction", "zero"]);
  });
});
