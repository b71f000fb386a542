// Credentials of generated HTTP clients: security schemes, requirements, and the headers and query
// parameters they add.

/**
 * A credential: the value, or a function called once per attempt that returns it (a rotating
 * token).
 */
export type CredentialSource = string | (() => string | Promise<string>);

/** HTTP basic credentials (RFC 7617), sent as `Authorization: Basic base64(username:password)`. */
export interface BasicCredentials {
  readonly username: string;
  readonly password: string;
}

/**
 * One security scheme, as generated clients describe it. The credential is the client's
 * `auth[type]`, or `auth[type][scheme]` when several schemes share a type.
 */
export type AuthScheme =
  | { readonly type: "bearer"; readonly scheme?: string | undefined }
  | { readonly type: "basic"; readonly scheme?: string | undefined }
  | {
      readonly type: "apiKey";
      /** Where the key goes. */
      readonly in: "header" | "query";
      /** The header's or the query parameter's name. */
      readonly name: string;
      readonly scheme?: string | undefined;
    };

/**
 * An operation's security requirement: alternatives in order, each a list of schemes sent
 * together. The first alternative whose every credential the client was given is sent; none
 * (or an empty list) sends no credentials.
 */
export type AuthRequirement = readonly (readonly AuthScheme[])[];

/**
 * The credentials a client was given, as the runtime reads them (generated clients type them
 * exactly).
 */
export interface AuthCredentials {
  readonly bearer?:
    CredentialSource | Readonly<Record<string, CredentialSource | undefined>> | undefined;
  readonly basic?:
    BasicCredentials | Readonly<Record<string, BasicCredentials | undefined>> | undefined;
  readonly apiKey?:
    CredentialSource | Readonly<Record<string, CredentialSource | undefined>> | undefined;
}

/** A request's credentials: what the client was given, and what the operation requires. */
export interface HttpAuth {
  readonly credentials: AuthCredentials | undefined;
  readonly require: AuthRequirement;
}

/** What credentials add to one request. */
export interface AuthParts {
  readonly headers: Record<string, string>;
  readonly query: Record<string, string>;
}

const NONE: AuthParts = Object.freeze({ headers: {}, query: {} });

function credentialOf(credentials: AuthCredentials, scheme: AuthScheme): unknown {
  const given: unknown = credentials[scheme.type];
  if (scheme.scheme === undefined || given === undefined) return given;
  return (given as Readonly<Record<string, unknown>>)[scheme.scheme];
}

/** `text` as base64 of its UTF-8 bytes (RFC 7617 §2.1: the charset is UTF-8). */
function base64(text: string): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/**
 * The headers and query parameters `auth` adds to one attempt: of the first alternative whose
 * credentials were all given. A credential function is called once here, so once per attempt.
 * Synchronous unless a credential function returns a promise.
 */
export function applyAuth(auth: HttpAuth): AuthParts | Promise<AuthParts> {
  const credentials = auth.credentials;
  if (credentials === undefined) return NONE;
  const chosen = auth.require.find(
    (all) => all.length > 0 && all.every((s) => credentialOf(credentials, s) !== undefined),
  );
  if (chosen === undefined) return NONE;
  const headers: Record<string, string> = {};
  const query: Record<string, string> = {};
  const pending: Promise<void>[] = [];
  for (const scheme of chosen) {
    const given = credentialOf(credentials, scheme);
    if (scheme.type === "basic") {
      const { username, password } = given as BasicCredentials;
      headers["authorization"] = `Basic ${base64(`${username}:${password}`)}`;
      continue;
    }
    const put = (value: string): void => {
      if (scheme.type === "bearer") headers["authorization"] = `Bearer ${value}`;
      else if (scheme.in === "header") headers[scheme.name] = value;
      else query[scheme.name] = value;
    };
    const value = typeof given === "function" ? (given as () => unknown)() : given;
    if (isThenable(value)) {
      pending.push(
        Promise.resolve(value).then((v) => {
          put(String(v));
        }),
      );
    } else {
      put(String(value));
    }
  }
  const parts: AuthParts = { headers, query };
  return pending.length === 0 ? parts : Promise.all(pending).then(() => parts);
}

/** Whether `value` is a promise, or another thenable a credential function returned. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}
