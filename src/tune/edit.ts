/**
 * Rewrites the `latency:` section of a policy's text and nothing else. The yaml library's
 * Document API finds the section and the ranges of its values; the new values are spliced into
 * the original text at those ranges, so every other byte (comments, alignment, quoting, flow or
 * block style) stays as it was. The result is parsed again and checked to hold exactly the values
 * asked for.
 */
import { isMap, isPair, isScalar, parseDocument, type Pair, type YAMLMap } from "yaml";

/** The keys of `latency:` in the order the policy language lists them. */
export const LATENCY_KEYS = ["p50", "p90", "p95", "p99", "p999", "rps"] as const;
export type LatencyKey = (typeof LATENCY_KEYS)[number];

/** New values as they are to be written (`23ms`, `140`), by key. */
export type LatencyText = Partial<Record<LatencyKey, string>>;

/** Top-level keys after which a new `latency:` line goes, the last present one winning. */
const ANCHORS = ["dependency", "description", "essential", "transport"];

interface Edit {
  readonly at: number;
  readonly end: number;
  readonly text: string;
}

const rank = (key: string): number => {
  const i = (LATENCY_KEYS as readonly string[]).indexOf(key);
  return i < 0 ? LATENCY_KEYS.length : i;
};

function lineStart(text: string, at: number): number {
  return text.lastIndexOf("\n", at - 1) + 1;
}

function lineEnd(text: string, at: number): number {
  const end = text.indexOf("\n", at);
  return end < 0 ? text.length : end;
}

const keyName = (pair: Pair): string | undefined =>
  isScalar(pair.key) ? String(pair.key.value) : undefined;

/**
 * The text with `latency:` holding `values` (keys not in `values` are left as they are), or the
 * reason it cannot be edited.
 */
export function setLatency(
  text: string,
  values: LatencyText,
): { text: string } | { error: string } {
  const doc = parseDocument(text, { keepSourceTokens: false });
  if (doc.errors.length > 0) return { error: `cannot parse the policy: ${doc.errors[0]!.message}` };
  const root = doc.contents;
  if (!isMap(root)) return { error: "the policy is not a mapping" };
  const entries = LATENCY_KEYS.filter((k) => values[k] !== undefined).map(
    (k) => [k, values[k]!] as const,
  );
  if (entries.length === 0) return { text };
  const edits: Edit[] = [];
  const latency = root.get("latency", true);
  if (latency === undefined) {
    edits.push(newSection(text, root, entries));
  } else if (isMap(latency)) {
    edits.push(...editSection(text, latency, entries));
  } else {
    return { error: "`latency` is not a mapping" };
  }
  // from the end, so earlier ranges stay valid; of insertions at one place the later first, so
  // they end up in the order they were made
  let out = text;
  const order = edits.map((e, i) => [e, i] as const).sort(([a, i], [b, j]) => b.at - a.at || j - i);
  for (const [e] of order) out = out.slice(0, e.at) + e.text + out.slice(e.end);
  // the edit must leave the document valid and holding exactly the new values
  const check = parseDocument(out);
  const got = check.get("latency", true);
  if (check.errors.length > 0 || !isMap(got))
    return { error: "editing latency would leave the policy unparsable; edit it by hand" };
  for (const [k, v] of entries)
    if (String(got.get(k)) !== v)
      return { error: `editing latency.${k} did not take; edit it by hand` };
  return { text: out };
}

/** A new `latency: { … }` line after the last of the anchor keys (else at the end). */
function newSection(
  text: string,
  root: YAMLMap,
  entries: readonly (readonly [string, string])[],
): Edit {
  const flow = `latency: { ${entries.map(([k, v]) => `${k}: ${v}`).join(", ")} }`;
  let anchor: Pair | undefined;
  for (const item of root.items)
    if (isPair(item) && ANCHORS.includes(keyName(item) ?? "") && singleLine(text, item))
      anchor = item;
  if (anchor !== undefined) {
    const range = (anchor.value as { range?: [number, number, number] }).range!;
    const end = lineEnd(text, range[1]);
    const keyAt = (anchor.key as { range?: [number, number, number] }).range![0];
    const indent = " ".repeat(keyAt - lineStart(text, keyAt));
    return { at: end, end, text: `\n${indent}${flow}` };
  }
  const end = text.length;
  return { at: end, end, text: `${text.endsWith("\n") || text === "" ? "" : "\n"}${flow}\n` };
}

/** Whether a pair's key and value sit on one line (a new line can then follow it). */
function singleLine(text: string, pair: Pair): boolean {
  const key = (pair.key as { range?: [number, number, number] } | null)?.range;
  const value = (pair.value as { range?: [number, number, number] } | null)?.range;
  if (!key || !value) return false;
  return !text.slice(key[0], value[1]).includes("\n");
}

/** Replaces the values of keys present; adds the others in the language's order. */
function editSection(
  text: string,
  latency: YAMLMap,
  entries: readonly (readonly [string, string])[],
): Edit[] {
  const edits: Edit[] = [];
  const pairs = latency.items.filter(isPair);
  if (pairs.length === 0 && latency.flow && latency.range) {
    // `latency: {}`
    const [start, end] = latency.range;
    return [{ at: start, end, text: `{ ${entries.map(([k, v]) => `${k}: ${v}`).join(", ")} }` }];
  }
  for (const [key, value] of entries) {
    const pair = pairs.find((p) => keyName(p) === key);
    if (pair !== undefined) {
      const range = (pair.value as { range?: [number, number, number] } | null)?.range;
      if (range === undefined) {
        // `p99:` with no value: write after the colon
        const keyEnd = (pair.key as { range: [number, number, number] }).range[1];
        const colon = text.indexOf(":", keyEnd);
        edits.push({ at: colon + 1, end: colon + 1, text: ` ${value}` });
      } else edits.push({ at: range[0], end: range[1], text: value });
      continue;
    }
    // before the first present key that comes later in the language's order, else after the last
    const next = pairs.find((p) => rank(keyName(p) ?? "") > rank(key));
    if (latency.flow) {
      if (next !== undefined) {
        const at = (next.key as { range: [number, number, number] }).range[0];
        edits.push({ at, end: at, text: `${key}: ${value}, ` });
      } else {
        const last = pairs[pairs.length - 1]!;
        const at = ((last.value ?? last.key) as { range: [number, number, number] }).range[1];
        edits.push({ at, end: at, text: `, ${key}: ${value}` });
      }
      continue;
    }
    // after the last present key that comes earlier (its comments stay with the key after it)
    const previous = pairs.filter((p) => rank(keyName(p) ?? "") < rank(key)).pop();
    const reference = previous ?? next ?? pairs[pairs.length - 1]!;
    const keyAt = (reference.key as { range: [number, number, number] }).range[0];
    const indent = " ".repeat(keyAt - lineStart(text, keyAt));
    if (previous === undefined && next !== undefined) {
      const at = lineStart(text, keyAt);
      edits.push({ at, end: at, text: `${indent}${key}: ${value}\n` });
    } else {
      const valueEnd = ((reference.value ?? reference.key) as { range: [number, number, number] })
        .range[1];
      const at = lineEnd(text, valueEnd);
      edits.push({ at, end: at, text: `\n${indent}${key}: ${value}` });
    }
  }
  return edits;
}
