/** Authentication: 'auth:result' into `portico_auth_results_total`, by route and outcome. */
import { counters, routeLabel } from './shared.js';
import type { MetricsModule } from './types.js';

// prettier-ignore
const SERIES = {
  results: ['portico_auth_results_total', 'Authentication outcomes (ok, missing, invalid, denied, forbidden, unavailable), by route', ['route', 'outcome']],
} as const;

export const authMetrics: MetricsModule = (registry) => {
  const { results } = counters(registry, SERIES);
  return {
    'auth:result': (e) => results.inc({ route: routeLabel(e.routeId), outcome: e.outcome }),
  };
};
