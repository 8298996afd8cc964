/** Authentication: 'auth:result' into `portico_auth_results_total`, by route and outcome. */
import { Counter } from 'prom-client';
import { routeLabel } from './shared.js';
import type { MetricsModule } from './types.js';

export const authMetrics: MetricsModule = (registry) => {
  const authResults = new Counter({
    registers: [registry],
    name: 'portico_auth_results_total',
    help: 'Authentication outcomes (ok, missing, invalid, denied, forbidden, unavailable), by route',
    labelNames: ['route', 'outcome'] as const,
  });
  return {
    'auth:result': (e) => authResults.inc({ route: routeLabel(e.routeId), outcome: e.outcome }),
  };
};
