/**
 * The HTTP cache of routes with `cache:` (layers/cache.ts): answers by route and result (hit,
 * stale, miss), and the entries and bytes stored, read at scrape time.
 */
import { counters, routeLabel, scraped } from './shared.js';
import type { MetricsModule } from './types.js';

// prettier-ignore
const SERIES = {
  lookups: ['portico_cache_requests_total', 'Requests on cached routes by result: hit (from the store), stale (a stale entry served or replaced), revalidated (a stale entry a 304 refreshed), miss', ['route', 'result']],
} as const;

export const cacheMetrics: MetricsModule = (registry, sources) => {
  const { httpCache } = sources;
  // prettier-ignore
  if (httpCache !== undefined)
    scraped(registry, [
      ['portico_cache_entries', 'Answers stored in the HTTP cache now', () => httpCache().entries, 'gauge'],
      ['portico_cache_bytes', 'Bytes of answers stored in the HTTP cache now, heads included', () => httpCache().bytes, 'gauge'],
    ]);
  const { lookups } = counters(registry, SERIES);
  return {
    'cache:lookup': (e) => lookups.inc({ route: routeLabel(e.routeId), result: e.result }),
  };
};
