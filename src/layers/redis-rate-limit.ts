/**
 * The shared rate-limit store (`rateLimit.store: redis`): every replica takes its tokens from the
 * same buckets in Redis, so N gateways together let the configured rate through, not N times it.
 *
 * Design note. One bucket is one Redis string, the bucket's theoretical arrival time (GCRA): the
 * moment it will be full again, in milliseconds of Redis's own clock, so replicas whose clocks
 * differ still agree. A bucket of `burst` tokens refilling at `rate` holds
 * `burst - (tat - now) * rate / 1000` tokens; taking one moves `tat` by `1000 / rate`. That is the
 * local token bucket's arithmetic (rate-limit.ts), so both stores answer the same numbers and the
 * layer writes the same headers. The script reads, decides and writes in one EVALSHA: one round
 * trip per decision and no race between replicas. The key expires when the bucket is full again,
 * like the local LRU's TTL.
 *
 * When Redis is down or does not answer within `commandTimeoutMs`, the decision is the local
 * store's (fail open to local limits): each replica then limits on its own, counted as a
 * fallback ('redis:fallback'), and the connection logs the outage once (redis/connection.ts).
 */
import { fallbackCounter, type RedisUserOptions } from '../redis/fallback-counter.js';
import type { BucketNumbers, RateLimiter, RateLimitStore } from './rate-limit.js';

/** KEYS[1] the bucket; ARGV rate (tokens a second) and burst. Returns the tokens left, as text. */
export const TAKE_TOKEN_LUA = `
if redis.replicate_commands then redis.replicate_commands() end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
local interval = 1000 / tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local tokens = burst - (tat - now) / interval
if tokens < 1 then return tostring(tokens - 1) end
tat = tat + interval
redis.call('SET', KEYS[1], string.format('%.17g', tat), 'PX', math.ceil(tat - now))
return tostring(tokens - 1)
`;

const COMMAND = 'porticoTakeToken';
/** Bucket keys are `<keyPrefix>rl:<scope><key>`: the client ip, or a tagged key (limit-key.ts). */
const KEY_PREFIX = 'rl:';

export interface RedisRateLimitOptions extends RedisUserOptions {
  /** The process's own buckets, used while Redis cannot answer. */
  readonly fallback: RateLimiter;
}

/** The store whose buckets live in Redis. */
export function createRedisRateLimitStore(options: RedisRateLimitOptions): RateLimitStore {
  const { redis, fallback } = options;
  redis.defineScript(COMMAND, TAKE_TOKEN_LUA, 1);
  const countFallback = fallbackCounter(options.events, 'rate-limit');
  const local = (key: string, policy: BucketNumbers) => {
    countFallback();
    return fallback.take(key, policy);
  };
  return {
    take(key, policy) {
      if (!redis.isUp) return local(key, policy);
      return redis
        .send('rate-limit', COMMAND, [KEY_PREFIX + key, policy.requestsPerSec, policy.burst])
        .then((reply) => (typeof reply === 'string' ? Number(reply) : local(key, policy)));
    },
  };
}
