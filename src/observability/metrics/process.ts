/**
 * The process and its configuration: prom-client's default `process_*` and `nodejs_*` series,
 * 'config:reload' into `portico_config_reloads_total`, and the dropped log lines read at scrape time.
 */
import { collectDefaultMetrics, Counter } from 'prom-client';
import type { MetricsModule } from './types.js';

export const processMetrics: MetricsModule = (registry, sources) => {
  const on = { registers: [registry] };
  // The standard unprefixed names, so that ready-made dashboards work.
  collectDefaultMetrics({ register: registry });
  const reloads = new Counter({
    ...on,
    name: 'portico_config_reloads_total',
    help: 'Configuration reloads, by result (ok, rejected)',
    labelNames: ['result'] as const,
  });
  if (sources.logLinesDropped !== undefined) {
    const dropped = sources.logLinesDropped;
    new Counter({
      ...on,
      name: 'portico_log_lines_dropped_total',
      help: 'Log lines (access lines included) dropped because the log output could not keep up',
      collect() {
        this.reset();
        this.inc(dropped());
      },
    });
  }
  return {
    'config:reload': (e) => reloads.inc({ result: e.ok ? 'ok' : 'rejected' }),
  };
};
