/**
 * Upstream calls: 'upstream:response' into the upstream latency (and mapping calls answered),
 * 'upstream:error', 'upstream:retry' and 'aggregate:incomplete' into their counters.
 */
import { createSeriesHistogram } from '../series.js';
import { counters, LATENCY_BUCKETS, routeLabel } from './shared.js';
import type { MetricsModule } from './types.js';

// prettier-ignore
const SERIES = {
  upstreamErrors: ['portico_upstream_errors_total', 'Upstream calls without an answer, by route, origin and kind (timeout, dns, refused, reset, aborted, other)', ['route', 'origin', 'kind']],
  // Counted here, not with the mapping failures: an answered mapping call is an 'upstream:response'.
  mappingCalls: ['portico_mapping_calls_total', 'Mapping calls answered, by route and origin', ['route', 'origin']],
  retries: ['portico_upstream_retries_total', 'Backend calls sent again to another target of a named upstream, by route and upstream', ['route', 'origin']],
  aggregateFailures: ['portico_aggregate_backend_failures_total', 'Backends of an aggregated route that gave no usable answer, by route and service', ['route', 'service']],
} as const;

export const upstreamMetrics: MetricsModule = (registry) => {
  const upstreamDuration = createSeriesHistogram(registry, {
    name: 'portico_upstream_duration_seconds',
    help: 'Time until an upstream answered with its response head, by route, origin and call (backend, mapping, auth, websocket)',
    buckets: LATENCY_BUCKETS,
  });
  const { upstreamErrors, mappingCalls, retries, aggregateFailures } = counters(registry, SERIES);
  return {
    'upstream:response': (e) => {
      const series = upstreamDuration.seriesOf(e.call, e.origin, e.routeId, () => ({
        route: routeLabel(e.routeId),
        origin: e.origin,
        call: e.call,
      }));
      upstreamDuration.observe(series, e.durationMs / 1000);
      if (e.call === 'mapping') mappingCalls.inc({ route: routeLabel(e.routeId), origin: e.origin });
    },
    'upstream:error': (e) => upstreamErrors.inc({ route: routeLabel(e.routeId), origin: e.origin, kind: e.kind }),
    'upstream:retry': (e) => retries.inc({ route: routeLabel(e.routeId), origin: e.origin }),
    'aggregate:incomplete': (e) => {
      for (const f of e.failed) aggregateFailures.inc({ route: routeLabel(e.routeId), service: f.service });
    },
  };
};
