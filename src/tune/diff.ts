/**
 * A unified-style diff of two texts, for showing what `tune` changes: the lines that differ with
 * one line of context, in hunks headed `@@ -a,b +c,d @@`. Lines are matched by a longest common
 * subsequence over the part between the common head and tail, which is small here (the
 * `latency:` lines).
 */

const CONTEXT = 1;

type Op = { kind: " " | "-" | "+"; line: string; a: number; b: number };

/** The diff of `before` and `after` under `--- file` / `+++ file` headers; empty when they are equal. */
export function lineDiff(file: string, before: string, after: string): string {
  if (before === after) return "";
  const a = before.split("\n");
  const b = after.split("\n");
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  )
    tail++;
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  // lcs[i][j]: length of the longest common subsequence of midA[i..] and midB[j..]
  const lcs = Array.from({ length: midA.length + 1 }, () =>
    new Array<number>(midB.length + 1).fill(0),
  );
  for (let i = midA.length - 1; i >= 0; i--)
    for (let j = midB.length - 1; j >= 0; j--)
      lcs[i]![j] =
        midA[i] === midB[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const ops: Op[] = [];
  for (let k = 0; k < head; k++) ops.push({ kind: " ", line: a[k]!, a: k, b: k });
  let i = 0;
  let j = 0;
  while (i < midA.length || j < midB.length) {
    if (i < midA.length && j < midB.length && midA[i] === midB[j]) {
      ops.push({ kind: " ", line: midA[i]!, a: head + i, b: head + j });
      i++;
      j++;
    } else if (i < midA.length && (j === midB.length || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) {
      ops.push({ kind: "-", line: midA[i]!, a: head + i, b: head + j });
      i++;
    } else {
      ops.push({ kind: "+", line: midB[j]!, a: head + i, b: head + j });
      j++;
    }
  }
  for (let k = 0; k < tail; k++)
    ops.push({
      kind: " ",
      line: a[a.length - tail + k]!,
      a: a.length - tail + k,
      b: b.length - tail + k,
    });
  // a trailing newline leaves an empty last line on both sides: not a line of its own
  if (before.endsWith("\n") && after.endsWith("\n")) ops.pop();

  const out = [`--- ${file}`, `+++ ${file} (tuned)`];
  let k = 0;
  while (k < ops.length) {
    if (ops[k]!.kind === " ") {
      k++;
      continue;
    }
    const start = Math.max(0, k - CONTEXT);
    let end = k;
    // extend while changes are within 2 × CONTEXT of each other
    for (;;) {
      while (end < ops.length && ops[end]!.kind !== " ") end++;
      let next = end;
      while (next < ops.length && ops[next]!.kind === " " && next - end < 2 * CONTEXT + 1) next++;
      if (next < ops.length && ops[next]!.kind !== " " && next - end <= 2 * CONTEXT) end = next;
      else break;
    }
    const stop = Math.min(ops.length, end + CONTEXT);
    const hunk = ops.slice(start, stop);
    const lenA = hunk.filter((o) => o.kind !== "+").length;
    const lenB = hunk.filter((o) => o.kind !== "-").length;
    const first = hunk[0]!;
    out.push(`@@ -${first.a + 1},${lenA} +${first.b + 1},${lenB} @@`);
    for (const o of hunk) out.push(`${o.kind}${o.line}`);
    k = stop;
  }
  return out.join("\n") + "\n";
}
