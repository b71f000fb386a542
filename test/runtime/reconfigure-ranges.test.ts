/**
 * Every reconfigurable setting takes exactly the values the compiler takes for the policy leaf it
 * is resolved from: for each one, the policy schema's own leaf is found by its path and asked
 * about the values at and just past both ends of the runtime's range, and both must agree.
 */
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { Policy, rangeOf } from "../../src/language/schema.js";
import {
  RECONFIGURABLE,
  rangeProblem,
  type ReconfigurableLeaf,
} from "../../templates/runtime/reconfigure.js";

type Section = keyof typeof RECONFIGURABLE;

/** What wraps a leaf in the schema: optional, nullable, a default, or a union of forms. */
function children(schema: z.ZodType): z.ZodType[] {
  const def = (schema as unknown as { def: Record<string, unknown> }).def;
  if (def["innerType"] !== undefined) return [def["innerType"] as z.ZodType];
  if (Array.isArray(def["options"])) return def["options"] as z.ZodType[];
  if (def["in"] !== undefined) return [def["in"] as z.ZodType];
  return [];
}

/** The schema at `path` below `schema`, through wrappers; the first union member that has it. */
function leafAt(schema: z.ZodType, path: readonly string[]): z.ZodType | undefined {
  if (path.length === 0) return schema;
  const shape = (schema as unknown as { shape?: Record<string, z.ZodType> }).shape;
  if (shape !== undefined) {
    const next = shape[path[0]!];
    return next === undefined ? undefined : leafAt(next, path.slice(1));
  }
  for (const child of children(schema)) {
    const found = leafAt(child, path);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The leaf itself, under its optional wrapper: a duration, a rate or a plain number. */
function scalar(schema: z.ZodType): z.ZodType {
  let at = schema;
  for (;;) {
    const def = (at as unknown as { def: { type: string; innerType?: z.ZodType } }).def;
    if ((def.type === "optional" || def.type === "nullable") && def.innerType) at = def.innerType;
    else return at;
  }
}

/** The leaf of `breaker.openFor` that a plain duration takes (the other form is an object). */
function durationForm(schema: z.ZodType): z.ZodType {
  if (rangeOf(schema) !== undefined) return schema;
  for (const child of children(schema)) if (rangeOf(child) !== undefined) return child;
  return schema;
}

/** The values at and just past each end of a range, in the runtime's units. */
function probes(spec: ReconfigurableLeaf): number[] {
  const step = spec.unit === "ratio" ? 0.001 : spec.unit === "factor" ? 0.01 : 1;
  const low = spec.aboveMin === true ? [spec.min, spec.min + step] : [spec.min - step, spec.min];
  return [...low, spec.max, spec.max + step];
}

/** How the policy writes a runtime value: durations as `<n>ms`, the rest as numbers. */
function written(unit: string, value: number): unknown {
  return unit === "ms" ? `${String(value)}ms` : value;
}

const leaves = (Object.keys(RECONFIGURABLE) as Section[]).flatMap((section) =>
  Object.entries(RECONFIGURABLE[section] as Readonly<Record<string, ReconfigurableLeaf>>).map(
    ([path, spec]) => ({ section, path, spec }),
  ),
);

describe("reconfigurable ranges", () => {
  it.each(leaves)("$section $path accepts what the compiler accepts", ({ section, path, spec }) => {
    const found = leafAt(Policy, spec.leaf.split("."));
    expect(found, `policy leaf ${spec.leaf}`).toBeDefined();
    const leaf = durationForm(scalar(found!));
    if (spec.unit === "ms") expect(rangeOf(leaf)).toMatchObject({ min: spec.min, max: spec.max });
    for (const value of probes(spec)) {
      const compiler = leaf.safeParse(written(spec.unit, value)).success;
      const runtime = rangeProblem(section, path, value) === undefined;
      expect({ value, runtime }).toEqual({ value, runtime: compiler });
    }
  });

  it("names a policy leaf for every setting, and no leaf twice", () => {
    const names = leaves.map((l) => l.spec.leaf);
    expect(new Set(names).size).toBe(names.length);
  });
});
