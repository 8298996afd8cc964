/**
 * The syntax of a split's `stickyBy`: where the key that keeps a client on one arm is read.
 * `header:NAME` (a request header), `cookie:NAME` (one cookie of the Cookie header) or
 * `claims.NAME` (a claim of the valid token, as header rules write `{claims.NAME}`).
 */
import type { StickyKey } from '../types.js';
import { HEADER_NAME } from './headers.js';

export type { StickyKey };

/** A header name, and a cookie name too (RFC 6265 cookie-name is an RFC 9110 token). */
const TOKEN = HEADER_NAME;
const COOKIE_NAME = HEADER_NAME;
/** A claim name: anything but dots and spaces (a dot would read as a path). */
const CLAIM_NAME = /^[^\s.]+$/;

/** Parses a `stickyBy` value, or says what is wrong with it. */
export function parseStickyKey(text: string): StickyKey | { readonly error: string } {
  const colon = text.indexOf(':');
  if (text.startsWith('claims.')) {
    const name = text.slice('claims.'.length);
    return CLAIM_NAME.test(name) ? { from: 'claim', name } : { error: `"${text}": claims.NAME needs a claim name` };
  }
  if (colon > 0) {
    const kind = text.slice(0, colon).toLowerCase();
    const name = text.slice(colon + 1);
    if (kind === 'header')
      return TOKEN.test(name)
        ? { from: 'header', name: name.toLowerCase() }
        : { error: `"${text}": "${name}" is not a header name` };
    if (kind === 'cookie')
      return COOKIE_NAME.test(name) ? { from: 'cookie', name } : { error: `"${text}": "${name}" is not a cookie name` };
  }
  return { error: `"${text}" must be header:NAME, cookie:NAME or claims.NAME` };
}
