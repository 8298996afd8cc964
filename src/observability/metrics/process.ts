/**
 * The process and its configuration: prom-client's default `process_*` and `nodejs_*` series,
 * 'config:reload' into `portico_config_reloads_total`, and the dropped log lines read at scrape time.
 */
import { collectDefaultMetrics } from 'prom-client';
import { counters, scraped } from './shared.js';
import type { MetricsModule } from './types.js';

// prettier-ignore
const SERIES = {
  reloads: ['portico_config_reloads_total', 'Configuration reloads, by result (ok, rejected)', ['result']],
} as const;

export const processMetrics: MetricsModule = (registry, sources) => {
  // The standard unprefixed names, so that ready-made dashboards work.
  collectDefaultMetrics({ register: registry });
  const { reloads } = counters(registry, SERIES);
  const dropped = sources.logLinesDropped;
  // prettier-ignore
  if (dropped !== undefined)
    scraped(registry, [['portico_log_lines_dropped_total', 'Log lines (access lines included) dropped because the log output could not keep up', dropped, 'counter']]);
  return {
    'config:reload': (e) => reloads.inc({ result: e.ok ? 'ok' : 'rejected' }),
  };
};
