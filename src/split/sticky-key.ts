/**
 * Reads a request's sticky key (`stickyBy`, config/syntax/sticky-key.ts): a header, a cookie or a
 * claim of the valid token. Compiled once per route; undefined when the request has no key, which
 * then goes by weight alone.
 */
import type { StickyKey } from '../config/syntax/sticky-key.js';
import type { Exchange } from '../pipeline/types.js';

export type StickyKeyReader = (ex: Pick<Exchange, 'req' | 'claims'>) => string | undefined;

/** The reader of one route's `stickyBy`. */
export function compileStickyKey(key: StickyKey): StickyKeyReader {
  const { name } = key;
  switch (key.from) {
    case 'header':
      return (ex) => {
        const v = ex.req.headers[name];
        const text = Array.isArray(v) ? v.join(', ') : v;
        return text === undefined || text === '' ? undefined : text;
      };
    case 'cookie':
      return (ex) => cookieValue(ex.req.headers.cookie, name);
    case 'claim':
      return (ex) => {
        const v = ex.claims?.[name];
        return typeof v === 'string' ? (v === '' ? undefined : v) : typeof v === 'number' ? String(v) : undefined;
      };
  }
}

/** The value of cookie `name` in a Cookie header (`a=1; b=2`), or undefined. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  let start = 0;
  while (start < header.length) {
    let end = header.indexOf(';', start);
    if (end < 0) end = header.length;
    const eq = header.indexOf('=', start);
    if (eq > start && eq < end && header.slice(start, eq).trim() === name) {
      const value = header.slice(eq + 1, end).trim();
      return value === '' ? undefined : value;
    }
    start = end + 1;
  }
  return undefined;
}
