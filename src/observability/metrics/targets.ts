/**
 * The targets of named upstreams: no events; their request, error and ejection counts, ejection,
 * health and calls in flight read at scrape time into `portico_upstream_target_*`.
 */
import { scrapedPerItem } from './shared.js';
import type { MetricsModule, TargetStats } from './types.js';

export const targetMetrics: MetricsModule = (registry, sources) => {
  if (sources.targets === undefined) return {};
  const targets = sources.targets;
  const perTarget = (name: string, help: string, pick: (t: TargetStats) => number, type: 'counter' | 'gauge') =>
    scrapedPerItem(registry, targets, (t) => ({ upstream: t.upstream, target: t.target }), ['upstream', 'target'], {
      name,
      help,
      pick,
      type,
    });
  perTarget(
    'portico_upstream_target_requests_total',
    'Calls answered or failed, per target of a named upstream',
    (t) => t.requests,
    'counter',
  );
  perTarget(
    'portico_upstream_target_errors_total',
    'Calls without an answer or with a 5xx, per target',
    (t) => t.failures,
    'counter',
  );
  perTarget(
    'portico_upstream_target_ejections_total',
    'Times a target was ejected (outlier detection)',
    (t) => t.ejections,
    'counter',
  );
  perTarget(
    'portico_upstream_target_ejected',
    '1 while a target is ejected, else 0',
    (t) => (t.ejected ? 1 : 0),
    'gauge',
  );
  perTarget(
    'portico_upstream_target_healthy',
    '1 while a target answers its calls, is not ejected and passes the active health checks (if any), else 0',
    (t) => (t.healthy ? 1 : 0),
    'gauge',
  );
  perTarget('portico_upstream_target_in_flight', 'Calls on a target now', (t) => t.inFlight, 'gauge');
  return {};
};
