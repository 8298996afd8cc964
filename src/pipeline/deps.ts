/**
 * What a configuration's pipelines share, compiled once per configuration and swapped on reload
 * (pipeline/build.ts builds each route's pipeline from it): the process-wide registries, and the
 * authenticator, header drop set, CORS and compression policies, client address rules, rate-limit
 * and quota stores, HTTP cache and spill budget this configuration uses.
 */
import type { CompiledConfig, RouteSpec } from '../config/types.js';
import type { UpstreamRegistry } from '../upstream/upstream.js';
import type { EventBus } from '../observability/events.js';
import type { Logger } from '../observability/logger.js';
import type { PipelineConfig } from './types.js';
import { compileRoutesWork } from './compile-route.js';
import { runWhole, type Work } from '../config/sliced-work.js';
import { requestDropSet, type RequestDropSet } from '../upstream/trust-boundary.js';
import { clientKey, createClientIpResolver, createTrustTest, type ClientIpResolver } from '../server/client-ip.js';
import { createAuthenticator } from '../auth/authenticator.js';
import type { Authenticator } from '../auth/types.js';
import type { JwksRegistry } from '../auth/jwks-registry.js';
import { compileApiKeys, withKeyHeader, type ApiKeys } from '../auth/api-keys.js';
import { compileTokenSources, type TokenSources } from '../auth/token-sources.js';
import type { MappingCache } from '../mapping/types.js';
import type { OpenStreams } from '../endpoints/open-streams.js';
import type { TunnelOptions } from '../endpoints/tunnel.js';
import { createRateLimiter, type RateLimiter, type RateLimitStore } from '../layers/rate-limit.js';
import { createQuotaCounters, type QuotaCounters, type QuotaStore } from '../layers/quota.js';
import { createWindowClock, type WindowClock } from '../layers/quota-windows.js';
import type { QuotaUsage } from '../layers/quota-usage.js';
import type { SharedQuotas } from '../layers/redis-quota.js';
import { QUOTA_REDIS_TIMEOUT_MS } from '../config/schema.js';
import { createSpillBudget, type SpillBudget } from '../layers/spill-budget.js';
import { compileCompression } from '../layers/compression.js';
import { createCacheStore, type CacheStore } from '../cache/store.js';
import type { CacheBroadcast } from '../cache/broadcast.js';
import type { SharedCacheStore } from '../cache/redis-store.js';
import { sharedCacheSettings } from '../config/schema.js';
import type { CompressionPolicy } from '../response/compression/compress-response.js';
import { createAdmissionCounts, type AdmissionCounts } from '../layers/admission-counts.js';
import { compileCors, type CorsPolicy } from '../layers/cors.js';
import { type LoadedPlugins } from './plugin-layers.js';

/** What the process makes once and every configuration's pipelines share. */
export interface SharedPipelineDeps {
  readonly upstreams: UpstreamRegistry;
  readonly events: EventBus;
  readonly logger: Logger;
  /** The process-wide mapping cache (survives reloads); used only when mappingCache.enabled. */
  readonly mappingCache: MappingCache;
  /** The process-wide rate-limit buckets (survive reloads); one per config when not given. */
  readonly rateLimiter?: RateLimiter;
  /** The buckets in Redis, for `rateLimit.store: redis`; undefined without `config.redis`. */
  readonly sharedRateLimits?: RateLimitStore | undefined;
  /** The process-wide local quota counters (survive reloads); one per config when not given. */
  readonly quotaCounters?: QuotaCounters;
  /** The quota counters in Redis, on their own connection; undefined without `config.redis`. */
  readonly sharedQuotas?: SharedQuotas | undefined;
  /** The callers the status page shows (layers/quota-usage.ts); undefined: none recorded. */
  readonly quotaUsage?: QuotaUsage | undefined;
  /** The process-wide JWKS key sources (keys survive reloads); one per config when not given. */
  readonly jwks?: JwksRegistry;
  /** The process-wide open SSE streams and WebSocket tunnels, ended when the gateway drains (endpoints/open-streams.ts). */
  readonly streams?: OpenStreams;
  /** Overrides the WebSocket tunnel bounds (tests); endpoints/tunnel.ts has the defaults. */
  readonly tunnel?: TunnelOptions;
  /** The process's bytes of request bodies in temporary files (survive reloads); one per config when not given. */
  readonly spill?: SpillBudget;
  /** The process's HTTP cache (survives reloads); one per config when not given. */
  readonly httpCache?: CacheStore;
  /** The HTTP cache's level in Redis, for `cache.redis`; undefined without `config.redis`. */
  readonly sharedHttpCache?: SharedCacheStore | undefined;
  /** Purges and invalidations told to the other replicas; undefined without `cache.redis.broadcast` at start. */
  readonly cacheBroadcast?: CacheBroadcast | undefined;
  /** The process's requests in flight under admission control (survive reloads); one per config when not given. */
  readonly admission?: AdmissionCounts;
  readonly plugins?: LoadedPlugins; // this configuration's plugins, imported (plugins/load.ts)
}

/** The HTTP cache's level in Redis, as a configuration uses it. */
export interface SharedCacheLevel {
  readonly store: SharedCacheStore;
  readonly maxEntryBytes: number;
  readonly broadcast: CacheBroadcast | undefined;
}

/** What every pipeline may use: the shared parts plus what is compiled once per configuration. */
export interface PipelineDeps extends SharedPipelineDeps {
  /** The configuration, every route compiled (pipeline/compile-route.ts). */
  readonly config: PipelineConfig;
  readonly rateLimiter: RateLimiter;
  readonly spill: SpillBudget;
  /** The HTTP cache of routes with `cache:`; undefined when no route caches. */
  readonly httpCache: CacheStore | undefined;
  /**
   * The HTTP cache's shared level and its entry limit when `cache.redis` is on, with the broadcast
   * to the other replicas when `cache.redis.broadcast` is on too; undefined: memory only.
   */
  readonly sharedCacheLevel: SharedCacheLevel | undefined;
  readonly admission: AdmissionCounts;
  /** Where this configuration's rate limits take tokens: `rateLimiter`, or Redis (`rateLimit.store`). */
  readonly rateLimitStore: RateLimitStore;
  /** Where this configuration's quotas count: local counters, or Redis (`quotas.store`). */
  readonly quotaStore: QuotaStore;
  /** The current calendar windows of quotas. */
  readonly quotaWindows: WindowClock;
  /** Client headers never forwarded (hop-by-hop, gateway-owned, auth.stripHeaders). */
  readonly dropHeaders: RequestDropSet;
  /** One per configuration; undefined when no route requires a token (and none is configured). */
  readonly authenticator: Authenticator | undefined;
  /** Where tokens are read besides the Authorization header (`auth.tokenFrom`); undefined: the header only. */
  readonly tokenSources: TokenSources | undefined;
  /** API keys (`auth.apiKey`, docs/consumers.md): their source and key store; undefined when off. */
  readonly apiKeys: ApiKeys | undefined;
  /** The CORS policy; undefined when CORS is off. The request handler answers preflights with it. */
  readonly cors: CorsPolicy | undefined;
  /** How answers are compressed; undefined when no route compresses. */
  readonly compression: CompressionPolicy | undefined;
  /** The client rate limits count by (`trustProxy` applied; an IPv6 client's network, `rateLimit.ipv6PrefixLength`). */
  readonly clientIp: ClientIpResolver;
  /** The configuration's plugins, imported (plugins/load.ts); empty without any. */
  readonly plugins: LoadedPlugins;
}

/** Compiles what the pipelines of `config` share: made once per configuration, swapped on reload. */
export function createPipelineDeps(config: CompiledConfig, shared: SharedPipelineDeps): PipelineDeps {
  return runWhole(createPipelineDepsWork(config, shared));
}

/**
 * What of the deps the routes decide (each part is made only when a route needs it): two
 * configurations with the same settings, consumers, origins and needs make the same deps. One pass
 * over the routes, kept with the route list: a reload compares the served configuration's.
 */
export function routeNeeds({ routes }: CompiledConfig): RouteNeeds {
  let needs = neededBy.get(routes);
  if (needs !== undefined) return needs;
  let auth = false;
  let cache = false;
  let compression = false;
  let quotas = false;
  for (const r of routes) {
    auth ||= r.requiresAuth;
    cache ||= r.cache !== undefined;
    compression ||= r.compresses;
    quotas ||= r.quota?.enabled === true;
  }
  needs = { auth, cache, compression, quotas };
  neededBy.set(routes, needs);
  return needs;
}

const neededBy = new WeakMap<readonly RouteSpec[], RouteNeeds>();

export interface RouteNeeds {
  readonly auth: boolean;
  readonly cache: boolean;
  readonly compression: boolean;
  readonly quotas: boolean;
}

export const sameNeeds = (a: RouteNeeds, b: RouteNeeds): boolean =>
  a.auth === b.auth && a.cache === b.cache && a.compression === b.compression && a.quotas === b.quotas;

/** `createPipelineDeps` as interruptible work (config/sliced-work.ts), after each route compiled. */
export function* createPipelineDepsWork(config: CompiledConfig, shared: SharedPipelineDeps): Work<PipelineDeps> {
  const { settings } = config;
  const compiled = yield* compileRoutesWork(config);
  const needs = routeNeeds(config);
  // Made only when a route needs it: a JWKS authenticator starts fetching keys at once.
  const authenticator = needs.auth ? createAuthenticator(settings, shared) : undefined;
  const rateLimiter = shared.rateLimiter ?? createRateLimiter();
  const quotaCounters = shared.quotaCounters ?? createQuotaCounters();
  // Quotas are shared by default once there is a Redis: per-process quotas would admit N times the quota.
  const quotasInRedis = (settings.quotas?.store ?? (settings.redis === undefined ? 'local' : 'redis')) === 'redis';
  // The quotas' own Redis connection is opened only for a configuration that counts quotas.
  const hasQuotas = settings.quotas !== undefined || needs.quotas;
  const apiKeys = compileApiKeys(config);
  const sharedCache = sharedCacheSettings(settings.cache);
  return {
    ...shared,
    config: compiled,
    rateLimiter,
    quotaStore:
      quotasInRedis && hasQuotas && shared.sharedQuotas !== undefined
        ? shared.sharedQuotas.store(settings.quotas?.redisCommandTimeoutMs ?? QUOTA_REDIS_TIMEOUT_MS)
        : quotaCounters,
    quotaWindows: createWindowClock(),
    spill: shared.spill ?? createSpillBudget(),
    httpCache: needs.cache ? (shared.httpCache ?? createCacheStore({ maxBytes: settings.cache.maxBytes })) : undefined,
    sharedCacheLevel:
      sharedCache === undefined || shared.sharedHttpCache === undefined
        ? undefined
        : {
            store: shared.sharedHttpCache,
            maxEntryBytes: sharedCache.maxEntryBytes,
            broadcast: sharedCache.broadcast ? shared.cacheBroadcast : undefined,
          },
    admission: shared.admission ?? createAdmissionCounts(),
    rateLimitStore: settings.rateLimit.store === 'redis' ? (shared.sharedRateLimits ?? rateLimiter) : rateLimiter,
    dropHeaders: requestDropSet(
      // The key header never reaches a backend, on any route.
      withKeyHeader(settings.auth.stripHeaders, apiKeys),
      settings.telemetry.propagation,
      // IPv4 peers of a dual-stack socket (::ffff:10.0.0.1) are tested as IPv4 (server/client-ip.ts).
      createTrustTest(settings.trustProxy),
      settings.tls?.clientSubjectHeader,
    ),
    authenticator,
    tokenSources: compileTokenSources(settings.auth.tokenFrom),
    apiKeys,
    cors: compileCors(settings.cors),
    compression: needs.compression ? compileCompression(settings.compression) : undefined,
    clientIp: rateLimitClient(createClientIpResolver(settings.trustProxy), settings.rateLimit.ipv6PrefixLength),
    plugins: shared.plugins ?? new Map(),
  };
}

/** The key rate limits count a request under: its client's address, an IPv6 client's network. */
function rateLimitClient(clientIp: ClientIpResolver, ipv6PrefixLength: number): ClientIpResolver {
  if (ipv6PrefixLength >= 128) return clientIp;
  return (req) => clientKey(clientIp(req), ipv6PrefixLength);
}
