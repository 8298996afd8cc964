/**
 * Traffic splits and mirrors (docs/routing.md): 'split:choice' into
 * `portico_split_requests_total` by route and arm; 'mirror:end' and 'mirror:dropped' into the
 * copies sent (answered or failed), the copies dropped (by reason) and the mirror's latency.
 */
import { counters, histogram, LATENCY_BUCKETS, routeLabel } from './shared.js';
import type { MetricsModule } from './types.js';

// prettier-ignore
const SERIES = {
  splits: ['portico_split_requests_total', 'Requests of split routes, by route and arm (the service or upstream as written)', ['route', 'arm']],
  mirrored: ['portico_mirror_requests_total', 'Copies sent to a route\'s mirror, by outcome (answered: any status; failed: no answer within mirror.timeoutSec)', ['route', 'outcome']],
  mirrorDropped: ['portico_mirror_dropped_total', 'Requests picked for mirroring but not copied, by reason (in-flight-limit, body-too-large, body-incomplete)', ['route', 'reason']],
} as const;

// prettier-ignore
const DURATION = ['portico_mirror_duration_seconds', 'Time until the mirror answered a copy (its response head)', ['route']] as const;

export const trafficMetrics: MetricsModule = (registry) => {
  const { splits, mirrored, mirrorDropped } = counters(registry, SERIES);
  const duration = histogram(registry, DURATION, LATENCY_BUCKETS);
  return {
    'split:choice': (e) => splits.inc({ route: routeLabel(e.routeId), arm: e.arm }),
    'mirror:end': (e) => {
      const route = routeLabel(e.routeId);
      mirrored.inc({ route, outcome: e.outcome });
      if (e.outcome === 'answered') duration.observe({ route }, e.durationMs / 1000);
    },
    'mirror:dropped': (e) => mirrorDropped.inc({ route: routeLabel(e.routeId), reason: e.reason }),
  };
};
