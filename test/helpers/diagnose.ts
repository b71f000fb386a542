import { checkPolicyText } from "../../src/program/check.js";
import { LineIndex } from "../../src/diagnostics/position.js";
import type { ConfigSettings } from "../../src/model/normalize.js";

export interface Found {
  code: string;
  severity: string;
  line: number;
  column: number;
  message: string;
  hint?: string;
}

/** Checks one policy text and returns its diagnostics with 1-based positions. */
export function diagnose(text: string, project: ConfigSettings = {}): Found[] {
  const { diagnostics } = checkPolicyText("policy.yaml", text, project);
  const index = new LineIndex(text);
  return diagnostics.map((d) => {
    const { line, column } = index.position(d.span.start);
    return {
      code: d.code,
      severity: d.severity,
      line,
      column,
      message: d.message,
      ...(d.hint ? { hint: d.hint } : {}),
    };
  });
}

/** 1-based line and column of the `nth` occurrence of `needle` in `text`. */
export function at(text: string, needle: string, nth = 1): { line: number; column: number } {
  let offset = -1;
  for (let i = 0; i < nth; i++) {
    offset = text.indexOf(needle, offset + 1);
    if (offset < 0) throw new Error(`"${needle}" occurs fewer than ${nth} times`);
  }
  return new LineIndex(text).position(offset);
}

/** A valid minimal policy; `extra` is appended as more top-level YAML. */
export function policy(
  extra = "",
  operations = "  get:\n    method: GET\n    path: /things/{id}\n",
): string {
  return `version: 1\ndependency: things\n${extra}operations:\n${operations}`;
}
