/**
 * A stored answer made from a recorded one, or from the stored one and a 304 that revalidated it
 * (RFC 9111 4.3.4): its head, body and times, with its freshness lifetime and stale-if-error
 * window computed once, when it is stored.
 */
import { seconds } from './cache-control.js';
import { freshnessLifetime, responseTimes, type ResponseTimes } from './freshness.js';
import { notModifiedMatches, updatedHead } from './revalidation.js';
import type { CacheEntry } from './store.js';

/** A route's rules for the freshness of what it stores. */
export interface EntryRules {
  readonly heuristic: boolean;
  /** The route's `ttlSec`. */
  readonly defaultTtlSec: number | undefined;
  /** The route's `staleIfErrorSec`; an answer's own `stale-if-error` wins. */
  readonly staleIfErrorSec: number;
}

export function cacheEntry(
  status: number,
  headers: Record<string, string | string[]>,
  body: Buffer,
  times: ResponseTimes,
  rules: EntryRules,
): CacheEntry {
  return {
    status,
    headers,
    body,
    times,
    lifetimeSec: freshnessLifetime(times, status, rules),
    staleIfErrorSec: seconds(times.directives, 'stale-if-error') ?? rules.staleIfErrorSec,
  };
}

/**
 * `stale` refreshed by a 304 whose head (as it would be stored) is `head` and whose `Age` is
 * `age`: its fields replace the stored ones and the freshness is computed again. Undefined when
 * the 304 stands for another answer than the stored one.
 */
export function revalidatedEntry(
  stale: CacheEntry,
  head: Record<string, string | string[]>,
  age: string | undefined,
  requestTime: number,
  responseTime: number,
  rules: EntryRules,
): CacheEntry | undefined {
  if (!notModifiedMatches(stale.headers, head)) return undefined;
  const headers = updatedHead(stale.headers, head);
  const times = responseTimes({ ...headers, age }, requestTime, responseTime);
  return cacheEntry(stale.status, headers, stale.body, times, rules);
}
