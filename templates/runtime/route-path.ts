// How the front door's rules (`routes:` and `priorities.rules`) match a request path: on the
// paths a router may read from the request target, never on its raw bytes (docs/services.md,
// "How routes match").
//
// Routers differ: Express ignores case and a trailing slash, Fastify decodes escapes and may cut
// at ';' or merge '//', WHATWG URL parsing (`new URL(req.url, base)`) resolves dot segments (also
// '%2e'), reads '\' as '/' and takes '//host/…' as an authority. A request target is read every
// way a router may read it; each reading is canonical (unreserved escapes decoded, other escapes
// in lowercase hex, characters past ASCII escaped), once with its letters folded to lowercase and
// once as sent, and a rule's path is made canonical the same way. A plain path has those two
// readings; only the spellings that trigger a difference (an escape, '\', ';', '//', a '.' or '..'
// segment) have more. docs/services.md says what a request gets from its readings.

/**
 * A rule's path, canonical: exact (one trailing slash ignored) or a prefix (from `…*`), with its
 * letters folded to lowercase (`path`) and as written (`cased`).
 */
export interface PathPattern {
  readonly prefix: boolean;
  readonly path: string;
  readonly cased: string;
}

/** One way of reading a request path: canonical, with its letters folded or as sent. */
export interface PathReading {
  readonly path: string;
  readonly folded: boolean;
}

/** Compiles a rule's path (`/orders`, `/sync/*`) to its canonical pattern. */
export function compilePath(path: string): PathPattern {
  const prefix = path.endsWith("*");
  let text = prefix ? path.slice(0, -1) : path;
  if (!text.startsWith("/")) text = `/${text}`;
  const cased = read(text, PLAIN, true);
  const exact = (p: string) => (prefix ? p : trimSlash(p));
  return { prefix, path: exact(cased.toLowerCase()), cased: exact(cased) };
}

/** Whether a reading of a request path matches a pattern (folded readings the folded pattern). */
export function pathMatches(pattern: PathPattern, reading: PathReading): boolean {
  const path = reading.folded ? pattern.path : pattern.cased;
  return pattern.prefix ? reading.path.startsWith(path) : trimSlash(reading.path) === path;
}

/**
 * Most characters read for one request: a path whose readings would take more (a long path
 * spelled with many of the characters routers disagree on) is not read, and counts as ambiguous.
 */
export const MAX_READ_CHARS = 8_192;

// a path every router reads the same way, but for the case of its letters
const PLAIN_PATH =
  /^(?:\/\.*[A-Za-z0-9\-_~!$&'()*+,=:@]+(?:\.+[A-Za-z0-9\-_~!$&'()*+,=:@]+)*)*\/?$/;

/**
 * Every canonical path a router may read from a request target (the request line's URL), without
 * duplicates: a plain path gives two (its letters folded and as sent). The query and fragment are
 * not part of it; an absolute target (`http://host/path`) gives its path; `*` gives `/*`. `null`
 * when reading it every way would take more than {@link MAX_READ_CHARS} characters: more than the
 * request is worth to the server.
 */
export function pathReadings(target: string): PathReading[] | null {
  const raw = pathPart(target);
  if (PLAIN_PATH.test(raw)) {
    const folded = raw.toLowerCase();
    return [
      { path: folded, folded: true },
      { path: raw, folded: false },
    ];
  }
  // a router that decodes first, then reads '?' and '#' again
  const texts = raw.includes("%") ? [raw, pathPart(decodeAll(raw))] : [raw];
  const ways = texts.map((text) => ({
    text,
    semis: text.includes(";") ? SEMICOLONS : KEEP_SEMICOLONS,
    slashes: /[/\\]{2}/.test(text) ? SLASHES : COLLAPSE_ONLY,
    backslashes: text.includes("\\") ? BACKSLASHES : SLASH_ONLY,
    dots: /(^|[/\\;])(\.|%2e){1,2}($|[/\\;])/i.test(text) ? DOTS : RESOLVE_ONLY,
  }));
  let cost = 0;
  for (const w of ways)
    cost +=
      w.text.length * w.semis.length * w.slashes.length * w.backslashes.length * w.dots.length;
  if (cost > MAX_READ_CHARS) return null;
  const out = new Map<string, PathReading>();
  // canonical segments, by segment as sent: readings share most of them
  const segments = new Map<string, string>();
  for (const { text, semis, slashes, backslashes, dots } of ways) {
    for (const semicolon of semis)
      for (const slash of slashes)
        for (const backslash of backslashes)
          for (const dot of dots) {
            const path = read(text, { semicolon, slash, backslash, dot }, false, segments);
            out.set(`c${path}`, { path, folded: false });
            const folded = path.toLowerCase();
            out.set(`f${folded}`, { path: folded, folded: true });
          }
  }
  return [...out.values()];
}

interface Reading {
  /** `keep`: part of the path; `cut`: the path ends at the first; `segment`: each segment's. */
  readonly semicolon: "keep" | "cut" | "segment";
  /** `collapse`: `//` is `/`; `keep`: an empty segment; `authority`: `//host/…` is a host. */
  readonly slash: "collapse" | "keep" | "authority";
  readonly backslash: boolean;
  /** Resolve `.` and `..` segments (WHATWG URL, RFC 3986) or keep them as names. */
  readonly dot: boolean;
}

const PLAIN: Reading = { semicolon: "keep", slash: "collapse", backslash: true, dot: true };
const SEMICOLONS = ["keep", "cut", "segment"] as const;
const KEEP_SEMICOLONS = ["keep"] as const;
const SLASHES = ["collapse", "keep", "authority"] as const;
const COLLAPSE_ONLY = ["collapse"] as const;
const BACKSLASHES = [true, false] as const;
const SLASH_ONLY = [true] as const;
const DOTS = [true, false] as const;
const RESOLVE_ONLY = [true] as const;

// the path of a request target: before '?' and '#', the path of an absolute URL, always from '/'
function pathPart(target: string): string {
  let end = target.length;
  const q = target.indexOf("?");
  if (q !== -1) end = q;
  const h = target.indexOf("#");
  if (h !== -1 && h < end) end = h;
  let path = target.slice(0, end);
  const scheme = /^[a-z][a-z0-9+.-]*:\/\/[^/\\]*/i.exec(path);
  if (scheme !== null) path = path.slice(scheme[0].length);
  return path.startsWith("/") || path.startsWith("\\") ? path : `/${path}`;
}

// utf8: the path is text (a rule's), else bytes as latin1 characters (Node's request target)
// the canonical path of one reading, letters as sent (lowercase it to fold them, as Express
// routes); cache: canonical segments already made
function read(
  path: string,
  how: Reading,
  utf8: boolean,
  cache: Map<string, string> = new Map(),
): string {
  let text = path;
  if (how.semicolon === "cut") {
    const s = text.indexOf(";");
    if (s !== -1) text = text.slice(0, s);
  }
  if (how.backslash) text = text.replace(/\\/g, "/");
  let segments = text.slice(1).split("/");
  if (how.slash === "authority" && text.startsWith("//")) segments = segments.slice(2);
  else if (how.slash === "collapse")
    segments = segments.filter((s, i) => s !== "" || i === segments.length - 1);
  const out: string[] = [];
  let trailing = false;
  for (let i = 0; i < segments.length; i++) {
    let segment = segments[i] ?? "";
    if (how.semicolon === "segment") {
      const s = segment.indexOf(";");
      if (s !== -1) segment = segment.slice(0, s);
    }
    let canonical = cache.get(segment);
    if (canonical === undefined) {
      canonical = canonicalSegment(segment, utf8);
      cache.set(segment, canonical);
    }
    segment = canonical;
    const last = i === segments.length - 1;
    trailing = false;
    if (how.dot && (segment === "." || segment === "..")) {
      if (segment === "..") out.pop();
      trailing = last;
      continue;
    }
    out.push(segment);
  }
  if (trailing) out.push("");
  return `/${out.join("/")}`;
}

// unreserved escapes decoded, other escapes in lowercase hex (so that folding the letters of a
// path leaves its escapes alone), other bytes escaped
function canonicalSegment(segment: string, utf8: boolean): string {
  if (SIMPLE_SEGMENT.test(segment)) return segment;
  let out = "";
  for (let i = 0; i < segment.length; i++) {
    const code = segment.charCodeAt(i);
    if (code === 0x25 && i + 2 < segment.length && isHex(segment.charCodeAt(i + 1))) {
      const low = segment.charCodeAt(i + 2);
      if (isHex(low)) {
        const byte = (hexValue(segment.charCodeAt(i + 1)) << 4) | hexValue(low);
        if (isUnreserved(byte)) out += String.fromCharCode(byte);
        else out += `%${segment.slice(i + 1, i + 3).toLowerCase()}`;
        i += 2;
        continue;
      }
    }
    if (code > 0x7e || code < 0x21 || code === 0x25) out += escapeChar(segment.charAt(i), utf8);
    else out += segment.charAt(i);
  }
  return out;
}

const SIMPLE_SEGMENT = /^[A-Za-z0-9\-._~!$&'()*+,=:@]*$/;

function isHex(code: number): boolean {
  return (
    (code >= 0x30 && code <= 0x39) ||
    (code >= 0x41 && code <= 0x46) ||
    (code >= 0x61 && code <= 0x66)
  );
}

function hexValue(code: number): number {
  return code <= 0x39 ? code - 0x30 : (code | 0x20) - 0x57;
}

// ALPHA, DIGIT, '-', '.', '_', '~' (RFC 3986)
function isUnreserved(byte: number): boolean {
  return (
    (byte >= 0x41 && byte <= 0x5a) ||
    (byte >= 0x61 && byte <= 0x7a) ||
    (byte >= 0x30 && byte <= 0x39) ||
    byte === 0x2d ||
    byte === 0x2e ||
    byte === 0x5f ||
    byte === 0x7e
  );
}

// a character as escapes: its UTF-8 bytes (a rule's path), or itself as one byte (a request
// target, which Node hands over as latin1)
function escapeChar(c: string, utf8: boolean): string {
  const code = c.charCodeAt(0);
  const bytes = !utf8 && code <= 0xff ? [code] : [...new TextEncoder().encode(c)];
  return bytes.map((b) => `%${b.toString(16).padStart(2, "0")}`).join("");
}

// every escape decoded, as a router that decodes the whole path before reading it
function decodeAll(path: string): string {
  return path.replace(/%([0-9a-f]{2})/gi, (_, hex: string) =>
    String.fromCharCode(parseInt(hex, 16)),
  );
}

function trimSlash(path: string): string {
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}
