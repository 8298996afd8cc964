/**
 * Response mapping: 'mapping:fail' into `portico_mapping_failures_total`; the mapping cache's
 * counts and size read at scrape time into `portico_mapping_cache_*`.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { routeLabel } from './shared.js';
import type { MetricsModule, MetricsSources } from './types.js';

export const mappingMetrics: MetricsModule = (registry, sources) => {
  const mappingFailures = new Counter({
    registers: [registry],
    name: 'portico_mapping_failures_total',
    help: 'Failed mapping calls whose result was left out of a response (call failed, non-2xx, not JSON, circuit open), by route and tag',
    labelNames: ['route', 'tag'] as const,
  });
  if (sources.mappingCache !== undefined) mappingCacheSeries(registry, sources.mappingCache);
  return {
    'mapping:fail': (e) => mappingFailures.inc({ route: routeLabel(e.routeId), tag: e.tag }, e.calls),
  };
};

/** The cache keeps its own counts; these series copy them at scrape time. */
function mappingCacheSeries(registry: Registry, stats: NonNullable<MetricsSources['mappingCache']>): void {
  const on = { registers: [registry] };
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
