/**
 * One recipe per route, decided at config load: a route that needs no token has no auth layer,
 * a route without mapping has no enrichment code in its path.
 */
import type { CompiledConfig, CompiledRoute } from '../config/compile.js';
import type { UpstreamRegistry } from '../upstream/upstream.js';
import type { EventBus } from '../observability/events.js';
import type { Logger } from '../observability/logger.js';
import { compose, type Layer, type Step } from './step.js';
import { forwardEndpoint } from '../proxy/forward.js';
import { requestDropSet, type RequestDropSet } from '../upstream/forward-headers.js';
import { createTrustTest, normalizeAddress } from '../server/client-ip.js';
import { sendError } from '../response/send-error.js';
import { circuitLayer } from '../circuit/layer.js';
import { createAuthenticator, type Authenticator } from '../auth/authenticator.js';
import type { JwksRegistry } from '../auth/jwks-registry.js';
import { authLayer } from '../auth/layer.js';
import { mappingEndpoint } from '../mapping/enrich.js';
import type { MappingCache } from '../mapping/cache.js';
import { sseEndpoint } from '../stream/sse.js';
import type { OpenStreams } from '../stream/open-streams.js';
import { websocketEndpoint, type UpgradeStep } from '../stream/websocket.js';
import type { TunnelOptions } from '../stream/tunnel.js';
import { createGuards, type GuardLayers } from '../guards/guards.js';
import { createRateLimiter, type RateLimiter } from '../guards/rate-limit.js';
import { requestBufferLayer } from '../guards/request-buffer.js';
import { compileCors, type CorsPolicy } from '../guards/cors.js';

/** What every pipeline may use; made once per process (registries) or per config (the rest). */
export interface PipelineDeps {
  readonly config: CompiledConfig;
  readonly upstreams: UpstreamRegistry;
  readonly events: EventBus;
  readonly logger: Logger;
  /** Client headers never forwarded (hop-by-hop, gateway-owned, auth.stripHeaders). */
  readonly dropHeaders: RequestDropSet;
  /** One per configuration; undefined when no route requires a token (and none is configured). */
  readonly authenticator: Authenticator | undefined;
  /** The process-wide mapping cache (survives reloads); used only when mappingCache.enabled. */
  readonly mappingCache: MappingCache;
  /** The process-wide rate-limit buckets (survive reloads); one per config when not given. */
  readonly rateLimiter?: RateLimiter;
  /** The process-wide JWKS key sources (keys survive reloads); one per config when not given. */
  readonly jwks?: JwksRegistry;
  /** The configuration's CORS policy, compiled once: route layers and preflights share it. */
  readonly cors: CorsPolicy | undefined;
  /** CORS, rate limit and body limit layers of a route (guards/guards.ts), compiled per config. */
  readonly guards: GuardLayers;
  /** The process-wide open SSE streams, ended when the gateway drains (stream/open-streams.ts). */
  readonly streams?: OpenStreams;
  /** Overrides the WebSocket tunnel bounds (tests); stream/tunnel.ts has the defaults. */
  readonly tunnel?: TunnelOptions;
}

export function createPipelineDeps(
  config: CompiledConfig,
  shared: Omit<PipelineDeps, 'config' | 'dropHeaders' | 'authenticator' | 'cors' | 'guards'>,
): PipelineDeps {
  // Made only when a route needs it: a JWKS authenticator starts fetching keys at once.
  const authenticator = config.routes.some((r) => r.requiresAuth)
    ? createAuthenticator(config.settings, shared)
    : undefined;
  const cors = compileCors(config.settings.cors);
  const guards = createGuards(config, shared.rateLimiter ?? createRateLimiter(), cors);
  return {
    ...shared,
    config,
    dropHeaders: requestDropSet(
      config.settings.auth.stripHeaders,
      config.settings.telemetry.propagation,
      trustsPeer(config.settings.trustProxy),
    ),
    authenticator,
    cors,
    guards,
  };
}

/** The `trustProxy` test on a socket's peer address (IPv4 clients of a dual-stack socket too). */
function trustsPeer(entries: readonly string[]): (address: string) => boolean {
  const trusts = createTrustTest(entries);
  return (address) => trusts(normalizeAddress(address));
}

export function buildPipeline(route: CompiledRoute, deps: PipelineDeps): Step {
  const layers: Layer[] = deps.guards(route);
  if (route.requiresAuth) {
    // Validation refuses defaultProtected without secret, jwksUrl or authService.
    if (deps.authenticator === undefined)
      throw new Error(`route ${route.id} requires auth but no authenticator is configured`);
    layers.push(authLayer(deps.authenticator, deps.events));
  }
  // After auth (an unauthenticated upload is refused unread), before the circuit: a slow client
  // must not hold a half-open probe slot while it uploads.
  if (route.buffersRequest)
    layers.push(
      requestBufferLayer({ memoryBytes: deps.config.settings.limits.requestBufferBytes, logger: deps.logger }),
    );
  // After auth: a request without a valid token never takes a probe slot. WebSocket upgrades
  // acquire their permit in the upgrade code; a disabled breaker costs nothing here.
  if (route.kind !== 'websocket' && deps.config.settings.circuitBreaker.enabled) {
    layers.push(
      circuitLayer(deps.upstreams.forOrigin(route.origin).breaker, { settleOnResponseStart: route.kind === 'sse' }),
    );
  }
  return compose(layers, endpointFor(route, deps));
}

/**
 * The upgrade endpoint of a WebSocket route (undefined for other kinds). Upgrades bypass the
 * pipeline (Node gives them a raw socket), so the guards wrap it and auth and the circuit run
 * inside it.
 */
export function buildUpgrade(route: CompiledRoute, deps: PipelineDeps): UpgradeStep | undefined {
  if (route.kind !== 'websocket') return undefined;
  // Rate limit and Origin check first (guards/guards.ts), as the HTTP guards come before auth.
  return deps.guards.upgrade(
    route,
    websocketEndpoint(route, {
      upstream: deps.upstreams.forOrigin(route.origin),
      dropHeaders: deps.dropHeaders,
      authenticator: deps.authenticator,
      handshakeTimeoutMs: deps.config.settings.timeouts.backendSec * 1000,
      events: deps.events,
      logger: deps.logger,
      tunnel: deps.tunnel,
    }),
  );
}

function endpointFor(route: CompiledRoute, deps: PipelineDeps): Step {
  const upstream = deps.upstreams.forOrigin(route.origin);
  const timeouts = deps.config.settings.timeouts;
  const forwardOptions = {
    upstream,
    dropHeaders: deps.dropHeaders,
    headersTimeoutMs: timeouts.backendSec * 1000,
    // backendSec bounds the wait for the head only: a long download may pause between chunks.
    bodyTimeoutMs: timeouts.backendIdleSec * 1000,
    events: deps.events,
  };
  switch (route.kind) {
    case 'websocket':
      // A plain request on a WebSocket route; upgrades never reach the pipeline (docs/design-decisions.md).
      return async (ex) => {
        ex.errorCode = 'GW_UPGRADE_REQUIRED';
        sendError(ex.res, 'GW_UPGRADE_REQUIRED', { upgrade: 'websocket', connection: 'Upgrade' });
      };
    case 'sse':
      return sseEndpoint(route, {
        upstream,
        dropHeaders: deps.dropHeaders,
        headersTimeoutMs: timeouts.backendSec * 1000,
        events: deps.events,
        streams: deps.streams,
      });
    case 'mapping':
      return mappingEndpoint(route, {
        ...forwardOptions,
        upstreams: deps.upstreams,
        mappingTimeoutMs: timeouts.mappingSec * 1000,
        maxBodyBytes: deps.config.settings.limits.maxMappingBodyBytes,
        cache: deps.config.settings.mappingCache.enabled ? deps.mappingCache : undefined,
        propagateTrace: deps.config.settings.telemetry.propagation,
        connectionsPerOrigin: deps.config.settings.limits.connectionsPerOrigin,
        logger: deps.logger,
      });
    case 'standard':
      return forwardEndpoint(route, forwardOptions);
  }
}
