/**
 * One recipe per route, decided at config load, for every way a request can arrive: HTTP/1.1,
 * HTTP/2 and WebSocket handshakes run the same layers (a handshake's answers go onto its socket,
 * server/socket-response.ts). A route only gets the layers its configuration asks for: a route
 * that needs no token has no auth layer, a route without mapping has no enrichment code in its
 * path.
 *
 *   gRPC: HTTP/2 only (505), errors as gRPC statuses -> client address rules (403) -> plugin hooks -> compression
 *   -> CORS headers -> admission (503) -> rate limit, quota (429) -> Origin check of handshakes (403) -> body limits
 *   (413, 408) -> plugins' onRequest -> auth -> rate limit, quota by consumer or claim (429) -> request buffer
 *   -> plugins' onAuthenticated -> request schema (400, 415) -> mirror copy -> 426 for a plain request on a WebSocket
 *   route -> plugins' beforeUpstream -> (split: the arm) circuit (503) -> forward|mapping|aggregate|sse|websocket|grpc
 *
 * Address rules first (after the gRPC framing): a refused client costs nothing else, not even CORS headers
 * (docs/security.md). CORS next so that a browser can read the gateway's other refusals; the cheap
 * refusals before authentication so that abusive traffic costs no token check or auth-service
 * call. A limit counted by consumer or claim needs what authentication learnt, so it runs right
 * after it (decided per route at load); a request refused by auth is counted by no such limit.
 */
import type { CompiledConfig } from '../config/types.js';
import type { UpstreamRegistry } from '../upstream/upstream.js';
import type { EventBus } from '../observability/events.js';
import type { Logger } from '../observability/logger.js';
import type { CompiledRoute, Layer, PipelineConfig, Step } from './types.js';
import { compose } from './compose.js';
import { compileRoutes } from './compile-route.js';
import { forwardEndpoint } from '../endpoints/forward.js';
import { requestDropSet, routeDropSet, type RequestDropSet } from '../upstream/trust-boundary.js';
import { clientKey, createClientIpResolver, createTrustTest, type ClientIpResolver } from '../server/client-ip.js';
import { bodyLimitLayer } from '../layers/body-limit.js';
import { routeCircuit } from '../layers/circuit.js';
import { createAuthenticator } from '../auth/authenticator.js';
import type { Authenticator } from '../auth/types.js';
import type { JwksRegistry } from '../auth/jwks-registry.js';
import { compileApiKeys, withKeyHeader, type ApiKeys } from '../auth/api-keys.js';
import { authLayers } from './auth-layers.js';
import { compileTokenSources, type TokenSources } from '../auth/token-sources.js';
import { mappingEndpoint, type JsonShapingOptions } from '../endpoints/mapping.js';
import { aggregateEndpoint } from '../endpoints/aggregate.js';
import type { MappingCache } from '../mapping/types.js';
import { sseEndpoint } from '../endpoints/sse.js';
import { grpcEndpoint } from '../endpoints/grpc.js';
import { grpcLayer } from '../layers/grpc.js';
import type { OpenStreams } from '../endpoints/open-streams.js';
import { requireUpgradeLayer } from '../layers/require-upgrade.js';
import { closesAtExpiry, websocketEndpoint } from '../endpoints/websocket.js';
import type { TunnelOptions } from '../endpoints/tunnel.js';
import { createRateLimiter, type RateLimiter, type RateLimitStore } from '../layers/rate-limit.js';
import { createQuotaCounters, type QuotaCounters, type QuotaStore } from '../layers/quota.js';
import { routeLimitLayers } from './route-limits.js';
import { createWindowClock, type WindowClock } from '../layers/quota-windows.js';
import type { QuotaUsage } from '../layers/quota-usage.js';
import { requestBufferLayer, type RequestBufferOptions } from '../layers/request-buffer.js';
import { createSpillBudget, type SpillBudget } from '../layers/spill-budget.js';
import { requestSchemaLayer } from '../layers/request-schema.js';
import { compileCompression, compressionLayer } from '../layers/compression.js';
import type { CompressionPolicy } from '../response/compression/compress-response.js';
import { createAdmissionCounts, type AdmissionCounts } from '../layers/admission-counts.js';
import { ipRulesLayer } from '../layers/ip-rules.js';
import { compileCors, corsLayer, originCheckLayer, SAME_ORIGIN_UPGRADES, type CorsPolicy } from '../layers/cors.js';
import { mirrorLayer } from '../layers/mirror.js';
import { splitEndpoint } from '../endpoints/split.js';
import { routePlugins, type LoadedPlugins } from './plugin-layers.js';

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
  /** The quota counters in Redis; undefined without `config.redis`. */
  readonly sharedQuotas?: QuotaStore | undefined;
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
  /** The process's requests in flight under admission control (survive reloads); one per config when not given. */
  readonly admission?: AdmissionCounts;
  readonly plugins?: LoadedPlugins; // this configuration's plugins, imported (plugins/load.ts)
}

/** What every pipeline may use: the shared parts plus what is compiled once per configuration. */
export interface PipelineDeps extends SharedPipelineDeps {
  /** The configuration, every route compiled (pipeline/compile-route.ts). */
  readonly config: PipelineConfig;
  readonly rateLimiter: RateLimiter;
  readonly spill: SpillBudget;
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
  const { settings } = config;
  const compiled = compileRoutes(config);
  // Made only when a route needs it: a JWKS authenticator starts fetching keys at once.
  const authenticator = config.routes.some((r) => r.requiresAuth) ? createAuthenticator(settings, shared) : undefined;
  const rateLimiter = shared.rateLimiter ?? createRateLimiter();
  const quotaCounters = shared.quotaCounters ?? createQuotaCounters();
  // Quotas are shared by default once there is a Redis: per-process quotas would admit N times the quota.
  const quotasInRedis = (settings.quotas?.store ?? (settings.redis === undefined ? 'local' : 'redis')) === 'redis';
  const apiKeys = compileApiKeys(config);
  return {
    ...shared,
    config: compiled,
    rateLimiter,
    quotaStore: quotasInRedis ? (shared.sharedQuotas ?? quotaCounters) : quotaCounters,
    quotaWindows: createWindowClock(),
    spill: shared.spill ?? createSpillBudget(),
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
    compression: config.routes.some((r) => r.compresses) ? compileCompression(settings.compression) : undefined,
    clientIp: rateLimitClient(createClientIpResolver(settings.trustProxy), settings.rateLimit.ipv6PrefixLength),
    plugins: shared.plugins ?? new Map(),
  };
}

/** The key rate limits count a request under: its client's address, an IPv6 client's network. */
function rateLimitClient(clientIp: ClientIpResolver, ipv6PrefixLength: number): ClientIpResolver {
  if (ipv6PrefixLength >= 128) return clientIp;
  return (req) => clientKey(clientIp(req), ipv6PrefixLength);
}

/** The layers of a route's pipeline, outermost first. */
export function routeLayers(route: CompiledRoute, deps: PipelineDeps): Layer[] {
  const { settings } = deps.config;
  const isWebSocket = route.kind === 'websocket';
  // A gRPC route's first layer: HTTP/2 only, and every refusal after it a gRPC status.
  const layers: Layer[] = route.kind === 'grpc' ? [grpcLayer()] : [];
  if (route.refusesClient !== undefined) layers.push(ipRulesLayer(route.refusesClient));
  const plugins = route.plugins.length === 0 ? undefined : routePlugins(route, deps, settings.trustProxy);
  if (plugins?.hooks !== undefined) layers.push(plugins.hooks);
  // Outermost after those: every other answer of the route leaves through it.
  if (route.compresses && deps.compression !== undefined) layers.push(compressionLayer(deps.compression));
  if (deps.cors !== undefined) layers.push(corsLayer(deps.cors));
  const limits = routeLimitLayers(route, deps);
  layers.push(...limits.beforeAuth);
  const upgrades = isWebSocket ? upgradePolicy(route, deps) : undefined;
  if (upgrades !== undefined) layers.push(originCheckLayer(upgrades));
  // A WebSocket route reads no body: a plain request gets its 426 unread.
  if (!isWebSocket) layers.push(bodyLimitLayer(route.maxBodyBytes, settings.timeouts.clientBodySec * 1000));
  if (plugins?.onRequest !== undefined) layers.push(plugins.onRequest);
  layers.push(...authLayers(route, deps));
  layers.push(...limits.afterAuth);
  // After auth (an unauthenticated upload is refused unread), before the circuit: a slow client
  // must not hold a half-open probe slot while it uploads.
  if (route.buffersRequest || (plugins?.readsBody === true && route.kind !== 'sse' && !isWebSocket)) {
    // A validated body is parsed, so it stays in memory: its limit is request.maxBytes.
    const memoryBytes = route.validateBody === undefined ? settings.limits.requestBufferBytes : route.maxBodyBytes;
    layers.push(requestBufferLayer({ memoryBytes, logger: deps.logger, ...spillOptions(deps) }));
  }
  if (plugins?.onAuthenticated !== undefined) layers.push(plugins.onAuthenticated);
  if (route.validateBody !== undefined) layers.push(requestSchemaLayer(route.validateBody));
  // After auth and validation: the mirror is copied only what the backend is sent.
  if (route.mirror !== undefined) layers.push(mirrorLayer(route, route.mirror, deps));
  if (isWebSocket) layers.push(requireUpgradeLayer());
  if (plugins?.beforeUpstream !== undefined) layers.push(plugins.beforeUpstream);
  // A split's arms each have their own circuit, after the choice (buildPipeline).
  if (route.split === undefined) layers.push(...routeCircuit(route, deps.upstreams, settings.circuitBreaker.enabled));
  return layers;
}

/** Where a buffered body that outgrows memory counts its temporary file, and who is told of a refusal. */
function spillOptions(deps: PipelineDeps): Pick<RequestBufferOptions, 'spill' | 'events'> {
  const { spillMaxBytes, spillMaxBytesPerClient } = deps.config.settings.limits;
  return {
    events: deps.events,
    spill: {
      budget: deps.spill,
      caps: { maxBytes: spillMaxBytes, maxBytesPerClient: spillMaxBytesPerClient },
      clientOf: deps.clientIp,
    },
  };
}

/** A route's pipeline, for every kind of request it gets. */
export function buildPipeline(route: CompiledRoute, deps: PipelineDeps): Step {
  // A split's arms: the route's own circuit and endpoint, each with the arm's backend.
  const arm = (r: CompiledRoute) =>
    compose(routeCircuit(r, deps.upstreams, deps.config.settings.circuitBreaker.enabled), endpointFor(r, deps));
  const end =
    route.split === undefined ? endpointFor(route, deps) : splitEndpoint(route, route.split, deps.events, arm);
  return compose(routeLayers(route, deps), end);
}

/**
 * Which origins may open a WebSocket route's tunnels: the CORS policy when there is one, else the
 * gateway's own origin on a route whose token may come from a cookie; undefined: any.
 */
function upgradePolicy(route: CompiledRoute, deps: PipelineDeps): Pick<CorsPolicy, 'allowsUpgrade'> | undefined {
  if (deps.cors !== undefined) return deps.cors;
  const fromCookie = deps.config.settings.auth.tokenFrom.some(
    (source) => typeof source === 'object' && 'cookie' in source,
  );
  return route.requiresAuth && fromCookie ? SAME_ORIGIN_UPGRADES : undefined;
}

/** What a route that reads JSON answers needs: mapping calls, their cache, the limits. */
function shapingOptions(route: CompiledRoute, deps: PipelineDeps): JsonShapingOptions {
  const { settings } = deps.config;
  return {
    events: deps.events,
    upstreams: deps.upstreams,
    mappingTimeoutMs: route.timeouts.mappingSec * 1000,
    maxBodyBytes: settings.limits.maxMappingBodyBytes,
    cache: settings.mappingCache.enabled ? deps.mappingCache : undefined,
    propagateTrace: settings.telemetry.propagation,
    connectionsPerOrigin: settings.limits.connectionsPerOrigin,
    logger: deps.logger,
  };
}

function endpointFor(route: CompiledRoute, deps: PipelineDeps): Step {
  const upstream = deps.upstreams.forOrigin(route.origin);
  const timeouts = route.timeouts;
  // What every endpoint's backend call needs: backendSec bounds the wait for the head.
  // What of the client's request this route's backend may get (upstream/trust-boundary.ts).
  const dropHeaders = routeDropSet(deps.dropHeaders, {
    kind: route.kind,
    allowUnderscores: route.headers.allowUnderscores,
  });
  const callOptions = {
    upstream,
    dropHeaders,
    headersTimeoutMs: timeouts.backendSec * 1000,
    events: deps.events,
  };
  // The head only: a long download may pause between chunks, up to backendIdleSec.
  const forwardOptions = { ...callOptions, bodyTimeoutMs: timeouts.backendIdleSec * 1000 };
  switch (route.kind) {
    case 'websocket':
      return websocketEndpoint(route, {
        ...callOptions,
        logger: deps.logger,
        tunnel: deps.tunnel,
        tokenExpiry: closesAtExpiry(route, deps.config.settings.auth),
        streams: deps.streams,
      });
    case 'sse':
      return sseEndpoint(route, { ...callOptions, streams: deps.streams });
    case 'grpc':
      return grpcEndpoint(route, callOptions);
    case 'mapping':
      return mappingEndpoint(route, { ...forwardOptions, ...shapingOptions(route, deps) });
    case 'aggregate':
      return aggregateEndpoint(route, {
        ...shapingOptions(route, deps),
        dropHeaders,
        timeoutMs: timeouts.backendSec * 1000,
      });
    case 'standard':
      return forwardEndpoint(route, forwardOptions);
  }
}
