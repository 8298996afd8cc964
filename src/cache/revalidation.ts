/**
 * Revalidation of a stored answer with the backend (RFC 9111 4.3) and serving it stale while it is
 * revalidated (RFC 5861 3). Pure functions over heads, so each rule has a unit test; the cache
 * layer (layers/cache.ts) asks them.
 */
import { has, seconds, type Directives } from './cache-control.js';
import { parseHttpDate } from './http-date.js';
import type { RequestLimits } from './storable.js';

type StoredHead = Readonly<Record<string, string | string[]>>;

/**
 * The conditional request headers that revalidate a stored answer (RFC 9111 4.3.1): its ETag as
 * `If-None-Match`, its Last-Modified as `If-Modified-Since`. Empty: it has no validator, so it can
 * only be replaced by a full answer.
 */
export function conditionalHeaders(stored: StoredHead): [name: string, value: string][] {
  const out: [string, string][] = [];
  const etag = single(stored.etag);
  if (etag !== undefined) out.push(['if-none-match', etag]);
  const lastModified = single(stored['last-modified']);
  if (lastModified !== undefined && parseHttpDate(lastModified) !== undefined)
    out.push(['if-modified-since', lastModified]);
  return out;
}

/**
 * Whether a 304 stands for this stored answer (RFC 9111 4.3.4): the same entity tag when the 304
 * has one (compared weakly: the gateway weakens the tag of an answer it compressed), else the same
 * Last-Modified when both have one; a 304 with neither validator stands for the one answer that
 * was validated.
 */
export function notModifiedMatches(stored: StoredHead, notModified: StoredHead): boolean {
  const tag = single(notModified.etag);
  if (tag !== undefined) {
    const storedTag = single(stored.etag);
    return storedTag !== undefined && opaqueTag(storedTag) === opaqueTag(tag);
  }
  const lastModified = parseHttpDate(single(notModified['last-modified']));
  const storedLastModified = parseHttpDate(single(stored['last-modified']));
  return lastModified === undefined || storedLastModified === undefined || lastModified === storedLastModified;
}

/**
 * Fields of a 304 that never replace the stored ones (RFC 9111 3.2): the framing and length of the
 * stored body, and its coding (the stored body is in the gateway's coding, the 304 describes the
 * backend's identity answer).
 */
const KEPT_FROM_STORED = new Set(['content-length', 'content-encoding', 'content-range', 'transfer-encoding']);

/**
 * The stored head updated by a 304 (RFC 9111 4.3.4, 3.2): every field the 304 carries replaces the
 * stored one, except the framing and coding above. The stored ETag keeps its form when the 304's
 * is the same tag (a compressed variant's tag stays weak).
 */
export function updatedHead(stored: StoredHead, notModified: StoredHead): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = { ...stored };
  for (const name in notModified) {
    if (KEPT_FROM_STORED.has(name)) continue;
    if (name === 'etag' && stored.etag !== undefined && notModifiedMatches(stored, notModified)) continue;
    out[name] = notModified[name]!;
  }
  return out;
}

/**
 * How long past its freshness an answer may be served while it is revalidated in the background:
 * the answer's own `stale-while-revalidate`, else the route's `staleWhileRevalidateSec`.
 */
export function staleWhileRevalidateSec(stored: Directives, routeSec: number): number {
  return seconds(stored, 'stale-while-revalidate') ?? routeSec;
}

/**
 * Whether a stale answer may be served at once while it is revalidated (RFC 5861 3): within its
 * window, and only when neither side requires validation first: not a request with `no-cache`,
 * `max-age` or `min-fresh` it does not satisfy, not an answer with `no-cache`, `must-revalidate`,
 * `proxy-revalidate` or `s-maxage` (which forbid serving it stale, RFC 9111 5.2.2).
 */
export function mayServeWhileRevalidating(
  limits: RequestLimits,
  stored: Directives,
  ageSec: number,
  lifetimeSec: number | undefined,
  windowSec: number,
): boolean {
  if (windowSec <= 0 || limits.noCache || limits.minFresh > 0) return false;
  if (limits.maxAge !== undefined && ageSec > limits.maxAge) return false;
  if (forbidsStale(stored)) return false;
  const staleFor = ageSec - (lifetimeSec ?? 0);
  return staleFor >= 0 && staleFor <= windowSec;
}

/** An answer that may never be served stale (RFC 9111 5.2.2.4, 5.2.2.2, 5.2.2.8, 5.2.2.10). */
export function forbidsStale(stored: Directives): boolean {
  return STALE_FORBIDDEN.some((name) => has(stored, name));
}

const STALE_FORBIDDEN = ['no-cache', 'must-revalidate', 'proxy-revalidate', 's-maxage'];

function single(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value[0] : value;
}

/** An entity tag without its weakness indicator (RFC 9110 8.8.3.2, weak comparison). */
function opaqueTag(tag: string): string {
  return tag.trim().replace(/^W\//, '');
}
