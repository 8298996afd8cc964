/**
 * The mapping cache's shared second level (`mappingCache.store: redis`, cache.ts): mapping results
 * kept in Redis by URL, so a replica serves what another one fetched without calling the service.
 *
 * Values are the JSON text the service answered, as it was inserted into responses (never parsed
 * and serialised again), under `<keyPrefix>mc:<url>` with Redis's own expiry (`ttlSec`). One
 * script returns the value and its remaining lifetime in one round trip. When Redis is down or
 * slow the lookup answers "absent" and the service is called, counted as a fallback; writes are
 * sent in the background and never wait.
 */
import { fallbackCounter, type RedisUserOptions } from '../redis/fallback-counter.js';
import type { SharedMappingStore } from './cache.js';

/** KEYS[1] the entry. Returns { value, milliseconds left }, or nil when absent. */
export const GET_WITH_TTL_LUA = `
local value = redis.call('GET', KEYS[1])
if not value then return nil end
return { value, redis.call('PTTL', KEYS[1]) }
`;

const COMMAND = 'porticoMappingGet';
const KEY_PREFIX = 'mc:';

export type RedisMappingStoreOptions = RedisUserOptions;

/** The shared store of mapping results. */
export function createRedisMappingStore(options: RedisMappingStoreOptions): SharedMappingStore {
  const { redis } = options;
  redis.defineScript(COMMAND, GET_WITH_TTL_LUA, 1);
  const countFallback = fallbackCounter(options.events, 'mapping-cache');
  const skipped = () => {
    countFallback();
    return undefined;
  };
  return {
    get(url) {
      if (!redis.isUp) return Promise.resolve(skipped());
      return redis.send('mapping-cache', COMMAND, [KEY_PREFIX + url]).then((reply) => {
        if (reply === undefined) return skipped();
        if (!Array.isArray(reply)) return undefined;
        const [json, ttlMs] = reply as unknown[];
        // A key without expiry (-1) was not written by the gateway; -2: it expired in between.
        if (typeof json !== 'string' || typeof ttlMs !== 'number' || ttlMs <= 0) return undefined;
        return { json, ttlMs };
      });
    },
    set(url, json, ttlMs) {
      if (!redis.isUp) return;
      void redis.send('mapping-cache', 'set', [KEY_PREFIX + url, json, 'PX', Math.max(1, Math.round(ttlMs))]);
    },
  };
}
