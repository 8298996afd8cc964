/**
 * The HTTP cache of routes with `cache:` (layers/cache.ts): answers by route and result (hit,
 * stale, miss), and the entries and bytes stored, read at scrape time.
 */
import { routeLabel, scraped, scrapedPerItem } from './shared.js';
import type { MetricsModule } from './types.js';

type LookupResult = 'hit' | 'stale' | 'miss' | 'revalidated';

/** One route's count of one result. */
interface Lookups {
  readonly route: string;
  readonly result: LookupResult;
  count: number;
}

export const cacheMetrics: MetricsModule = (registry, sources) => {
  const { httpCache } = sources;
  // prettier-ignore
  if (httpCache !== undefined)
    scraped(registry, [
      ['portico_cache_entries', 'Answers stored in the HTTP cache now', () => httpCache().entries, 'gauge'],
      ['portico_cache_bytes', 'Bytes of answers stored in the HTTP cache now, heads included', () => httpCache().bytes, 'gauge'],
    ]);
  // Counted here and read at scrape time: a counter's inc() with labels hashes them on every call,
  // which a hit, answered in a few microseconds, would pay each time.
  const byRoute = new Map<string, Map<LookupResult, Lookups>>();
  const all: Lookups[] = [];
  scrapedPerItem(
    registry,
    () => all,
    (l) => ({ route: l.route, result: l.result }),
    ['route', 'result'],
    {
      name: 'portico_cache_requests_total',
      help: 'Requests on cached routes by result: hit (from the store), stale (a stale entry served or replaced), revalidated (a stale entry a 304 refreshed), miss',
      pick: (l) => l.count,
      type: 'counter',
    },
  );
  return {
    'cache:lookup': (e) => {
      let results = byRoute.get(e.routeId);
      if (results === undefined) byRoute.set(e.routeId, (results = new Map()));
      let lookups = results.get(e.result);
      if (lookups === undefined) {
        lookups = { route: routeLabel(e.routeId), result: e.result, count: 0 };
        results.set(e.result, lookups);
        all.push(lookups);
      }
      lookups.count++;
    },
  };
};
