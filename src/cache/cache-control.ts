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
