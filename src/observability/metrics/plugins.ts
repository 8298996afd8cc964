/**
 * Plugins (docs/plugins.md): 'plugin:run' into the time each plugin's stages take, 'plugin:error'
 * into their failures and timeouts. Labels are the configuration's plugin names and the stage
 * names: bounded by the configuration.
 */
import { createSeriesHistogram } from '../series.js';
import { counters, LATENCY_BUCKETS } from './shared.js';
import type { MetricsModule } from './types.js';

// prettier-ignore
const SERIES = {
  errors: ['portico_plugin_errors_total', 'Plugin stages that failed (threw, rejected, returned no answer) or ran past timeoutMs, by plugin, stage and kind (failed, timeout)', ['plugin', 'stage', 'kind']],
} as const;

export const pluginMetrics: MetricsModule = (registry) => {
  const duration = createSeriesHistogram(registry, {
    name: 'portico_plugin_duration_seconds',
    help: 'Time a plugin stage took on a request, by plugin and stage',
    buckets: LATENCY_BUCKETS,
  });
  const { errors } = counters(registry, SERIES);
  return {
    'plugin:run': (e) => {
      const series = duration.series(`${e.plugin} ${e.stage}`, () => ({ plugin: e.plugin, stage: e.stage }));
      duration.observe(series, e.durationMs / 1000);
    },
    'plugin:error': (e) => errors.inc({ plugin: e.plugin, stage: e.stage, kind: e.kind }),
  };
};
