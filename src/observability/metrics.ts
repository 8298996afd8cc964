/**
 * Prometheus metrics (`GET /metrics`). The hot path never calls prom-client: it emits events
 * (events.ts), and the modules under metrics/, one per source of events, subscribe to them; state
 * held elsewhere (circuits, the mapping cache, requests in flight) is read at scrape time, so it
 * costs nothing per request. This module creates the registry, wires those modules and serves the
 * exposition text.
 *
 * Names are `portico_` + snake_case + unit suffix; labels are route templates (`/users/{id}`),
 * methods, status classes, origins and kinds, never raw paths or user data, so the series stay bounded.
 * Process metrics use the standard unprefixed names (`process_*`, `nodejs_*`) so that
 * ready-made dashboards work.
 */
import { Registry } from 'prom-client';
import type { EventBus, GatewayEvents } from './events.js';
import { sendError } from '../response/send-error.js';
import { admissionMetrics } from './metrics/admission.js';
import { authMetrics } from './metrics/auth.js';
import { circuitMetrics } from './metrics/circuits.js';
import { mappingMetrics } from './metrics/mapping.js';
import { pluginMetrics } from './metrics/plugins.js';
import { processMetrics } from './metrics/process.js';
import { redisMetrics } from './metrics/redis.js';
import { requestMetrics } from './metrics/requests.js';
import { streamMetrics } from './metrics/streams.js';
import { spillMetrics } from './metrics/spill.js';
import { cacheMetrics } from './metrics/cache.js';
import { cacheBroadcastMetrics } from './metrics/cache-broadcast.js';
import { targetMetrics } from './metrics/targets.js';
import { trafficMetrics } from './metrics/traffic.js';
import type { MetricHandlers, Metrics, MetricsModule, MetricsSources } from './metrics/types.js';
import { upstreamMetrics } from './metrics/upstream.js';

export { UNMATCHED } from './metrics/shared.js';
export type { AdmissionStats, Metrics, MetricsSources, TargetStats } from './metrics/types.js';

/** The source modules, in the order their series are registered (and so appear in the text). */
const MODULES: readonly MetricsModule[] = [
  processMetrics,
  requestMetrics,
  upstreamMetrics,
  circuitMetrics,
  mappingMetrics,
  authMetrics,
  streamMetrics,
  spillMetrics,
  admissionMetrics,
  cacheMetrics,
  cacheBroadcastMetrics,
  targetMetrics,
  redisMetrics,
  trafficMetrics,
  pluginMetrics,
];

/** Creates the registry of one gateway process and its collectors (not yet subscribed). */
export function createMetrics(events: EventBus, sources: MetricsSources = {}): Metrics {
  const registry = new Registry();
  const handlers = collectHandlers(MODULES.map((create) => create(registry, sources)));

  let unsubscribe: (() => void)[] | undefined;
  const metrics: Metrics = {
    registry,
    get enabled() {
      return unsubscribe !== undefined;
    },
    enable() {
      if (unsubscribe !== undefined) return;
      unsubscribe = [];
      for (const name of Object.keys(handlers) as (keyof GatewayEvents)[]) {
        unsubscribe.push(events.on(name, handlers[name] as (e: GatewayEvents[typeof name]) => void));
      }
    },
    disable() {
      for (const off of unsubscribe ?? []) off();
      unsubscribe = undefined;
    },
    render: () => registry.metrics(),
    serve(res, render = metrics.render) {
      render().then(
        (text) => {
          const body = Buffer.from(text);
          res.writeHead(200, {
            'content-type': registry.contentType,
            'content-length': body.length,
            'cache-control': 'no-store',
          });
          res.end(body);
        },
        () => sendError(res, 'GW_INTERNAL'),
      );
    },
  };
  return metrics;
}

/**
 * One listener per event: two modules listening to the same event would cost a second call per
 * event, so the series an event feeds belong to one module, and a second claim is a bug.
 */
function collectHandlers(parts: readonly MetricHandlers[]): MetricHandlers {
  const all: Record<string, unknown> = {};
  for (const part of parts) {
    for (const [name, handler] of Object.entries(part)) {
      if (name in all) throw new Error(`metrics: two modules listen to '${name}'`);
      all[name] = handler;
    }
  }
  return all as MetricHandlers;
}
