/**
 * The composition root: registries made once per process (upstreams with their pools and
 * circuits), a route table per configuration, the HTTP server, reload and graceful shutdown.
 */
import type { Server } from 'node:http';
import type { Server as TlsServer } from 'node:tls';
import type { AddressInfo } from 'node:net';
import type { CompiledConfig } from './config/types.js';
import { runWhole, type Work } from './config/sliced-work.js';
import { buildConfigWork, buildInSlices, type BuiltConfig } from './setup/configuration-build.js';
import type { UpstreamRegistry } from './upstream/upstream.js';
import type { LookupAll } from './upstream/dns-targets.js';
import { originsOf, type CircuitRegistry } from './circuit/registry.js';
import { createEventBus, type EventBus } from './observability/events.js';
import type { MappingCache } from './mapping/types.js';
import { logEvents } from './observability/log-events.js';
import { createLogger, type Logger } from './observability/logger.js';
import { droppedLogLines } from './observability/log-output.js';
import { createRequestHandler, type RequestHandler } from './server/http-server.js';
import { applyServerLimits } from './server/limits.js';
import type { RedisConnection } from './redis/connection.js';
import type { Metrics } from './observability/metrics.js';
import type { Tracer } from './observability/trace-context.js';
import type { OtlpExporter } from './observability/otlp.js';
import type { TunnelOptions } from './endpoints/tunnel.js';
import { createAdmin, type Admin as AdminListener } from './admin/listener.js';
import { admissionStats, createRegistries, targetStats, type Registries } from './setup/registries.js';
import { closeRedis, httpCacheSources, isWaitingForRedis } from './setup/registries.js';
import { Telemetry } from './setup/telemetry.js';
import { createListeners, listenOn, type Listeners } from './setup/listeners.js';
import { warnStartOnlyChanges } from './setup/lifecycle.js';
import { drain } from './setup/drain.js';
import type { LoadedPlugins } from './plugins/types.js';
import { createConsumersWatch, type ConsumersWatch } from './setup/consumers-file.js';
import { purgeCache } from './cache/purge.js';

/** How long in-flight requests get to finish on close, unless GatewayOptions says otherwise. */
export const DRAIN_TIMEOUT_MS = 15_000;

export interface GatewayOptions {
  readonly config: CompiledConfig;
  /** The configuration's plugins, imported (`loadConfigWithPlugins`, docs/plugins.md); needed when a route runs some. */
  readonly plugins?: LoadedPlugins | undefined;
  readonly logger?: Logger;
  /** Milliseconds in-flight requests get to finish on close (15 s by default). */
  readonly drainTimeoutMs?: number;
  /** Overrides the WebSocket tunnel bounds (tests; docs/streaming.md "Tunnel limits" has the defaults). */
  readonly tunnel?: TunnelOptions;
  /** Milliseconds clock of circuits, mapping-cache TTLs and JWKS backoff, for tests; never 0. Default: the real one. */
  readonly now?: () => number;
  /** Resolves the host name targets of named upstreams (tests); default: the system resolver. */
  readonly lookup?: LookupAll;
}

export interface CloseOptions {
  /**
   * Milliseconds to go on serving (`/ready` answering 503, every answer ending its connection) before
   * the listener stops accepting (`config.shutdown.drainDelaySec` on SIGTERM); 0 by default.
   */
  readonly drainDelayMs?: number;
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
  /** Swaps in a new configuration (and its plugins, imported anew); in-flight requests finish on the old one. */
  reload(config: CompiledConfig, plugins?: GatewayOptions['plugins']): void;
  /** `reload`, built in slices of about a ms while the running configuration serves (config/sliced-work.ts). */
  reloadInSlices(config: CompiledConfig, plugins?: GatewayOptions['plugins']): Promise<void>;
  /**
   * Stops accepting (after the drain delay, if given), lets in-flight requests finish (bounded),
   * closes idle connections once they are quiet, then the pools (docs/lifecycle.md "Stopping").
   */
  close(options?: CloseOptions): Promise<void>;
}

export function createGateway(options: GatewayOptions): Gateway {
  return new PorticoGateway(options);
}

/**
 * The gateway: the registries made once per process (./setup/registries.ts), a route table per
 * configuration swapped by `reload`, the telemetry, the listeners, and the status dashboard's own
 * listener when `config.admin` is set.
 */
class PorticoGateway implements Gateway {
  readonly events: EventBus = createEventBus();
  readonly logger: Logger;
  readonly server: Server;
  private readonly registries: Registries;
  private readonly telemetry: Telemetry;
  private readonly listeners: Listeners;
  private readonly admin: AdminListener | undefined;
  private readonly inFlight = { count: 0 };
  private current: CompiledConfig;
  private deps: BuiltConfig['deps'];
  private table: BuiltConfig['table'];
  private draining = false;
  private swaps = 0;
  private acceptsTunnels = true;
  /** The consumers file reloads on its own into the served configuration's key store. */
  private readonly consumers: ConsumersWatch;

  constructor(private readonly options: GatewayOptions) {
    const logger = (this.logger = options.logger ?? createLogger());
    logEvents(this.events, logger);
    this.current = options.config;
    const registries = (this.registries = createRegistries({ ...options, events: this.events, logger }));
    const now = options.now ?? Date.now;
    this.telemetry = new Telemetry(this.events, logger, {
      inFlight: this.inFlight,
      circuits: () => registries.circuits.snapshot(),
      targets: () => targetStats(registries.upstreams, now()),
      mappingCache: () => registries.mappingCache.stats(),
      rateLimitBuckets: () => registries.rateLimiter.size,
      quotaKeys: () => registries.quotaCounters.size,
      spilledBytes: () => registries.spill.bytes,
      admission: () => admissionStats(registries.admission, this.current),
      ...httpCacheSources(registries),
      ...(registries.redis === undefined ? {} : { redisUp: () => registries.redis!.isConnected }),
      logLinesDropped: () => droppedLogLines(logger),
    });
    this.telemetry.apply(this.current);
    ({ deps: this.deps, table: this.table } = runWhole(this.buildWork(this.current, options.plugins, false)));
    const keepAliveMs = () => this.current.settings.timeouts.keepAliveSec * 1000;
    this.listeners = createListeners(this.current, this.requestHandler(), () => this.table, keepAliveMs, logger);
    this.server = this.listeners.server;
    this.admin = this.createAdmin();
    this.consumers = createConsumersWatch(() => this.deps.apiKeys?.store, logger);
    this.consumers.follow(this.current.consumersFile);
  }

  get upstreams(): UpstreamRegistry {
    return this.registries.upstreams;
  }
  get circuits(): CircuitRegistry {
    return this.registries.circuits;
  }
  get mappingCache(): MappingCache {
    return this.registries.mappingCache;
  }
  get redis(): RedisConnection | undefined {
    return this.registries.redis;
  }
  get tracer(): Tracer {
    return this.telemetry.tracer;
  }
  metrics(): Metrics | undefined {
    return this.telemetry.metrics;
  }
  config(): CompiledConfig {
    return this.current;
  }
  spanExporter(): Promise<OtlpExporter | undefined> {
    return this.telemetry.otlp;
  }

  async listen(port = this.current.settings.port, host = this.current.settings.host): Promise<AddressInfo> {
    const address = await listenOn(this.server, port, host);
    const { redirect } = this.listeners;
    if (redirect !== undefined) await listenOn(redirect, this.current.tls?.redirectPort ?? 0, host);
    await this.admin?.listen();
    return address;
  }

  redirectAddress(): AddressInfo | undefined {
    return (this.listeners.redirect?.address() as AddressInfo | null | undefined) ?? undefined;
  }

  adminAddress(): AddressInfo | undefined {
    return this.admin?.address();
  }

  reload(next: CompiledConfig, plugins?: GatewayOptions['plugins']): void {
    this.swap(next, runWhole(this.buildWork(next, plugins, true)));
  }

  reloadInSlices(next: CompiledConfig, plugins?: GatewayOptions['plugins']): Promise<void> {
    const swaps = this.swaps;
    // Built on what was served; if `reload()` swapped in another meanwhile, built again whole, in one stretch.
    const swap = (built: BuiltConfig) =>
      this.swap(next, this.swaps === swaps ? built : runWhole(this.buildWork(next, plugins, false)));
    return buildInSlices(this.registries.upstreams, this.buildWork(next, plugins, true), swap);
  }

  private swap(next: CompiledConfig, built: BuiltConfig): void {
    this.swaps++;
    built.retarget?.();
    this.table = built.table;
    this.deps = built.deps;
    this.current = next;
    this.consumers.follow(next.consumersFile);
    const { circuits, mappingCache, redis } = this.registries;
    circuits.configure(next.settings.circuitBreaker);
    circuits.retain(originsOf(next));
    mappingCache.configure(next.settings.mappingCache);
    const { server, tls } = this.listeners;
    applyServerLimits(server, next.settings);
    if (tls !== undefined && next.tls !== undefined) tls.apply(server as unknown as TlsServer, next.tls);
    const running = { redis: redis !== undefined, tls: tls !== undefined };
    warnStartOnlyChanges(this.options.config, next, running, this.logger);
    this.telemetry.apply(next);
    this.admin?.configure(next.settings.admin);
  }

  async close(options: CloseOptions = {}): Promise<void> {
    this.draining = true;
    this.consumers.close();
    const { server, listener, redirect, upgrades, connections } = this.listeners;
    const stopOthers = async () => {
      this.acceptsTunnels = false;
      redirect?.close();
      redirect?.closeAllConnections();
      await this.admin?.close();
    };
    const { inFlight, logger } = this;
    const { streams } = this.registries;
    const timing = { delayMs: options.drainDelayMs ?? 0, limitMs: this.options.drainTimeoutMs ?? DRAIN_TIMEOUT_MS };
    await drain({ server, listener, connections, upgrades, streams, inFlight, stopOthers }, timing, logger);
    await this.registries.upstreams.close();
    await closeRedis(this.registries);
    await this.telemetry.close();
  }

  /** The one handler of every request; it reads the route table and the settings of the moment. */
  private requestHandler(): RequestHandler {
    return createRequestHandler({
      current: () => this.table,
      events: this.events,
      logger: this.logger,
      tracer: this.telemetry.tracer,
      isDraining: () => this.draining,
      acceptsTunnels: () => this.acceptsTunnels,
      isWaitingForRedis: () => isWaitingForRedis(this.registries),
      inFlight: this.inFlight,
      cors: () => this.deps.cors,
      metrics: this.telemetry.serveMetrics,
      // TLS stays on or off for the process's life (a reload cannot switch it): plain HTTP has no check.
      ...(this.current.tls === undefined
        ? {}
        : { misdirected: (req) => this.listeners.tls?.misdirected(req) === true }),
    });
  }

  /** The status dashboard (docs/dashboard.md) on its own listener, only with `config.admin`: else nothing subscribes. */
  private createAdmin(): AdminListener | undefined {
    const settings = this.current.settings.admin;
    if (settings === undefined) return undefined;
    const { circuits, upstreams, mappingCache, quotaUsage } = this.registries;
    const now = this.options.now ?? Date.now;
    return createAdmin({
      settings,
      events: this.events,
      logger: this.logger,
      metrics: this.telemetry.adminMetrics,
      sources: {
        config: () => this.current,
        circuits: () => circuits.snapshot(),
        targets: () => targetStats(upstreams, now()),
        mappingCache: () => mappingCache.stats(),
        inFlight: this.inFlight,
        callers: (n) => quotaUsage.top(n),
        admission: () => admissionStats(this.registries.admission, this.current),
        ...httpCacheSources(this.registries),
      },
      // The shared level of the configuration being served: none while cache.redis is off.
      purge: (target) => purgeCache(this.registries.httpCache, this.deps.sharedCacheLevel, target),
    });
  }

  /** `config` built beside the running one (a reload keeps what did not change); the registries are process-wide. */
  private buildWork(config: CompiledConfig, plugins: GatewayOptions['plugins'], reload: boolean): Work<BuiltConfig> {
    this.registries.upstreams.useTls(config.upstreamTls); // before the pipelines take their upstreams
    const { events, logger, options } = this;
    const tunnel = options.tunnel === undefined ? {} : { tunnel: options.tunnel };
    const served = reload ? { config: this.current, built: { deps: this.deps, table: this.table } } : undefined;
    return buildConfigWork(config, { ...this.registries, events, logger, ...tunnel, plugins }, served);
  }
}
