import { describe, expect, it } from "vitest";
import { createVirtualClock, sleep } from "../../templates/runtime/index.js";

describe("virtual clock", () => {
  it("fires timers in due order, then creation order, only as time advances", async () => {
    const clock = createVirtualClock(10);
    const fired: string[] = [];
    clock.setTimer(() => fired.push(`b@${clock.now()}`), 20);
    clock.setTimer(() => fired.push(`a@${clock.now()}`), 5);
    clock.setTimer(() => fired.push(`c@${clock.now()}`), 20);
    const cancelled = clock.setTimer(() => fired.push("never"), 1);
    clock.clearTimer(cancelled);
    expect(clock.pendingTimers).toBe(3);
    await clock.advance(4);
    expect(fired).toEqual([]);
    await clock.advance(100);
    expect(fired).toEqual(["a@15", "b@30", "c@30"]);
    expect(clock.now()).toBe(114);
    expect(clock.pendingTimers).toBe(0);
  });

  it("runs promise chains between timers, so sleeps in a loop complete within one advance", async () => {
    const clock = createVirtualClock();
    const wakes: number[] = [];
    const loop = (async () => {
      for (let i = 0; i < 3; i++) {
        await sleep(clock, 10);
        wakes.push(clock.now());
      }
    })();
    await clock.advance(30);
    await loop;
    expect(wakes).toEqual([10, 20, 30]);
  });

  it("runs every timer with runAll", async () => {
    const clock = createVirtualClock();
    let done = false;
    void sleep(clock, 1_000).then(() => (done = true));
    await clock.runAll();
    expect(done).toBe(true);
    expect(clock.now()).toBe(1_000);
  });

  it("cancels a sleep when its signal aborts", async () => {
    const clock = createVirtualClock();
    const controller = new AbortController();
    const slept = sleep(clock, 100, controller.signal);
    controller.abort();
    await expect(slept).rejects.toMatchObject({ kind: "aborted" });
    expect(clock.pendingTimers).toBe(0);
  });
});
