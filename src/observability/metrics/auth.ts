/** Authentication: 'auth:result' into `portico_auth_results_total`, by route and outcome. */
import { counter, routeLabel } from './shared.js';
import type { MetricsModule } from './types.js';

export const authMetrics: MetricsModule = (registry) => {
  const authResults = counter(
    registry,
    'portico_auth_results_total',
    'Authentication outcomes (ok, missing, invalid, denied, forbidden, unavailable), by route',
    ['route', 'outcome'],
  );
  return {
    'auth:result': (e) => authResults.inc({ route: routeLabel(e.routeId), outcome: e.outcome }),
  };
};
