/**
 * The status document (`GET /api/status`, docs/dashboard.md): the live counters of live-stats.ts
 * joined with the state other parts of the gateway keep (routes, circuits, targets, the mapping
 * cache, the callers nearest their limits), read when asked for, so none of it costs anything per request.
 */
import cluster from 'node:cluster';
import type { CompiledConfig } from '../config/types.js';
import { sharedCacheSettings } from '../config/schema.js';
import { describeRoute } from '../cli/routes-table.js';
import type { MappingCacheStats } from '../mapping/types.js';
import type { CircuitSnapshot } from '../circuit/registry.js';
import type { AdmissionStats, TargetStats } from '../observability/metrics.js';
import type { CacheBroadcastStats } from '../observability/metrics/types.js';
import { packageVersion } from '../ops/package-version.js';
import type { LiveStats } from './live-stats.js';
import type { BackendStatus, CallerStatus, HttpCacheStatus, RouteStatus, StatusDocument } from './types.js';

/** The gateway's state the status document reads; each is called once per document. */
export interface StatusSources {
  config(): CompiledConfig;
  circuits(): readonly CircuitSnapshot[];
  targets(): Iterable<TargetStats>;
  mappingCache(): MappingCacheStats;
  readonly inFlight: { readonly count: number };
  /** The callers nearest their limits, fullest first (layers/quota-usage.ts); none when absent. */
  callers?(n: number): readonly CallerStatus[];
  /** The limits of admission control with their counts; absent: shown as off. */
  admission?(): Iterable<AdmissionStats>;
  /** What the HTTP cache stores now; absent: shown as empty. */
  httpCache?(): { readonly entries: number; readonly bytes: number };
  /** The counts of the HTTP cache's broadcast to other replicas (cache/broadcast.ts); absent without it. */
  cacheBroadcast?(): CacheBroadcastStats;
}

/** Callers shown: a few, whatever the number of consumers, so the page and the API stay small. */
export const CALLERS_SHOWN = 10;

/** Builds status documents; `now` is wall-clock milliseconds. */
export function createStatusReader(
  live: LiveStats,
  sources: StatusSources,
  now: () => number = Date.now,
): () => StatusDocument {
  const startedAt = now();
  const version = packageVersion();
  const worker = cluster.isWorker ? cluster.worker?.id : undefined;
  return () => {
    const config = sources.config();
    const settings = config.settings;
    const routes = config.routes.map((r): RouteStatus => {
      const d = describeRoute(config, r);
      return {
        id: r.id,
        methods: d.methods,
        path: d.path,
        backend: d.backend,
        auth: d.auth,
        kind: r.kind,
        mapping: r.mapping.map((m) => m.tag),
        stream: r.kind === 'sse' || r.kind === 'websocket' ? r.kind : null,
        lastMinute: live.routeTraffic(r.id),
        openStreams: live.routeStreams(r.id),
        split:
          r.split?.arms.map((a) => ({ arm: a.name, weight: a.weight, requests: live.armRequests(r.id, a.name) })) ??
          null,
        mirror:
          r.mirror === undefined
            ? null
            : { service: r.mirror.service, percent: r.mirror.percent, ...live.mirrorTotals(r.id) },
      };
    });
    const backends = backendsOf(config, sources, live);
    live.prune(new Set(routes.map((r) => r.id)), new Set(backends.map((b) => b.origin)));
    const cache = sources.mappingCache();
    const lookups = cache.hits + cache.misses;
    const traffic = live.traffic();
    const reloads = live.reloads();
    return {
      gateway: {
        version,
        node: process.version,
        pid: process.pid,
        ...(worker === undefined ? {} : { worker }),
        startedAt: new Date(startedAt).toISOString(),
        uptimeSec: Math.floor((now() - startedAt) / 1000),
        configFile: config.file,
        inFlight: sources.inFlight.count,
      },
      reloads: { last: reloads[0] ?? null, history: reloads },
      traffic,
      routes,
      circuitBreaker: { enabled: settings.circuitBreaker.enabled },
      backends,
      mappingCache: {
        enabled: settings.mappingCache.enabled,
        ...cache,
        hitRatio: lookups === 0 ? null : Math.round((cache.hits / lookups) * 1000) / 1000,
      },
      rateLimit: {
        enabled: settings.rateLimit.enabled || config.routes.some((r) => r.rateLimit?.enabled === true),
        rejectedLastMinute: traffic.lastMinute.rateLimited,
        rejectedTotal: live.rateLimitedTotal,
      },
      quotas: { enabled: settings.quotas !== undefined || config.routes.some((r) => r.quota?.enabled === true) },
      callers: sources.callers?.(CALLERS_SHOWN) ?? [],
      streams: live.openStreams(),
      admission: admissionOf(sources),
      httpCache: httpCacheOf(config, sources, live),
      plugins: config.plugins.map((p) => ({ name: p.name, module: p.module, ...live.plugin(p.name) })),
      errors: live.errors(),
    };
  };
}

function httpCacheOf(config: CompiledConfig, sources: StatusSources, live: LiveStats): HttpCacheStatus {
  const results = live.cacheResults();
  const n = (result: string) => results.get(result) ?? 0;
  const hits = n('hit');
  const lookups = hits + n('miss') + n('stale') + n('revalidated');
  const stored = sources.httpCache?.() ?? { entries: 0, bytes: 0 };
  return {
    enabled: config.routes.some((r) => r.cache !== undefined),
    shared: config.settings.redis !== undefined && sharedCacheSettings(config.settings.cache) !== undefined,
    hits,
    misses: n('miss'),
    stale: n('stale'),
    revalidated: n('revalidated'),
    hitRatio: lookups === 0 ? null : Math.round((hits / lookups) * 1000) / 1000,
    entries: stored.entries,
    bytes: stored.bytes,
    broadcast: broadcastOf(sources.cacheBroadcast?.()),
  };
}

/** The broadcast's counts, each summed over its causes or reasons; null without a broadcast. */
function broadcastOf(stats: CacheBroadcastStats | undefined): HttpCacheStatus['broadcast'] {
  if (stats === undefined) return null;
  return {
    subscribed: stats.subscribed,
    sent: stats.sent.purge + stats.sent.invalidation,
    received: stats.received.purge + stats.received.invalidation,
    resets: stats.resets.resubscribed + stats.resets.backlog,
  };
}

function admissionOf(sources: StatusSources): StatusDocument['admission'] {
  const limits = sources.admission === undefined ? [] : [...sources.admission()];
  return { enabled: limits.length > 0, limits };
}

/** One entry per circuit (every origin the configuration calls), with its targets when it is a named upstream. */
function backendsOf(config: CompiledConfig, sources: StatusSources, live: LiveStats): BackendStatus[] {
  const users = new Map<string, string[]>();
  const use = (origin: string, routeId: string) => {
    const list = users.get(origin) ?? [];
    if (!list.includes(routeId)) list.push(routeId);
    users.set(origin, list);
  };
  for (const r of config.routes) {
    use(r.origin.key, r.id);
    for (const b of r.backends) use(b.origin.key, r.id);
    for (const m of r.mapping) use(m.origin.key, r.id);
    for (const a of r.split?.arms ?? []) use(a.origin.key, r.id);
  }
  const targets = new Map<string, TargetStats[]>();
  for (const t of sources.targets()) {
    const list = targets.get(t.upstream);
    if (list === undefined) targets.set(t.upstream, [t]);
    else list.push(t);
  }
  return sources.circuits().map((c): BackendStatus => {
    const own = targets.get(c.origin);
    return {
      origin: c.origin,
      circuit: { state: c.state, consecutiveFailures: c.consecutiveFailures },
      ...(own === undefined
        ? {}
        : {
            targets: own.map((t) => ({
              target: t.target,
              healthy: t.healthy,
              ejected: t.ejected,
              requests: t.requests,
              failures: t.failures,
              inFlight: t.inFlight,
            })),
          }),
      routes: users.get(c.origin) ?? [],
      lastMinute: live.backendCalls(c.origin),
    };
  });
}
