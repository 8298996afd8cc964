/**
 * Admission control (layers/admission.ts): each limit's requests in flight, its size and its
 * refusals, read at scrape time from the counts the process keeps, so a request pays nothing for
 * them. `scope` is `gateway` (config.admission.maxInFlight, `route` label empty) or `route`.
 */
import { scrapedPerItem } from './shared.js';
import type { AdmissionStats, MetricsModule } from './types.js';

export const admissionMetrics: MetricsModule = (registry, sources) => {
  const { admission } = sources;
  if (admission === undefined) return {};
  const series = (name: string, help: string, pick: (s: AdmissionStats) => number, type: 'counter' | 'gauge') =>
    scrapedPerItem(registry, admission, (l) => ({ scope: l.scope, route: l.route }), ['scope', 'route'], {
      name,
      help,
      pick,
      type,
    });
  series('portico_admission_in_flight', 'Requests in flight under each admission limit', (s) => s.inFlight, 'gauge');
  series('portico_admission_limit', 'The most requests in flight each admission limit admits', (s) => s.limit, 'gauge');
  series(
    'portico_admission_refused_total',
    'Requests refused with 503 GW_OVERLOADED, by the limit that refused them',
    (s) => s.refused,
    'counter',
  );
  return {};
};
