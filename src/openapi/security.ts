/**
 * OpenAPI security → the policy language's `auth` (docs/openapi.md, "Credentials"). The schemes
 * of `components/securitySchemes` the client can send by itself (HTTP bearer and basic, apiKey
 * in a header or the query) become `auth.schemes`; the document's `security` becomes `auth.use`
 * and an operation's own `security` its `auth`. A scheme that cannot be sent (oauth2,
 * openIdConnect, mutualTLS, another HTTP scheme, an apiKey in a cookie) is reported (RG611) at
 * the scheme, once, when an imported operation accepts it, and the requirements that need it are
 * left out; the others still apply.
 */
import type { Diagnostic } from "../diagnostics/diagnostic.js";
import type { Path } from "../language/parse.js";
import {
  AUTH_SCHEME_NAME,
  type AuthInput,
  type AuthRequirementInput,
  type AuthSchemeInput,
} from "../language/schema.js";
import { isObject, type Raw } from "./description.js";
import type { DocumentSet } from "./references.js";

/** A `security` list: what the policy language keeps of it, and the unmapped schemes it named. */
interface Requirement {
  readonly alternatives: AuthRequirementInput;
  readonly unmapped: readonly string[];
}

/** The schemes of a document, read once, and the requirements of its operations. */
export class SecurityImport {
  readonly #docs: DocumentSet;
  readonly #diagnostics: Diagnostic[];
  /** Each declared scheme: mapped, or why not, and where it is. */
  readonly #schemes = new Map<
    string,
    { readonly scheme: AuthSchemeInput | undefined; readonly why: string; readonly at: Path }
  >();
  /** The schemes imported operations accept, in the order first met. */
  readonly #used = new Set<string>();
  readonly #reported = new Set<string>();
  readonly #root: Requirement | undefined;

  constructor(docs: DocumentSet, diagnostics: Diagnostic[]) {
    this.#docs = docs;
    this.#diagnostics = diagnostics;
    const data = docs.root.data as Raw;
    const components = isObject(data["components"]) ? data["components"] : {};
    const declared = isObject(components["securitySchemes"]) ? components["securitySchemes"] : {};
    for (const [name, raw] of Object.entries(declared)) {
      const at: Path = ["components", "securitySchemes", name];
      const resolved = docs.deref(raw, at);
      if ("problem" in resolved) {
        diagnostics.push(docs.finding("RG603", [...at, "$ref"], resolved.problem, resolved.hint));
        continue;
      }
      this.#schemes.set(name, { ...mapScheme(name, resolved.value), at });
    }
    this.#root =
      data["security"] === undefined
        ? undefined
        : this.#requirement(data["security"], ["security"]);
  }

  /**
   * The requirement of an operation: its own `security` when it has one, else the document's;
   * `undefined` when neither says anything. Records the schemes it uses.
   */
  operation(node: Raw, at: Path): AuthRequirementInput | undefined {
    const own = node["security"];
    const requirement =
      own === undefined ? this.#root : this.#requirement(own, [...at, "security"]);
    if (requirement === undefined) return undefined;
    for (const name of requirement.unmapped) {
      const known = this.#schemes.get(name)!;
      this.#report(name, known.why, known.at);
    }
    for (const entry of requirement.alternatives)
      for (const name of Array.isArray(entry) ? entry : [entry]) this.#used.add(name);
    return requirement.alternatives;
  }

  /** The policy's `auth`: the mapped schemes imported operations use, and the document's default. */
  auth(): AuthInput | undefined {
    const schemes: Record<string, AuthSchemeInput> = {};
    for (const name of this.#used) {
      const scheme = this.#schemes.get(name)?.scheme;
      if (scheme !== undefined) schemes[name] = scheme;
    }
    if (Object.keys(schemes).length === 0) return undefined;
    return { schemes, use: this.#root?.alternatives ?? [] };
  }

  /**
   * A `security` list as the policy language writes it: an alternative naming a scheme the
   * client cannot send, or one the document does not declare, is left out (and reported); an
   * empty alternative (`{}`: credentials optional) sends none, which is what leaving it out does.
   */
  #requirement(raw: unknown, at: Path): Requirement {
    const unmapped: string[] = [];
    if (!Array.isArray(raw)) return { alternatives: [], unmapped };
    const out: AuthRequirementInput = [];
    raw.forEach((alternative: unknown, i: number) => {
      if (!isObject(alternative)) return;
      const names = Object.keys(alternative);
      if (names.length === 0) return;
      let usable = true;
      for (const name of names) {
        const known = this.#schemes.get(name);
        if (known === undefined) {
          usable = false;
          this.#diagnostics.push(
            this.#docs.findingAtKey(
              "RG611",
              [...at, i, name],
              `security names the scheme "${name}", which components/securitySchemes does not declare: this requirement is left out`,
              "declare the scheme under components/securitySchemes, or fix the name",
            ),
          );
        } else if (known.scheme === undefined) {
          usable = false;
          unmapped.push(name);
        }
      }
      if (usable) out.push(names.length === 1 ? names[0]! : names);
    });
    return { alternatives: out, unmapped };
  }

  #report(name: string, why: string, at: Path): void {
    if (this.#reported.has(name)) return;
    this.#reported.add(name);
    this.#diagnostics.push(
      this.#docs.findingAtKey(
        "RG611",
        at,
        `security scheme ${name} is ${why}: the client cannot send it by itself, so the operations that accept only it get no credentials from the auth option`,
        "send its credentials with the client's `headers` option, which may be a function called once per attempt (a token your OAuth library refreshes)",
      ),
    );
  }
}

/** A scheme as the policy language writes it, or why it cannot be. */
function mapScheme(
  name: string,
  raw: unknown,
): { scheme: AuthSchemeInput | undefined; why: string } {
  if (!new RegExp(AUTH_SCHEME_NAME).test(name))
    return { scheme: undefined, why: "named with characters a scheme name cannot have" };
  if (!isObject(raw)) return { scheme: undefined, why: "not a mapping" };
  const type = raw["type"];
  if (type === "http") {
    const scheme = typeof raw["scheme"] === "string" ? raw["scheme"].toLowerCase() : "";
    if (scheme === "bearer") return { scheme: { type: "bearer" }, why: "" };
    if (scheme === "basic") return { scheme: { type: "basic" }, why: "" };
    return {
      scheme: undefined,
      why: `HTTP ${scheme === "" ? "without a scheme" : `scheme ${scheme}`}`,
    };
  }
  if (type === "apiKey") {
    const where = raw["in"];
    const param = raw["name"];
    if (typeof param !== "string" || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(param))
      return { scheme: undefined, why: "an apiKey without a valid name" };
    if (where === "header" || where === "query")
      return { scheme: { type: "apiKey", in: where, name: param }, why: "" };
    return {
      scheme: undefined,
      why: `an apiKey in ${typeof where === "string" ? `a ${where}` : "an unknown place"}`,
    };
  }
  return {
    scheme: undefined,
    why: typeof type === "string" ? `of type ${type}` : "without a type",
  };
}
