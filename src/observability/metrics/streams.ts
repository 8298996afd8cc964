/**
 * SSE streams and WebSocket tunnels: 'stream:open' and 'stream:close' into `portico_open_streams`,
 * and each closed stream's lifetime into `portico_stream_duration_seconds`.
 */
import { gauges, histogram, routeLabel } from './shared.js';
import type { MetricsModule } from './types.js';

// prettier-ignore
const SERIES = {
  openStreams: ['portico_open_streams', 'Open SSE streams and WebSocket tunnels, by route and kind', ['route', 'kind']],
} as const;

// prettier-ignore
const DURATION = ['portico_stream_duration_seconds', 'Lifetime of closed SSE streams and WebSocket tunnels', ['route', 'kind']] as const;

/** Seconds; a stream lives from a second to hours. */
const DURATION_BUCKETS = [1, 10, 60, 300, 1800, 3600, 21600];

export const streamMetrics: MetricsModule = (registry) => {
  const { openStreams } = gauges(registry, SERIES);
  const streamDuration = histogram(registry, DURATION, DURATION_BUCKETS);
  return {
    'stream:open': (e) => openStreams.inc({ route: routeLabel(e.routeId), kind: e.kind }),
    'stream:close': (e) => {
      const labels = { route: routeLabel(e.routeId), kind: e.kind };
      openStreams.dec(labels);
      streamDuration.observe(labels, e.durationMs / 1000);
    },
  };
};
