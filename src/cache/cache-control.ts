/**
 * `Cache-Control` as RFC 9111 5.2 defines it: directive names are case-insensitive, values are a
 * token or a quoted string, several headers (or several directives in one) are one list. A
 * directive given twice keeps its first value; a delta-seconds value that is not a non-negative
 * integer is treated as absent for lifetimes (RFC 9111 1.2.2: a recipient that cannot parse it
 * must not use it to extend freshness), except `max-age` on a response, which then counts as 0
 * (RFC 9111 4.2.1: an invalid max-age makes the response stale).
 */

/** Directive names (lower case) to their value; `true` for a directive without one. */
export type Directives = ReadonlyMap<string, string | true>;

const EMPTY: Directives = new Map();

export function parseCacheControl(value: string | string[] | undefined): Directives {
  if (value === undefined) return EMPTY;
  const text = Array.isArray(value) ? value.join(',') : value;
  if (text.trim() === '') return EMPTY;
  const out = new Map<string, string | true>();
  // A quoted value may hold commas: split on commas outside quotes.
  for (const part of splitOutsideQuotes(text)) {
    const eq = part.indexOf('=');
    const name = (eq < 0 ? part : part.slice(0, eq)).trim().toLowerCase();
    if (name === '' || out.has(name)) continue;
    if (eq < 0) {
      out.set(name, true);
      continue;
    }
    let v = part.slice(eq + 1).trim();
    if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1).replace(/\\(.)/g, '$1');
    out.set(name, v);
  }
  return out;
}

function splitOutsideQuotes(text: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */ && text.charCodeAt(i - 1) !== 0x5c /* \ */) quoted = !quoted;
    else if (c === 0x2c /* , */ && !quoted) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

/** A delta-seconds directive's value; undefined when absent or not a valid number of seconds. */
export function seconds(directives: Directives, name: string): number | undefined {
  const v = directives.get(name);
  if (typeof v !== 'string' || !/^\d+$/.test(v)) return undefined;
  // RFC 9111 1.2.2: values beyond 2^31 are taken as 2^31.
  return Math.min(Number(v), 2 ** 31);
}

export function has(directives: Directives, name: string): boolean {
  return directives.has(name);
}

/**
 * `CDN-Cache-Control` (RFC 9213): the cache directives addressed to caches like a gateway's, as a
 * Structured Fields Dictionary (RFC 9651). When present and valid it stands for `Cache-Control` and
 * `Expires` on this cache (RFC 9213 2.1); an invalid one is ignored whole. Undefined: absent or
 * invalid. A directive whose value has the wrong type (`max-age="60"`) keeps its raw text, which
 * `seconds` does not read as a number, so it is ignored as the RFC asks.
 */
export function parseTargetedCacheControl(value: string | string[] | undefined): Directives | undefined {
  if (value === undefined) return undefined;
  const text = (Array.isArray(value) ? value.join(',') : value).trim();
  const out = new Map<string, string | true>();
  let i = 0;
  while (i < text.length) {
    const key = /^[a-z*][a-z0-9_.*-]*/.exec(text.slice(i));
    if (key === null) return undefined;
    i += key[0].length;
    let v: string | true = true;
    if (text[i] === '=') {
      const item = SF_BARE_ITEM.exec(text.slice(i + 1));
      if (item === null) return undefined;
      i += 1 + item[0].length;
      if (item[0] !== '?1') v = item[0] === '?0' ? 'false' : item[0];
    }
    // Parameters are allowed and carry nothing a cache reads here.
    const params = /^(;\s*[a-z*][a-z0-9_.*-]*(=(?:"(?:[^"\\]|\\.)*"|[^;,\s]+))?)*/.exec(text.slice(i));
    i += params?.[0].length ?? 0;
    if (!out.has(key[0])) out.set(key[0], v);
    const sep = /^[ \t]*(,[ \t]*|$)/.exec(text.slice(i));
    if (sep === null || (sep[0].includes(',') && i + sep[0].length >= text.length)) return undefined;
    i += sep[0].length;
  }
  return out;
}

/** A Structured Fields bare item: integer, decimal, string, token, byte sequence or boolean. */
const SF_BARE_ITEM =
  /^(-?\d{1,15}(\.\d{1,3})?(?![\w.])|"(?:[^"\\]|\\.)*"|[A-Za-z*][!#$%&'*+.^_`|~0-9A-Za-z:/-]*|:[A-Za-z0-9+/=]*:|\?[01])/;

/** The directives this cache obeys: `CDN-Cache-Control` when valid, else `Cache-Control`. */
export function responseDirectives(head: {
  readonly 'cdn-cache-control'?: string | string[] | undefined;
  readonly 'cache-control'?: string | string[] | undefined;
}): { readonly directives: Directives; readonly targeted: boolean } {
  const targeted = parseTargetedCacheControl(head['cdn-cache-control']);
  return targeted === undefined
    ? { directives: parseCacheControl(head['cache-control']), targeted: false }
    : { directives: targeted, targeted: true };
}
