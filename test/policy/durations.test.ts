import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  formatMs,
  parseDuration,
  parseRate,
  parseThroughput,
  perSecond,
} from "../../src/language/durations.js";

describe("parseDuration", () => {
  it.each([
    ["250ms", 250],
    ["1.5s", 1500],
    ["2m", 120_000],
    ["1h", 3_600_000],
    ["0ms", 0],
    ["0.5ms", 1],
  ])("reads %s as %d ms", (text, ms) => {
    expect(parseDuration(text)).toEqual({ ok: true, value: ms });
  });

  it("refuses a bare number and says which units to add", () => {
    const r = parseDuration(250);
    expect(r).toMatchObject({ ok: false, message: "duration 250 has no unit" });
    expect(r.ok || r.hint).toContain('"250ms"');
  });

  it("refuses a number written as a string without a unit", () => {
    expect(parseDuration("250")).toMatchObject({
      ok: false,
      message: 'duration "250" has no unit',
    });
  });

  it("refuses negative durations and unknown units", () => {
    expect(parseDuration("-1s")).toMatchObject({
      ok: false,
      message: 'duration "-1s" is negative',
    });
    expect(parseDuration("1 parsec")).toMatchObject({
      ok: false,
      message: 'duration "1 parsec" has an unknown unit "parsec"',
    });
    expect(parseDuration("5 s")).toMatchObject({
      ok: false,
      hint: "use ms, s, m or h with no space before the unit",
    });
    expect(parseDuration(true)).toMatchObject({ ok: false });
  });

  it("round-trips through formatMs for whole units", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), (ms) => {
        const parsed = parseDuration(formatMs(ms));
        expect(parsed).toEqual({ ok: true, value: ms });
      }),
    );
  });
});

describe("parseRate", () => {
  it("reads percentages and fractions", () => {
    expect(parseRate("50%")).toEqual({ ok: true, value: 0.5 });
    expect(parseRate(0.25)).toEqual({ ok: true, value: 0.25 });
    expect(parseRate("100%")).toEqual({ ok: true, value: 1 });
  });

  it("refuses values outside 0..1 and suggests a percentage for 50", () => {
    expect(parseRate("150%")).toMatchObject({ ok: false, message: 'rate "150%" is over 100%' });
    expect(parseRate(50)).toMatchObject({ ok: false, hint: 'write "50%" for a percentage' });
    expect(parseRate(-0.1)).toMatchObject({ ok: false });
    expect(parseRate("half")).toMatchObject({ ok: false, message: '"half" is not a rate' });
  });
});

describe("request rates (rateLimit.rate, rateLimit.quota)", () => {
  it("reads a count per second, minute, hour or day", () => {
    expect(parseThroughput("100/s")).toEqual({
      ok: true,
      value: { count: 100, periodMs: 1_000, unit: "s" },
    });
    const perMinute = parseThroughput("6000/min");
    expect(perMinute.ok && perSecond(perMinute.value)).toBe(100);
    expect(parseThroughput("2.5/second")).toMatchObject({ ok: true, value: { unit: "s" } });
    expect(parseThroughput("1000/h")).toMatchObject({ ok: true, value: { periodMs: 3_600_000 } });
    expect(parseThroughput("50000/day")).toMatchObject({ ok: true, value: { unit: "d" } });
  });

  it("refuses a bare number, an unknown period and periods finer than a second", () => {
    expect(parseThroughput(100)).toMatchObject({ ok: false, message: "rate 100 has no period" });
    expect(parseThroughput("100/week")).toMatchObject({
      ok: false,
      message: 'rate "100/week" has an unknown period "week"',
    });
    const ms = parseThroughput("1/ms");
    expect(ms).toMatchObject({ ok: false });
    expect(!ms.ok && ms.hint).toContain("1000/s");
    expect(parseThroughput("fast")).toMatchObject({
      ok: false,
      message: '"fast" is not a request rate',
    });
  });

  it("says a zero, too fast or too slow rate is out of range", () => {
    expect(parseThroughput("0/s")).toMatchObject({ ok: false, range: true });
    expect(parseThroughput("2000000/s")).toMatchObject({ ok: false, range: true });
    expect(parseThroughput("1/d")).toMatchObject({ ok: true });
    expect(parseThroughput("0.5/d")).toMatchObject({ ok: false, range: true });
  });
});
