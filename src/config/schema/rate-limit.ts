/** The `config.rateLimit` section: the default token bucket per client IP (or per `key`). */
import { z } from 'zod';
import { stateStore } from './primitives.js';
import { limitKey } from './limit-key.js';

export const RateLimitSchema = z.strictObject({
  enabled: z
    .boolean()
    .default(false)
    .describe('A token bucket per client IP, shared by the routes without their own rateLimit'),
  requestsPerSec: z.number().positive().default(100).describe('Refill rate: requests per second per client IP'),
  burst: z.number().positive().optional().describe('Bucket size; default 2 x requestsPerSec'),
  ipv6PrefixLength: z
    .int()
    .min(1)
    .max(128)
    .default(64)
    .describe(
      'IPv6 clients are counted per network of this prefix length: one subscriber usually holds a whole /64, so per-address buckets would let it take a fresh one per address; 128: per address',
    ),
  key: limitKey(
    'What a bucket counts by: ip (the client address), consumer, claims.NAME or header:NAME; a request without the key is counted by its client address',
  ).default('ip'),
  store: stateStore(
    'local: each process keeps its own buckets; redis: the buckets live in config.redis, shared by every replica',
  ),
});

export type RateLimitConfig = z.output<typeof RateLimitSchema>;
