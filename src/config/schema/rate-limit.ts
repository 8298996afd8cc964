/** The `config.rateLimit` section: the default token bucket per client IP. */
import { z } from 'zod';
import { stateStore } from './primitives.js';

export const RateLimitSchema = z.strictObject({
  enabled: z
    .boolean()
    .default(false)
    .describe('A token bucket per client IP, shared by the routes without their own rateLimit'),
  requestsPerSec: z.number().positive().default(100).describe('Refill rate: requests per second per client IP'),
  burst: z.number().positive().optional().describe('Bucket size; default 2 x requestsPerSec'),
  store: stateStore(
    'local: each process keeps its own buckets; redis: the buckets live in config.redis, shared by every replica',
  ),
});

export type RateLimitConfig = z.output<typeof RateLimitSchema>;
