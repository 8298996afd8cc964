/** The `config.telemetry` section: metrics, trace propagation and span export. */
import { z } from 'zod';

export const TelemetrySchema = z.strictObject({
  metrics: z.boolean().default(true).describe('Serve GET /metrics (Prometheus text)'),
  metricsToken: z
    .string()
    .min(16)
    .optional()
    .describe(
      'When set, GET /metrics needs "Authorization: Bearer <token>" (write ${METRICS_TOKEN}), from every client and on every listener; the admin listener also lets in its own readers',
    ),
  metricsPublic: z
    .boolean()
    .default(false)
    .describe(
      'Serve GET /metrics on the public port to any client; by default only loopback clients read it there (the admin listener and metricsToken serve the others). Not with metricsToken',
    ),
  propagation: z
    .boolean()
    .default(true)
    .describe('W3C traceparent/tracestate to backends, mapping calls and the auth service, a child span id per call'),
  otlpEndpoint: z
    .string()
    .min(1)
    .optional()
    .describe(
      'OTLP/HTTP collector (e.g. http://otel-collector:4318); spans are POSTed as JSON to <endpoint>/v1/traces',
    ),
  serviceName: z.string().min(1).default('portico').describe('service.name of exported spans'),
  sampleRatio: z
    .number()
    .min(0)
    .max(1)
    .default(1)
    .describe('Share of traces started by the gateway that are sampled; a client traceparent keeps its own flag'),
  // tainha-gateway keys, read under their own names (src/config/tainha.ts).
  enabled: z
    .boolean()
    .optional()
    .describe('tainha-gateway: sets metrics and propagation together (and allows exporterEndpoint); not with either'),
  exporterEndpoint: z
    .string()
    .min(1)
    .optional()
    .describe(
      'tainha-gateway: the collector as HOST:PORT for OTLP over gRPC; becomes otlpEndpoint http://HOST:PORT, port 4317 read as 4318 (OTLP/HTTP), and only with enabled: true',
    ),
});

/** The tracing settings: `config.telemetry` merged with the OTEL_* environment (config/otel-env.ts). */
export interface TracingSettings {
  /** The full URL spans are POSTed to; undefined when nothing is exported. */
  readonly tracesUrl: string | undefined;
  readonly serviceName: string;
  /** Share of gateway-started traces that are sampled. */
  readonly sampleRatio: number;
  /** Resource attributes besides service.name, in the order given. */
  readonly resourceAttributes: readonly (readonly [string, string])[];
  /** Settings that could not be honoured as written: logged once when the gateway applies them. */
  readonly warnings: readonly string[];
}
