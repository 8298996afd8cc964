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
import type { CompiledRoute, Layer, Step } from './types.js';
import { compose } from './compose.js';
import { forwardEndpoint } from '../endpoints/forward.js';
import { routeDropSet } from '../upstream/trust-boundary.js';
import { bodyLimitLayer } from '../layers/body-limit.js';
import { routeCircuit } from '../layers/circuit.js';
import { authLayers } from './auth-layers.js';
import { mappingEndpoint, type JsonShapingOptions } from '../endpoints/mapping.js';
import { aggregateEndpoint } from '../endpoints/aggregate.js';
import { sseEndpoint } from '../endpoints/sse.js';
import { grpcEndpoint } from '../endpoints/grpc.js';
import { grpcLayer } from '../layers/grpc.js';
import { requireUpgradeLayer } from '../layers/require-upgrade.js';
import { closesAtExpiry, websocketEndpoint } from '../endpoints/websocket.js';
import { routeLimitLayers } from './route-limits.js';
import { requestBufferLayer, type RequestBufferOptions } from '../layers/request-buffer.js';
import { requestSchemaLayer } from '../layers/request-schema.js';
import { compressionLayer } from '../layers/compression.js';
import { cacheLayer } from '../layers/cache.js';
import { invalidationLayer, SAFE_METHODS } from '../layers/cache-invalidation.js';
import { ipRulesLayer } from '../layers/ip-rules.js';
import { corsLayer, originCheckLayer, SAME_ORIGIN_UPGRADES, type CorsPolicy } from '../layers/cors.js';
import { mirrorLayer } from '../layers/mirror.js';
import { splitEndpoint } from '../endpoints/split.js';
import { responseBodyPlugins, routePlugins } from './plugin-layers.js';
import { jsonTransformEndpoint } from '../endpoints/json-transform.js';
import type { PipelineDeps } from './deps.js';

export { createPipelineDeps, type PipelineDeps, type SharedPipelineDeps } from './deps.js';

/** The layers of a route's pipeline, outermost first. */
export function routeLayers(route: CompiledRoute, deps: PipelineDeps): Layer[] {
  const { settings } = deps.config;
  const isWebSocket = route.kind === 'websocket';
  // A gRPC route's first layer: HTTP/2 only, and every refusal after it a gRPC status.
  const layers: Layer[] = route.kind === 'grpc' ? [grpcLayer()] : [];
  if (route.refusesClient !== undefined) layers.push(ipRulesLayer(route.refusesClient));
  // An unsafe request invalidates what the cache holds for its URI (RFC 9111 4.4), whatever its route.
  if (deps.httpCache !== undefined && !SAFE_METHODS.has(route.method))
    layers.push(invalidationLayer(deps.httpCache, deps.sharedCacheLevel?.store, deps.sharedCacheLevel?.broadcast));
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
  // After every check of the client (a cached answer goes only to a request the gateway let
  // through), before the mirror and the circuit: a hit is not copied, takes no probe slot and
  // makes no backend call.
  if (route.cache !== undefined && deps.httpCache !== undefined)
    layers.push(
      cacheLayer(route.cache, {
        store: deps.httpCache,
        settings: settings.cache,
        compression: route.compresses ? deps.compression : undefined,
        conditional: route.kind === 'standard',
        background: route.plugins.length === 0,
        events: deps.events,
        routeId: route.id,
        shared: deps.sharedCacheLevel,
      }),
    );
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
    caches: route.cache !== undefined,
  });
  const callOptions = {
    upstream,
    dropHeaders,
    headersTimeoutMs: timeouts.backendSec * 1000,
    events: deps.events,
  };
  // The head only: a long download may pause between chunks, up to backendIdleSec.
  // A cached route asks for the body as stored: the cache keys its variants by the gateway's own coding.
  const forwardOptions = {
    ...callOptions,
    bodyTimeoutMs: timeouts.backendIdleSec * 1000,
    identityEncoding: route.cache !== undefined,
  };
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
    case 'standard': {
      // A plugin that transforms JSON answers makes the route buffer them; any other streams.
      const { settings } = deps.config;
      const bodies = responseBodyPlugins(route, deps, settings.trustProxy, settings.limits.maxMappingBodyBytes);
      return bodies === undefined
        ? forwardEndpoint(route, forwardOptions)
        : jsonTransformEndpoint(route, { ...forwardOptions, ...bodies });
    }
  }
}
