/**
 * Plugins (docs/plugins.md): 'plugin:run' into the time each plugin's stages take, 'plugin:error'
 * into their failures and timeouts. Labels are the configuration's plugin names and the stage
 * names: bounded by the configuration.
 */
import { createSeriesHistogram, type Series } from '../series.js';
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
  // Every stage of every request on a route with plugins reports here: its series is found by two
  // map look-ups, with no key string or labels closure made per event.
  const byPlugin = new Map<string, Map<string, Series>>();
  const seriesOf = (plugin: string, stage: string): Series => {
    let stages = byPlugin.get(plugin);
    if (stages === undefined) byPlugin.set(plugin, (stages = new Map()));
    let series = stages.get(stage);
    if (series === undefined) stages.set(stage, (series = newSeries(plugin, stage)));
    return series;
  };
  // Apart from seriesOf: a closure there would make V8 allocate its scope on every call.
  const newSeries = (plugin: string, stage: string) => duration.series(`${plugin} ${stage}`, () => ({ plugin, stage }));
  return {
    'plugin:run': (e) => duration.observe(seriesOf(e.plugin, e.stage), e.durationMs / 1000),
    'plugin:error': (e) => errors.inc({ plugin: e.plugin, stage: e.stage, kind: e.kind }),
  };
};
