/**
 * The keys of the HTTP cache (layers/cache.ts): the primary key is the Host and the target URI (so
 * that an unsafe request invalidates every variant of it, RFC 9111 4.4); the secondary key is the
 * route's identity key (`keyBy`) and the values of the request headers the stored answer's `Vary`
 * names, `Accept-Encoding` counted as the coding the gateway chose for the request.
 */
import type { IncomingMessage } from 'node:http';
import type { Exchange } from '../pipeline/types.js';
import { text } from './storable.js';

/** The Host (lower case, without a trailing dot) and the target URI, as the client sent them. */
export function primaryKey(req: IncomingMessage): string {
  const host = (req.headers.host ?? text(req.headers[':authority']) ?? '').toLowerCase().replace(/\.$/, '');
  return `${host}\u0000${req.url ?? '/'}`;
}

export function secondaryKey(identity: string, vary: readonly string[], req: IncomingMessage, coding: string): string {
  let key = identity;
  for (const name of vary) {
    const value = name === 'accept-encoding' ? coding : varyValue(name, text(req.headers[name]));
    key += `\u0000${value}`;
  }
  return key;
}

/** Fields whose values compare case-insensitively (language tags, RFC 4647; charsets). */
const CASELESS_VALUES: ReadonlySet<string> = new Set(['accept-language', 'accept-charset']);

/**
 * A request field's value as a `Vary` key compares it: RFC 9111 4.1 lets a cache normalise what
 * does not change the meaning, so the whitespace around list commas and parameters goes, and
 * the case of language tags. `en, de` and ` EN ,de` then share one stored answer.
 */
export function varyValue(name: string, value: string | undefined): string {
  if (value === undefined) return '';
  const normal = value
    .split(',')
    .map((member) => member.trim().replace(/\s*;\s*/g, ';'))
    .filter((member) => member !== '')
    .join(',');
  return CASELESS_VALUES.has(name) ? normal.toLowerCase() : normal;
}

export function varyNames(vary: string | string[] | undefined): string[] {
  const t = text(vary);
  if (t === undefined) return [];
  return [
    ...new Set(
      t
        .split(',')
        .map((n) => n.trim().toLowerCase())
        .filter((n) => n !== ''),
    ),
  ].sort();
}

/** `keyBy` compiled: the request's identity as one string ('' without keyBy). */
export function compileIdentity(keyBy: readonly string[]): (ex: Exchange) => string {
  if (keyBy.length === 0) return () => '';
  const parts = keyBy.map((part): ((ex: Exchange) => string) => {
    if (part.startsWith('header:')) {
      const name = part.slice('header:'.length).toLowerCase();
      return (ex) => text(ex.req.headers[name]) ?? '';
    }
    const path = part.slice('claims.'.length).split('.');
    return (ex) => {
      let v: unknown = ex.claims;
      for (const k of path) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
      return v === undefined ? '' : JSON.stringify(v);
    };
  });
  return (ex) => parts.map((p) => p(ex)).join('\u0001');
}
