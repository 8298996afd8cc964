/**
 * Prometheus metrics (`GET /metrics`). The only module that imports prom-client: the hot path
 * emits events (events.ts) and this module subscribes to them; state held elsewhere (circuits,
 * the mapping cache, requests in flight) is read at scrape time, so it costs nothing per request.
 *
 * Names are `portico_` + snake_case + unit suffix; labels are route templates (`/users/{id}`),
 * methods, status classes, origins and kinds, never raw paths or user data, so the series stay bounded.
 * Process metrics use the standard unprefixed names (`process_*`, `nodejs_*`) so that
 * ready-made dashboards work.
 */
import type { ServerResponse } from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { EventBus, GatewayEvents } from './events.js';
import { sendError } from '../response/send-error.js';
import { createSeriesHistogram } from './series.js';

/** Seconds; dense at the low end, where a gateway's own latency lives. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The route label of a request that matched no route. */
export const UNMATCHED = 'unmatched';

/** Seconds; a Redis round trip on a local network is well under a millisecond. */
const REDIS_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25];

const CIRCUIT_STATES = ['closed', 'open', 'half-open'] as const;

/** One target of a named upstream, as the metrics read it. */
export interface TargetStats {
  readonly upstream: string;
  readonly target: string;
  readonly requests: number;
  readonly failures: number;
  readonly ejections: number;
  readonly ejected: boolean;
  readonly healthy: boolean;
  readonly inFlight: number;
}

/** State read at scrape time; every source is optional. */
export interface MetricsSources {
  readonly inFlight?: { readonly count: number };
  readonly circuits?: () => Iterable<{ readonly origin: string; readonly state: string }>;
  readonly mappingCache?: () => {
    readonly hits: number;
    readonly misses: number;
    readonly sharedHits?: number;
    readonly coalesced?: number;
    readonly evictions: number;
    readonly expirations?: number;
    readonly size: number;
  };
  readonly rateLimitBuckets?: () => number;
  /** The targets of named upstreams, with their counts. */
  readonly targets?: () => Iterable<TargetStats>;
  /** Whether the Redis connection (config.redis) is established; absent without config.redis. */
  readonly redisUp?: () => boolean;
  /** Log lines dropped because the log output could not keep up (log-output.ts `droppedLogLines`). */
  readonly logLinesDropped?: () => number;
}

export interface Metrics {
  readonly registry: Registry;
  /** Subscribes to the bus (idempotent). */
  enable(): void;
  /** Unsubscribes: a gateway with `telemetry.metrics: false` pays nothing per request. */
  disable(): void;
  readonly enabled: boolean;
  /** The exposition text. */
  render(): Promise<string>;
  /** Answers GET /metrics. */
  serve(res: ServerResponse, render?: () => Promise<string>): void;
}

/** The route template of a route id (`GET /users/{id}` -> `/users/{id}`). */
function routeLabel(routeId: string | undefined): string {
  if (routeId === undefined) return UNMATCHED;
  const space = routeId.indexOf(' ');
  return space < 0 ? routeId : routeId.slice(space + 1);
}

function statusClass(status: number): string {
  return status >= 100 && status < 600 ? `${Math.floor(status / 100)}xx` : 'other';
}

/** Creates the registry of one gateway process and its collectors (not yet subscribed). */
export function createMetrics(events: EventBus, sources: MetricsSources = {}): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const on = { registers: [registry] };

  // The two per-request series are kept by series.ts (no prom-client work per request).
  const duration = createSeriesHistogram(registry, {
    name: 'portico_request_duration_seconds',
    help: 'Time from request to response end, by route template, method and status class',
    buckets: LATENCY_BUCKETS,
    counter: { name: 'portico_requests_total', help: 'Requests answered, by route template, method and status class' },
  });
  const aborted = new Counter({
    ...on,
    name: 'portico_requests_aborted_total',
    help: 'Requests whose client left before the response ended',
    labelNames: ['route'] as const,
  });
  const gatewayErrors = new Counter({
    ...on,
    name: 'portico_gateway_errors_total',
    help: 'Responses the gateway generated itself, by error code (X-Portico-Error)',
    labelNames: ['code'] as const,
  });
  const upstreamDuration = createSeriesHistogram(registry, {
    name: 'portico_upstream_duration_seconds',
    help: 'Time until an upstream answered with its response head, by route, origin and call (backend, mapping, auth, websocket)',
    buckets: LATENCY_BUCKETS,
  });
  const upstreamErrors = new Counter({
    ...on,
    name: 'portico_upstream_errors_total',
    help: 'Upstream calls without an answer, by route, origin and kind (timeout, dns, refused, reset, aborted, other)',
    labelNames: ['route', 'origin', 'kind'] as const,
  });
  const circuitTransitions = new Counter({
    ...on,
    name: 'portico_circuit_transitions_total',
    help: 'Circuit state changes, by origin and new state',
    labelNames: ['origin', 'state'] as const,
  });
  const mappingCalls = new Counter({
    ...on,
    name: 'portico_mapping_calls_total',
    help: 'Mapping calls answered, by route and origin',
    labelNames: ['route', 'origin'] as const,
  });
  const retries = new Counter({
    ...on,
    name: 'portico_upstream_retries_total',
    help: 'Backend calls sent again to another target of a named upstream, by route and upstream',
    labelNames: ['route', 'origin'] as const,
  });
  const aggregateFailures = new Counter({
    ...on,
    name: 'portico_aggregate_backend_failures_total',
    help: 'Backends of an aggregated route that gave no usable answer, by route and service',
    labelNames: ['route', 'service'] as const,
  });
  const mappingFailures = new Counter({
    ...on,
    name: 'portico_mapping_failures_total',
    help: 'Failed mapping calls whose result was left out of a response (call failed, non-2xx, not JSON, circuit open), by route and tag',
    labelNames: ['route', 'tag'] as const,
  });
  const authResults = new Counter({
    ...on,
    name: 'portico_auth_results_total',
    help: 'Authentication outcomes (ok, missing, invalid, denied, forbidden, unavailable), by route',
    labelNames: ['route', 'outcome'] as const,
  });
  const openStreams = new Gauge({
    ...on,
    name: 'portico_open_streams',
    help: 'Open SSE streams and WebSocket tunnels, by route and kind',
    labelNames: ['route', 'kind'] as const,
  });
  const streamDuration = new Histogram({
    ...on,
    name: 'portico_stream_duration_seconds',
    help: 'Lifetime of closed SSE streams and WebSocket tunnels',
    labelNames: ['route', 'kind'] as const,
    buckets: [1, 10, 60, 300, 1800, 3600, 21600],
  });
  const reloads = new Counter({
    ...on,
    name: 'portico_config_reloads_total',
    help: 'Configuration reloads, by result (ok, rejected)',
    labelNames: ['result'] as const,
  });
  const rateLimited = new Counter({
    ...on,
    name: 'portico_rate_limited_total',
    help: 'Requests refused with 429 by the rate limiter, by route',
    labelNames: ['route'] as const,
  });

  // Read at scrape time from the state their owners keep (no per-request cost).
  if (sources.inFlight !== undefined) {
    const inFlight = sources.inFlight;
    new Gauge({
      ...on,
      name: 'portico_requests_in_flight',
      help: 'Requests being served now',
      collect() {
        this.set(inFlight.count);
      },
    });
  }
  if (sources.circuits !== undefined) {
    const circuits = sources.circuits;
    new Gauge({
      ...on,
      name: 'portico_circuit_state',
      help: 'Circuit state per backend origin: 1 for the current state (closed, open, half-open), 0 for the others',
      labelNames: ['origin', 'state'] as const,
      aggregator: 'max',
      collect() {
        this.reset();
        for (const c of circuits())
          for (const s of CIRCUIT_STATES) this.set({ origin: c.origin, state: s }, c.state === s ? 1 : 0);
      },
    });
  }
  if (sources.targets !== undefined) {
    const targets = sources.targets;
    const perTarget = (name: string, help: string, pick: (t: TargetStats) => number, type: 'counter' | 'gauge') => {
      const config = {
        ...on,
        name,
        help,
        labelNames: ['upstream', 'target'] as const,
        collect(this: Counter<'upstream' | 'target'> | Gauge<'upstream' | 'target'>) {
          this.reset();
          for (const t of targets()) {
            const labels = { upstream: t.upstream, target: t.target };
            if (this instanceof Gauge) this.set(labels, pick(t));
            else this.inc(labels, pick(t));
          }
        },
      };
      return type === 'counter' ? new Counter(config) : new Gauge(config);
    };
    perTarget(
      'portico_upstream_target_requests_total',
      'Calls answered or failed, per target of a named upstream',
      (t) => t.requests,
      'counter',
    );
    perTarget(
      'portico_upstream_target_errors_total',
      'Calls without an answer or with a 5xx, per target',
      (t) => t.failures,
      'counter',
    );
    perTarget(
      'portico_upstream_target_ejections_total',
      'Times a target was ejected (outlier detection)',
      (t) => t.ejections,
      'counter',
    );
    perTarget(
      'portico_upstream_target_ejected',
      '1 while a target is ejected, else 0',
      (t) => (t.ejected ? 1 : 0),
      'gauge',
    );
    perTarget(
      'portico_upstream_target_healthy',
      '1 while the active health checks find a target healthy (always 1 without checks), else 0',
      (t) => (t.healthy ? 1 : 0),
      'gauge',
    );
    perTarget('portico_upstream_target_in_flight', 'Calls on a target now', (t) => t.inFlight, 'gauge');
  }
  if (sources.mappingCache !== undefined) {
    const stats = sources.mappingCache;
    const fromStats = (name: string, help: string, pick: (s: ReturnType<typeof stats>) => number) =>
      new Counter({
        ...on,
        name,
        help,
        collect() {
          this.reset();
          this.inc(pick(stats()));
        },
      });
    fromStats('portico_mapping_cache_hits_total', 'Mapping results served from the cache', (s) => s.hits);
    fromStats('portico_mapping_cache_misses_total', 'Mapping cache lookups that made a call', (s) => s.misses);
    fromStats(
      'portico_mapping_cache_shared_hits_total',
      'Mapping results not cached in this process but found in Redis (mappingCache.store: redis)',
      (s) => s.sharedHits ?? 0,
    );
    fromStats(
      'portico_mapping_cache_coalesced_total',
      'Mapping cache misses that joined a call already running for the URL',
      (s) => s.coalesced ?? 0,
    );
    fromStats(
      'portico_mapping_cache_evictions_total',
      'Mapping cache entries evicted to make room (maxSize)',
      (s) => s.evictions,
    );
    fromStats(
      'portico_mapping_cache_expirations_total',
      'Mapping cache entries dropped when their TTL ran out',
      (s) => s.expirations ?? 0,
    );
    new Gauge({
      ...on,
      name: 'portico_mapping_cache_entries',
      help: 'Entries in the mapping cache',
      collect() {
        this.set(stats().size);
      },
    });
  }
  if (sources.rateLimitBuckets !== undefined) {
    const size = sources.rateLimitBuckets;
    new Gauge({
      ...on,
      name: 'portico_rate_limit_buckets',
      help: 'Client buckets held by the rate limiter',
      collect() {
        this.set(size());
      },
    });
  }

  if (sources.redisUp !== undefined) {
    const up = sources.redisUp;
    new Gauge({
      ...on,
      name: 'portico_redis_up',
      help: 'Whether the connection to Redis (config.redis) is established: 1 or 0',
      aggregator: 'min',
      collect() {
        this.set(up() ? 1 : 0);
      },
    });
  }

  if (sources.logLinesDropped !== undefined) {
    const dropped = sources.logLinesDropped;
    new Counter({
      ...on,
      name: 'portico_log_lines_dropped_total',
      help: 'Log lines (access lines included) dropped because the log output could not keep up',
      collect() {
        this.reset();
        this.inc(dropped());
      },
    });
  }

  const redisDuration = createSeriesHistogram(registry, {
    name: 'portico_redis_duration_seconds',
    help: 'Round trip of answered Redis commands, by use (rate-limit, mapping-cache)',
    buckets: REDIS_BUCKETS,
  });
  const redisErrors = new Counter({
    ...on,
    name: 'portico_redis_errors_total',
    help: 'Redis commands that failed, by use and kind (timeout, connection, reply)',
    labelNames: ['use', 'kind'] as const,
  });
  const redisFallbacks = new Counter({
    ...on,
    name: 'portico_redis_fallbacks_total',
    help: 'Decisions made without Redis while it was down or slow (local buckets, mapping cache without its shared level), by use',
    labelNames: ['use'] as const,
  });

  const handlers: { [K in keyof GatewayEvents]?: (e: GatewayEvents[K]) => void } = {
    'request:end': (e) => {
      // Keyed by status class, not status: 200 and 204 are one series.
      const series = duration.series(
        `${e.status >= 100 && e.status < 600 ? (e.status / 100) | 0 : 0} ${e.method} ${e.routeId ?? ''}`,
        () => ({ route: routeLabel(e.routeId), method: e.method, status_class: statusClass(e.status) }),
      );
      duration.observe(series, e.durationMs / 1000);
      if (e.aborted) aborted.inc({ route: routeLabel(e.routeId) });
      if (e.errorCode !== undefined) {
        gatewayErrors.inc({ code: e.errorCode });
        if (e.errorCode === 'GW_RATE_LIMITED') rateLimited.inc({ route: routeLabel(e.routeId) });
      }
    },
    'upstream:response': (e) => {
      const series = upstreamDuration.series(`${e.call} ${e.origin} ${e.routeId}`, () => ({
        route: routeLabel(e.routeId),
        origin: e.origin,
        call: e.call,
      }));
      upstreamDuration.observe(series, e.durationMs / 1000);
      if (e.call === 'mapping') mappingCalls.inc({ route: routeLabel(e.routeId), origin: e.origin });
    },
    'upstream:error': (e) => upstreamErrors.inc({ route: routeLabel(e.routeId), origin: e.origin, kind: e.kind }),
    'circuit:change': (e) => circuitTransitions.inc({ origin: e.origin, state: e.to }),
    'mapping:fail': (e) => mappingFailures.inc({ route: routeLabel(e.routeId), tag: e.tag }, e.calls),
    'upstream:retry': (e) => retries.inc({ route: routeLabel(e.routeId), origin: e.origin }),
    'aggregate:incomplete': (e) => {
      for (const f of e.failed) aggregateFailures.inc({ route: routeLabel(e.routeId), service: f.service });
    },
    'auth:result': (e) => authResults.inc({ route: routeLabel(e.routeId), outcome: e.outcome }),
    'stream:open': (e) => openStreams.inc({ route: routeLabel(e.routeId), kind: e.kind }),
    'stream:close': (e) => {
      const labels = { route: routeLabel(e.routeId), kind: e.kind };
      openStreams.dec(labels);
      streamDuration.observe(labels, e.durationMs / 1000);
    },
    'config:reload': (e) => reloads.inc({ result: e.ok ? 'ok' : 'rejected' }),
    'redis:response': (e) =>
      redisDuration.observe(
        redisDuration.series(e.use, () => ({ use: e.use })),
        e.durationMs / 1000,
      ),
    'redis:error': (e) => redisErrors.inc({ use: e.use, kind: e.kind }),
    'redis:fallback': (e) => redisFallbacks.inc({ use: e.use }),
  };

  let unsubscribe: (() => void)[] | undefined;
  const metrics: Metrics = {
    registry,
    get enabled() {
      return unsubscribe !== undefined;
    },
    enable() {
      if (unsubscribe !== undefined) return;
      unsubscribe = [];
      for (const name of Object.keys(handlers) as (keyof GatewayEvents)[]) {
        unsubscribe.push(events.on(name, handlers[name] as (e: GatewayEvents[typeof name]) => void));
      }
    },
    disable() {
      for (const off of unsubscribe ?? []) off();
      unsubscribe = undefined;
    },
    render: () => registry.metrics(),
    serve(res, render = metrics.render) {
      render().then(
        (text) => {
          const body = Buffer.from(text);
          res.writeHead(200, {
            'content-type': registry.contentType,
            'content-length': body.length,
            'cache-control': 'no-store',
          });
          res.end(body);
        },
        () => sendError(res, 'GW_INTERNAL'),
      );
    },
  };
  return metrics;
}
