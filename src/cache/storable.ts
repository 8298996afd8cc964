/**
 * Whether a shared cache may store an answer (RFC 9111 3, 3.5), and whether it may answer a
 * request from what it stored (RFC 9111 4, 5.2.1). Pure functions over heads, so each rule has a
 * unit test; the cache layer (layers/cache.ts) asks them.
 *
 * Beyond the RFC, and stricter: a request with a `Cookie` counts as carrying credentials like one
 * with `Authorization` (Varnish's built-in policy), and an answer with `Set-Cookie` is never
 * shared. A route that keys its entries by identity (`cache.keyBy`) lifts the credential rule:
 * each identity then has its own entries.
 */
import { has, parseCacheControl, responseDirectives, seconds, type Directives } from './cache-control.js';
import { HEURISTICALLY_CACHEABLE } from './freshness.js';

type Head = Readonly<Record<string, string | string[] | number | undefined>>;

/** Why an answer was not stored (for `Cache-Status`' detail and the logs); undefined: storable. */
export function whyNotStorable(
  request: { readonly headers: Head; readonly keyedByIdentity: boolean },
  status: number,
  response: Head,
  hasFreshness: boolean,
): string | undefined {
  if (status < 200 || status === 206 || status === 304) return 'status';
  const req = parseCacheControl(text(request.headers['cache-control']));
  if (has(req, 'no-store')) return 'request-no-store';
  const res = responseDirectives({
    'cdn-cache-control': text(response['cdn-cache-control']),
    'cache-control': text(response['cache-control']),
  }).directives;
  if (has(res, 'must-understand')) {
    // RFC 9111 5.2.2.3: stored only for a status whose caching rules this cache knows, and then
    // despite the no-store sent beside it for caches that do not.
    if (!UNDERSTOOD_STATUSES.has(status)) return 'must-understand';
  } else if (has(res, 'no-store')) return 'no-store';
  if (has(res, 'private')) return 'private';
  if (response['set-cookie'] !== undefined) return 'set-cookie';
  const vary = text(response.vary);
  if (vary !== undefined && /(^|,)\s*\*\s*(,|$)/.test(vary)) return 'vary-star';
  if (!request.keyedByIdentity && carriesCredentials(request.headers) && !sharedDespiteCredentials(res))
    return 'credentials';
  const explicit = has(res, 'public') || hasFreshness;
  if (!explicit && !HEURISTICALLY_CACHEABLE.has(status)) return 'no-freshness';
  return undefined;
}

/** Statuses whose caching rules this cache implements (RFC 9110 15: the final, whole ones it stores). */
const UNDERSTOOD_STATUSES: ReadonlySet<number> = new Set([
  ...HEURISTICALLY_CACHEABLE,
  302,
  303,
  307,
  400,
  403,
  500,
  502,
  503,
  504,
]);

/** RFC 9111 3.5: an answer to a request with Authorization may be shared only when it says so. */
function sharedDespiteCredentials(res: Directives): boolean {
  return has(res, 'public') || has(res, 's-maxage') || has(res, 'must-revalidate');
}

export function carriesCredentials(headers: Head): boolean {
  return headers.authorization !== undefined || headers.cookie !== undefined;
}

/** What a request's own `Cache-Control` allows the cache to answer with (RFC 9111 5.2.1). */
export interface RequestLimits {
  /** `no-cache` (or `Pragma: no-cache` alone): never from the cache without the backend. */
  readonly noCache: boolean;
  readonly maxAge: number | undefined;
  readonly minFresh: number;
  /** Seconds of staleness accepted; Infinity for a bare `max-stale`. */
  readonly maxStale: number;
  readonly onlyIfCached: boolean;
}

export function requestLimits(headers: Head): RequestLimits {
  const cc = text(headers['cache-control']);
  const d = parseCacheControl(cc);
  const pragmaNoCache = cc === undefined && /(^|,)\s*no-cache\s*(,|$)/i.test(text(headers.pragma) ?? '');
  const maxStale = d.get('max-stale');
  return {
    noCache: has(d, 'no-cache') || pragmaNoCache,
    maxAge: seconds(d, 'max-age'),
    minFresh: seconds(d, 'min-fresh') ?? 0,
    maxStale: maxStale === true ? Infinity : (seconds(d, 'max-stale') ?? 0),
    onlyIfCached: has(d, 'only-if-cached'),
  };
}

/**
 * Whether a stored answer of this age and lifetime may be sent without the backend: fresh enough
 * for the request, not `no-cache` on either side, and stale only as far as the request accepts
 * (never past `must-revalidate` / `proxy-revalidate`, RFC 9111 5.2.2.2, 5.2.2.8).
 */
export function mayServe(
  limits: RequestLimits,
  stored: Directives,
  ageSec: number,
  lifetimeSec: number | undefined,
): boolean {
  if (limits.noCache || has(stored, 'no-cache')) return false;
  if (limits.maxAge !== undefined && ageSec > limits.maxAge) return false;
  const lifetime = lifetimeSec ?? 0;
  const freshFor = lifetime - ageSec;
  if (freshFor - limits.minFresh > 0) return true;
  if (has(stored, 'must-revalidate') || has(stored, 'proxy-revalidate') || has(stored, 's-maxage')) return false;
  return -freshFor <= limits.maxStale && limits.maxStale > 0;
}

export function text(value: string | string[] | number | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number') return String(value);
  return Array.isArray(value) ? value.join(', ') : value;
}
