/**
 * The rest of a prefix route's path (what its `*` matched), made safe to place into the backend
 * path. It keeps every guarantee a `{param}` has (docs/security.md "Paths and parameters"), segment
 * by segment, and refuses what a backend could read another way than the gateway matched it:
 * an ambiguous path is refused, never normalised.
 */
import { encodeValue } from '../upstream/target-url.js';

/** A segment that encodeURIComponent leaves as it is, and that is not only dots. */
const PLAIN = /^[A-Za-z0-9\-_~]*\.?[A-Za-z0-9\-_~]+(?:\.[A-Za-z0-9\-_~]+)*$/;

/**
 * The rest as the backend gets it, each segment percent-decoded once and encoded again like a
 * parameter; undefined when it must be refused: an empty segment (`a//b`; a final `/` is kept), a
 * dot-segment (`.`, `..`, `%2e%2E`), a segment that decodes to a `/`, a `\` or a NUL (`%2F`, `%5C`,
 * `\`, `%00`: backends split or cut on them), or a malformed escape.
 * @example safeRest('css/a%20b.css') === 'css/a%20b.css'; safeRest('a/%2e%2e/b') === undefined
 */
export function safeRest(raw: string): string | undefined {
  if (raw === '') return '';
  let out = '';
  let from = 0;
  for (;;) {
    const slash = raw.indexOf('/', from);
    const last = slash < 0;
    const segment = last ? raw.slice(from) : raw.slice(from, slash);
    if (segment === '') {
      // Only the final segment may be empty: `dir/` names the directory, `a//b` is ambiguous.
      if (!last || from === 0) return undefined;
    } else if (PLAIN.test(segment)) out += segment;
    else {
      const safe = safeSegment(segment);
      if (safe === undefined) return undefined;
      out += safe;
    }
    if (last) return out;
    out += '/';
    from = slash + 1;
  }
}

const SLASH = 47;
const DOT = 46;

/** The characters encodeURIComponent leaves as they are, but for `!*'()`: letters, digits, `-_.~`. */
const UNRESERVED = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~') UNRESERVED[c.charCodeAt(0)] = 1;

/**
 * True when the rest `raw.slice(at)` is one safeRest returns as it is: non-empty segments (but the
 * last) of unreserved characters, none only dots. Read in place, so a common rest costs one scan
 * and its slice.
 * @example isPlainRest('/s/css/site.css', 3) === true; isPlainRest('/s/a/../b', 3) === false
 */
export function isPlainRest(raw: string, at: number): boolean {
  let segment = at;
  let onlyDots = true;
  for (let i = at; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c === SLASH) {
      // An empty segment, or one of dots only (`.`, `..`, `...`): safeRest's to refuse or encode.
      if (onlyDots) return false;
      segment = i + 1;
      onlyDots = true;
    } else if (c >= 128 || UNRESERVED[c] === 0) return false;
    else if (c !== DOT) onlyDots = false;
  }
  return segment === raw.length || !onlyDots;
}

function safeSegment(segment: string): string | undefined {
  let value: string;
  try {
    value = decodeURIComponent(segment);
  } catch {
    return undefined;
  }
  if (value === '.' || value === '..') return undefined;
  if (value.includes('/') || value.includes('\\') || value.includes('\0')) return undefined;
  return encodeValue(value);
}
