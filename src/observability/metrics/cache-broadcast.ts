/**
 * The HTTP cache's broadcast of purges and invalidations to the other replicas
 * (cache/broadcast.ts, docs/caching.md "Every replica's memory"): messages sent and applied by
 * cause, messages ignored, times the memory level was dropped whole, and whether the subscription
 * is in place. All read at scrape time from the broadcast's own counts.
 */
import { scraped, scrapedPerItem } from './shared.js';
import type { CacheBroadcastStats, MetricsModule } from './types.js';

const CAUSES = ['purge', 'invalidation'] as const;
const RESETS = ['resubscribed', 'backlog'] as const;

export const cacheBroadcastMetrics: MetricsModule = (registry, sources) => {
  const read = sources.cacheBroadcast;
  if (read === undefined) return {};
  const perCause = (name: string, help: string, pick: (s: CacheBroadcastStats) => Record<string, number>) =>
    scrapedPerItem(
      registry,
      () => {
        const counts = pick(read());
        return CAUSES.map((cause) => ({ cause, count: counts[cause] ?? 0 }));
      },
      (c) => ({ cause: c.cause }),
      ['cause'],
      { name, help, pick: (c) => c.count, type: 'counter' },
    );
  perCause(
    'portico_cache_broadcast_sent_total',
    'Purges and invalidations this replica told the others through Redis, by cause (purge: the admin API; invalidation: an unsafe request)',
    (s) => s.sent,
  );
  perCause(
    'portico_cache_broadcast_received_total',
    "Other replicas' purges and invalidations applied to this replica's memory, by cause",
    (s) => s.received,
  );
  scrapedPerItem(
    registry,
    () => {
      const { resets } = read();
      return RESETS.map((reason) => ({ reason, count: resets[reason] }));
    },
    (r) => ({ reason: r.reason }),
    ['reason'],
    {
      name: 'portico_cache_broadcast_resets_total',
      help: 'Times the whole memory level was dropped: the subscription came back after an outage (purges may have been missed), or too many purges arrived at once',
      pick: (r) => r.count,
      type: 'counter',
    },
  );
  // prettier-ignore
  scraped(registry, [
    ['portico_cache_broadcast_malformed_total', 'Messages on the cache channel ignored: too large, or not a message of this version', () => read().malformed, 'counter'],
    ['portico_cache_broadcast_subscribed', '1 while this replica hears the purges of the others (its subscription is in place), else 0', () => (read().subscribed ? 1 : 0), 'gauge'],
  ], 'min');
  return {};
};
