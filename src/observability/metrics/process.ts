/**
 * The process and its configuration: prom-client's default `process_*` and `nodejs_*` series,
 * 'config:reload' into `portico_config_reloads_total`, and the dropped log lines read at scrape time.
 */
import { collectDefaultMetrics } from 'prom-client';
import { counter, counterFrom } from './shared.js';
import type { MetricsModule } from './types.js';

export const processMetrics: MetricsModule = (registry, sources) => {
  // The standard unprefixed names, so that ready-made dashboards work.
  collectDefaultMetrics({ register: registry });
  const reloads = counter(registry, 'portico_config_reloads_total', 'Configuration reloads, by result (ok, rejected)', [
    'result',
  ]);
  if (sources.logLinesDropped !== undefined) {
    counterFrom(
      registry,
      'portico_log_lines_dropped_total',
      'Log lines (access lines included) dropped because the log output could not keep up',
      sources.logLinesDropped,
    );
  }
  return {
    'config:reload': (e) => reloads.inc({ result: e.ok ? 'ok' : 'rejected' }),
  };
};
