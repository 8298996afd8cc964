/** The `config.redis` section: the Redis that replicas share for rate limits and the mapping cache. */
import { z } from 'zod';

export const RedisSchema = z.strictObject({
  url: z
    .string()
    .min(1)
    .describe('redis://[user:password@]host:port[/db], or rediss:// for TLS; write the password as ${REDIS_PASSWORD}'),
  keyPrefix: z
    .string()
    .default('portico:')
    .describe('Put before every key the gateway writes, so several gateways or programs can share one Redis'),
  connectTimeoutMs: z.int().positive().default(1000).describe('Longest wait for a connection to Redis'),
  commandTimeoutMs: z
    .int()
    .positive()
    .default(50)
    .describe(
      'Longest wait for one Redis answer; past it the request decides locally (local buckets, no shared cache)',
    ),
  required: z
    .boolean()
    .default(false)
    .describe(
      'GET /ready answers 503 while Redis is unreachable (by default Redis is an optimisation, not a dependency)',
    ),
});
