/**
 * Request bodies in temporary files (layers/spill-budget.ts): the bytes reserved there now, read
 * at scrape time, and 'body:spill-refused' into the refusals by route and by the cap that refused.
 */
import { counters, routeLabel, scraped } from './shared.js';
import type { MetricsModule } from './types.js';

// prettier-ignore
const SERIES = {
  refused: ['portico_body_spill_refused_total', 'Request bodies refused because temporary files held too much: limit client (429) or total (503)', ['route', 'limit']],
} as const;

export const spillMetrics: MetricsModule = (registry, sources) => {
  const { spilledBytes } = sources;
  // prettier-ignore
  if (spilledBytes !== undefined)
    scraped(registry, [['portico_body_spill_bytes', 'Bytes of request bodies held in temporary files now (reserved by Content-Length)', spilledBytes, 'gauge']]);
  const { refused } = counters(registry, SERIES);
  return {
    'body:spill-refused': (e) => refused.inc({ route: routeLabel(e.routeId), limit: e.limit }),
  };
};
