/** The `config.mappingCache` section: the cache of mapping responses. */
import { z } from 'zod';
import { seconds, stateStore } from './primitives.js';

export const MappingCacheSchema = z.strictObject({
  enabled: z
    .boolean()
    .default(false)
    .describe('Cache successful mapping responses by URL, shared by every route and client'),
  ttlSec: seconds('Lifetime of a cached mapping response, counted from its fetch').default(60),
  maxSize: z.int().min(1).default(1000).describe('Entries kept; least recently used evicted first'),
  store: stateStore(
    'local: each process keeps its own cache; redis: a second level in config.redis, shared by every replica',
  ),
});

export type MappingCacheConfig = z.output<typeof MappingCacheSchema>;
