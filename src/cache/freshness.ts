/**
 * Freshness and age of a stored response, as a shared cache computes them (RFC 9111 4.2).
 * Times are milliseconds since the epoch; lifetimes and ages are in seconds.
 */
import { responseDirectives, seconds, type Directives } from './cache-control.js';
import { parseHttpDate } from './http-date.js';

/** Statuses a cache may store without explicit freshness (RFC 9110 15.1 "heuristically cacheable"). */
export const HEURISTICALLY_CACHEABLE = new Set([200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]);

/** What the cache keeps of a response's head to compute its freshness and age. */
export interface ResponseTimes {
  readonly directives: Directives;
  /** `Date`, or the response time when absent or invalid (RFC 9110 6.6.1). */
  readonly date: number;
  readonly expires: number | undefined;
  readonly lastModified: number | undefined;
  /** The `Age` the response arrived with, in seconds. */
  readonly ageValue: number;
  /** When the request that brought it was sent, and when the response arrived. */
  readonly requestTime: number;
  readonly responseTime: number;
}

/** The head of a response as the cache reads it. */
export function responseTimes(
  headers: Readonly<Record<string, string | string[] | number | undefined>>,
  requestTime: number,
  responseTime: number,
): ResponseTimes {
  const text = (name: string) => {
    const v = headers[name];
    return typeof v === 'number' ? String(v) : v;
  };
  const ageValue = parseAge(text('age'));
  const { directives, targeted } = responseDirectives({
    'cdn-cache-control': text('cdn-cache-control'),
    'cache-control': text('cache-control'),
  });
  // A valid CDN-Cache-Control stands for Expires too (RFC 9213 2.1).
  const expiresText = targeted ? undefined : text('expires');
  return {
    directives,
    date: parseHttpDate(text('date')) ?? responseTime,
    // RFC 9111 5.3: an invalid Expires (such as "0") means already expired.
    expires: expiresText === undefined ? undefined : (parseHttpDate(expiresText) ?? 0),
    lastModified: parseHttpDate(text('last-modified')),
    ageValue,
    requestTime,
    responseTime,
  };
}

/**
 * The freshness lifetime in seconds (RFC 9111 4.2.1): s-maxage, then max-age, then Expires - Date,
 * then, when `heuristic` is on and the status allows it, 10% of the time since Last-Modified
 * (RFC 9111 4.2.2), then the route's default. Undefined: the response says nothing.
 */
export function freshnessLifetime(
  t: ResponseTimes,
  status: number,
  options: { readonly heuristic: boolean; readonly defaultTtlSec: number | undefined },
): number | undefined {
  const d = t.directives;
  const sMaxAge = seconds(d, 's-maxage');
  if (sMaxAge !== undefined) return sMaxAge;
  if (d.has('max-age')) return seconds(d, 'max-age') ?? 0;
  if (t.expires !== undefined) return Math.max(0, (t.expires - t.date) / 1000);
  if (!HEURISTICALLY_CACHEABLE.has(status)) return undefined;
  if (options.heuristic && t.lastModified !== undefined && t.lastModified <= t.date)
    return Math.floor((t.date - t.lastModified) / 10_000);
  return options.defaultTtlSec;
}

/**
 * The `Age` received (RFC 9111 5.1): the first value when the field came on several lines or as a
 * list, as the suite's caches read it; 0 when that is not delta-seconds; at most 2^31.
 */
export function parseAge(value: string | string[] | undefined): number {
  const first = (Array.isArray(value) ? value[0] : value)?.split(',')[0]?.trim();
  return first !== undefined && /^\d+$/.test(first) ? Math.min(Number(first), 2 ** 31) : 0;
}

/** The current age in seconds (RFC 9111 4.2.3). */
export function currentAge(t: ResponseTimes, now: number): number {
  const apparentAge = Math.max(0, t.responseTime - t.date) / 1000;
  const responseDelay = (t.responseTime - t.requestTime) / 1000;
  const correctedAgeValue = t.ageValue + responseDelay;
  const correctedInitialAge = Math.max(apparentAge, correctedAgeValue);
  const residentTime = (now - t.responseTime) / 1000;
  return correctedInitialAge + residentTime;
}
