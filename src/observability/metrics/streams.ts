/**
 * SSE streams and WebSocket tunnels: 'stream:open' and 'stream:close' into `portico_open_streams`,
 * and each closed stream's lifetime into `portico_stream_duration_seconds`.
 */
import { Gauge, Histogram } from 'prom-client';
import { routeLabel } from './shared.js';
import type { MetricsModule } from './types.js';

export const streamMetrics: MetricsModule = (registry) => {
  const on = { registers: [registry] };
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
  return {
    'stream:open': (e) => openStreams.inc({ route: routeLabel(e.routeId), kind: e.kind }),
    'stream:close': (e) => {
      const labels = { route: routeLabel(e.routeId), kind: e.kind };
      openStreams.dec(labels);
      streamDuration.observe(labels, e.durationMs / 1000);
    },
  };
};
