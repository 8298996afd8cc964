/**
 * Upstream calls: 'upstream:response' into the upstream latency (and mapping calls answered),
 * 'upstream:error', 'upstream:retry' and 'aggregate:incomplete' into their counters.
 */
import { Counter } from 'prom-client';
import { createSeriesHistogram } from '../series.js';
import { LATENCY_BUCKETS, routeLabel } from './shared.js';
import type { MetricsModule } from './types.js';

export const upstreamMetrics: MetricsModule = (registry) => {
  const on = { registers: [registry] };
  const upstreamDuration = createSeriesHistogram(registry, {
    name: 'portico_upstream_duration_seconds',
    help: 'Time until an upstream answered with its response head, by route, origin and call (backend, mapping, auth, websocket)',
    buckets: LATENCY_BUCKETS,
  });
  const upstreamErrors = new Counter({
    ...on,
    name: 'portico_upstream_errors_total',
    help: 'Upstream calls without an answer, by route, origin and kind (timeout, dns, refused, reset, aborted, other)',
    labelNames: ['route', 'origin', 'kind'] as const,
  });
  // Counted here, not with the mapping failures: an answered mapping call is an 'upstream:response'.
  const mappingCalls = new Counter({
    ...on,
    name: 'portico_mapping_calls_total',
    help: 'Mapping calls answered, by route and origin',
    labelNames: ['route', 'origin'] as const,
  });
  const retries = new Counter({
    ...on,
    name: 'portico_upstream_retries_total',
    help: 'Backend calls sent again to another target of a named upstream, by route and upstream',
    labelNames: ['route', 'origin'] as const,
  });
  const aggregateFailures = new Counter({
    ...on,
    name: 'portico_aggregate_backend_failures_total',
    help: 'Backends of an aggregated route that gave no usable answer, by route and service',
    labelNames: ['route', 'service'] as const,
  });
  return {
    'upstream:response': (e) => {
      const series = upstreamDuration.series(`${e.call} ${e.origin} ${e.routeId}`, () => ({
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
