/**
 * Redis: 'redis:response', 'redis:error' and 'redis:fallback' into `portico_redis_duration_seconds`
 * and the error and fallback counters; whether the connection is up read at scrape time.
 */
import { createSeriesHistogram } from '../series.js';
import { counters, scraped } from './shared.js';
import type { MetricsModule } from './types.js';

/** Seconds; a Redis round trip on a local network is well under a millisecond. */
const REDIS_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25];

// prettier-ignore
const SERIES = {
  redisErrors: ['portico_redis_errors_total', 'Redis commands that failed, by use and kind (timeout, connection, reply)', ['use', 'kind']],
  redisFallbacks: ['portico_redis_fallbacks_total', 'Decisions made without Redis while it was down or slow (local buckets, mapping cache without its shared level), by use', ['use']],
} as const;

export const redisMetrics: MetricsModule = (registry, sources) => {
  const up = sources.redisUp;
  // prettier-ignore
  if (up !== undefined)
    scraped(registry, [['portico_redis_up', 'Whether the connection to Redis (config.redis) is established: 1 or 0', () => (up() ? 1 : 0), 'gauge']], 'min');
  const redisDuration = createSeriesHistogram(registry, {
    name: 'portico_redis_duration_seconds',
    help: 'Round trip of answered Redis commands, by use (rate-limit, mapping-cache, quota, http-cache)',
    buckets: REDIS_BUCKETS,
  });
  const { redisErrors, redisFallbacks } = counters(registry, SERIES);
  return {
    'redis:response': (e) =>
      redisDuration.observe(
        redisDuration.series(e.use, () => ({ use: e.use })),
        e.durationMs / 1000,
      ),
    'redis:error': (e) => redisErrors.inc({ use: e.use, kind: e.kind }),
    'redis:fallback': (e) => redisFallbacks.inc({ use: e.use }),
  };
};
