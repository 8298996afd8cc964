/**
 * Admission control (layers/admission.ts): each limit's requests in flight, its size and its
 * refusals, read at scrape time from the counts the process keeps, so a request pays nothing for
 * them. `scope` is `gateway` (config.admission.maxInFlight, `route` label empty) or `route`.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { AdmissionStats, MetricsModule } from './types.js';

type Labels = 'scope' | 'route';

export const admissionMetrics: MetricsModule = (registry, sources) => {
  const { admission } = sources;
  if (admission === undefined) return {};
  const series = (name: string, help: string, pick: (s: AdmissionStats) => number, type: 'counter' | 'gauge') =>
    limitSeries(registry, admission, { name, help, pick, type });
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

/** One series per limit, rebuilt from `limits()` at each scrape. */
function limitSeries(
  registry: Registry,
  limits: () => Iterable<AdmissionStats>,
  s: { name: string; help: string; pick: (s: AdmissionStats) => number; type: 'counter' | 'gauge' },
): void {
  const pick = s.pick;
  const config = {
    registers: [registry],
    name: s.name,
    help: s.help,
    labelNames: ['scope', 'route'] as const,
    collect(this: Counter<Labels> | Gauge<Labels>) {
      this.reset();
      for (const l of limits()) {
        const labels = { scope: l.scope, route: l.route };
        if (this instanceof Gauge) this.set(labels, pick(l));
        else this.inc(labels, pick(l));
      }
    },
  };
  if (s.type === 'counter') new Counter(config);
  else new Gauge(config);
}
