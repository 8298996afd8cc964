/**
 * What the gateway makes once per process and keeps across reloads: the circuits, the upstreams
 * with their pools, the Redis connection, the mapping cache, the rate-limit buckets, the quota counters, the open
 * streams, the JWKS keys and the bytes request bodies hold in temporary files (docs/design-decisions.md: state survives a reload).
 */
import type { CompiledConfig } from '../config/types.js';
import { createUpstreamRegistry, type UpstreamRegistry } from '../upstream/upstream.js';
import type { LookupAll } from '../upstream/dns-targets.js';
import { createCircuitRegistry, originsOf, type CircuitRegistry } from '../circuit/registry.js';
import type { EventBus } from '../observability/events.js';
import type { Logger } from '../observability/logger.js';
import { createMappingCache } from '../mapping/cache.js';
import { type MappingCache } from '../mapping/types.js';
import { createRateLimiter, type RateLimiter, type RateLimitStore } from '../layers/rate-limit.js';
import { createRedisRateLimitStore } from '../layers/redis-rate-limit.js';
import { createQuotaCounters, type QuotaCounters } from '../layers/quota.js';
import { createSharedQuotas, type SharedQuotas } from '../layers/redis-quota.js';
import { createQuotaUsage, type QuotaUsage } from '../layers/quota-usage.js';
import { createRedisMappingStore } from '../mapping/redis-cache.js';
import { createRedisConnection, type RedisConnection } from '../redis/connection.js';
import { createOpenStreams, type OpenStreams } from '../endpoints/open-streams.js';
import { createJwksRegistry, type JwksRegistry } from '../auth/jwks-registry.js';
import { createSpillBudget, type SpillBudget } from '../layers/spill-budget.js';
import { admissionKey, createAdmissionCounts, type AdmissionCounts } from '../layers/admission-counts.js';
import { createCacheStore, type CacheStore } from '../cache/store.js';
import { createRedisCacheStore, type SharedCacheStore } from '../cache/redis-store.js';
import { createCacheBroadcast, type CacheBroadcast } from '../cache/broadcast.js';
import { sharedCacheSettings } from '../config/schema.js';
import type { AdmissionStats, MetricsSources, TargetStats } from '../observability/metrics.js';

export interface Registries {
  readonly circuits: CircuitRegistry;
  readonly upstreams: UpstreamRegistry;
  /** The connection to `config.redis` made at creation; undefined without it (docs/redis.md). */
  readonly redis: RedisConnection | undefined;
  readonly mappingCache: MappingCache;
  readonly rateLimiter: RateLimiter;
  /** The buckets in Redis, for `rateLimit.store: redis`; undefined without `config.redis`. */
  readonly sharedRateLimits: RateLimitStore | undefined;
  readonly quotaCounters: QuotaCounters;
  /** The quota counters in Redis, on the quotas' own connection; undefined without `config.redis`. */
  readonly sharedQuotas: SharedQuotas | undefined;
  /** The callers nearest their limits, for the status page. */
  readonly quotaUsage: QuotaUsage;
  /** Open SSE streams, ended when the drain starts (they would otherwise hold it for its whole length). */
  readonly streams: OpenStreams;
  readonly jwks: JwksRegistry;
  /** Bytes of request bodies in temporary files: requests on an old configuration release into it. */
  readonly spill: SpillBudget;
  /** Requests in flight under admission control: requests on an old configuration release into it. */
  readonly admission: AdmissionCounts;
  /** The HTTP cache of routes with `cache:` (survives reloads; its size is set at start). */
  readonly httpCache: CacheStore;
  /** The HTTP cache's level in Redis (used by configurations with `cache.redis`); undefined without `config.redis`. */
  readonly sharedHttpCache: SharedCacheStore | undefined;
  /**
   * Purges and invalidations told to and heard from the other replicas (`cache.redis.broadcast`
   * in the configuration the process started with); undefined without it.
   */
  readonly cacheBroadcast: CacheBroadcast | undefined;
}

export interface RegistryOptions {
  readonly config: CompiledConfig;
  readonly events: EventBus;
  readonly logger: Logger;
  readonly now?: (() => number) | undefined;
  readonly lookup?: LookupAll | undefined;
}

/** Makes the registries for the configuration the gateway starts with. */
export function createRegistries(options: RegistryOptions): Registries {
  const { config, events, logger, now } = options;
  // One circuit per origin for the whole process; breakers read the registry's current settings,
  // so a reload can change or disable them without losing state.
  const circuits = createCircuitRegistry({ settings: config.settings.circuitBreaker, events, now });
  const upstreams = createUpstreamRegistry({
    connections: config.settings.limits.connectionsPerOrigin,
    events,
    logger,
    ...(now === undefined ? {} : { now }),
    ...(options.lookup === undefined ? {} : { lookup: options.lookup }),
    createBreaker: (origin) => circuits.forOrigin(origin),
    tls: config.upstreamTls,
  });
  circuits.retain(originsOf(config));
  // Its settings apply at start (a reload that changes them is logged).
  const redisSettings = config.settings.redis;
  const redis = redisSettings && createRedisConnection({ settings: redisSettings, logger, events });
  const mappingCache = createMappingCache(config.settings.mappingCache, {
    now,
    shared: redis && createRedisMappingStore({ redis, events }),
  });
  const rateLimiter = createRateLimiter();
  const sharedRateLimits = redis && createRedisRateLimitStore({ redis, fallback: rateLimiter, events });
  const quotaCounters = createQuotaCounters();
  const sharedQuotas =
    redisSettings && createSharedQuotas({ settings: redisSettings, logger, events, fallback: quotaCounters });
  const httpCache = createCacheStore({ maxBytes: config.settings.cache.maxBytes });
  // Its subscription is opened at start: a configuration that turns it on later gets it at the next start.
  const cacheBroadcast =
    redis !== undefined && sharedCacheSettings(config.settings.cache)?.broadcast === true
      ? createCacheBroadcast({ redis, store: httpCache, logger })
      : undefined;
  // No refetch of keys for an unchanged jwksUrl.
  const jwks = createJwksRegistry({ logger, now });
  return {
    circuits,
    upstreams,
    redis,
    mappingCache,
    rateLimiter,
    sharedRateLimits,
    quotaCounters,
    sharedQuotas,
    quotaUsage: createQuotaUsage(),
    streams: createOpenStreams(),
    jwks,
    spill: createSpillBudget(),
    admission: createAdmissionCounts(),
    httpCache,
    sharedHttpCache: redis && createRedisCacheStore({ redis, events }),
    cacheBroadcast,
  };
}

/** Closes the connections to `config.redis`: the shared one, the quotas' own and the cache broadcast's, if opened. */
export async function closeRedis(
  registries: Pick<Registries, 'redis' | 'sharedQuotas'> & Partial<Pick<Registries, 'cacheBroadcast'>>,
): Promise<void> {
  await registries.cacheBroadcast?.close();
  await registries.redis?.close();
  await registries.sharedQuotas?.close();
}

/** `redis.required` and a connection down: the shared one, or the quotas' own once opened (`/ready` waits). */
export function isWaitingForRedis(registries: Pick<Registries, 'redis' | 'sharedQuotas'>): boolean {
  const { redis } = registries;
  const quotas = registries.sharedQuotas?.connection;
  return redis !== undefined && redis.settings.required && (!redis.isConnected || quotas?.isConnected === false);
}

/** The HTTP cache's metrics sources: what it stores, and its broadcast's counts when it has one. */
export function httpCacheSources(
  registries: Pick<Registries, 'httpCache' | 'cacheBroadcast'>,
): Pick<MetricsSources, 'httpCache' | 'cacheBroadcast'> {
  const { httpCache, cacheBroadcast } = registries;
  return {
    httpCache: () => httpCache.stats(),
    ...(cacheBroadcast === undefined ? {} : { cacheBroadcast: () => cacheBroadcast.stats() }),
  };
}

/** The counts of every named upstream's targets, for metrics and the status page. */
export function* targetStats(upstreams: UpstreamRegistry, now: number): Iterable<TargetStats> {
  for (const { upstream, target } of upstreams.targets())
    yield {
      upstream,
      target: target.key,
      requests: target.health.requests,
      failures: target.health.failures,
      ejections: target.health.ejectionsTotal,
      ejected: target.health.ejectedUntil > now,
      // What happened: not failing its calls, not ejected, and passing the active checks if any.
      healthy: !target.health.down && !target.health.failing && !(target.health.ejectedUntil > now),
      inFlight: target.pool.inFlight + (target.streamPool?.inFlight ?? 0) + (target.grpcPool?.inFlight ?? 0),
    };
}

/**
 * The limits of admission control in `config` with the process's counts, for metrics and the
 * status page: the gateway's limit, then each route's own, in the order written.
 */
export function* admissionStats(counts: AdmissionCounts, config: CompiledConfig): Iterable<AdmissionStats> {
  const { maxInFlight } = config.settings.admission;
  const { gateway } = counts;
  if (maxInFlight !== undefined)
    yield { scope: 'gateway', route: '', inFlight: gateway.inFlight, limit: maxInFlight, refused: gateway.refused };
  for (const route of config.routes) {
    if (route.maxInFlight === undefined) continue;
    const key = admissionKey(route);
    const count = counts.route(key);
    yield {
      scope: 'route',
      route: key,
      inFlight: count.inFlight,
      limit: route.maxInFlight,
      refused: count.refused,
    };
  }
}
