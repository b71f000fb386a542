/**
 * The names a policy's dependency and operations get in generated code, and the clashes between
 * them. Pure and free of ts-morph, so `resgen check` reports clashes before anything is emitted.
 */
import type { ResolvedOperation, ResolvedPolicy } from "../policy/model.js";
import { camelCase, methodName, pascalCase } from "./names.js";

/** What the module of one dependency exports, for the barrel. */
export interface ClientNames {
  readonly factory: string;
  readonly client: string;
  readonly config: string;
}

export function clientNames(dependency: string): ClientNames {
  const base = pascalCase(dependency);
  return { factory: `create${base}Client`, client: `${base}Client`, config: `${base}ClientConfig` };
}

/** Names of an operation in generated code. */
export interface OperationNames {
  readonly method: string;
  readonly constant: string;
  readonly input: string;
  readonly body: string;
  readonly response: string;
}

export function operationNames(op: ResolvedOperation, transport: "http" | "function"): OperationNames {
  const pascal = pascalCase(op.name);
  return {
    method: transport === "function" ? `run${pascal}` : methodName(op.name),
    constant: `${camelCase(op.name).replace(/_$/, "")}Operation`,
    input: `${pascal}Input`,
    body: `${pascal}Body`,
    response: `${pascal}Response`,
  };
}

/** Problems that would make the module wrong; reported by the build as diagnostics. */
export interface NameClash {
  readonly operation: ResolvedOperation;
  readonly message: string;
}

/** Operations whose generated names collide, or whose path parameters clash with input keys. */
export function findClashes(policy: ResolvedPolicy): NameClash[] {
  const out: NameClash[] = [];
  const seen = new Map<string, string>();
  for (const op of policy.operations) {
    const names = operationNames(op, policy.transport);
    const previous = seen.get(names.method);
    if (previous !== undefined) {
      out.push({ operation: op, message: `operation "${op.name}" and "${previous}" both become the method ${names.method}()` });
    }
    seen.set(names.method, op.name);
    for (const p of op.params) {
      if (p.name === "query" || p.name === "body") {
        out.push({ operation: op, message: `path parameter {${p.name}} clashes with the "${p.name}" field of the method's input` });
      }
    }
  }
  return out;
}

