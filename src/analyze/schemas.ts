/**
 * Types the emitter will need: every `$ref` names a schema of the policy, and an operation that
 * declares `params:` declares exactly the parameters of its path.
 */
import type { JsonSchema, ResolvedPolicy } from "../model/resolved.js";
import { didYouMean } from "../language/suggest.js";
import { extractParams } from "../model/normalize.js";
import { finding, inOperation, inPolicy, type AnalyzeContext, type Finding } from "./context.js";

type Segment = string | number;

/** Every `$ref` in a schema, with its path relative to the schema. */
function refs(
  schema: JsonSchema,
  path: Segment[] = [],
  depth = 0,
): { ref: string; path: Segment[] }[] {
  if (depth > 64) return [];
  const out: { ref: string; path: Segment[] }[] = [];
  if (schema.$ref !== undefined) out.push({ ref: schema.$ref, path: [...path, "$ref"] });
  for (const [name, prop] of Object.entries(schema.properties ?? {}))
    out.push(...refs(prop, [...path, "properties", name], depth + 1));
  if (schema.items) out.push(...refs(schema.items, [...path, "items"], depth + 1));
  if (typeof schema.additionalProperties === "object")
    out.push(...refs(schema.additionalProperties, [...path, "additionalProperties"], depth + 1));
  for (const key of ["allOf", "oneOf", "anyOf"] as const) {
    schema[key]?.forEach((member, i) => out.push(...refs(member, [...path, key, i], depth + 1)));
  }
  return out;
}

export function checkSchemas(policy: ResolvedPolicy, ctx: AnalyzeContext): Finding[] {
  const out: Finding[] = [];
  const names = Object.keys(policy.schemas);
  const roots: { schema: JsonSchema; path: Segment[] }[] = [];
  for (const op of policy.operations) {
    if (op.body) roots.push({ schema: op.body, path: [...op.source.path, "body"] });
    if (op.response) roots.push({ schema: op.response, path: [...op.source.path, "response"] });
  }
  for (const [name, schema] of Object.entries(policy.schemas))
    roots.push({ schema, path: ["schemas", name] });
  for (const root of roots) {
    for (const r of refs(root.schema)) {
      const name = r.ref.replace(/^#\/schemas\//, "");
      if (Object.hasOwn(policy.schemas, name)) continue;
      const suggestion = didYouMean(name, names);
      out.push(
        finding(
          ctx,
          policy,
          "RG218",
          [{ ref: inPolicy(policy, ...root.path, ...r.path) }],
          `$ref "${r.ref}" names no schema: ${names.length === 0 ? "the policy has no schemas:" : `schemas: declares ${names.join(", ")}`}`,
          suggestion ? `did you mean "#/schemas/${suggestion}"?` : `declare ${name} under schemas:`,
        ),
      );
    }
  }

  for (const op of policy.operations) {
    const declared = op.declaredParams;
    if (declared === undefined) continue;
    const inPath = op.path === undefined ? [] : extractParams(op.path);
    for (const p of inPath) {
      if (declared.includes(p)) continue;
      const suggestion = didYouMean(p, declared);
      out.push(
        finding(
          ctx,
          policy,
          "RG219",
          [{ ref: inOperation(policy, op, "path") }, { ref: op.source, key: true }],
          `path parameter {${p}} is not declared under params: (${declared.length === 0 ? "it is empty" : `it declares ${declared.join(", ")}`})`,
          suggestion
            ? `did you mean to declare "${p}" instead of "${suggestion}"?`
            : `add \`${p}: { type: string }\` under params:`,
          op,
        ),
      );
    }
    for (const p of declared) {
      if (inPath.includes(p)) continue;
      const suggestion = didYouMean(p, inPath);
      out.push(
        finding(
          ctx,
          policy,
          "RG219",
          [
            { ref: inOperation(policy, op, "params", p), key: true },
            { ref: op.source, key: true },
          ],
          `params declares "${p}", which the path ${op.path === undefined ? "(none)" : `"${op.path}"`} does not contain`,
          suggestion ? `did you mean "${suggestion}"?` : `remove it, or write {${p}} in the path`,
          op,
        ),
      );
    }
  }
  return out;
}
