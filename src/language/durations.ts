/**
 * Durations and rates as written in policies. Parsing returns a reason instead of throwing, so
 * the loader can turn a bad value into a positioned diagnostic with a precise message.
 */

export const DURATION_PATTERN = "^[0-9]+(\\.[0-9]+)?(ms|s|m|h)$";
const DURATION_RE = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;

export const RATE_PATTERN = "^[0-9]+(\\.[0-9]+)?%$";

/**
 * Failures say whether the text was malformed (RG104/RG105) or a well-formed value out of range
 * (`range: true`, RG106), so the loader can pick the code.
 */
export type Parsed<T> =
  { ok: true; value: T } | { ok: false; message: string; hint?: string; range?: true };

const HOUR_MS = 3_600_000;
/**
 * The longest duration any setting accepts (7 days, `fallback.maxAge`); each setting has its own,
 * usually lower, bound (docs/policy.md, "Ranges"). Longer durations are refused here, so parsing
 * never yields a non-finite or absurd number of milliseconds.
 */
export const MAX_DURATION_MS = 7 * 24 * HOUR_MS;

/** The milliseconds a setting accepts, both bounds inclusive, after rounding to whole milliseconds. */
export interface DurationRange {
  readonly min: number;
  readonly max: number;
  /** Why the lower bound matters, for the hint of a value below it. */
  readonly why?: string;
}

/** Parses `250ms`, `1.5s`, `2m`, `1h` into milliseconds (fractions of a millisecond are rounded). */
export function parseDuration(input: unknown): Parsed<number> {
  if (typeof input === "number") {
    return {
      ok: false,
      message: `duration ${input} has no unit`,
      hint: `write "${input}ms" or "${input}s": a bare number could mean either`,
    };
  }
  if (typeof input !== "string")
    return { ok: false, message: `expected a duration such as 250ms, got ${describe(input)}` };
  const text = input.trim();
  const m = DURATION_RE.exec(text);
  if (m) {
    const ms = Math.round(Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS]);
    if (!Number.isFinite(ms) || ms > MAX_DURATION_MS) {
      return {
        ok: false,
        range: true,
        message: `duration ${shorten(text)} is longer than ${formatMs(MAX_DURATION_MS)} (7 days), the longest any setting accepts`,
        hint: "durations are finite: each setting's maximum is listed in docs/policy.md (Ranges)",
      };
    }
    return { ok: true, value: ms };
  }
  if (/^-/.test(text))
    return {
      ok: false,
      message: `duration "${input}" is negative`,
      hint: "durations are zero or more",
    };
  if (/^\d+(\.\d+)?$/.test(text)) {
    return {
      ok: false,
      message: `duration "${input}" has no unit`,
      hint: `write "${text}ms" or "${text}s"`,
    };
  }
  const unit = /^\d+(?:\.\d+)?\s*([A-Za-zµ]+)$/.exec(text);
  if (unit) {
    return {
      ok: false,
      message: `duration "${input}" has an unknown unit "${unit[1]!}"`,
      hint: `use ms, s, m or h${/^\d+(?:\.\d+)?\s+(ms|s|m|h)$/.test(text) ? " with no space before the unit" : ""}`,
    };
  }
  return {
    ok: false,
    message: `"${input}" is not a duration`,
    hint: "write a number and a unit: 250ms, 1.5s, 2m, 1h",
  };
}

/**
 * Whether a parsed duration fits `range`; the reason when not. `text` is the value as written, to
 * say when a fraction of a millisecond rounded to nothing.
 */
export function checkDurationRange(
  ms: number,
  range: DurationRange,
  text: string,
): { message: string; hint?: string } | undefined {
  const written = shorten(text.trim());
  if (ms < range.min) {
    const rounded =
      ms === 0 && !/^0+(\.0+)?(ms|s|m|h)$/.test(text.trim()) ? ` (${written} rounds to 0ms)` : "";
    return {
      message: `must be at least ${formatMs(range.min)}, got ${written}${rounded}`,
      ...(range.why === undefined ? {} : { hint: range.why }),
    };
  }
  if (ms > range.max) return { message: `must be at most ${formatMs(range.max)}, got ${written}` };
  return undefined;
}

/** "1ms to 1h": a range in words, for descriptions and docs. */
export function describeDurationRange(range: DurationRange): string {
  return `${formatMs(range.min)} to ${formatMs(range.max)}`;
}

/** Bounds of a rate: always at most 100%; `positive` excludes 0%. */
export interface RateRange {
  readonly positive: boolean;
  /** Why 0% is refused, for the hint. */
  readonly why?: string;
}

/** Whether a parsed rate fits `range`; the reason when not. */
export function checkRateRange(
  value: number,
  range: RateRange,
  input: unknown,
): { message: string; hint?: string } | undefined {
  if (range.positive && value <= 0) {
    return {
      message: `must be more than 0%, got ${typeof input === "string" ? shorten(input.trim()) : String(input)}`,
      ...(range.why === undefined ? {} : { hint: range.why }),
    };
  }
  return undefined;
}

/** Parses `50%` or `0.5` into a fraction in [0, 1]. */
export function parseRate(input: unknown): Parsed<number> {
  if (typeof input === "number") {
    if (Number.isFinite(input) && input >= 0 && input <= 1) return { ok: true, value: input };
    if (!Number.isFinite(input)) {
      return {
        ok: false,
        message: "rate is a number too large to represent, outside 0..1",
        hint: "write a fraction (0.5) or a percentage (50%)",
      };
    }
    return {
      ok: false,
      message: `rate ${input} is outside 0..1`,
      hint:
        input > 1 && input <= 100
          ? `write "${input}%" for a percentage`
          : "write a fraction (0.5) or a percentage (50%)",
    };
  }
  if (typeof input === "string") {
    const m = /^(\d+(?:\.\d+)?)\s*%$/.exec(input.trim());
    if (m) {
      const pct = Number(m[1]);
      if (pct <= 100) return { ok: true, value: pct / 100 };
      return { ok: false, message: `rate "${shorten(input.trim())}" is over 100%` };
    }
    return {
      ok: false,
      message: `"${shorten(input)}" is not a rate`,
      hint: "write a fraction (0.5) or a percentage (50%)",
    };
  }
  return { ok: false, message: `expected a rate such as 50% or 0.5, got ${describe(input)}` };
}

/** A value as written, cut short when it is long (a 400-digit number stays readable). */
function shorten(text: string): string {
  return text.length > 24
    ? `${text.slice(0, 10)}…${text.slice(-6)} (${text.length} characters)`
    : text;
}

/** A short, human description of a YAML value's type for messages. */
export function describe(value: unknown): string {
  if (value === null || value === undefined) return "nothing";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  if (typeof value === "string")
    return `the string "${value.length > 40 ? value.slice(0, 37) + "..." : value}"`;
  // the scalars left in parsed YAML; a symbol or a function (never parsed) is named by its type alone
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint")
    return `${typeof value} ${String(value)}`;
  return typeof value;
}

/** Formats milliseconds back into the policy notation, for messages and `explain`. */
export function formatMs(ms: number): string {
  if (ms >= 3_600_000 && ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms >= 1_000 && ms % 100 === 0) return `${ms / 1_000}s`;
  return `${ms}ms`;
}

/** A request rate as written in policies: `count` permits per `periodMs` (`100/s`, `6000/min`). */
export interface Throughput {
  readonly count: number;
  readonly periodMs: number;
  /** The unit as written after the slash, normalized (`s`, `min`, `h`, `d`). */
  readonly unit: ThroughputUnit;
}

export type ThroughputUnit = "s" | "min" | "h" | "d";

export const THROUGHPUT_PATTERN = "^[0-9]+(\\.[0-9]+)?/(s|sec|second|m|min|minute|h|hour|d|day)$";
const THROUGHPUT_RE = /^(\d+(?:\.\d+)?)\s*\/\s*([A-Za-z]+)$/;
const THROUGHPUT_UNITS: Readonly<Record<string, ThroughputUnit>> = {
  s: "s",
  sec: "s",
  second: "s",
  m: "min",
  min: "min",
  minute: "min",
  h: "h",
  hour: "h",
  d: "d",
  day: "d",
};
const THROUGHPUT_MS: Readonly<Record<ThroughputUnit, number>> = {
  s: 1_000,
  min: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};
/** The highest rate a limit accepts: a million a second, one permit per microsecond. */
export const MAX_PER_SECOND = 1_000_000;
/** The lowest: one a day. */
export const MIN_PER_SECOND = 1 / 86_400;

/** Permits per second of a throughput. */
export function perSecond(t: Throughput): number {
  return (t.count * 1_000) / t.periodMs;
}

/** Formats a throughput back into the policy notation (`100/s`). */
export function formatThroughput(t: Throughput): string {
  return `${String(t.count)}/${t.unit}`;
}

/**
 * Parses `100/s`, `6000/min`, `1000/h`, `50000/d` (also `sec`, `second`, `m`, `minute`, `hour`,
 * `day`). Bounds: more than 0, at most a million a second, at least one a day.
 */
export function parseThroughput(input: unknown): Parsed<Throughput> {
  if (typeof input === "number")
    return {
      ok: false,
      message: `rate ${String(input)} has no period`,
      hint: `write "${String(input)}/s" or "${String(input)}/min": a bare number could mean either`,
    };
  if (typeof input !== "string")
    return { ok: false, message: `expected a rate such as 100/s, got ${describe(input)}` };
  const text = input.trim();
  const m = THROUGHPUT_RE.exec(text);
  if (!m) {
    if (/^-/.test(text))
      return { ok: false, message: `rate "${shorten(text)}" is negative`, range: true };
    return {
      ok: false,
      message: `"${shorten(text)}" is not a request rate`,
      hint: "write a count, a slash and a period: 100/s, 6000/min, 1000/h, 50000/d",
    };
  }
  const unit = THROUGHPUT_UNITS[m[2]!.toLowerCase()];
  if (unit === undefined)
    return {
      ok: false,
      message: `rate "${shorten(text)}" has an unknown period "${m[2]!}"`,
      hint: /^ms$/i.test(m[2]!)
        ? "limits are per second at the finest: write the rate per second (1/ms is 1000/s)"
        : "use s, min, h or d (100/s, 6000/min)",
    };
  const value: Throughput = { count: Number(m[1]), periodMs: THROUGHPUT_MS[unit], unit };
  const rate = perSecond(value);
  if (!(value.count > 0))
    return {
      ok: false,
      range: true,
      message: `rate ${shorten(text)} must be more than 0`,
      hint: "a limit of 0 admits nothing: leave rateLimit out (or write rateLimit: false) for no limit",
    };
  if (!Number.isFinite(rate) || rate > MAX_PER_SECOND)
    return {
      ok: false,
      range: true,
      message: `rate ${shorten(text)} is over ${String(MAX_PER_SECOND)}/s, the highest a limit accepts`,
    };
  if (rate < MIN_PER_SECOND)
    return {
      ok: false,
      range: true,
      message: `rate ${shorten(text)} is under 1/d, the lowest a limit accepts`,
    };
  return { ok: true, value };
}
