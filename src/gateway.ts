/**
 * The composition root: registries made once per process (upstreams with their pools and
 * circuits), a route table per configuration, the HTTP server, reload and graceful shutdown.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { Server as TlsServer } from 'node:tls';
import { createTlsListener, redirectToHttps } from './server/tls-listener.js';
import { createPublicListener } from './server/public-listener.js';
import type { AddressInfo } from 'node:net';
import type { CompiledConfig } from './config/types.js';
import { createRouteTable, type RouteTable } from './router/route-table.js';
import { buildPipeline, createPipelineDeps, type PipelineDeps } from './pipeline/build.js';
import { createUpgradeHandler } from './server/upgrade.js';
import { serveWithoutUpgrade } from './server/ignore-upgrade.js';
import { GatewayResponse } from './server/gateway-response.js';
import { createUpstreamRegistry, type UpstreamRegistry } from './upstream/upstream.js';
import type { LookupAll } from './upstream/dns-targets.js';
import { createCircuitRegistry, originsOf, type CircuitRegistry } from './circuit/registry.js';
import { createEventBus, type EventBus } from './observability/events.js';
import { createMappingCache, type MappingCache } from './mapping/cache.js';
import { logEvents } from './observability/log-events.js';
import { createLogger, type Logger } from './observability/logger.js';
import { droppedLogLines } from './observability/log-output.js';
import { createRequestHandler } from './server/http-server.js';
import { sendConnectError } from './server/protocol-checks.js';
import { applyServerLimits, clientErrorHandler, serverOptions } from './server/limits.js';
import { bearerCheck } from './ops/bearer-check.js';
import { createRateLimiter } from './guards/rate-limit.js';
import { createRedisRateLimitStore } from './guards/redis-rate-limit.js';
import { createRedisMappingStore } from './mapping/redis-cache.js';
import { createRedisConnection, type RedisConnection } from './redis/connection.js';
import { createOpenStreams } from './stream/open-streams.js';
import { createJwksRegistry } from './auth/jwks-registry.js';
import { sendError } from './response/send-error.js';
import { createMetrics, type Metrics, type TargetStats } from './observability/metrics.js';
import { clusterMetricsRenderer, inPorticoCluster } from './observability/cluster-metrics.js';
import { createTracer, type Tracer } from './observability/trace-context.js';
import { resolveTracing } from './observability/otel-env.js';
import type { OtlpExporter } from './observability/otlp.js';
import type { TunnelOptions } from './stream/tunnel.js';
import { adminReloadWarning, createAdmin } from './admin/listener.js';

/** How long in-flight requests get to finish on close, unless GatewayOptions says otherwise. */
export const DRAIN_TIMEOUT_MS = 15_000;

export interface GatewayOptions {
  readonly config: CompiledConfig;
  readonly logger?: Logger;
  /** Milliseconds in-flight requests get to finish on close (15 s by default). */
  readonly drainTimeoutMs?: number;
  /** Overrides the WebSocket tunnel bounds (tests; docs/streaming.md "Tunnel limits" has the defaults). */
  readonly tunnel?: TunnelOptions;
  /**
   * Milliseconds clock for circuit open periods, mapping-cache TTLs and the JWKS retry backoff, so
   * tests can move time by hand; it must never read 0. Default: the real clock.
   */
  readonly now?: () => number;
  /** Resolves the host name targets of named upstreams (tests); default: the system resolver. */
  readonly lookup?: LookupAll;
}

export interface Gateway {
  readonly server: Server;
  readonly events: EventBus;
  readonly logger: Logger;
  readonly upstreams: UpstreamRegistry;
  /** Every backend origin's circuit; `circuits.snapshot()` for metrics and status pages. */
  readonly circuits: CircuitRegistry;
  /** The mapping cache; `mappingCache.stats()` gives hit/miss/eviction counts for metrics. */
  readonly mappingCache: MappingCache;
  /** The connection to `config.redis` made at creation; undefined without it (docs/redis.md). */
  readonly redis: RedisConnection | undefined;
  /** The process's metrics registry; undefined until `telemetry.metrics` is on. */
  metrics(): Metrics | undefined;
  /** The configuration being served. */
  config(): CompiledConfig;
  /** The span exporter of the configuration being served, once started; undefined when spans are not exported. */
  spanExporter(): Promise<OtlpExporter | undefined>;
  /** This gateway's tracer: sampling and span recording, apart from any other gateway in the process. */
  readonly tracer: Tracer;
  listen(port?: number, host?: string): Promise<AddressInfo>;
  /** The redirect listener's address (`config.tls.redirectPort`), once listening; undefined without one. */
  redirectAddress(): AddressInfo | undefined;
  /** The admin listener's address (`config.admin`, docs/dashboard.md), once listening; undefined without one. */
  adminAddress(): AddressInfo | undefined;
  /** Swaps in a new configuration; in-flight requests finish on the old one. */
  reload(config: CompiledConfig): void;
  /** Stops accepting, lets in-flight requests finish (bounded), closes pools. */
  close(): Promise<void>;
}

/** TLS settings for https:// backends, read once: pools are made once per process. */
function upstreamTls(config: CompiledConfig): { ca?: string; rejectUnauthorized: boolean } {
  const t = config.settings.upstreamTls;
  return { rejectUnauthorized: t.rejectUnauthorized, ...(t.caFile ? { ca: readFileSync(t.caFile, 'utf8') } : {}) };
}

export function createGateway(options: GatewayOptions): Gateway {
  const logger = options.logger ?? createLogger();
  const events = createEventBus();
  logEvents(events, logger);
  // One circuit per origin for the whole process; breakers read the registry's current settings,
  // so a reload can change or disable them without losing state (docs/design-decisions.md).
  const circuits = createCircuitRegistry({
    settings: options.config.settings.circuitBreaker,
    events,
    now: options.now,
  });
  const upstreams = createUpstreamRegistry({
    connections: options.config.settings.limits.connectionsPerOrigin,
    events,
    logger,
    ...(options.now === undefined ? {} : { now: options.now }),
    ...(options.lookup === undefined ? {} : { lookup: options.lookup }),
    createBreaker: (origin) => circuits.forOrigin(origin),
    tls: upstreamTls(options.config),
  });
  circuits.retain(originsOf(options.config));

  let config = options.config;
  // Once per process like the pools; its settings apply at start (a reload that changes them is logged).
  const redisSettings = options.config.settings.redis;
  const redis = redisSettings && createRedisConnection({ settings: redisSettings, logger, events });
  // Once per process like the upstreams: cached mapping results survive reloads (docs/design-decisions.md).
  const mappingCache = createMappingCache(options.config.settings.mappingCache, {
    now: options.now,
    shared: redis && createRedisMappingStore({ redis, events }),
  });
  // Once per process too: rate-limit buckets survive reloads (docs/design-decisions.md).
  const rateLimiter = createRateLimiter();
  const sharedRateLimits = redis && createRedisRateLimitStore({ redis, fallback: rateLimiter, events });
  // Open SSE streams, ended when the drain starts (they would otherwise hold it for 15 s).
  const streams = createOpenStreams();
  // Once per process too: JWKS keys survive reloads, no refetch for an unchanged jwksUrl (docs/design-decisions.md).
  const jwks = createJwksRegistry({ logger, now: options.now });
  let deps = pipelineDeps(config);
  let table = buildTable(deps);
  let draining = false;
  const inFlight = { count: 0 };

  // Metrics: one registry per process, kept across reloads; subscribed to the bus only while
  // `telemetry.metrics` is on. Span export is loaded on demand (costs nothing when off).
  let metrics: Metrics | undefined;
  let renderMetrics: (() => Promise<string>) | undefined;
  let metricsAccess = bearerCheck(config.settings.telemetry.metricsToken);
  let otlp: Promise<OtlpExporter | undefined> = Promise.resolve(undefined);
  const tracer = createTracer();
  function applyTelemetry(c: CompiledConfig): void {
    const t = c.settings.telemetry;
    if (t.metrics) {
      metrics ??= createMetrics(events, {
        inFlight,
        circuits: () => circuits.snapshot(),
        targets: () => targetStats(upstreams, (options.now ?? Date.now)()),
        mappingCache: () => mappingCache.stats(),
        rateLimitBuckets: () => rateLimiter.size,
        ...(redis === undefined ? {} : { redisUp: () => redis.isConnected }),
        logLinesDropped: () => droppedLogLines(logger),
      });
      renderMetrics ??= inPorticoCluster() ? clusterMetricsRenderer(metrics.registry) : metrics.render;
      metrics.enable();
    } else metrics?.disable();
    metricsAccess = bearerCheck(t.metricsToken);
    // OTEL_* variables were merged at config load; a config compiled without them uses the file alone.
    const tracing = c.tracing ?? resolveTracing(t, new Set(Object.keys(t)), {});
    for (const warning of tracing.warnings) logger.warn({ warning }, 'OpenTelemetry setting not applied as written');
    tracer.configure({ sampleRatio: tracing.sampleRatio });
    const endpoint = tracing.tracesUrl;
    // The exporter is kept across reloads unless what it sends, or where, changed.
    const identity = JSON.stringify([endpoint, tracing.serviceName, tracing.resourceAttributes]);
    otlp = otlp
      .then(async (current) => {
        if (current !== undefined && current.identity === identity) return current;
        await current?.close();
        if (endpoint === undefined) return undefined;
        const { startOtlpExporter } = await import('./observability/otlp.js');
        return startOtlpExporter({
          endpoint,
          url: endpoint,
          serviceName: tracing.serviceName,
          resourceAttributes: tracing.resourceAttributes,
          identity,
          events,
          logger,
          tracer,
        });
      })
      .catch((err: unknown) => {
        logger.error({ err }, 'span export could not start');
        return undefined;
      });
  }
  applyTelemetry(config);

  function pipelineDeps(c: CompiledConfig): PipelineDeps {
    return createPipelineDeps(c, {
      upstreams,
      events,
      logger,
      mappingCache,
      rateLimiter,
      sharedRateLimits,
      jwks,
      streams,
      ...(options.tunnel === undefined ? {} : { tunnel: options.tunnel }),
    });
  }

  function buildTable(deps: PipelineDeps): RouteTable {
    return createRouteTable(deps.config.routes.map((route) => ({ route, run: buildPipeline(route, deps) })));
  }

  // TLS on the listener (server/tls-listener.ts) is chosen at creation: a reload swaps certificates,
  // not between HTTP and HTTPS.
  const tls = config.tls === undefined ? undefined : createTlsListener(config.tls);
  const handler = createRequestHandler({
    current: () => table,
    events,
    logger,
    tracer,
    isDraining: () => draining,
    isWaitingForRedis: () => redis !== undefined && redis.settings.required && !redis.isConnected,
    inFlight,
    cors: () => deps.cors,
    metrics: (req, res) => {
      if (!metrics?.enabled) return sendError(res, 'GW_ROUTE_NOT_FOUND');
      const refusal = metricsAccess(req);
      if (refusal !== undefined) return sendError(res, refusal, { 'www-authenticate': 'Bearer realm="metrics"' });
      return metrics.serve(res, renderMetrics);
    },
  });
  // Keep-alive 72 s, client header/body timeouts, head size (server/limits.ts).
  // Host is checked by the request handler, which answers a missing one in the JSON shape.
  const httpOptions = { ...serverOptions(config.settings), ServerResponse: GatewayResponse, requireHostHeader: false };
  // HTTP/1.1, HTTPS, HTTP/2 over TLS or h2c, by config.tls and config.http2 (server/public-listener.ts).
  const listener = createPublicListener({
    handler,
    httpOptions,
    tls,
    http2: config.settings.http2,
    maxHeaderBytes: config.settings.limits.maxHeaderBytes,
    keepAliveMs: () => config.settings.timeouts.keepAliveSec * 1000,
  });
  const server = listener.server;
  // The plain-HTTP port of an HTTPS gateway: 308 to https://, /health and /ready served.
  const redirect =
    config.tls?.redirectPort === undefined
      ? undefined
      : createServer(
          httpOptions,
          redirectToHttps(() => (server.address() as AddressInfo | null)?.port ?? 443, handler),
        );
  // WebSocket handshakes for WebSocket routes go through the request handler with a response on
  // their socket; other upgrades (h2c, a handshake for a standard route) are plain requests.
  const upgrades = createUpgradeHandler({
    current: () => table,
    logger,
    handler,
    Response: listener.Response,
    serveAsRequest: (req, socket, head) => serveWithoutUpgrade(server, req, socket, head),
  });
  server.on('upgrade', upgrades);
  server.on('clientError', clientErrorHandler(logger));
  applyServerLimits(server, config.settings);
  server.on('connect', sendConnectError);
  // The status dashboard (docs/dashboard.md) on a listener of its own, made only with config.admin:
  // without it nothing of the dashboard subscribes to the bus, so requests pay nothing for it.
  const adminSettings = options.config.settings.admin;
  const admin =
    adminSettings === undefined
      ? undefined
      : createAdmin({
          settings: adminSettings,
          events,
          logger,
          sources: {
            config: () => config,
            circuits: () => circuits.snapshot(),
            targets: () => targetStats(upstreams, (options.now ?? Date.now)()),
            mappingCache: () => mappingCache.stats(),
            inFlight,
          },
        });

  return {
    server,
    events,
    logger,
    upstreams,
    circuits,
    mappingCache,
    redis,
    metrics: () => metrics,
    config: () => config,
    spanExporter: () => otlp,
    tracer,
    async listen(port = config.settings.port, host = config.settings.host) {
      const address = await listenOn(server, port, host);
      if (redirect !== undefined) await listenOn(redirect, config.tls?.redirectPort ?? 0, host);
      await admin?.listen();
      return address;
    },
    redirectAddress: () => (redirect?.address() as AddressInfo | null | undefined) ?? undefined,
    adminAddress: () => admin?.address(),
    reload(next) {
      const nextDeps = pipelineDeps(next);
      const nextTable = buildTable(nextDeps);
      if (JSON.stringify(next.settings.redis) !== JSON.stringify(options.config.settings.redis))
        logger.warn(
          { running: redis === undefined ? 'none' : 'the one from start' },
          'config.redis changed: it applies at the next start; the running connection stays',
        );
      table = nextTable;
      deps = nextDeps;
      config = next;
      circuits.configure(next.settings.circuitBreaker);
      circuits.retain(originsOf(next));
      mappingCache.configure(next.settings.mappingCache);
      applyServerLimits(server, next.settings);
      if (tls !== undefined && next.tls !== undefined) tls.apply(server as unknown as TlsServer, next.tls);
      else if ((tls === undefined) !== (next.tls === undefined))
        logger.warn('config.tls added or removed: it applies at the next start; the listener keeps its protocol');
      if (JSON.stringify(next.settings.http2) !== JSON.stringify(options.config.settings.http2))
        logger.warn('config.http2 changed: it applies at the next start; the listener keeps its protocols');
      applyTelemetry(next);
      const adminWarning = adminReloadWarning(options.config.settings.admin, next.settings.admin);
      if (adminWarning !== undefined) logger.warn(adminWarning);
      admin?.configure(next.settings.admin);
    },
    async close() {
      draining = true;
      streams.endAll();
      listener.closeSessions();
      redirect?.close();
      redirect?.closeAllConnections();
      await admin?.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const deadline = Date.now() + (options.drainTimeoutMs ?? DRAIN_TIMEOUT_MS);
      // Poll rather than wait for one event: each round also closes the keep-alive connections
      // whose last response just finished, which server.close() alone leaves open.
      while (inFlight.count > 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 25));
        server.closeIdleConnections();
      }
      // Tunnels are long-lived by nature: they are not waited for, only closed after the drain.
      upgrades.closeAll();
      listener.closeAllConnections();
      await closed;
      await upstreams.close();
      await redis?.close();
      metrics?.disable();
      await (await otlp)?.close();
    },
  };
}

/** The counts of every named upstream's targets, for metrics. */
function* targetStats(upstreams: UpstreamRegistry, now: number): Iterable<TargetStats> {
  for (const { upstream, target } of upstreams.targets())
    yield {
      upstream,
      target: target.key,
      requests: target.health.requests,
      failures: target.health.failures,
      ejections: target.health.ejectionsTotal,
      ejected: target.health.ejectedUntil > now,
      healthy: !target.health.down,
      inFlight: target.pool.inFlight + (target.streamPool?.inFlight ?? 0),
    };
}

function listenOn(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}
