/**
 * Where a protected route finds its token (`auth.tokenFrom`): the `Authorization` header (the
 * default), a cookie, or a query parameter, tried in the order listed; the first that carries a
 * token is used. Every mode reads the token from `Authorization: Bearer`, so a token found
 * elsewhere is put there in the parsed headers (`req.headers`), which the local and JWKS modes
 * validate and the auth service receives; what is forwarded to the backend comes from the raw
 * header list, from which a client's own `Authorization` is then removed: the backend sees only
 * the credential the gateway verified. A query parameter that names a token is removed from the request
 * (the backend path, and `req.url` the auth service is told) whether or not it was the one used,
 * so a token in a URL never travels further than the gateway.
 */
import type { IncomingMessage } from 'node:http';
import { withoutClientAuthorization } from '../upstream/trust-boundary.js';

export type TokenSource = 'header' | { readonly cookie: string } | { readonly query: string };

export interface TokenSources {
  /**
   * Moves the request's token to `req.headers.authorization` (or removes that header when no
   * listed source holds one) and returns `rawQuery` without the token parameters; `req.url`
   * loses them too. Undefined when a listed cookie or parameter is sent twice: which of the two
   * a backend would read is its parser's choice, so the request is refused, not guessed at.
   */
  take(req: IncomingMessage, rawQuery: string): string | undefined;
}

/** Undefined for the default (`header` alone): nothing to do per request. */
export function compileTokenSources(sources: readonly TokenSource[]): TokenSources | undefined {
  if (sources.length === 1 && sources[0] === 'header') return undefined;
  const queryNames = new Set(sources.flatMap((s) => (typeof s === 'object' && 'query' in s ? [s.query] : [])));
  const cookieNames = sources.flatMap((s) => (typeof s === 'object' && 'cookie' in s ? [s.cookie] : []));
  return {
    take(req, rawQuery) {
      const query = queryNames.size === 0 || rawQuery === '' ? undefined : splitQuery(rawQuery, queryNames);
      if (query?.repeated === true || cookieNames.some((name) => cookieCount(req.headers.cookie, name) > 1))
        return undefined;
      let token: string | undefined;
      for (const source of sources) {
        if (source === 'header') {
          if (req.headers.authorization !== undefined) return finish(req, query, rawQuery);
          continue;
        }
        token = 'cookie' in source ? cookieValue(req.headers.cookie, source.cookie) : query?.tokens.get(source.query);
        if (token !== undefined && token !== '') break;
        token = undefined;
      }
      if (token === undefined) delete req.headers.authorization;
      else {
        // The backend sees only the credential the gateway verified: an Authorization header the
        // client sent beside it (the header is not a source here, or comes later) is not forwarded.
        if (req.headers.authorization !== undefined) withoutClientAuthorization(req);
        req.headers.authorization = `Bearer ${token}`;
      }
      return finish(req, query, rawQuery);
    },
  };
}

export interface SplitQuery {
  /** The token parameters' values, by name. */
  readonly tokens: Map<string, string>;
  /** A token parameter appears more than once. */
  readonly repeated: boolean;
  /** The query without them. */
  readonly rest: string;
}

/** `rawQuery` without the parameters `query` took out, which `req.url` loses too. */
export function finish(req: IncomingMessage, query: SplitQuery | undefined, rawQuery: string): string {
  if (query === undefined || query.rest.length === rawQuery.length) return rawQuery;
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  req.url = (q < 0 ? url : url.slice(0, q)) + (query.rest === '' ? '' : `?${query.rest}`);
  return query.rest;
}

/** The parameters called one of `names`, taken out of `rawQuery` (names and values decoded). */
export function splitQuery(rawQuery: string, names: ReadonlySet<string>): SplitQuery {
  const tokens = new Map<string, string>();
  const seen = new Set<string>();
  let repeated = false;
  const kept: string[] = [];
  for (const part of rawQuery.split('&')) {
    const eq = part.indexOf('=');
    const name = decode(eq < 0 ? part : part.slice(0, eq));
    if (name === undefined || !names.has(name)) {
      kept.push(part);
      continue;
    }
    if (seen.has(name)) repeated = true;
    seen.add(name);
    const value = eq < 0 ? '' : decode(part.slice(eq + 1));
    if (value !== undefined && !tokens.has(name)) tokens.set(name, value);
  }
  return { tokens, repeated, rest: kept.join('&') };
}

/** A query name or value decoded (`+` is a space); undefined when its escapes are malformed. */
function decode(text: string): string | undefined {
  if (!text.includes('%') && !text.includes('+')) return text;
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    return undefined;
  }
}

/** How many cookies called `name` a Cookie header holds. */
function cookieCount(header: string | undefined, name: string): number {
  if (header === undefined || !header.includes(name)) return 0;
  let count = 0;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq >= 0 && pair.slice(0, eq).trim() === name) count++;
  }
  return count;
}

/** The value of cookie `name` in a Cookie header (the first one; surrounding quotes removed). */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq < 0 || pair.slice(0, eq).trim() !== name) continue;
    const value = pair.slice(eq + 1).trim();
    return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
  }
  return undefined;
}
