/** The `config.cache` section and a route's `cache`: the shared HTTP cache (docs/caching.md). */
import { z } from 'zod';
import { seconds } from './primitives.js';

export const CacheSchema = z.strictObject({
  maxBytes: z
    .int()
    .min(1024)
    .default(64 * 1024 * 1024)
    .describe('Bytes of answers kept in memory, heads included; least recently used evicted first'),
  maxEntryBytes: z
    .int()
    .min(1)
    .default(8 * 1024 * 1024)
    .describe('Largest answer stored; a larger one is served as it comes and not stored'),
  heuristic: z
    .boolean()
    .default(false)
    .describe(
      'Heuristic freshness (RFC 9111 4.2.2): an answer without Cache-Control max-age or Expires but with Last-Modified is fresh for 10% of its age',
    ),
});

/** `claims.NAME` or `header:NAME`: what a route's entries are keyed by besides the URL. */
const KEY_PART = /^(claims\.[A-Za-z0-9_.:-]+|header:[!#$%&'*+.^_`|~0-9A-Za-z-]+)$/;

export const RouteCacheSchema = z.union([
  z.boolean(),
  z.strictObject({
    ttlSec: seconds(
      'Freshness of an answer that has no Cache-Control max-age, s-maxage or Expires; unset: such answers are not fresh',
    ).optional(),
    keyBy: z
      .array(
        z.string().refine((s) => KEY_PART.test(s), {
          message: 'expected claims.NAME or header:NAME',
        }),
      )
      .min(1)
      .optional()
      .describe(
        'Entries per identity: the claims or request headers that key them besides the URL (then answers to requests with credentials are stored per identity)',
      ),
    staleIfErrorSec: seconds(
      "Serve a stale answer this long past its freshness when the backend fails or answers 500, 502, 503 or 504 (RFC 5861); the answer's own stale-if-error wins",
    ).optional(),
  }),
]);

export type CacheConfig = z.output<typeof CacheSchema>;
export type RouteCacheConfig = z.output<typeof RouteCacheSchema>;

/** A route's `cache`, with its defaults. */
export interface RouteCacheSpec {
  readonly ttlSec: number | undefined;
  /** `claims.NAME` / `header:NAME`, as written; empty: entries shared by every client. */
  readonly keyBy: readonly string[];
  readonly staleIfErrorSec: number;
}
