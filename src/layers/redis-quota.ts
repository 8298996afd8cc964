/**
 * The shared quota store (`quotas.store: redis`, the default with `config.redis`): every replica
 * counts in the same Redis keys, so N gateways together admit the quota, not N times it.
 *
 * Design note. One key per caller and window, `<keyPrefix>q:<scope><key>|<window>:<start>` (the
 * window's start in seconds, so a new window is a new key and nothing needs resetting); it
 * expires shortly after its window ends. One script reads every window's count, refuses when one
 * is full, else increments them all: the check and the count are one step for every replica, so
 * together they never admit more than the quota. Window bounds come from each replica's clock
 * (keep them NTP-synchronised): replicas whose clocks differ by a second disagree only in that
 * second at a window's edge.
 *
 * Quotas have a connection of their own (createSharedQuotas), whose command timeout
 * (`quotas.redisCommandTimeoutMs`, default 1 s) is longer than the shared connection's: a quota
 * is a long window where counting right matters more than a few milliseconds, and a saturated
 * event loop would otherwise miss the rate limits' short timeout and decide locally.
 *
 * When Redis is down or does not answer in time, the decision is the local counters' (as the
 * shared rate limits, docs/redis.md), counted as a fallback ('quota'). Every answer from Redis
 * raises the local counts of its caller to the shared ones (QuotaCounters.sync), so a local
 * decision starts from what Redis last said (a caller over its quota stays refused) and a request
 * admitted locally whose command reached Redis anyway is in the shared count once, not added to it.
 */
import { fallbackCounter, type RedisUserOptions } from '../redis/fallback-counter.js';
import { createRedisConnection, type RedisConnection, type RedisSettings } from '../redis/connection.js';
import type { EventBus } from '../observability/events.js';
import type { Logger } from '../observability/logger.js';
import type { QuotaCounters, QuotaDecision, QuotaStore } from './quota.js';

/**
 * KEYS: one counter per window; ARGV: the limits, then each key's lifetime in ms. Returns
 * `{admitted (1 or 0), count of each window}`.
 */
export const TAKE_QUOTA_LUA = `
local n = #KEYS
local counts = {}
local admitted = 1
for i = 1, n do
  counts[i] = tonumber(redis.call('GET', KEYS[i]) or '0')
  if counts[i] >= tonumber(ARGV[i]) then admitted = 0 end
end
if admitted == 1 then
  for i = 1, n do
    counts[i] = redis.call('INCR', KEYS[i])
    if counts[i] == 1 then redis.call('PEXPIRE', KEYS[i], ARGV[n + i]) end
  end
end
table.insert(counts, 1, admitted)
return counts
`;

const COMMAND = 'porticoTakeQuota';
const KEY_PREFIX = 'q:';
/** A counter outlives its window by this much, so a replica whose clock lags still finds it. */
const EXPIRY_MARGIN_MS = 60_000;

export interface RedisQuotaOptions extends RedisUserOptions {
  /** The process's own counters, used while Redis cannot answer. */
  readonly fallback: QuotaCounters;
  /** Wall clock, ms since the epoch (injected in tests). */
  readonly now?: () => number;
}

/** The store whose counters live in Redis. */
export function createRedisQuotaStore(options: RedisQuotaOptions): QuotaStore {
  const { redis, fallback } = options;
  const now = options.now ?? Date.now;
  redis.defineScript(COMMAND, TAKE_QUOTA_LUA, undefined);
  const countFallback = fallbackCounter(options.events, 'quota');
  const local: QuotaStore['take'] = (key, limits, windows) => {
    countFallback();
    return fallback.take(key, limits, windows);
  };
  return {
    take(key, limits, windows) {
      if (!redis.isUp) return local(key, limits, windows);
      const n = limits.length;
      const at = now();
      const args: (string | number)[] = [n];
      for (let i = 0; i < n; i++) args.push(`${KEY_PREFIX}${key}|${limits[i]!.window}:${windows[i]!.start / 1000}`);
      for (let i = 0; i < n; i++) args.push(limits[i]!.limit);
      for (let i = 0; i < n; i++) args.push(Math.max(1, windows[i]!.end - at) + EXPIRY_MARGIN_MS);
      return redis.send('quota', COMMAND, args).then((reply): QuotaDecision | Promise<QuotaDecision> => {
        if (!Array.isArray(reply) || reply.length !== n + 1) return local(key, limits, windows);
        const counts = reply.slice(1).map(Number);
        fallback.sync(key, limits, windows, counts);
        return { admitted: reply[0] === 1, counts };
      });
    },
  };
}

/** The quotas' own Redis connection and store, opened when a configuration first counts quotas in Redis. */
export interface SharedQuotas {
  /**
   * The store on the quota connection (opened on the first call); `commandTimeoutMs`
   * (`quotas.redisCommandTimeoutMs`) applies to every command sent after the call.
   */
  store(commandTimeoutMs: number): QuotaStore;
  /** The connection, once opened. */
  readonly connection: RedisConnection | undefined;
  close(): Promise<void>;
}

export interface SharedQuotasOptions {
  /** `config.redis`: the same Redis and key prefix as the shared connection. */
  readonly settings: RedisSettings;
  readonly logger: Logger;
  readonly events: EventBus;
  readonly fallback: QuotaCounters;
  readonly now?: () => number;
}

/** The quota connection, made once per process; a gateway without quotas in Redis never opens it. */
export function createSharedQuotas(options: SharedQuotasOptions): SharedQuotas {
  const { settings, logger, events } = options;
  let connection: RedisConnection | undefined;
  let store: QuotaStore | undefined;
  return {
    store(commandTimeoutMs) {
      connection ??= createRedisConnection({
        settings: { ...settings, commandTimeoutMs },
        logger,
        events,
        purpose: 'quotas',
      });
      connection.setCommandTimeout(commandTimeoutMs);
      store ??= createRedisQuotaStore({
        redis: connection,
        events,
        fallback: options.fallback,
        ...(options.now === undefined ? {} : { now: options.now }),
      });
      return store;
    },
    get connection() {
      return connection;
    },
    async close() {
      await connection?.close();
    },
  };
}
