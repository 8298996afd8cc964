/**
 * Response mapping: 'mapping:fail' into `portico_mapping_failures_total`; the mapping cache's
 * counts and size read at scrape time into `portico_mapping_cache_*`.
 */
import type { Registry } from 'prom-client';
import { counters, routeLabel, scraped } from './shared.js';
import type { MetricsModule, MetricsSources } from './types.js';

// prettier-ignore
const SERIES = {
  mappingFailures: ['portico_mapping_failures_total', 'Failed mapping calls whose result was left out of a response (call failed, non-2xx, not JSON, circuit open), by route and tag', ['route', 'tag']],
} as const;

export const mappingMetrics: MetricsModule = (registry, sources) => {
  const { mappingFailures } = counters(registry, SERIES);
  if (sources.mappingCache !== undefined) mappingCacheSeries(registry, sources.mappingCache);
  return {
    'mapping:fail': (e) => mappingFailures.inc({ route: routeLabel(e.routeId), tag: e.tag }, e.calls),
  };
};

/** The cache keeps its own counts; these series copy them at scrape time. */
function mappingCacheSeries(registry: Registry, stats: NonNullable<MetricsSources['mappingCache']>): void {
  // prettier-ignore
  scraped(registry, [
    ['portico_mapping_cache_hits_total', 'Mapping results served from the cache', () => stats().hits, 'counter'],
    ['portico_mapping_cache_misses_total', 'Mapping cache lookups that made a call', () => stats().misses, 'counter'],
    ['portico_mapping_cache_shared_hits_total', 'Mapping results not cached in this process but found in Redis (mappingCache.store: redis)', () => stats().sharedHits ?? 0, 'counter'],
    ['portico_mapping_cache_coalesced_total', 'Mapping cache misses that joined a call already running for the URL', () => stats().coalesced ?? 0, 'counter'],
    ['portico_mapping_cache_evictions_total', 'Mapping cache entries evicted to make room (maxSize)', () => stats().evictions, 'counter'],
    ['portico_mapping_cache_expirations_total', 'Mapping cache entries dropped when their TTL ran out', () => stats().expirations ?? 0, 'counter'],
    ['portico_mapping_cache_entries', 'Entries in the mapping cache', () => stats().size, 'gauge'],
  ]);
}
