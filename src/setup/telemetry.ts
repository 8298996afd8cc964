/**
 * The gateway's telemetry, applied at start and on every reload: Prometheus metrics (one
 * registry per process, subscribed to the bus only while `telemetry.metrics` is on), the
 * `/metrics` endpoint and its token, the tracer's sampling, and the span exporter (loaded on
 * demand, so it costs nothing when off, and kept across reloads unless what it sends changed).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CompiledConfig } from '../config/types.js';
import type { EventBus } from '../observability/events.js';
import type { Logger } from '../observability/logger.js';
import { createMetrics, type Metrics, type MetricsSources } from '../observability/metrics.js';
import { clusterMetricsRenderer, inPorticoCluster } from '../observability/cluster-metrics.js';
import { createTracer, type Tracer } from '../observability/trace-context.js';
import { resolveTracing } from '../config/otel-env.js';
import type { OtlpExporter } from '../observability/otlp.js';
import { bearsMetricsToken, publicMetricsAccess } from '../ops/metrics-access.js';
import { sendError } from '../response/send-error.js';
import type { AdminMetrics } from '../admin/types.js';

export class Telemetry {
  readonly tracer: Tracer = createTracer();
  metrics: Metrics | undefined;
  /** The span exporter of the configuration being served, once started. */
  otlp: Promise<OtlpExporter | undefined> = Promise.resolve(undefined);
  private render: (() => Promise<string>) | undefined;
  private access: ReturnType<typeof publicMetricsAccess> = () => 'GW_METRICS_NOT_PUBLIC';
  private bearsToken: ReturnType<typeof bearsMetricsToken> = () => false;

  constructor(
    private readonly events: EventBus,
    private readonly logger: Logger,
    private readonly sources: MetricsSources,
  ) {}

  /** Applies the telemetry settings of `config` (at start, and on reload). */
  apply(config: CompiledConfig): void {
    const t = config.settings.telemetry;
    if (t.metrics) {
      const metrics = (this.metrics ??= createMetrics(this.events, this.sources));
      this.render ??= inPorticoCluster() ? clusterMetricsRenderer(metrics.registry) : metrics.render;
      metrics.enable();
    } else this.metrics?.disable();
    this.access = publicMetricsAccess(t);
    this.bearsToken = bearsMetricsToken(t);
    // OTEL_* variables were merged at config load; a config compiled without them uses the file alone.
    const tracing = config.tracing ?? resolveTracing(t, new Set(Object.keys(t)), {});
    for (const warning of tracing.warnings)
      this.logger.warn({ warning }, 'OpenTelemetry setting not applied as written');
    this.tracer.configure({ sampleRatio: tracing.sampleRatio });
    this.exportSpans(tracing);
  }

  /**
   * Answers GET /metrics on the public port: 404 while metrics are off, then who may read them
   * (ops/metrics-access.ts): 401 without the token when one is set, 403 for a client elsewhere.
   */
  readonly serveMetrics = (req: IncomingMessage, res: ServerResponse): void => {
    const metrics = this.metrics;
    if (!metrics?.enabled) return sendError(res, 'GW_ROUTE_NOT_FOUND');
    const refusal = this.access(req);
    if (refusal === 'GW_METRICS_NOT_PUBLIC') return sendError(res, refusal);
    if (refusal !== undefined) return sendError(res, refusal, { 'www-authenticate': 'Bearer realm="metrics"' });
    return metrics.serve(res, this.render);
  };

  /** GET /metrics on the admin listener, which checks who may read them itself. */
  readonly adminMetrics: AdminMetrics = {
    bearsToken: (req) => this.bearsToken(req),
    serve: (_req, res) => {
      const metrics = this.metrics;
      if (!metrics?.enabled) return sendError(res, 'GW_ROUTE_NOT_FOUND');
      return metrics.serve(res, this.render);
    },
  };

  /** Stops counting and sending (gateway shutdown). */
  async close(): Promise<void> {
    this.metrics?.disable();
    await (await this.otlp)?.close();
  }

  /** The exporter is kept across reloads unless what it sends, or where, changed. */
  private exportSpans(tracing: ReturnType<typeof resolveTracing>): void {
    const endpoint = tracing.tracesUrl;
    const identity = JSON.stringify([endpoint, tracing.serviceName, tracing.resourceAttributes]);
    const { events, logger, tracer } = this;
    this.otlp = this.otlp
      .then(async (current) => {
        if (current !== undefined && current.identity === identity) return current;
        await current?.close();
        if (endpoint === undefined) return undefined;
        const { startOtlpExporter } = await import('../observability/otlp.js');
        return startOtlpExporter({
          endpoint,
          url: endpoint,
          serviceName: tracing.serviceName,
          resourceAttributes: tracing.resourceAttributes,
          identity,
          events,
          logger,
          tracer,
        });
      })
      .catch((err: unknown) => {
        logger.error({ err }, 'span export could not start');
        return undefined;
      });
  }
}
