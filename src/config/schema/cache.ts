/** The `config.cache` section and a route's `cache`: the shared HTTP cache (docs/caching.md). */
import { z } from 'zod';
import { seconds } from './primitives.js';

/** `config.cache.redis` as an object: the shared second level's own settings. */
const SharedCacheSchema = z.strictObject({
  enabled: z.boolean().default(true).describe('Keep stored answers in config.redis too, shared by every replica'),
  maxEntryBytes: z
    .int()
    .min(1)
    .default(1024 * 1024)
    .describe('Largest answer written to Redis; a larger one is kept in memory only'),
  broadcast: z
    .boolean()
    .default(true)
    .describe(
      "Tell every replica of each purge and invalidation through Redis pub/sub, so each drops it from its memory too; false: other replicas' memory keeps an answer until it expires. Set at start",
    ),
});

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
  redis: z
    .union([z.boolean(), SharedCacheSchema])
    .default(false)
    .describe(
      'A second level in config.redis shared by every replica: true, or { enabled, maxEntryBytes, broadcast } (default 1 MiB, broadcast on); false: memory only',
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
    staleWhileRevalidateSec: seconds(
      "Serve a stale answer this long past its freshness at once while one background request revalidates it (RFC 5861); the answer's own stale-while-revalidate wins",
    ).optional(),
    staleIfErrorSec: seconds(
      "Serve a stale answer this long past its freshness when the backend fails or answers 500, 502, 503 or 504 (RFC 5861); the answer's own stale-if-error wins",
    ).optional(),
  }),
]);

export type CacheConfig = z.output<typeof CacheSchema>;

/** `config.cache.redis` with its defaults; undefined when the second level is off. */
export interface SharedCacheSettings {
  readonly maxEntryBytes: number;
  /** Purges and invalidations are published to every replica's memory (cache/broadcast.ts). */
  readonly broadcast: boolean;
}

/** The second level's settings from `config.cache` (`redis: true` is `{ enabled: true }`). */
export function sharedCacheSettings(cache: CacheConfig): SharedCacheSettings | undefined {
  const redis = cache.redis === true ? SharedCacheSchema.parse({}) : cache.redis;
  return redis === false || !redis.enabled
    ? undefined
    : { maxEntryBytes: redis.maxEntryBytes, broadcast: redis.broadcast };
}
export type RouteCacheConfig = z.output<typeof RouteCacheSchema>;

/** A route's `cache`, with its defaults. */
export interface RouteCacheSpec {
  readonly ttlSec: number | undefined;
  /** `claims.NAME` / `header:NAME`, as written; empty: entries shared by every client. */
  readonly keyBy: readonly string[];
  readonly staleWhileRevalidateSec: number;
  readonly staleIfErrorSec: number;
}
