/**
 * Where a request's API key is read (`config.auth.apiKey`, docs/consumers.md): a header, a query
 * parameter, or either. The parameter is taken out of the query (the backend path and `req.url`)
 * whether or not a key was valid, and the header never passes the trust boundary (it joins the
 * dropped headers, upstream/trust-boundary.ts), so a key travels no further than the gateway.
 * A key sent twice (the header twice, the parameter twice, or both) is ambiguous: refused, not
 * guessed at, as a backend reading the other copy would see a credential the gateway never checked.
 */
import type { IncomingMessage } from 'node:http';
import { finish, splitQuery } from './token-sources.js';

/** What the request carried: its key (undefined: none), and its query without the key. */
export interface TakenKey {
  readonly key: string | undefined;
  readonly rest: string;
}

export interface ApiKeySource {
  /** The header and parameter read, as configured; undefined for the one not configured. */
  readonly header: string | undefined;
  readonly query: string | undefined;
  /** Takes the key out of the request; undefined when it carries the key more than once. */
  take(req: IncomingMessage, rawQuery: string): TakenKey | undefined;
  /** `rawQuery` without the key parameter (`req.url` too): for routes that read no key. */
  strip(req: IncomingMessage, rawQuery: string): string;
}

/** The source of `config.auth.apiKey`; undefined when key authentication is off. */
export function compileApiKeySource(
  apiKey: { readonly header?: string | undefined; readonly query?: string | undefined } | undefined,
): ApiKeySource | undefined {
  if (apiKey === undefined || (apiKey.header === undefined && apiKey.query === undefined)) return undefined;
  const header = apiKey.header?.toLowerCase();
  const headerName = apiKey.header;
  const query = apiKey.query;
  const names: ReadonlySet<string> = new Set(query === undefined ? [] : [query]);
  const fromQuery = (rawQuery: string) =>
    // A query that does not even contain the name has no key: no split, no copy.
    query === undefined || rawQuery === '' || !mayHold(rawQuery, query) ? undefined : splitQuery(rawQuery, names);
  return {
    header: headerName,
    query,
    take(req, rawQuery) {
      const split = fromQuery(rawQuery);
      if (split?.repeated === true) return undefined;
      const inQuery = split?.tokens.get(query!);
      let inHeader: string | undefined;
      if (header !== undefined) {
        const count = headerCount(req.rawHeaders, header);
        if (count > 1) return undefined;
        if (count === 1) inHeader = (req.headers[header] as string | undefined) ?? '';
      }
      if (inHeader !== undefined && inQuery !== undefined) return undefined;
      return { key: inHeader ?? inQuery, rest: finish(req, split, rawQuery) };
    },
    strip(req, rawQuery) {
      return finish(req, fromQuery(rawQuery), rawQuery);
    },
  };
}

/** False only when `rawQuery` surely holds no parameter `name` (encoded names are checked in full). */
function mayHold(rawQuery: string, name: string): boolean {
  return rawQuery.includes('%') || rawQuery.includes('+') || rawQuery.includes(name);
}

/** How many headers called `lower` (any case) the raw header list holds. */
function headerCount(rawHeaders: readonly string[], lower: string): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === lower.length && name.toLowerCase() === lower) count++;
  }
  return count;
}
